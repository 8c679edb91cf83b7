import { render } from 'preact';
import { Board } from './board';
import './board.css';

// One bundle for the workspace's pages; each page's shell names what it shows in data-page.
const root = document.getElementById('workspace');
if (root?.dataset.page === 'pipeline') render(<Board />, root);

import type { FunctionComponent } from 'preact';
import { render } from 'preact';
import { Board } from './board';
import { Integration } from './integration';
import { Integrations } from './integrations';
import './board.css';
import './workspace.css';

/**
 * One bundle for the workspace's pages: each page's shell (src/web/workspace-pages.ts) names what
 * it shows in `data-page` and the record in `data-id`.
 */
const PAGES: Record<string, FunctionComponent<{ id: string }>> = {
  pipeline: Board,
  integrations: Integrations,
  integration: Integration,
};

const root = document.getElementById('workspace');
const Page = root?.dataset.page ? PAGES[root.dataset.page] : undefined;
if (root && Page) render(<Page id={root.dataset.id ?? ''} />, root);

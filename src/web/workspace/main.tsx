import type { FunctionComponent } from 'preact';
import { render } from 'preact';
import { AgentPage } from './agent';
import { Agents } from './agents';
import { Board } from './board';
import './board.css';
import './workspace.css';

/**
 * One bundle for the workspace's pages: each page's shell (src/web/workspace-pages.ts) names what
 * it shows in `data-page` and the record in `data-id`.
 */
const PAGES: Record<string, FunctionComponent<{ id: string }>> = {
  pipeline: Board,
  agents: Agents,
  agent: AgentPage,
};

const root = document.getElementById('workspace');
const Page = root?.dataset.page ? PAGES[root.dataset.page] : undefined;
if (root && Page) {
  // The shell's "Loading…" goes: Preact keeps server-rendered children its first render does not reuse.
  root.replaceChildren();
  render(<Page id={root.dataset.id ?? ''} />, root);
}

import type { FunctionComponent } from 'preact';
import { render } from 'preact';
import { AgentPage } from './agent';
import { Agents } from './agents';
import { Board } from './board';
import { DealPage } from './deal-page';
import { EventPage } from './event';
import { Events } from './events';
import { RequestLogs } from './request-logs';
import { WebhookPage } from './webhook';
import { Webhooks } from './webhooks';
import { LeadPage } from './lead';
import { Leads } from './leads';
import { Members } from './members';
import { SecurityLog } from './security-log';
import { FieldsSettings } from './fields-settings';
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
  deal: DealPage,
  webhooks: Webhooks,
  webhook: WebhookPage,
  events: Events,
  event: EventPage,
  'request-logs': RequestLogs,
  leads: Leads,
  lead: LeadPage,
  agents: Agents,
  agent: AgentPage,
  integrations: Integrations,
  integration: Integration,
  members: Members,
  'security-log': SecurityLog,
  fields: FieldsSettings,
};

const root = document.getElementById('workspace');
const Page = root?.dataset.page ? PAGES[root.dataset.page] : undefined;
if (root && Page) {
  // The shell's "Loading…" goes: Preact keeps server-rendered children its first render does not reuse.
  root.replaceChildren();
  render(<Page id={root.dataset.id ?? ''} />, root);
}

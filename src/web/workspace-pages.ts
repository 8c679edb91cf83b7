import type { EventCatalog } from '../events/event-catalog';
import { allows, ROLE_PERMISSIONS, ROLES } from '../modules/accounts/key-permissions';
import { SECURITY_EVENT_TYPES } from '../modules/security/security-event.entity';

/**
 * The workspace's pages, a line each: the path, what the bundle draws there (`data-page`) and the
 * title. Every one is the same server-rendered shell (workspace.router.ts); the Preact bundle reads
 * `data-page` and `data-id` (the path's `:id`) and draws the page from /graphql. A new page is a line
 * here and an entry in src/web/workspace/main.tsx's PAGES.
 */
export interface WorkspacePage {
  path: string;
  page: string;
  /** The page's title; a record's page replaces it with the record's name once loaded. */
  title: string;
  /** A sentence under the title, when the page needs one. */
  intro?: string;
  /**
   * Facts the service defines in code and no query lists, as `data-*` attributes of the page's
   * element (the event types a subscription may name: the events module's own list; the roles).
   * Every page also has the signed-in member's `data-role` and `data-member-id` (their usr_ id), and the account's `data-account-name`.
   */
  data?: (events: EventCatalog) => Record<string, string>;
}

/** The event types as the webhook forms and the events filter offer them, space-separated. */
const subscribableEvents = (events: EventCatalog) => ({ 'event-types': events.names({ subscribable: true }).join(' ') });
const allEvents = (events: EventCatalog) => ({ 'event-types': events.names().join(' ') });
/** The roles the Members page offers, and those that may manage members, from the role table. */
const memberRoles = () => ({
  roles: ROLES.join(' '),
  'managing-roles': ROLES.filter((role) => allows(ROLE_PERMISSIONS[role], 'members:write')).join(' '),
});
/** The types the security log records, and the roles that may read it, for its filter and its refusal. */
const securityLog = () => ({
  'security-event-types': SECURITY_EVENT_TYPES.join(' '),
  'reading-roles': ROLES.filter((role) => allows(ROLE_PERMISSIONS[role], 'security_events:read')).join(' '),
});

export const WORKSPACE_PAGES: WorkspacePage[] = [
  { path: '/pipeline', page: 'pipeline', title: 'Pipeline board', intro: 'Drag a card to another column, or use its “Move to” list; closed stages are final.' },
  { path: '/deals/:id', page: 'deal', title: 'Deal' },
  { path: '/leads', page: 'leads', title: 'Leads' },
  { path: '/leads/:id', page: 'lead', title: 'Lead' },
  { path: '/agents', page: 'agents', title: 'Agents' },
  { path: '/agents/:id', page: 'agent', title: 'Agent' },
  { path: '/integrations', page: 'integrations', title: 'Integrations' },
  { path: '/integrations/:id', page: 'integration', title: 'Integration' },
  { path: '/developers/webhooks', page: 'webhooks', title: 'Webhooks', data: subscribableEvents },
  { path: '/developers/webhooks/:id', page: 'webhook', title: 'Webhook', data: subscribableEvents },
  { path: '/developers/events', page: 'events', title: 'Events', data: allEvents },
  { path: '/developers/events/:id', page: 'event', title: 'Event' },
  { path: '/developers/logs', page: 'request-logs', title: 'Request logs' },
  { path: '/settings/members', page: 'members', title: 'Members', data: memberRoles },
  {
    path: '/settings/security',
    page: 'security-log',
    title: 'Security log',
    intro: 'Who signed in, and who changed members, keys, integrations and the plan, from where.',
    data: securityLog,
  },
  { path: '/settings/fields', page: 'fields', title: 'Fields', intro: 'Fields of your own on leads and deals, in this mode.' },
];

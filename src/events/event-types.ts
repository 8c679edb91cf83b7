/** Every event the service emits (CONTRACT §10). Subscriptions name these, or `*` for all. */
export const EVENT_TYPES = [
  'lead.created',
  'lead.updated',
  'lead.deleted',
  'lead.scored',
  'deal.created',
  'deal.updated',
  'deal.stage_changed',
  'deal.won',
  'deal.lost',
  'deal.registered',
  'proposal.created',
  'agent.deployed',
  'agent.action',
  'integration.connected',
  'integration.disconnected',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const ALL_EVENTS = '*';

export const API_VERSION = 'v1';

export function isEventType(name: string): name is EventType {
  return (EVENT_TYPES as readonly string[]).includes(name);
}

/** Whether a subscription to `subscribed` (names or `*`) receives an event of `type`. */
export function subscribesTo(subscribed: readonly string[], type: string): boolean {
  return subscribed.includes(ALL_EVENTS) || subscribed.includes(type);
}

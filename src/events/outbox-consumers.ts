import { agentFanOut } from '../modules/agents/agent-fan-out';
import { actionFanOut } from '../modules/integrations/sync/action-fan-out';
import { syncFanOut } from '../modules/integrations/sync/sync-fan-out';
import { webhookFanOut } from '../modules/webhooks/webhook-fan-out';
import type { FanOutConsumer } from './outbox-fan-out';

export interface OutboxSettings {
  webhookRetrySchedule: number[];
}

const lists = new Map<string, FanOutConsumer[]>();

/**
 * Everyone who owes work per event. Every worker that fans out (the webhook dispatcher, the agent
 * runner, the sync engine: CRM changes, and agents' actions owed to Microsoft 365) uses this same
 * list, so whichever takes an event first creates the work of all; the same settings give the same
 * list, which lets workers of one process share a fan-out.
 */
export function outboxConsumers(settings: OutboxSettings): readonly FanOutConsumer[] {
  const key = JSON.stringify(settings.webhookRetrySchedule);
  let list = lists.get(key);
  if (!list) lists.set(key, (list = [webhookFanOut(settings.webhookRetrySchedule[0]), agentFanOut, syncFanOut, actionFanOut]));
  return list;
}

import { agentFanOut } from '../modules/agents/agent-fan-out';
import { webhookFanOut } from '../modules/webhooks/webhook-fan-out';
import type { FanOutConsumer } from './outbox-fan-out';

export interface OutboxSettings {
  webhookRetrySchedule: number[];
}

/**
 * Everyone who owes work per event. Every worker that fans out (the webhook dispatcher, the agent
 * runner) uses this same list, so whichever takes an event first creates the work of all.
 */
export function outboxConsumers(settings: OutboxSettings): FanOutConsumer[] {
  return [webhookFanOut(settings.webhookRetrySchedule[0]), agentFanOut];
}

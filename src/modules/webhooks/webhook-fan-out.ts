import { newId } from '../../common/ids';
import type { EventCatalog } from '../../events/event-catalog';
import { FanOutConsumer, mayOweIfAny, owedRows } from '../../events/outbox-fan-out';
import { DeliveryStatus } from './webhook-delivery.entity';
import { WebhookStatus } from './webhook.entity';

/** One delivery per event and matching enabled subscription of the same account and mode. */
export function webhookFanOut(firstDelaySeconds: number, catalog: EventCatalog): FanOutConsumer {
  const mayOwe = mayOweIfAny('webhooks', 't.status = ?', [WebhookStatus.enabled]);
  const owe: FanOutConsumer['owe'] = async (trx, events, now) => {
    const subscriptions: Array<{ id: string; account_id: string; livemode: boolean; events: string[]; created_at: Date }> = await trx('webhooks')
      .select('id', 'account_id', 'livemode', 'events', 'created_at')
      .where('status', WebhookStatus.enabled)
      .whereIn('account_id', [...new Set(events.map((event) => event.account_id))]);
    const firstAttempt = trx.raw('now() + make_interval(secs => ?)', [firstDelaySeconds]);
    const deliveries = owedRows(
      events,
      subscriptions,
      // A subscription receives what happened after it was made, not a backlog.
      (hook, event) => hook.created_at <= event.created_at && catalog.subscribesTo(hook.events, event.type),
      (hook) => ({
        id: newId('whdel'),
        created_at: now,
        updated_at: now,
        webhook_id: hook.id,
        status: DeliveryStatus.pending,
        attempt_count: 0,
        next_attempt_at: firstAttempt,
      }),
    );
    if (deliveries.length) await trx('webhook_deliveries').insert(deliveries).onConflict(['event_id', 'webhook_id']).ignore();
    return deliveries.length;
  };
  return { mayOwe, owe };
}

import type { Knex } from '@mikro-orm/knex';

/** An event as consumers see it while fanning out. */
export interface OutboxEvent {
  id: string;
  account_id: string;
  livemode: boolean;
  type: string;
  created_at: Date;
}

/** Something that owes work per event (webhook deliveries, agent tasks): it writes its rows in the fan-out's transaction. */
export type FanOutConsumer = (trx: Knex.Transaction, events: OutboxEvent[], now: Date) => Promise<void>;

export const FAN_OUT_BATCH = 100;

/**
 * Takes up to a batch of events not yet fanned out (FOR UPDATE SKIP LOCKED, so concurrent workers
 * take different events), lets every consumer write the work it owes for them, and marks them
 * done, all in one transaction: each event is fanned out exactly once, to all consumers or none.
 * Returns how many events it took.
 */
export function fanOutEvents(knex: Knex, consumers: readonly FanOutConsumer[]): Promise<number> {
  return knex.transaction(async (trx) => {
    const events: OutboxEvent[] = await trx('events')
      .select('id', 'account_id', 'livemode', 'type', 'created_at')
      .whereNull('fanned_out_at')
      .orderBy('id')
      .limit(FAN_OUT_BATCH)
      .forUpdate()
      .skipLocked();
    if (events.length === 0) return 0;
    const now = new Date();
    for (const consume of consumers) await consume(trx, events, now);
    await trx('events').whereIn('id', events.map((event) => event.id)).update({ fanned_out_at: now });
    return events.length;
  });
}

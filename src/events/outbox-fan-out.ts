import type { Knex } from '@mikro-orm/knex';
import { preparedRows } from '../db/lean';
import { sameTenant, tenantColumns } from '../db/tenant-sql';
import { outboxSignal } from './outbox.subscriber';

/** An event as consumers see it while fanning out. */
export interface OutboxEvent {
  id: string;
  account_id: string;
  livemode: boolean;
  type: string;
  created_at: Date;
}

/**
 * Something that owes work per event (webhook deliveries, agent tasks): `owe` writes its rows in the
 * fan-out's transaction and says how many (0 when nobody subscribes to these events).
 */
export interface FanOutConsumer {
  /**
   * An SQL condition on an event `e` (its `account_id` and `livemode`): whether its account and mode
   * has anything this consumer could owe work to (an enabled subscription, a deployed agent, a
   * connected integration). It may hold where `owe` then writes nothing, never fail where `owe` would
   * write: events for which no consumer's condition holds are marked fanned out by one statement,
   * without the consumers' transaction (fanOutEvents).
   */
  mayOwe: { sql: string; bindings: readonly Knex.RawBinding[] };
  owe(trx: Knex.Transaction, events: OutboxEvent[], now: Date): Promise<number>;
}

export const FAN_OUT_BATCH = 100;

/**
 * A consumer's `mayOwe`: whether the event's account and mode has a row of `table` (as `t`) that
 * meets `where` (`?` bindings), such as an enabled subscription or a deployed agent. The tenant
 * match is written here once, as owedRows writes it for the work itself.
 */
export function mayOweIfAny(table: string, where: string, bindings: readonly Knex.RawBinding[]): FanOutConsumer['mayOwe'] {
  return { sql: `exists (select 1 from ${table} t where t.account_id = e.account_id and t.livemode = e.livemode and ${where})`, bindings };
}

/**
 * The rows a consumer owes: one per event and target of the event's own account and mode that
 * wants it, carrying the event's tenant and id (the fields every row of work has) and what `row`
 * adds.
 */
export function owedRows<Target extends { account_id: string; livemode: boolean }, Row>(
  events: readonly OutboxEvent[],
  targets: readonly Target[],
  wants: (target: Target, event: OutboxEvent) => boolean,
  row: (target: Target, event: OutboxEvent) => Row,
): Array<Row & { account_id: string; livemode: boolean; event_id: string }> {
  return events.flatMap((event) =>
    targets
      .filter((target) => sameTenant(target, event) && wants(target, event))
      .map((target) => ({ ...tenantColumns(event), event_id: event.id, ...row(target, event) })),
  );
}

/** The statement that marks a batch's events no consumer could owe work for, by list of consumers. */
const markStatements = new WeakMap<readonly FanOutConsumer[], string>();

/**
 * Takes up to a batch of queued events (event_fan_outs, FOR UPDATE SKIP LOCKED, so concurrent
 * workers take different events) and takes off the queue, in the same statement, those whose
 * account and mode no consumer could owe work to (FanOutConsumer.mayOwe): an account without
 * subscriptions, agents or integrations costs one statement per batch, not a transaction of a query
 * per consumer. The rest are released when the statement ends, for the consumers' transaction. Says
 * how many it took and how many it marked fanned out.
 */
export async function markUnowed(knex: Knex, consumers: readonly FanOutConsumer[]): Promise<{ taken: number; marked: number }> {
  let sql = markStatements.get(consumers);
  if (!sql) {
    const owedBySomeone = consumers.map((consumer) => `(${consumer.mayOwe.sql})`).join(' or ') || 'false';
    // Prepared (preparedRows), with the batch's size in the text: PostgreSQL planned this statement
    // afresh on every batch (about 0.8 ms of its CPU), and a limit sent as a parameter would keep it
    // doing so (see findLean's limitInText).
    sql = `with batch as (
             select event_id, account_id, livemode from event_fan_outs order by event_id limit ${FAN_OUT_BATCH} for update skip locked
           ), marked as (
             delete from event_fan_outs q using batch e where q.event_id = e.event_id and not (${owedBySomeone}) returning q.event_id
           )
           select (select count(*) from batch)::int as taken, (select count(*) from marked)::int as marked`;
    markStatements.set(consumers, sql);
  }
  const [counts] = await preparedRows(
    knex,
    sql,
    consumers.flatMap((consumer) => consumer.mayOwe.bindings),
  );
  return counts as { taken: number; marked: number };
}

/**
 * Fans out up to a batch of events. Those no consumer could owe work to are marked by one statement
 * (markUnowed); if that leaves any, a transaction takes up to a batch again (FOR UPDATE SKIP
 * LOCKED), lets every consumer write the work it owes for them, and takes them off the queue: each
 * event is fanned out exactly once, to all consumers or none. Returns how many events it fanned out
 * (marked or through the consumers), and how many rows of work the consumers wrote for them.
 */
export async function fanOutEvents(knex: Knex, consumers: readonly FanOutConsumer[]): Promise<{ events: number; work: number }> {
  const unowed = await markUnowed(knex, consumers);
  if (unowed.taken === unowed.marked) return { events: unowed.taken, work: 0 };
  const owed = await knex.transaction(async (trx) => {
    const events: OutboxEvent[] = await trx('event_fan_outs as q')
      .join('events as e', 'e.id', 'q.event_id')
      .select('e.id', 'e.account_id', 'e.livemode', 'e.type', 'e.created_at')
      .orderBy('q.event_id')
      .limit(FAN_OUT_BATCH)
      .forUpdate('q')
      .skipLocked();
    if (events.length === 0) return { events: 0, work: 0 };
    const now = new Date();
    let work = 0;
    for (const consumer of consumers) work += await consumer.owe(trx, events, now);
    await trx('event_fan_outs')
      .whereIn(
        'event_id',
        events.map((event) => event.id),
      )
      .delete();
    return { events: events.length, work };
  });
  return { events: unowed.marked + owed.events, work: owed.work };
}

/** Fan-outs under way in this process, by pool and list of consumers. */
const running = new WeakMap<Knex, Map<readonly FanOutConsumer[], Promise<boolean>>>();

/**
 * Fans out every pending event, batch by batch, until none is left or `stopped()`. Returns
 * whether any work was written; if so, workers in this process hear it ('work' on outboxSignal)
 * and claim it now instead of at their next poll. Workers of this process woken by the same write
 * share one fan-out (same pool, same consumers) instead of each opening a transaction to find
 * that the other took the events.
 */
export function fanOutPending(knex: Knex, consumers: readonly FanOutConsumer[], stopped: () => boolean): Promise<boolean> {
  let underWay = running.get(knex);
  if (!underWay) running.set(knex, (underWay = new Map()));
  const current = underWay.get(consumers);
  if (current) return current;
  const run = drain(knex, consumers, stopped).finally(() => underWay.delete(consumers));
  underWay.set(consumers, run);
  return run;
}

async function drain(knex: Knex, consumers: readonly FanOutConsumer[], stopped: () => boolean): Promise<boolean> {
  let work = 0;
  while (!stopped()) {
    const batch = await fanOutEvents(knex, consumers);
    work += batch.work;
    if (batch.events < FAN_OUT_BATCH) break;
  }
  if (work > 0) outboxSignal.emit('work');
  return work > 0;
}

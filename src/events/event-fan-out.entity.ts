import { Entity, OneToOne, Property } from '@mikro-orm/core';
import { Event } from './event.entity';

/**
 * An event still to be fanned out: the outbox's queue (events/outbox-fan-out.ts). A trigger on
 * `events` (Migration20261130173000) queues every event as it is inserted, whatever wrote it, in the
 * same statement; the fan-out deletes the row once the event's work is written. Fanning out is then
 * the delete of a three-column row, where marking the event itself made a new version of a wide row
 * with an entry in each of the events table's indexes (docs/benchmark.md, thirty-second pass).
 * Not tenant data on its own: it carries the event's account and mode only so that the fan-out can
 * tell, without reading the events, which accounts have nothing to owe them.
 */
@Entity({ tableName: 'event_fan_outs' })
export class EventFanOut {
  @OneToOne(() => Event, { primary: true, owner: true, fieldName: 'event_id', deleteRule: 'cascade', updateRule: 'cascade' })
  event!: Event;

  @Property({ type: 'text' })
  accountId!: string;

  @Property({ type: 'boolean' })
  livemode!: boolean;
}

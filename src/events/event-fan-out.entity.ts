import { Entity, OneToOne, Property } from '@mikro-orm/core';
import { Event } from './event.entity';

/**
 * An event still to be fanned out: the outbox's queue (events/outbox-fan-out.ts), filled by a trigger on `events`
 * (Migration20261130173000) whatever wrote the event, and emptied by the fan-out once the event's work is written:
 * deleting this narrow row is cheaper than updating the wide, indexed event row (docs/benchmark.md, thirty-second
 * pass). Its account and mode let the fan-out skip accounts that could owe nothing, without reading the events.
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

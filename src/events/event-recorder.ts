import { EntityManager } from '@mikro-orm/postgresql';
import { isDeepStrictEqual } from 'node:util';
import { insertLean } from '../db/lean-insert';
import { createScoped } from '../db/tenant';
import type { RestSerializer } from '../rest/serialize';
import { Event, EventData } from './event.entity';
import type { EventType } from './event-catalog';
import { outboxSignal } from './outbox.subscriber';
import { type Acting, SYSTEM } from './acting';

/** What an object looked like before a change, in REST shape (from EventRecorder.snapshot). */
export type Snapshot = Record<string, unknown>;

/** Always changes with any other change, so it tells a subscriber nothing. */
const UNINTERESTING = new Set(['updated_at']);

function changedFrom(before: Snapshot, after: Snapshot): Record<string, unknown> {
  const previous: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(before)) {
    if (!UNINTERESTING.has(name) && !isDeepStrictEqual(value, after[name])) previous[name] = value;
  }
  return previous;
}

/**
 * Records events on a request's EntityManager. An event is persisted with the change that caused
 * it and written by the same flush, in the same transaction (see OutboxSubscriber); its payload is
 * rendered during that flush, so `updated_at` and every other value are the ones stored.
 */
export class EventRecorder {
  constructor(
    private readonly em: EntityManager,
    private readonly serializer: RestSerializer,
    /** Who acts: stamped on every event recorded here (and read by the security log). */
    readonly acting: Acting = SYSTEM,
  ) {}

  /** The object's REST shape now; pass it to `record` after changing the object. */
  snapshot(entity: object): Snapshot {
    return this.serializer.serialize(entity);
  }

  /**
   * Writes `entity`, new and built with `createScoped(…, { persist: false })`, together with
   * events of `types` about it, in one statement (insertLean): for creates, which need no unit of
   * work. Nothing changes the entity while it is written, so the payload is rendered now.
   */
  async insertWith(entity: object, types: EventType[]): Promise<void> {
    const data: EventData = { object: this.serializer.serialize(entity), previous_attributes: {} };
    const events = types.map((type) =>
      createScoped(this.em, Event, { type, data, actor: this.acting.actor, request: this.acting.request }, { persist: false }),
    );
    await insertLean(this.em, [entity, ...events]);
    outboxSignal.emit('written');
  }

  /**
   * Records `type` about `entity`. With `before`, the event carries the changed fields' earlier
   * values in `previous_attributes`, and is not recorded at all when nothing a client sees changed.
   */
  record(type: EventType, entity: object, before?: Snapshot): Event | null {
    if (before && Object.keys(changedFrom(before, this.serializer.serialize(entity))).length === 0) return null;
    const event = createScoped(this.em, Event, { type, data: { object: {}, previous_attributes: {} }, actor: this.acting.actor, request: this.acting.request });
    event.render = (): EventData => {
      const object = this.serializer.serialize(entity);
      return { object, previous_attributes: before ? changedFrom(before, object) : {} };
    };
    return event;
  }
}

import { EntityManager, FilterQuery, raw } from '@mikro-orm/postgresql';
import { notFound } from '../common/api-error';
import { isId } from '../common/ids';
import { findPage, Page } from '../common/pagination';
import { EventCatalog, eventTypeList } from './event-catalog';
import { Event } from './event.entity';
import { EventListInput } from './event.inputs';

/** Reads the account's events (tenant-scoped EntityManager); EventRecorder writes them. */
export class EventService {
  constructor(
    private readonly em: EntityManager,
    private readonly catalog: EventCatalog,
  ) {}

  async get(id: string): Promise<Event> {
    const event = isId('evt', id) ? await this.em.findOne(Event, { id }) : null;
    if (!event) throw notFound('event', id);
    return event;
  }

  list(input: EventListInput = {}): Promise<Page<Event>> {
    const conditions: FilterQuery<Event>[] = [];
    if (input.type) {
      const types = eventTypeList(input.type);
      this.catalog.check('type', types);
      conditions.push({ type: { $in: types } });
    }
    if (input.createdAfter) conditions.push({ createdAt: { $gte: input.createdAfter } });
    if (input.createdBefore) conditions.push({ createdAt: { $lt: input.createdBefore } });
    // data is json (not jsonb, to keep its key order): the expression index events_by_object serves this.
    if (input.objectId) conditions.push({ [raw(`(data->'object'->>'id')`)]: input.objectId } as FilterQuery<Event>);
    return findPage(this.em, Event, conditions, input);
  }
}

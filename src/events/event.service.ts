import { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../common/api-error';
import { isId } from '../common/ids';
import { findPage, Page } from '../common/pagination';
import { Event } from './event.entity';
import { EventListInput } from './event.inputs';

/** Reads the account's events (tenant-scoped EntityManager); EventRecorder writes them. */
export class EventService {
  constructor(private readonly em: EntityManager) {}

  async get(id: string): Promise<Event> {
    const event = isId('evt', id) ? await this.em.findOne(Event, { id }) : null;
    if (!event) throw notFound('event', id);
    return event;
  }

  list(input: EventListInput = {}): Promise<Page<Event>> {
    return findPage(this.em, Event, input.type ? [{ type: input.type }] : [], input);
  }
}

import { defineModule } from '../modules/module';
import { EventRetention, EventRetentionOptions } from './event-retention';
import type { EventRecorder } from './event-recorder';
import { Event } from './event.entity';
import { EventFanOut } from './event-fan-out.entity';
import { EventResolver } from './event.resolver';
import { EventService } from './event.service';

declare module '../modules/module' {
  interface Services {
    events: EventService;
    /** Records events on the same EntityManager (agents record their runs' agent.action). */
    recorder: EventRecorder;
  }
}

export const eventsModule = defineModule({
  name: 'events',
  entities: [Event, EventFanOut],
  resolvers: [EventResolver],
  routes: [
    { method: 'GET', path: '/v1/events', summary: 'List events, newest first', operation: { type: 'query', field: 'events', query: 'filter' } },
    { method: 'GET', path: '/v1/events/:id', summary: 'Retrieve an event', operation: { type: 'query', field: 'event' } },
  ],
  workers: {
    eventRetention: ({ orm, logger }, overrides?: Partial<EventRetentionOptions>) =>
      new EventRetention({ orm, logger: logger.child({ component: 'events' }), ...overrides }),
  },
  services: { events: ({ em, settings }) => new EventService(em, settings.events), recorder: ({ events }) => events },
});

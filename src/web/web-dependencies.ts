import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { HostResolver } from '../http/address-guard';
import type { EventCatalog } from '../events/event-catalog';
import type { Counters } from '../limits/counters';
import type { Quota } from '../limits/quota';
import type { Logger } from '../logger';
import type { ServiceFactory } from '../modules/module';

/** What the web app's routers are built with (src/app.ts gives it). */
export interface WebDependencies {
  orm: MikroORM;
  config: Config;
  counters: Counters;
  quota: Quota;
  logger: Logger;
  /** The app's services over a tenant-scoped EntityManager: the session's proposal PDFs and the welcome page's demo data use the API's own. */
  servicesFor: ServiceFactory;
  /** The event types the webhook and event pages offer. */
  events: EventCatalog;
  /** How single sign-on resolves issuers' hosts for the address guard (system DNS by default). */
  resolveHost?: HostResolver;
}

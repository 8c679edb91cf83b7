import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { ConflictMeaning, ConflictMeanings } from '../db/database-errors';
import type { EmittedEvents, EventCatalog } from '../events/event-catalog';
import type { Acting } from '../events/acting';
import type { EventRecorder } from '../events/event-recorder';
import type { FanOutConsumer } from '../events/outbox-fan-out';
import type { Metrics } from '../http/metrics';
import type { Logger } from '../logger';
import type { Mailer } from '../mail/mailer';
import type { RestSerializer } from '../rest/serialize';
import type { RestRoute } from '../rest/routes';
import type { ProviderSettings } from './integrations/providers/provider-settings';
import type { ProposalPdfService } from './proposals/proposal-pdf.service';
import type { LeadScorer } from './scoring/lead-scorer';
import type { HostResolver } from '../http/address-guard';

/**
 * The services of one tenant-scoped EntityManager, as resolvers see them (`ctx.services.leads`).
 * Empty here: each module adds its own in its `*.module.ts` (TypeScript declaration merging), so
 * no list of services is kept anywhere else.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the modules' declaration merging
export interface Services {}

/** What services are built with, once per process (the composition root fills it from the configuration). */
export interface ServiceSettings {
  config: Config;
  /** The prior lead-score model, until an account has learned its own. */
  scorer: LeadScorer;
  resolveHost: HostResolver;
  encryptionKey: Buffer;
  proposalPdfs: ProposalPdfService;
  /** How the providers are reached (providerSettingsOf over config and resolveHost), made once, not per service. */
  providers: ProviderSettings;
  /** The event types every module emits (what subscriptions and filters may name). */
  events: EventCatalog;
  /** The app's one mailer (invitations; the web app's links use the same). */
  mailer: Mailer;
  /** For what a service does off the request path (an e-mail that could not be delivered). */
  logger?: Logger;
}

/** What a module's service factory gets: one EntityManager, its event recorder, and the other services (built on first use). */
export interface ServiceScope {
  em: EntityManager;
  events: EventRecorder;
  settings: ServiceSettings;
  services: Services;
  /** Services over another EntityManager of the same tenant (an agent simulation's transaction, always rolled back). */
  servicesFor: ServiceFactory;
}

/**
 * The services of one tenant-scoped EntityManager: for a request's context, or an agent's run (src/app/composition.ts builds it).
 * `acting` is who acts (stamped on the events they record): the request's caller, an agent, a sync; the service itself by default.
 */
export type ServiceFactory = (em: EntityManager, acting?: Acting) => Services;

/** A background worker: started once the server listens, stopped before the database closes. */
export interface Worker {
  start(): void;
  stop(): Promise<void>;
}

/** What a module's workers are built from: made once per process by the composition root (src/app/workers.ts). */
export interface WorkerContext {
  orm: MikroORM;
  config: Config;
  logger: Logger;
  servicesFor: ServiceFactory;
  serializer: RestSerializer;
  metrics?: Metrics;
  /** Everyone who owes work per event: every module's fanOuts, one list per process. */
  consumers: readonly FanOutConsumer[];
  /** What the modules' unique constraints mean (409 resource_conflict), for failures workers record. */
  conflicts: ConflictMeanings;
  providers: ProviderSettings;
  resolveHost: HostResolver;
}

/** What a module's fan-outs are made with. */
export interface FanOutSettings {
  webhookRetrySchedule: readonly number[];
  events: EventCatalog;
}

type ServiceFactories = { [K in keyof Services]?: (scope: ServiceScope) => Services[K] };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- entity classes of any shape
type AnyEntity = EntityClass<any>;

/**
 * Everything a feature folder brings: its entities, its GraphQL resolvers, its rows of the REST
 * route table, its services, the events it emits, the work it owes per event and its background
 * workers. src/app/modules.ts lists the modules; every other list (the ORM's entities, tenant
 * entities, the schema's resolvers, the route table, the services, the event catalog, the outbox's
 * consumers, the workers) is derived from them there, and only there.
 */
export interface ModuleDefinition extends EmittedEvents {
  name: string;
  entities?: AnyEntity[];
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- type-graphql takes resolver classes as Function
  resolvers?: Function[];
  routes?: RestRoute[];
  services?: ServiceFactories;
  /** What the module's named unique constraints mean to a client, when one is violated (409 resource_conflict). */
  conflicts?: Record<string, ConflictMeaning>;
  /** The work it owes per event (src/events/outbox-fan-out.ts): whichever worker fans an event out writes every module's. */
  fanOuts?: (settings: FanOutSettings) => FanOutConsumer[];
  /** Its background workers by name; `overrides` are a test's (shorter poll intervals and the like). */
  workers?: Record<string, (context: WorkerContext, overrides?: object) => Worker>;
}

export type { ConflictMeaning };

export const defineModule = (module: ModuleDefinition): ModuleDefinition => module;

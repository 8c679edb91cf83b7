import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { EventRecorder } from '../events/event-recorder';
import type { RestRoute } from '../rest/routes';
import type { ProviderSettings } from './integrations/providers/crm-verification';
import type { ProposalPdfService } from './proposals/proposal-pdf.service';
import type { LeadScorer } from './scoring/lead-scorer';
import type { HostResolver } from './webhooks/url-guard';

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

/** The services of one tenant-scoped EntityManager: for a request's context, or an agent's run (src/app/composition.ts builds it). */
export type ServiceFactory = (em: EntityManager) => Services;

type ServiceFactories = { [K in keyof Services]?: (scope: ServiceScope) => Services[K] };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- entity classes of any shape
type AnyEntity = EntityClass<any>;

/**
 * Everything a feature folder brings: its entities, its GraphQL resolvers, its rows of the REST
 * route table, and its services. src/modules/index.ts lists the modules; every other list (the
 * ORM's entities, tenant entities, the schema's resolvers, the route table, the services) is
 * derived from them.
 */
export interface ModuleDefinition {
  name: string;
  entities?: AnyEntity[];
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- type-graphql takes resolver classes as Function
  resolvers?: Function[];
  routes?: RestRoute[];
  services?: ServiceFactories;
  /** What the module's named unique constraints mean to a client, when one is violated (409 resource_conflict). */
  conflicts?: Record<string, ConflictMeaning>;
  /** The event types the module emits (CONTRACT §10); declare them in EventTypes too (src/events/event-catalog.ts). */
  events?: readonly string[];
  /** Event types it sends to one endpoint only (webhook.test): never fanned out, never subscribed to (declare them in EventTypes too). */
  directEvents?: readonly string[];
}

export interface ConflictMeaning {
  /** The parameter, in GraphQL naming (REST shows it in snake_case). */
  param: string;
  message: string;
}

export const defineModule = (module: ModuleDefinition): ModuleDefinition => module;

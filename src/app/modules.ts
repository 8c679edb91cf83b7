import { AccountScopedEntity, TenantEntity, TimestampedEntity } from '../db/base.entity';
import { EventCatalog } from '../events/event-catalog';
import { eventsModule } from '../events/events.module';
import { idempotencyModule } from '../idempotency/idempotency.module';
import { webModule } from '../web/web.module';
import { accountsModule } from '../modules/accounts/accounts.module';
import { agentsModule } from '../modules/agents/agents.module';
import { dealsModule } from '../modules/deals/deals.module';
import { fieldsModule } from '../modules/fields/fields.module';
import { healthModule } from '../modules/health/health.module';
import { integrationsModule } from '../modules/integrations/integrations.module';
import { leadsModule } from '../modules/leads/leads.module';
import { membersModule } from '../modules/members/members.module';
import { securityModule } from '../modules/security/security.module';
import type { ConflictMeaning } from '../db/database-errors';
import type { ModuleDefinition } from '../modules/module';
import type { RestRoute } from '../rest/routes';
import { proposalsModule } from '../modules/proposals/proposals.module';
import { requestLogsModule } from '../modules/request-logs/request-logs.module';
import { scoringModule } from '../modules/scoring/scoring.module';
import { ssoModule } from '../modules/sso/sso.module';
import { twoFactorModule } from '../modules/two-factor/two-factor.module';
import { webhooksModule } from '../modules/webhooks/webhooks.module';

/**
 * Every module of the service: the one list a new feature folder is added to
 * (docs/ARCHITECTURE.md, "Adding a resource"). The order is the order of the REST route table.
 * Only the composition root (src/app/) reads it: everything else is given what it needs of it.
 */
export const MODULES: readonly ModuleDefinition[] = [
  healthModule,
  leadsModule,
  dealsModule,
  proposalsModule,
  agentsModule,
  integrationsModule,
  webhooksModule,
  eventsModule,
  requestLogsModule,
  fieldsModule,
  membersModule,
  securityModule,
  scoringModule,
  accountsModule,
  twoFactorModule,
  ssoModule,
  idempotencyModule,
  webModule,
];

/** Every entity: the base classes, then each module's. */
export const ENTITIES = [TimestampedEntity, TenantEntity, AccountScopedEntity, ...MODULES.flatMap((module) => module.entities ?? [])];

/** The entities the tenant filter scopes: every one that extends TenantEntity, known from the class itself. */
export const TENANT_ENTITIES = ENTITIES.filter((entity) => entity.prototype instanceof TenantEntity);

/** The REST route table: every module's rows, in module order. */
export const ROUTES: readonly RestRoute[] = MODULES.flatMap((module) => module.routes ?? []);

/** Every module's resolvers. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- type-graphql takes resolver classes as Function
export const RESOLVERS = MODULES.flatMap((module) => module.resolvers ?? []) as [Function, ...Function[]];

/** What each module's named unique constraints mean to a client (409 resource_conflict). */
export const CONFLICTS: ReadonlyMap<string, ConflictMeaning> = new Map(MODULES.flatMap((module) => Object.entries(module.conflicts ?? {})));

/** Every module's event types (CONTRACT §10): what subscriptions and filters may name. */
export const EVENTS = new EventCatalog(MODULES);

import { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import { scopeTo } from '../db/tenant';
import type { Logger } from '../logger';
import type { Authenticated } from '../modules/accounts/api-key.service';
import { LeadService } from '../modules/leads/lead.service';
import { DealService } from '../modules/deals/deal.service';
import { IntegrationService } from '../modules/integrations/integration.service';
import type { LeadScorer } from '../modules/scoring/lead-scorer';
import type { Counters } from '../limits/counters';
import { OperationLimiter, type OperationLimits } from '../limits/operation-limit';
import type { QuotaSettings } from '../limits/quota';

export interface AppDependencies {
  orm: MikroORM;
  config: Config;
  logger: Logger;
  scorer: LeadScorer;
  /** Shared counters for quotas and per-operation limits (Redis when configured). */
  counters: Counters;
  /** Test-mode and unauthenticated allowances; tests that send many requests raise them. */
  quotaSettings?: QuotaSettings;
  /** Per-operation limits; defaults to OPERATION_LIMITS. */
  operationLimits?: OperationLimits;
}

export interface Services {
  leads: LeadService;
  deals: DealService;
  integrations: IntegrationService;
}

/** What every resolver sees, for GraphQL and for the REST adapter alike. */
export interface RequestContext {
  /** A fork of the ORM's EntityManager for this request only, scoped to the caller's tenant. */
  em: EntityManager;
  auth: Authenticated;
  requestId: string;
  logger: Logger;
  config: Config;
  services: Services;
  operationLimiter: OperationLimiter;
}

export interface RequestInfo {
  auth: Authenticated;
  requestId: string;
}

/** The one context factory: a fresh, tenant-scoped EntityManager per request, and services over it. */
export function createContextFactory(deps: AppDependencies): (request: RequestInfo) => RequestContext {
  const operationLimiter = new OperationLimiter(deps.counters, deps.operationLimits);
  // Checked once at start: a missing key would otherwise surface as a 500 on the first connect.
  const encryptionKey = deps.config.encryptionKey;
  if (!encryptionKey) throw new Error('config.encryptionKey is not set: set ENCRYPTION_KEY (main.ts generates one outside production)');
  return ({ auth, requestId }) => {
    const em = scopeTo(deps.orm.em.fork(), { accountId: auth.account.id, livemode: auth.livemode });
    const integrations = new IntegrationService(em, encryptionKey);
    return {
      em,
      auth,
      requestId,
      logger: deps.logger.child({ requestId, accountId: auth.account.id }),
      config: deps.config,
      services: {
        leads: new LeadService(em, deps.scorer),
        deals: new DealService(em, integrations),
        integrations,
      },
      operationLimiter,
    };
  };
}

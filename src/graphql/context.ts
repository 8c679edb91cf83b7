import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { OperationLimiter } from '../limits/operation-limit';
import type { Logger } from '../logger';
import type { Authenticated } from '../modules/accounts/api-key.service';
import type { Services } from '../modules/module';

/** What every resolver sees, for GraphQL and for the REST adapter alike (built by src/app/composition.ts). */
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
  /**
   * The request's EntityManager when a middleware already opened one, scoped to `auth`: a POST
   * with an Idempotency-Key runs in the transaction that records its answer (`res.locals.em`).
   */
  em?: EntityManager;
}

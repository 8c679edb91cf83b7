import type { Request } from 'express';
import { clientAddress } from '../http/client-address';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { AccountGate } from '../limits/account-gate';
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
  /** The instance's bound on what one account runs at once: root fields take a slot (src/limits/account-gate.ts). */
  accountGate: AccountGate;
  /** Aborted when the client hangs up before its answer: root fields not yet started do not start. */
  signal?: AbortSignal;
}

export interface RequestInfo {
  auth: Authenticated;
  requestId: string;
  /**
   * The request's EntityManager when a middleware already opened one, scoped to `auth`: a POST
   * with an Idempotency-Key runs in the transaction that records its answer (`res.locals.em`).
   */
  em?: EntityManager;
  /** Aborted when the client hangs up before its answer (`res.locals.abandoned`, set by the account gate). */
  signal?: AbortSignal;
  /** The request's Idempotency-Key, when it sent one (`res.locals.idempotencyKey`, set by the idempotency middleware). */
  idempotencyKey?: string;
  /** The client's address and User-Agent, for the security log. */
  client?: { address: string | null; userAgent: string | null };
}

/** What the middlewares before execution left for the context factory on the answer's locals. */
export function requestInfoOf(res: { locals: Record<string, unknown>; req?: Request }): RequestInfo {
  const { auth, requestId, em, abandoned, idempotencyKey } = res.locals as {
    auth: Authenticated;
    requestId: string;
    em?: EntityManager;
    abandoned?: AbortSignal;
    idempotencyKey?: string;
  };
  const client = res.req ? { address: clientAddress(res.req), userAgent: res.req.get('user-agent') ?? null } : undefined;
  return { auth, requestId, em, signal: abandoned, idempotencyKey, client };
}

import { createHash } from 'node:crypto';
import { EntityManager, MikroORM, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import { ApiError, internalError } from '../common/api-error';
import { decryptJson, encryptJson } from '../common/crypto';
import { mapDatabaseError } from '../db/database-errors';
import { createScoped, tenantFork, tenantOf } from '../db/tenant';
import { outboxSignal } from '../events/outbox.subscriber';
import type { Logger } from '../logger';
import type { Authenticated } from '../modules/accounts/api-key.service';
import { IdempotencyKey, IdempotencyState, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-key.entity';
import { principalOf } from './principal';
import { flushInSavepoints } from './request-transaction';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/**
 * A key left `running` by an earlier version of this service, which claimed keys in a transaction
 * of their own, and older than this belongs to a request that died: a retry may take it over.
 * This version never commits a `running` key (the key commits with its answer, or not at all).
 */
export const STALE_CLAIM_MS = 60 * 1000;

/** JSON with sorted keys, so the same body sent with keys in another order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fingerprint(req: Request): string {
  return createHash('sha256')
    .update(`${req.method} ${req.baseUrl}${req.path}\n${canonical(req.body ?? {})}`)
    .digest('hex');
}

const inProgress = () =>
  new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly', { param: 'Idempotency-Key' });

/** What to do with a request, decided under the key's lock: replay a stored answer, or run (over `row`, the caller's expired one, when the key is being reused). */
type Decision = { kind: 'replay'; row: IdempotencyKey } | { kind: 'run'; row: IdempotencyKey | null };

/**
 * Takes the key's lock for the rest of the transaction, then reads what the key already holds for
 * this caller. The lock is an advisory lock on (account, mode, caller, key): a second request with
 * the key, on any instance, finds it taken while the first runs (409), and the stored answer once
 * it committed. A stored answer is replayed even when the lock is taken, by another replay of it.
 * A key stored before keys were scoped per caller (principal `''`) is matched by any caller of its
 * tenant until it expires.
 */
async function decide(em: EntityManager, key: string, principal: string, requestHash: string, now: Date): Promise<Decision> {
  const { accountId, livemode } = tenantOf(em);
  const [{ locked }] = await em
    .getConnection()
    .execute<Array<{ locked: boolean }>>(
      'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as locked',
      [`idempotency:${accountId}:${livemode}:${principal}:${key}`],
      'all',
      em.getTransactionContext(),
    );
  const rows = await em.find(IdempotencyKey, { key, principal: { $in: [principal, ''] } });
  const existing = rows.find((row) => row.principal === principal) ?? null;
  const legacy = rows.find((row) => row.principal === '' && row.expiresAt >= now);
  const current = existing && existing.expiresAt >= now ? existing : (legacy ?? null);
  if (current && current.requestHash !== requestHash) {
    throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key', {
      param: 'Idempotency-Key',
    });
  }
  if (current?.state === IdempotencyState.done) return { kind: 'replay', row: current };
  if (!locked) throw inProgress();
  if (!current || now.getTime() - current.lockedAt.getTime() > STALE_CLAIM_MS) return { kind: 'run', row: existing };
  throw inProgress();
}

function bodyText(body: unknown): string {
  return Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : JSON.stringify(body);
}

/**
 * Stored answers are encrypted (AES-256-GCM under ENCRYPTION_KEY, like integration credentials):
 * a webhook's create answer holds its signing secret, which must not sit in clear in the table for
 * 24 hours. The prefix tells them from answers stored in clear by earlier versions.
 */
const SEALED = 'aes-256-gcm:';
const seal = (text: string, key: Buffer | undefined): string => (key ? SEALED + encryptJson({ body: text }, key) : text);
function unseal(stored: string, key: Buffer | undefined): string {
  if (!stored.startsWith(SEALED)) return stored;
  if (!key) throw new Error('a stored Idempotency-Key answer is encrypted, and no ENCRYPTION_KEY is configured');
  return decryptJson<{ body: string }>(stored.slice(SEALED.length), key).body;
}

export interface IdempotencyOptions {
  encryptionKey?: Buffer;
  /**
   * Whether the caller may make this request at all, asked before any stored answer is looked at:
   * a refusal is answered as it is, never replayed, compared or stored (the REST adapter asks
   * before it runs this middleware; /graphql gives its document check here).
   */
  authorize?: (req: Request, res: Response) => ApiError | undefined;
}

/**
 * CONTRACT §12 for every POST: the same key and body replays the stored answer (24 h), another body is 422
 * `idempotency_key_reused`, a retry while the first runs is 409 `idempotency_in_progress`; keys are stored per
 * account, mode and caller (principal.ts). The request runs in one transaction holding the key's lock, and its
 * answer leaves only once its changes, events and stored answer have committed together, so a retry never runs
 * a committed write twice. A 5xx, or a client that hung up, rolls everything back and stores nothing.
 */
export function idempotency(orm: MikroORM, onError: (res: Response, error: ApiError) => void, logger: Logger, options: IdempotencyOptions = {}) {
  const { encryptionKey, authorize } = options;
  /** Answers an error raised before the request ran, or while its answer was recorded. */
  const fail = (res: Response, next: NextFunction, error: unknown): void => {
    const known = mapDatabaseError(error);
    if (!known) return next(error);
    onError(res, known);
  };

  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = req.get('idempotency-key');
    if (req.method !== 'POST' || key === undefined) return next();
    if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      return onError(
        res,
        new ApiError('parameter_invalid', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, { param: 'Idempotency-Key' }),
      );
    }
    const refused = authorize?.(req, res);
    if (refused) return onError(res, refused);
    const auth = res.locals.auth as Authenticated;
    const principal = principalOf(auth);
    const now = new Date();
    const em = tenantFork(orm.em, { accountId: auth.account.id, livemode: auth.livemode });
    let requestHash: string;
    let decision: Decision;
    try {
      requestHash = fingerprint(req);
      await em.begin();
      decision = await decide(em, key, principal, requestHash, now);
    } catch (error) {
      if (em.isInTransaction()) await em.rollback().catch(() => undefined);
      return fail(res, next, error);
    }
    const existing = decision.row;
    if (decision.kind === 'replay') {
      await em.rollback().catch(() => undefined);
      const { row } = decision;
      res.setHeader('Idempotent-Replayed', 'true');
      if (row.responseType) res.type(row.responseType);
      res.status(row.responseStatus ?? 200).send(row.responseBody ? unseal(row.responseBody, encryptionKey) : '');
      return;
    }

    let settled = false;
    const send = res.send.bind(res);
    /** Records the answer with the request's changes, commits, then sends it; or sends why it could not. */
    const finish = async (body: unknown): Promise<void> => {
      const status = res.statusCode;
      if (status >= 500) {
        await em.rollback().catch(() => undefined);
        send(body);
        return;
      }
      const renewed = {
        requestHash,
        state: IdempotencyState.done,
        lockedAt: now,
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        responseStatus: status,
        responseType: String(res.get('content-type') ?? ''),
        responseBody: seal(bodyText(body), encryptionKey),
      };
      try {
        if (existing) Object.assign(existing, renewed);
        else createScoped(em, IdempotencyKey, { key, principal, ...renewed });
        await em.commit();
      } catch (error) {
        await em.rollback().catch(() => undefined);
        // Nothing of the request committed (or, if the connection broke during COMMIT, a retry
        // will find out and replay): the answer prepared would claim otherwise, so it is not sent.
        if (error instanceof UniqueConstraintViolationException) return onError(res, inProgress()); // an earlier version's claim, made meanwhile
        const known = mapDatabaseError(error);
        if (!known) logger.error({ err: error, requestId: res.locals.requestId }, 'could not commit an idempotent request');
        onError(res, known ?? internalError());
        return;
      }
      // Workers in this process look for the events now that they are visible (the nudge of the flush came before the commit).
      outboxSignal.emit('written');
      send(body);
    };
    res.send = (body?: unknown) => {
      res.send = send;
      if (settled) return send(body); // rolled back already: the client hung up
      settled = true;
      finish(body).catch((error: unknown) => logger.error({ err: error, requestId: res.locals.requestId }, 'could not answer an idempotent request'));
      return res;
    };
    // A client that hangs up before its answer is ready never learns the outcome: nothing is kept,
    // and the connection and the key's lock are not held for an answer nobody will send.
    res.on('close', () => {
      if (settled) return;
      settled = true;
      void em.rollback().catch(() => undefined);
    });
    // The context factory runs the request on this transaction (services' flushes as savepoints),
    // and its events name the key (Stripe's events carry their request's idempotency key).
    res.locals.em = flushInSavepoints(tenantFork(em, tenantOf(em), { keepTransactionContext: true }));
    res.locals.idempotencyKey = key;
    next();
  };
}

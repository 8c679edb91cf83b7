import { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { bearerToken } from '../http/bearer';
import { clientAddress } from '../http/client-address';
import type { RateLimitKind } from '../http/metrics';
import { isDatabaseUnavailable, mapDatabaseError } from '../db/database-errors';
import { Quota, QuotaDecision, quotaRefusal } from '../limits/quota';
import { ApiKeyService, Authenticated, hashKey, keyHashOf } from '../modules/accounts/api-key.service';
import type { KeyCache } from './key-cache';

/** Keys remembered for a database outage; the oldest are forgotten first. */
const REMEMBERED_KEYS = 10_000;

export function setRateLimitHeaders(res: Response, decision: QuotaDecision): void {
  if (!decision.window) return;
  res.setHeader('X-RateLimit-Limit', String(decision.window.limit));
  res.setHeader('X-RateLimit-Remaining', String(decision.window.remaining));
  res.setHeader('X-RateLimit-Reset', String(decision.window.resetAt));
}

/**
 * How long a refusal waits before it is sent when the client asked again before its Retry-After
 * (a refusal from the instance's memory): a client that retries in a tight loop is slowed to a few
 * requests a second per connection, so its 429s cannot crowd out other accounts' requests. A client
 * that waits as Retry-After says never meets it.
 */
export const REPEATED_REFUSAL_PAUSE_MS = 500;

/** A 429 (or the daily quota's): counted for the metrics, with Retry-After, in the surface's shape. */
export function refuse(
  res: Response,
  decision: QuotaDecision,
  kind: RateLimitKind,
  onError: (res: Response, error: ApiError) => void,
  onRejected?: (kind: RateLimitKind) => void,
): void {
  onRejected?.(kind);
  if (!decision.repeated) return onError(res, quotaRefusal(decision));
  setTimeout(() => {
    if (!res.destroyed) onError(res, quotaRefusal(decision));
  }, REPEATED_REFUSAL_PAUSE_MS).unref();
}

/**
 * The gate in front of /v1 and /graphql. Resolves `Authorization: Bearer sk_…` (or `rk_…`)
 * to `res.locals.auth` (account, key and its permissions, mode) and counts the request once against the plan quota;
 * a request without a valid key counts against its client address instead, so keys cannot be
 * guessed at speed. Every answer carries the X-RateLimit headers; `onError` writes failures in the
 * shape of the surface (REST body or GraphQL errors). With a KeyCache (Redis configured), a key
 * found valid is answered from memory while the stamp in Redis is unchanged (src/auth/key-cache.ts).
 */
export function authenticate(
  orm: MikroORM,
  quota: Quota,
  onError: (res: Response, error: ApiError) => void,
  /** Told of each 429 (for the rate-limit metrics). */
  onRejected?: (kind: RateLimitKind) => void,
  keys?: KeyCache,
) {
  // The last successful authentication per key, used only while the database is unreachable, so
  // that /v1/health can still answer "degraded" and other routes a 503 in the contract's shape.
  // Unlike the KeyCache, whose stamp makes a revoked key, or a rolled key's expired old value, stop
  // working at once on every instance, these are used only when the database cannot say.
  const lastGood = new Map<string, Authenticated>();
  // Keyed by the hash the lookup computed anyway (keyHash), so a request hashes its key once.
  const remember = (auth: Authenticated) => {
    const id = auth.keyHash;
    if (!id) return;
    lastGood.delete(id);
    lastGood.set(id, auth);
    if (lastGood.size > REMEMBERED_KEYS) lastGood.delete(lastGood.keys().next().value as string);
  };
  /** `hash` is given when the gate keeps keys and the header holds a well-formed one: its result may then be kept. */
  const lookUp = async (authorization: string | undefined, hash: string | undefined): Promise<Authenticated> => {
    try {
      // Read before the lookup, so that a change committed while it runs leaves what it finds stale.
      const stamp = keys && hash ? await keys.stampBeforeLookup() : undefined;
      // The global EntityManager, not a fork: the lookup is one raw read of lean rows, and
      // touches no unit of work or identity map (a fork per request costs more than the read).
      const auth = await new ApiKeyService(orm.em).authenticate(authorization);
      remember(auth);
      if (stamp) keys!.keep(hash!, auth, stamp);
      return auth;
    } catch (error) {
      const secret = bearerToken(authorization);
      const remembered = secret ? lastGood.get(hashKey(secret)) : undefined;
      // A rolled key's old value is remembered with its expiry, and not used past it.
      const current = remembered && !(remembered.expiresAt && remembered.expiresAt.getTime() <= Date.now());
      if (current && isDatabaseUnavailable(error)) return remembered;
      throw error;
    }
  };

  /**
   * A kept key, if its stamp is unchanged: the stamp is read in the same Redis write as the quota's
   * count. When it changed, the count is given back and the request goes the way of a first one.
   */
  const fromMemory = async (cache: KeyCache, hash: string, res: Response): Promise<QuotaDecision | undefined> => {
    const entry = cache.find(hash);
    if (!entry) return undefined;
    const [current, decision] = await Promise.all([cache.stillCurrent(entry), quota.consume(entry.auth)]);
    if (current) {
      if (entry.auth.key) new ApiKeyService(orm.em).touch(entry.auth.key);
      res.locals.auth = entry.auth;
      return decision;
    }
    cache.forget(hash);
    await quota.giveBack(entry.auth, decision);
    return undefined;
  };

  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const authorization = req.get('authorization');
      const hash = keys ? keyHashOf(authorization) : undefined;
      const kept = hash && (await fromMemory(keys!, hash, res));
      if (kept) {
        setRateLimitHeaders(res, kept);
        return kept.allowed ? next() : refuse(res, kept, 'plan_quota', onError, onRejected);
      }
      try {
        res.locals.auth = await lookUp(authorization, hash);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 401) throw error;
        // Only requests without a valid key count against the address: a valid key is judged by
        // its own quota alone, so other clients' failures behind one address (an office, a NAT)
        // never lock it out.
        const decision = await quota.consumeUnauthenticated(clientAddress(req));
        setRateLimitHeaders(res, decision);
        return decision.allowed ? onError(res, error) : refuse(res, decision, 'unauthenticated_address', onError, onRejected);
      }
      const decision = await quota.consume(res.locals.auth);
      setRateLimitHeaders(res, decision);
      if (!decision.allowed) return refuse(res, decision, 'plan_quota', onError, onRejected);
      next();
    } catch (error) {
      const known = mapDatabaseError(error);
      if (!known) return next(error);
      onError(res, known);
    }
  };
}

/**
 * The gate of the public routes (GET /v1/openapi.json and /docs): no key is looked at and no
 * account is counted; each client address gets the allowance of requests without a key (see
 * Quota.consumePublic), with the same X-RateLimit headers and the same 429.
 */
export function limitByAddress(quota: Quota, onError: (res: Response, error: ApiError) => void, onRejected?: (kind: RateLimitKind) => void) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const decision = await quota.consumePublic(clientAddress(req));
      setRateLimitHeaders(res, decision);
      if (decision.allowed) return next();
      refuse(res, decision, 'unauthenticated_address', onError, onRejected);
    } catch (error) {
      next(error);
    }
  };
}

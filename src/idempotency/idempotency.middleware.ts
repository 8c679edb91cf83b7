import { createHash } from 'node:crypto';
import { MikroORM, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/errors';
import { mapDatabaseError } from '../db/database-errors';
import { createScoped, scopeTo } from '../db/tenant';
import type { Authenticated } from '../modules/accounts/api-key.service';
import { IdempotencyKey, IdempotencyState } from './idempotency-key.entity';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** A claim older than this belongs to a request that died (crash, kill -9): a retry may take it over. */
export const STALE_CLAIM_MS = 60 * 1000;
const MAX_KEY_LENGTH = 255;

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
  return createHash('sha256').update(`${req.method} ${req.baseUrl}${req.path}\n${canonical(req.body ?? {})}`).digest('hex');
}

type Claim = { kind: 'run'; row: IdempotencyKey } | { kind: 'replay'; row: IdempotencyKey };

/**
 * CONTRACT §12 for every POST: the first request with a key runs and its response is stored for
 * 24 h; the same key and body later replays it with `Idempotent-Replayed: true`; another body is
 * 422 `idempotency_key_reused`; a retry while the first still runs is 409
 * `idempotency_in_progress`. Keys live in PostgreSQL, per account and mode, so replays survive a
 * restart and hold across instances. 5xx answers are not stored, so a retry can succeed.
 */
export function idempotency(orm: MikroORM, onError: (res: Response, error: ApiError) => void) {
  async function claim(auth: Authenticated, key: string, requestHash: string): Promise<Claim> {
    const em = scopeTo(orm.em.fork(), { accountId: auth.account.id, livemode: auth.livemode });
    const now = new Date();
    try {
      const row = createScoped(em, IdempotencyKey, {
        key,
        requestHash,
        lockedAt: now,
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      });
      await em.flush();
      return { kind: 'run', row };
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
    }
    const existing = await em.fork().findOneOrFail(IdempotencyKey, { key });
    const expired = existing.expiresAt < now;
    if (!expired && existing.requestHash !== requestHash) {
      throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key', {
        param: 'Idempotency-Key',
      });
    }
    if (!expired && existing.state === IdempotencyState.done) return { kind: 'replay', row: existing };
    const stale = existing.state === IdempotencyState.running && now.getTime() - existing.lockedAt.getTime() > STALE_CLAIM_MS;
    if (expired || stale) {
      // Take the key over only if nobody else did meanwhile (the old claim time is the guard).
      const taken = await em.fork().nativeUpdate(
        IdempotencyKey,
        { id: existing.id, lockedAt: existing.lockedAt },
        {
          requestHash,
          state: IdempotencyState.running,
          lockedAt: now,
          expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
          responseStatus: null,
          responseType: null,
          responseBody: null,
        },
      );
      if (taken === 1) return { kind: 'run', row: existing };
    }
    throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly', {
      param: 'Idempotency-Key',
    });
  }

  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = req.get('idempotency-key');
    if (req.method !== 'POST' || key === undefined) return next();
    try {
      if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
        throw new ApiError('parameter_invalid', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`, { param: 'Idempotency-Key' });
      }
      const auth = res.locals.auth as Authenticated;
      const result = await claim(auth, key, fingerprint(req));
      if (result.kind === 'replay') {
        res.setHeader('Idempotent-Replayed', 'true');
        if (result.row.responseType) res.type(result.row.responseType);
        res.status(result.row.responseStatus ?? 200).send(result.row.responseBody ?? '');
        return;
      }
      const em = scopeTo(orm.em.fork(), { accountId: auth.account.id, livemode: auth.livemode });
      const send = res.send.bind(res);
      // Record the answer before it leaves, so a retry that follows at once finds it.
      res.send = (body?: unknown) => {
        res.send = send;
        const text = Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : JSON.stringify(body);
        const record =
          res.statusCode >= 500
            ? em.nativeDelete(IdempotencyKey, { id: result.row.id })
            : em.nativeUpdate(
                IdempotencyKey,
                { id: result.row.id },
                { state: IdempotencyState.done, responseStatus: res.statusCode, responseType: String(res.get('content-type') ?? ''), responseBody: text },
              );
        void record.catch(() => undefined).finally(() => send(body));
        return res;
      };
      next();
    } catch (error) {
      const known = mapDatabaseError(error);
      if (!known) return next(error);
      onError(res, known);
    }
  };
}

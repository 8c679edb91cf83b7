import { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/errors';
import { mapDatabaseError } from '../db/database-errors';
import { Quota, QuotaDecision } from '../limits/quota';
import { ApiKeyService } from '../modules/accounts/api-key.service';

function setRateLimitHeaders(res: Response, decision: QuotaDecision): void {
  res.setHeader('X-RateLimit-Limit', String(decision.window.limit));
  res.setHeader('X-RateLimit-Remaining', String(decision.window.remaining));
  res.setHeader('X-RateLimit-Reset', String(decision.window.resetAt));
}

function rejection(decision: QuotaDecision): ApiError {
  return decision.code === 'daily_quota_exceeded'
    ? new ApiError('daily_quota_exceeded', 'Daily request quota exceeded for this account and mode; it resets at midnight UTC.')
    : new ApiError('rate_limit_exceeded', 'Too many requests; slow down and retry after the number of seconds in Retry-After.');
}

/**
 * The gate in front of /v1 and /graphql. Resolves `Authorization: Bearer sk_…` to
 * `res.locals.auth` (account, key, mode) and counts the request once against the plan quota;
 * a request without a valid key counts against its client address instead, so keys cannot be
 * guessed at speed. Every answer carries the X-RateLimit headers; `onError` writes failures in the
 * shape of the surface (REST body or GraphQL errors).
 */
export function authenticate(orm: MikroORM, quota: Quota, onError: (res: Response, error: ApiError) => void) {
  const refuse = (res: Response, decision: QuotaDecision) => {
    res.setHeader('Retry-After', String(decision.retryAfterS));
    onError(res, rejection(decision));
  };

  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    try {
      if (await quota.isAddressBlocked(address)) {
        const decision = await quota.consumeUnauthenticated(address);
        setRateLimitHeaders(res, decision);
        return refuse(res, decision);
      }
      try {
        res.locals.auth = await new ApiKeyService(orm.em.fork()).authenticate(req.get('authorization'));
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 401) throw error;
        const decision = await quota.consumeUnauthenticated(address);
        setRateLimitHeaders(res, decision);
        return decision.allowed ? onError(res, error) : refuse(res, decision);
      }
      const decision = await quota.consume(res.locals.auth);
      setRateLimitHeaders(res, decision);
      if (!decision.allowed) return refuse(res, decision);
      next();
    } catch (error) {
      const known = mapDatabaseError(error);
      if (!known) return next(error);
      onError(res, known);
    }
  };
}

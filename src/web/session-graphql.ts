import { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { refuse, setRateLimitHeaders } from '../auth/authenticate';
import type { RateLimitKind } from '../http/metrics';
import type { Quota } from '../limits/quota';
import { cookieValue, SESSION_COOKIE, sameToken, signedIn } from './web-auth';

/**
 * The web app's session cookie on /graphql (CONTRACT §2), for the dashboard: a request without an
 * Authorization header but with a session acts for the session's account in its chosen mode. It
 * must carry the session's CSRF token in `X-CSRF-Token`, a header another site's page cannot send
 * (no CORS is allowed), and it is counted against the web app's own allowance of that account and
 * mode (Quota: `webAppPerMinute`), never against the plan's quota its keys use.
 */
export function sessionGraphQLAuth(orm: MikroORM, quota: Quota, onError: (res: Response, error: ApiError) => void, onRejected?: (kind: RateLimitKind) => void) {
  return async (req: Request, res: Response, withoutSession: () => void, next: NextFunction): Promise<void> => {
    if (!cookieValue(req, SESSION_COOKIE)) return withoutSession();
    try {
      const who = await signedIn(orm, req);
      if (!who) return withoutSession();
      if (!sameToken(req.get('x-csrf-token'), who.session.csrfToken)) {
        return onError(res, new ApiError('permission_denied', 'Session requests to /graphql need the X-CSRF-Token of the page that sends them.'));
      }
      res.locals.auth = { account: who.account, key: null, livemode: who.session.livemode, member: { id: who.user.id, role: who.member.role } };
      const decision = await quota.consume(res.locals.auth);
      setRateLimitHeaders(res, decision);
      if (!decision.allowed) return refuse(res, decision, 'plan_quota', onError, onRejected);
      next();
    } catch (error) {
      next(error);
    }
  };
}

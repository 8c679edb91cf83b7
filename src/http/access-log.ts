import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger';
import type { RouteLabels } from './metrics';

/**
 * One structured line per request: id, account (when authenticated), method, route pattern
 * (`/v1/leads/:id`, never the path with its ids), status and latency. Never headers, query or bodies.
 */
export function accessLog(logger: Logger, routes: RouteLabels) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!logger.isLevelEnabled('info')) return next();
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const auth = res.locals.auth as { account?: { id: string }; livemode?: boolean } | undefined;
      logger.info(
        {
          requestId: res.locals.requestId,
          accountId: auth?.account?.id,
          livemode: auth?.livemode,
          method: req.method,
          route: routes.of(req),
          status: res.statusCode,
          latencyMs: Math.round((Number(process.hrtime.bigint() - started) / 1e6) * 1000) / 1000,
        },
        'request',
      );
    });
    next();
  };
}

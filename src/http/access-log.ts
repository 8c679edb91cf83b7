import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger';

/** One structured line per request: id, account, route, status, latency. Never headers or bodies. */
export function accessLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const auth = res.locals.auth as { account?: { id: string }; livemode?: boolean } | undefined;
      logger.info(
        {
          requestId: res.locals.requestId,
          accountId: auth?.account?.id,
          livemode: auth?.livemode,
          method: req.method,
          route: req.route?.path ? `${req.baseUrl}${req.route.path}` : req.path,
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        },
        'request',
      );
    });
    next();
  };
}

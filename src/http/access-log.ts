import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger';
import type { Authenticated } from '../modules/accounts/api-key.service';
import type { RequestLogRecord } from '../modules/request-logs/request-log-writer';
import type { Metrics, RouteLabels } from './metrics';

/** Where the accounts' request logs go (RequestLogWriter): `add` must never wait. */
export interface RequestLogSink {
  add(record: RequestLogRecord): void;
}

/** A GraphQL name (the spec's Name); anything else a client sends as operationName is not stored. */
const NAME = /^[_A-Za-z][_0-9A-Za-z]{0,99}$/;
/** The name of a document's first operation, for clients that send none apart (`query Leads { … }`). */
const FIRST_OPERATION = /^\s*(?:#[^\n]*\n\s*)*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]{0,99})/;

/** The operation a /graphql request named: `operationName`, else the name in its document; null when none. */
function operationNameOf(req: Request): string | null {
  const source = (req.method === 'GET' ? req.query : req.body) as { operationName?: unknown; query?: unknown } | undefined;
  if (!source || typeof source !== 'object') return null;
  if (typeof source.operationName === 'string') return NAME.test(source.operationName) ? source.operationName : null;
  return typeof source.query === 'string' ? (FIRST_OPERATION.exec(source.query.slice(0, 2_000))?.[1] ?? null) : null;
}

/**
 * Records every answered request from one `finish` listener: a structured line (the route pattern, never the
 * path with its ids; never headers, query or bodies), the account's request log (stored later in a batch) and
 * the request metrics. One listener, one clock reading and the route found once, rather than one per consumer
 * (docs/benchmark.md, thirteenth pass).
 */
export function accessLog(logger: Logger, routes: RouteLabels, sinks: { requestLogs?: RequestLogSink; metrics?: Metrics } = {}) {
  const { requestLogs, metrics } = sinks;
  return (req: Request, res: Response, next: NextFunction): void => {
    const logging = logger.isLevelEnabled('info');
    if (!logging && !requestLogs && !metrics) return next();
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const auth = res.locals.auth as Authenticated | undefined;
      const route = routes.of(req);
      const elapsedNs = Number(process.hrtime.bigint() - started);
      metrics?.observeRequest(req.method, route, res.statusCode, elapsedNs / 1e9);
      const latencyMs = Math.round((elapsedNs / 1e6) * 1000) / 1000;
      if (logging) {
        logger.info(
          {
            requestId: res.locals.requestId,
            accountId: auth?.account?.id,
            livemode: auth?.livemode,
            method: req.method,
            route,
            status: res.statusCode,
            latencyMs,
          },
          'request',
        );
      }
      if (requestLogs && auth?.account) {
        requestLogs.add({
          accountId: auth.account.id,
          livemode: auth.livemode,
          method: req.method,
          route,
          operationName: route === '/graphql' ? operationNameOf(req) : null,
          status: res.statusCode,
          requestId: res.locals.requestId as string,
          keyPrefix: auth.key ? `${auth.key.prefix}…${auth.key.last4}` : null,
          latencyMs,
          createdAt: new Date(),
        });
      }
    });
    next();
  };
}

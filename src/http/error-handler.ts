import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/errors';
import { mapDatabaseError } from '../db/database-errors';
import type { Logger } from '../logger';
import { sendApiError } from '../rest/errors';

/** Last resort: known errors get their status; anything else is logged and answered as a bare 500. */
export function errorHandler(logger: Logger) {
  return (error: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error);
    const known = mapDatabaseError(error);
    if (known) return sendApiError(res, known, res.locals.requestId);
    if (error instanceof URIError) {
      // The router could not percent-decode a path parameter (`/v1/leads/%E0%A4%A`): an id of no
      // possible shape, so not found (CONTRACT §1), rather than the 500 express would answer.
      const message = 'No such resource: the request URL is not valid percent-encoded UTF-8';
      return sendApiError(res, new ApiError('resource_missing', message), res.locals.requestId);
    }
    logger.error({ err: error, requestId: res.locals.requestId }, 'unhandled error');
    sendApiError(res, new ApiError('internal_error', 'An unexpected error occurred. It has been logged; retry or contact support.'), res.locals.requestId);
  };
}

export function routeNotFound(req: Request, res: Response): void {
  sendApiError(res, new ApiError('resource_missing', `Unrecognized request URL (${req.method} ${req.baseUrl}${req.path})`), res.locals.requestId);
}

/**
 * The answer of a known path asked with a method it lacks: 405 with `Allow` (OPTIONS gets 204 with
 * `Allow`), in the contract's shape, rather than "unrecognized URL".
 */
export function methodNotAllowed(methods: Iterable<string>) {
  const allow = [...methods].join(', ');
  return (req: Request, res: Response): void => {
    res.setHeader('Allow', allow);
    if (req.method === 'OPTIONS') return void res.status(204).end();
    const error = new ApiError('method_not_allowed', `${req.method} is not allowed on ${req.baseUrl}${req.path}; use ${allow}`);
    sendApiError(res, error, res.locals.requestId);
  };
}

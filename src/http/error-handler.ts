import type { NextFunction, Request, Response } from 'express';
import { ApiError, internalError } from '../common/api-error';
import { ConflictMeanings, mapDatabaseError } from '../db/database-errors';
import type { Logger } from '../logger';
import { sendError } from './send-error';

/** Last resort: known errors get their status; anything else is logged and answered as a bare 500. */
export function errorHandler(logger: Logger, conflicts?: ConflictMeanings) {
  return (error: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error);
    const known = mapDatabaseError(error, conflicts);
    if (known) return sendError(res, known, 'rest');
    if (error instanceof URIError) {
      // The router could not percent-decode a path parameter (`/v1/leads/%E0%A4%A`): an id of no
      // possible shape, so not found (CONTRACT §1), rather than the 500 express would answer.
      const message = 'No such resource: the request URL is not valid percent-encoded UTF-8';
      return sendError(res, new ApiError('resource_missing', message), 'rest');
    }
    logger.error({ err: error, requestId: res.locals.requestId }, 'unhandled error');
    sendError(res, internalError(), 'rest');
  };
}

export function routeNotFound(req: Request, res: Response): void {
  sendError(res, new ApiError('resource_missing', `Unrecognized request URL (${req.method} ${req.baseUrl}${req.path})`), 'rest');
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
    sendError(res, error, 'rest');
  };
}

import type { Response } from 'express';
import type { GraphQLFormattedError } from 'graphql';
import { ApiError } from '../common/api-error';
import { ParamNaming, restError } from '../rest/rest-error';

/** The two shapes an error is written in: the contract's REST body, or GraphQL's `errors`. */
export type ErrorShape = 'rest' | 'graphql';

/**
 * The one sender of error answers outside GraphQL execution (the gate, bodies, Idempotency-Key,
 * the REST adapter, express's last resort): status and Retry-After from the error's code, the
 * body in the shape of the surface, the request id in it.
 */
export function sendError(res: Response, error: ApiError | GraphQLFormattedError, shape: ErrorShape, naming: ParamNaming = 'graphql'): void {
  const requestId = res.locals.requestId as string;
  const rest = restError({ message: error.message, extensions: error.extensions }, requestId, naming);
  if (rest.retryAfter) res.setHeader('Retry-After', rest.retryAfter);
  if (shape === 'rest') {
    res.status(rest.status).json(rest.body);
    return;
  }
  res.status(rest.status).json({ errors: [{ message: error.message, extensions: { ...error.extensions, requestId } }] });
}

/** Senders of one surface, for the middlewares that take one (`onError`). */
export const restErrors = (res: Response, error: ApiError): void => sendError(res, error, 'rest', 'rest');
export const graphqlErrors = (res: Response, error: ApiError): void => sendError(res, error, 'graphql');

import type { Response } from 'express';
import { ApiError } from '../common/errors';

/** An error raised before GraphQL runs (auth, body), written in the GraphQL response shape. */
export function sendGraphQLError(res: Response, error: ApiError): void {
  const retryAfter = error.extensions.retryAfter;
  if (typeof retryAfter === 'number') res.setHeader('Retry-After', String(retryAfter));
  else if (error.status === 503) res.setHeader('Retry-After', '5');
  res.status(error.status).json({ errors: [{ message: error.message, extensions: { ...error.extensions, requestId: res.locals.requestId } }] });
}

import { ApiError, retryAfterSeconds } from '../common/api-error';

/**
 * An error that decides the HTTP answer of /graphql (its status, and Retry-After when it has one):
 * errors raised before execution, rate limits and full queues. formatError removes `http` from
 * the body; the REST adapter reads the same code and retryAfter.
 */
export function requestError(error: ApiError): ApiError {
  const retryAfter = retryAfterSeconds(error.extensions, error.status);
  const headers = retryAfter !== undefined ? new Map([['retry-after', String(retryAfter)]]) : undefined;
  Object.assign(error.extensions, { http: { status: error.status, ...(headers ? { headers } : {}) } });
  return error;
}

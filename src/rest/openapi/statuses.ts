import { ERROR_CODES, ErrorCode } from '../../common/api-error';
import { RestRoute } from '../routes';

/** What each error status means, for the shared responses (components.responses.Error<status>). */
export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: a parameter is missing, unknown or invalid, or the body is not valid JSON',
  401: 'No API key, or an unknown, malformed or revoked key (or the expired old value of a rolled key)',
  403: "A restricted key (rk_) without the permission the route needs; the message names it, e.g. 'deals:write'",
  404: 'No such object in this account and mode (the path id, or an id the request refers to)',
  408: "The request did not arrive within the server's timeouts (10 s for the head, 30 s in all)",
  409: 'Conflict with the current state (duplicate, invalid transition, already registered, idempotent request in progress)',
  413: 'The request body is larger than 1 MiB',
  415: 'The request body is not application/json',
  431: 'The request line and headers are larger than 16 KiB',
  422: 'The request is well-formed but cannot be carried out (eligibility, agent config, credentials the provider refused, Idempotency-Key reused with another body)',
  429: 'Rate limit or daily quota exceeded; retry after Retry-After seconds',
  500: 'Internal error (never shows internals)',
  502: "A provider the request needs (a CRM verifying credentials) did not answer usably: refused connection, timeout, 5xx or 429 (with the provider's Retry-After)",
  503: 'Service temporarily unavailable (database unreachable, a statement over its time limit, or this instance at capacity rendering PDFs)',
};

/**
 * The errors a route can answer, by code: those of every route (a bad parameter, the key, the
 * server's limits, the database), those that follow from its shape (an object in the path: 404;
 * a body: 413 and 415; a POST: the Idempotency-Key's 409 and 422), and those its row declares for
 * the rules of its operation (`errors`).
 */
export function errorCodes(route: RestRoute): ErrorCode[] {
  const codes: ErrorCode[] = ['parameter_invalid', 'parameter_missing', 'parameter_unknown', 'api_key_missing', 'api_key_invalid', 'api_key_revoked'];
  codes.push('permission_denied'); // a restricted key without the route's permission (src/auth/permission.ts)
  codes.push('request_timeout', 'request_headers_too_large', 'rate_limit_exceeded', 'daily_quota_exceeded', 'internal_error');
  if (!route.statusFrom) codes.push('service_unavailable'); // health answers its own 503
  if (route.path.includes(':id')) codes.push('resource_missing');
  if (route.method === 'POST' || route.method === 'PUT') codes.push('invalid_json', 'request_too_large', 'unsupported_media_type');
  if (route.method === 'POST') codes.push('idempotency_in_progress', 'idempotency_key_reused');
  codes.push(...(route.errors ?? []));
  return [...new Set(codes)];
}

/** The error statuses of a route, ascending. */
export function errorStatuses(route: RestRoute): number[] {
  return [...new Set(errorCodes(route).map((code) => ERROR_CODES[code].status))].sort((a, b) => a - b);
}

/** An example error answer of a status: its first code, as CONTRACT §3 writes errors. */
export function errorExample(status: number): Record<string, unknown> {
  const code = (Object.keys(ERROR_CODES) as ErrorCode[]).find((c) => ERROR_CODES[c].status === status)!;
  return { error: { type: ERROR_CODES[code].type, code, message: `${ERROR_DESCRIPTIONS[status]}.`, request_id: 'req_01JD8X6Q5W3V2T1S0R9P8N7M6K' } };
}

import { GraphQLError } from 'graphql';

/** The GraphQL `extensions.code` values of CONTRACT §3. */
export type GraphQLErrorCode = 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'RATE_LIMITED' | 'INTERNAL_SERVER_ERROR';

export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'rate_limit_error' | 'idempotency_error' | 'api_error';

interface ErrorSpec {
  status: number;
  type: ErrorType;
  graphql: GraphQLErrorCode;
}

/**
 * Every error code the API can return, with its HTTP status, error type and GraphQL code.
 * This is the one table both surfaces read: GraphQL puts `graphql` in `extensions.code`, the REST
 * adapter answers with `status`.
 */
export const ERROR_CODES = {
  parameter_invalid: { status: 400, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  parameter_missing: { status: 400, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  parameter_unknown: { status: 400, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  invalid_json: { status: 400, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  invalid_query: { status: 400, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  query_too_complex: { status: 400, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  url_not_allowed: { status: 400, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  malformed_request: { status: 400, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  resource_missing: { status: 404, type: 'invalid_request_error', graphql: 'NOT_FOUND' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  request_timeout: { status: 408, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  resource_conflict: { status: 409, type: 'invalid_request_error', graphql: 'CONFLICT' },
  invalid_status_transition: { status: 409, type: 'invalid_request_error', graphql: 'CONFLICT' },
  invalid_stage_transition: { status: 409, type: 'invalid_request_error', graphql: 'CONFLICT' },
  already_registered: { status: 409, type: 'invalid_request_error', graphql: 'CONFLICT' },
  seat_limit_reached: { status: 409, type: 'invalid_request_error', graphql: 'CONFLICT' },
  request_too_large: { status: 413, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  request_headers_too_large: { status: 431, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  deal_not_eligible: { status: 422, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  agent_config_invalid: { status: 422, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  integration_auth_failed: { status: 422, type: 'invalid_request_error', graphql: 'BAD_USER_INPUT' },
  api_key_missing: { status: 401, type: 'authentication_error', graphql: 'UNAUTHENTICATED' },
  api_key_invalid: { status: 401, type: 'authentication_error', graphql: 'UNAUTHENTICATED' },
  api_key_revoked: { status: 401, type: 'authentication_error', graphql: 'UNAUTHENTICATED' },
  permission_denied: { status: 403, type: 'permission_error', graphql: 'FORBIDDEN' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error', graphql: 'RATE_LIMITED' },
  daily_quota_exceeded: { status: 429, type: 'rate_limit_error', graphql: 'RATE_LIMITED' },
  idempotency_key_reused: { status: 422, type: 'idempotency_error', graphql: 'BAD_USER_INPUT' },
  idempotency_in_progress: { status: 409, type: 'idempotency_error', graphql: 'CONFLICT' },
  internal_error: { status: 500, type: 'api_error', graphql: 'INTERNAL_SERVER_ERROR' },
  integration_unreachable: { status: 502, type: 'api_error', graphql: 'INTERNAL_SERVER_ERROR' },
  service_unavailable: { status: 503, type: 'api_error', graphql: 'INTERNAL_SERVER_ERROR' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}

/** Status for a GraphQL code when an error carries no API code of ours (GraphQL's own errors). */
export const GRAPHQL_CODE_STATUS: Record<GraphQLErrorCode, number> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
};

export interface ApiErrorOptions {
  /** The offending parameter, in GraphQL (camelCase) naming; REST renders it in snake_case. */
  param?: string;
  /** Extra machine-readable detail, e.g. every failed eligibility rule. */
  details?: Record<string, unknown>;
  /** Seconds until a retry can succeed; REST sends it as the Retry-After header. */
  retryAfterS?: number;
  /**
   * The REST name, when `param` ends in the client's own JSON keys (`config.qualifyAt`), which the
   * generic camelCase to snake_case mapping would otherwise rename: `config[qualifyAt]`.
   */
  restParam?: string;
}

/**
 * The closed set of domain errors: a GraphQL error whose extensions carry the GraphQL code, the
 * API `errorCode`, the error `type` and the `param`.
 */
export class ApiError extends GraphQLError {
  readonly errorCode: ErrorCode;
  readonly param?: string;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    const spec = ERROR_CODES[code];
    super(message, {
      extensions: {
        code: spec.graphql,
        errorCode: code,
        type: spec.type,
        ...(options.param ? { param: options.param } : {}),
        ...(options.retryAfterS ? { retryAfter: options.retryAfterS } : {}),
        ...(options.restParam ? { restParam: options.restParam } : {}),
        ...options.details,
      },
    });
    this.name = 'ApiError';
    this.errorCode = code;
    this.param = options.param;
  }

  get status(): number {
    return ERROR_CODES[this.errorCode].status;
  }
}

export const notFound = (what: string, id: string): ApiError => new ApiError('resource_missing', `No such ${what}: '${id}'`, { param: 'id' });

/** The only words a client sees of an unexpected error: no stack, SQL or library text ever leaves. */
export const INTERNAL_ERROR_MESSAGE = 'An unexpected error occurred. It has been logged; retry or contact support.';

export const internalError = (): ApiError => new ApiError('internal_error', INTERNAL_ERROR_MESSAGE);

/**
 * The Retry-After of an error, in seconds: its own (rate limits, a full render queue), else 5 for a
 * 503 (the database or a dependency will likely be back by then), else none.
 */
export function retryAfterSeconds(extensions: Record<string, unknown> | undefined, status: number): number | undefined {
  const own = extensions?.retryAfter;
  if (typeof own === 'number') return own;
  return status === 503 ? 5 : undefined;
}

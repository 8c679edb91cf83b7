import type { GraphQLFormattedError } from 'graphql';
import { ERROR_CODES, GRAPHQL_CODE_STATUS, GraphQLErrorCode, isErrorCode, retryAfterSeconds } from '../common/api-error';
import { restParam } from './case-mapping';

export interface RestErrorBody {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    request_id: string;
    [detail: string]: unknown;
  };
}

/** How an error's `param` is named: GraphQL (camelCase, rendered in snake_case) or already REST (kept as sent). */
export type ParamNaming = 'graphql' | 'rest';

/**
 * A GraphQL error as the contract's REST error: status from the API code (or, for GraphQL's own
 * errors, from extensions.code), `param` and parameter names in the message in snake_case.
 */
export function restError(
  error: GraphQLFormattedError,
  requestId: string,
  naming: ParamNaming = 'graphql',
): { status: number; body: RestErrorBody; retryAfter?: string } {
  const { code: graphqlCode, errorCode, type, param, retryAfter, restParam: explicit, ...details } = (error.extensions ?? {}) as Record<string, unknown>;
  const code = isErrorCode(errorCode) ? errorCode : 'internal_error';
  const spec = ERROR_CODES[code];
  const status = isErrorCode(errorCode) ? spec.status : (GRAPHQL_CODE_STATUS[graphqlCode as GraphQLErrorCode] ?? 500);
  const restParamName = typeof explicit === 'string' ? explicit : typeof param === 'string' ? (naming === 'rest' ? param : restParam(param)) : undefined;
  const message = typeof param === 'string' && restParamName ? error.message.split(param).join(restParamName) : error.message;
  return {
    status,
    retryAfter: retryAfterSeconds({ retryAfter }, status)?.toString(),
    body: {
      error: {
        type: typeof type === 'string' ? type : spec.type,
        code,
        message,
        ...(restParamName ? { param: restParamName } : {}),
        ...details,
        request_id: requestId,
      },
    },
  };
}

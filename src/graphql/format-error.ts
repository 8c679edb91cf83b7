import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, GraphQLFormattedError } from 'graphql';
import { ApiError, ERROR_CODES, ErrorCode, internalError } from '../common/api-error';
import { toApiError } from '../common/known-errors';
import type { ConflictMeanings } from '../db/database-errors';
import type { Logger } from '../logger';

/** GraphQL's own request errors (bad document, bad variables) and what they mean to a client. */
const REQUEST_ERRORS: Record<string, ErrorCode> = {
  GRAPHQL_PARSE_FAILED: 'invalid_query',
  GRAPHQL_VALIDATION_FAILED: 'invalid_query',
  BAD_REQUEST: 'invalid_query',
  OPERATION_RESOLUTION_FAILURE: 'invalid_query',
  PERSISTED_QUERY_NOT_FOUND: 'invalid_query',
  PERSISTED_QUERY_NOT_SUPPORTED: 'invalid_query',
  BAD_USER_INPUT: 'parameter_invalid',
};

/**
 * GraphQL's own refusals that carry no code: graphql-js's "Schema is not configured to execute
 * subscription operation", Apollo's persisted-query hash that does not match its text. They come
 * from no resolver (no path) and wrap no other error, so the request is wrong, not the server; an
 * error thrown anywhere in our code either has a path or is wrapped (originalError).
 */
function isRefusedRequest(error: unknown): boolean {
  return error instanceof GraphQLError && !error.path && !error.originalError;
}

function shape(error: ApiError, formatted: GraphQLFormattedError): GraphQLFormattedError {
  // `http` tells Apollo the status of a request-level error; it is not for clients.
  const { http: _http, ...extensions } = error.extensions;
  return { message: error.message, locations: formatted.locations, path: formatted.path, extensions };
}

/**
 * Apollo's formatError: known errors keep their code, GraphQL's own request errors become
 * BAD_USER_INPUT, and anything else is logged and hidden behind a generic 500 message (no stack,
 * SQL or library text ever reaches a client).
 */
export function createFormatError(logger: Logger, conflicts?: ConflictMeanings) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const known = toApiError(error, conflicts);
    if (known) return shape(known, formatted);
    const requestCode = REQUEST_ERRORS[String(formatted.extensions?.code)] ?? (isRefusedRequest(error) ? 'invalid_query' : undefined);
    if (requestCode) {
      const spec = ERROR_CODES[requestCode];
      return {
        message: formatted.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code: spec.graphql, errorCode: requestCode, type: spec.type },
      };
    }
    logger.error({ err: unwrapResolverError(error), path: formatted.path }, 'unexpected error in GraphQL operation');
    return shape(internalError(), formatted);
  };
}

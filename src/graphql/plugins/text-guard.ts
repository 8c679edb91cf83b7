import type { ApolloServerPlugin } from '@apollo/server';
import { DocumentNode, visit } from 'graphql';
import { ApiError } from '../../common/errors';

/** Where a value holds U+0000 (in a string or an object key), as a path, or undefined. */
function nulCharacterAt(value: unknown, path: Array<string | number>): Array<string | number> | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = nulCharacterAt(item, [...path, i]);
      if (found) return found;
    }
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) return path;
      const found = nulCharacterAt(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * An error that decides the HTTP answer of /graphql (its status, and Retry-After when it has one):
 * errors raised before execution, and rate limits. formatError removes `http` from the body.
 */
export function requestError(error: ApiError): ApiError {
  const retryAfter = error.extensions.retryAfter;
  const headers = typeof retryAfter === 'number' ? new Map([['retry-after', String(retryAfter)]]) : undefined;
  Object.assign(error.extensions, { http: { status: error.status, ...(headers ? { headers } : {}) } });
  return error;
}

/** Documents already walked and found clean: Apollo hands the same parsed document to every request that sends the same text. */
const checkedDocuments = new WeakSet<DocumentNode>();

/**
 * PostgreSQL text cannot hold U+0000, so such input would fail deep in the database as a 500.
 * Refused here, once, for every operation: REST routes run through the same Apollo pipeline.
 * The param is the path inside the variable (`company`, `metadata.a`), the name a client sent.
 */
export function textGuardPlugin(): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document }) {
          const path = nulCharacterAt(request.variables ?? {}, []);
          if (path) {
            const param = (path.length > 1 ? path.slice(1) : path).join('.');
            throw requestError(new ApiError('parameter_invalid', `${param} must not contain the character U+0000`, { param }));
          }
          if (checkedDocuments.has(document)) return;
          visit(document, {
            StringValue(node) {
              if (node.value.includes('\u0000')) {
                throw requestError(new ApiError('parameter_invalid', 'String values must not contain the character U+0000'));
              }
            },
          });
          checkedDocuments.add(document);
        },
      };
    },
  };
}

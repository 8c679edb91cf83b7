import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLSchema, separateOperations } from 'graphql';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { ApiError } from '../../common/errors';
import { requestError } from './text-guard';

/** Deepest selection an operation may have (the schema itself is at most 4 deep). */
export const MAX_DEPTH = 10;
/**
 * Work one operation may ask for. A full 100-row page of leads costs about 2,600; a second aliased
 * full page, or hundreds of aliased mutations, do not fit. List fields multiply their selection by
 * their `limit`, mutations cost 10 each.
 */
export const MAX_COMPLEXITY = 3000;

/**
 * Rejects an operation whose estimated cost exceeds MAX_COMPLEXITY before it runs, with 400
 * `query_too_complex`. Aliases and repeated fields all count, so they cannot multiply work past the
 * limit; batched HTTP requests are off (Apollo's default), so one request is one operation.
 */
export function costLimitPlugin(schema: GraphQLSchema, maxComplexity = MAX_COMPLEXITY): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, operationName }) {
          const operation = operationName ? separateOperations(document)[operationName] ?? document : document;
          let complexity: number;
          try {
            complexity = getComplexity({
              schema,
              query: operation,
              variables: request.variables ?? {},
              estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
            });
          } catch {
            // Variables that do not fit their types: execution refuses them with BAD_USER_INPUT
            // before any resolver runs, so no work is done that the limit would have to stop.
            return;
          }
          if (complexity > maxComplexity) {
            throw requestError(
              new ApiError('query_too_complex', `The operation's cost is ${complexity}, above the limit of ${maxComplexity}; ask for fewer fields, rows or aliases`),
            );
          }
        },
      };
    },
  };
}

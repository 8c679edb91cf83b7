import type { ApolloServerPlugin } from '@apollo/server';
import { BREAK, DocumentNode, GraphQLSchema, KnownFragmentNamesRule, NoFragmentCyclesRule, separateOperations, validate, ValidationRule, visit } from 'graphql';
import depthLimit from 'graphql-depth-limit';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import type { ComplexityEstimatorArgs } from 'graphql-query-complexity';
import { ApiError } from '../../common/errors';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../common/pagination';
import { requestError } from './text-guard';

/** Deepest selection an operation may have (the schema itself is at most 4 deep). */
export const MAX_DEPTH = 10;

/**
 * graphql-depth-limit's rule at MAX_DEPTH, for documents whose fragments all exist and do not
 * spread themselves. It follows spreads without checking them, so an unknown fragment throws and a
 * cycle recurses until the stack overflows: a 500 for what GraphQL's own rules (which run anyway)
 * answer with a 400. Introspection fields (`__schema`, `__type`) are not counted, as the standard
 * introspection query is 14 deep; GraphQL's MaxIntrospectionDepthRule stops introspection bombs.
 */
export function depthLimitRule(maxDepth = MAX_DEPTH): ValidationRule {
  const rule = depthLimit(maxDepth) as ValidationRule;
  return (context) =>
    validate(context.getSchema(), context.getDocument(), [KnownFragmentNamesRule, NoFragmentCyclesRule]).length > 0 ? {} : rule(context);
}

/**
 * Work one operation may ask for. A full 100-row page of leads costs about 2,600; a second aliased
 * full page, or hundreds of aliased mutations, do not fit. List fields multiply their selection by
 * their `limit`, mutations cost 10 each.
 */
export const MAX_COMPLEXITY = 3000;

/** What a mutation costs: it writes, so more than reading a field. */
export const MUTATION_COST = 10;

/**
 * A list field's cost: its selection times the rows it asks for (a limit over the maximum is
 * refused by validation, so it counts as the maximum).
 */
export function listComplexity({ args, childComplexity, context }: ComplexityEstimatorArgs): number {
  // The upper bound of a document, whatever its variables: every list at its largest page.
  if ((context as CostContext | undefined)?.upperBound) return 1 + MAX_PAGE_SIZE * childComplexity;
  const limit = (args.filter as { limit?: number | null } | undefined)?.limit;
  return 1 + Math.min(limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE) * childComplexity;
}

interface CostContext {
  upperBound?: boolean;
}

/** True when variables can change which fields run (`@include(if: $x)`), so no bound holds for every request. */
function hasDirectives(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive() {
      found = true;
      return BREAK;
    },
  });
  return found;
}

const ESTIMATORS = [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })];

export type CostCheck = (document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>) => void;

/**
 * Throws 400 `query_too_complex` when an operation's estimated cost, for these variables, exceeds
 * `maxComplexity`. Aliases and repeated fields all count, so they cannot multiply work past the
 * limit. An operation whose upper bound fits (every list at its largest page) is remembered, by
 * its parsed document, and never estimated again: Apollo hands the same parsed document to every
 * request with the same text, and every REST route's prepared document is one of these.
 */
export function createCostCheck(schema: GraphQLSchema, maxComplexity = MAX_COMPLEXITY): CostCheck {
  const alwaysFits = new WeakMap<DocumentNode, Set<string | null>>();
  return (document, operationName, variables) => {
    const name = operationName ?? null;
    if (alwaysFits.get(document)?.has(name)) return;
    const operation = operationName ? separateOperations(document)[operationName] ?? document : document;
    let complexity: number;
    try {
      complexity = getComplexity({ schema, query: operation, variables, estimators: ESTIMATORS });
    } catch {
      // Variables that do not fit their types: execution refuses them with BAD_USER_INPUT
      // before any resolver runs, so no work is done that the limit would have to stop.
      return;
    }
    if (complexity <= maxComplexity && !hasDirectives(operation)) {
      const upperBound = getComplexity({ schema, query: operation, variables, estimators: ESTIMATORS, context: { upperBound: true } satisfies CostContext });
      if (upperBound <= maxComplexity) alwaysFits.set(document, (alwaysFits.get(document) ?? new Set()).add(name));
    }
    if (complexity > maxComplexity) {
      throw requestError(
        new ApiError('query_too_complex', `The operation's cost is ${complexity}, above the limit of ${maxComplexity}; ask for fewer fields, rows or aliases`),
      );
    }
  };
}

/**
 * The cost check on every operation sent to /graphql, before it runs. Batched HTTP requests are
 * off (Apollo's default), so one request is one operation.
 */
export function costLimitPlugin(check: CostCheck): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, operationName }) {
          check(document, operationName, request.variables ?? {});
        },
      };
    },
  };
}

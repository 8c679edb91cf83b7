import {
  BREAK,
  DocumentNode,
  FragmentDefinitionNode,
  getIntrospectionQuery,
  getVariableValues,
  GraphQLSchema,
  Kind,
  OperationDefinitionNode,
  parse,
  SelectionSetNode,
  separateOperations,
  visit,
} from 'graphql';
import { ComplexityEstimator, fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import type { ComplexityEstimatorArgs } from 'graphql-query-complexity';
import { ApiError } from '../../common/api-error';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../common/pagination';
import type { OperationCheck } from './operation-check';
import { introspectionEstimator } from './introspection-cost';
import { requestError } from '../request-error';

export { depthLimitRule, MAX_DEPTH } from './depth-limit';

/**
 * Work one operation may ask for. A full 100-row page of leads costs about 2,600; a second aliased
 * full page, or hundreds of aliased mutations, do not fit. List fields multiply their selection by
 * their `limit`, mutations cost 10 each.
 */
export const MAX_COMPLEXITY = 3000;

/**
 * Root fields one operation may select, aliases included (`a: leads … b: leads` is two). Each runs
 * its own resolver and statements, and each is charged to the plan quota (quota-charge.ts).
 */
export const MAX_ROOT_FIELDS = 25;

/**
 * Tokens a document may hold (graphql-js stops parsing past it): about 50 kB of GraphQL, far more
 * than 25 root fields with every field selected need. It bounds validation, whose field-merging
 * rule takes time quadratic in the fields of one selection set (3,000 aliases: about 0.5 s).
 */
export const MAX_DOCUMENT_TOKENS = 10_000;

/** What a mutation costs: it writes, so more than reading a field. */
export const MUTATION_COST = 10;

/**
 * What an aggregate over a tenant's rows costs (a pipeline summary, the scoring model's figures), in
 * the units of a list's field values. Calibrated on the work measured (service and PostgreSQL CPU,
 * docs/RELIABILITY.md "A noisy neighbour"): a field value of a 100-row page costs about 15 µs, and
 * a pipeline summary of 40 deals about 1.5 ms, growing with the deals. At 20, a document of 25
 * aggregates cost less than one page of leads.
 */
export const AGGREGATE_COST = 200;

/**
 * An agent's metrics (or a simulation) read every run of the window: 600 runs took about 15 ms of
 * CPU, about a thousand field values' worth. The window bounds the runs read, so it sets the cost:
 * at most three 30-day windows fit one document.
 */
export const WINDOW_COSTS: Readonly<Record<string, number>> = { '24h': 250, '7d': 500, '30d': 1000 };
const DEFAULT_WINDOW = '7d';

export function windowComplexity({ args, context }: ComplexityEstimatorArgs): number {
  if ((context as CostContext | undefined)?.upperBound) return Math.max(...Object.values(WINDOW_COSTS));
  const window = ((args.filter ?? args.input) as { window?: string | null } | undefined | null)?.window;
  return WINDOW_COSTS[window ?? DEFAULT_WINDOW] ?? Math.max(...Object.values(WINDOW_COSTS));
}

/**
 * A list field's cost: its selection times the rows it asks for (a limit over the maximum is
 * refused by validation, so it counts as the maximum).
 */
export function listComplexity({ args, childComplexity, context }: ComplexityEstimatorArgs): number {
  // The upper bound of a document, whatever its variables: every list at its largest page.
  if ((context as CostContext | undefined)?.upperBound) return 1 + MAX_PAGE_SIZE * childComplexity;
  const limit = (args.filter as { limit?: number | null } | undefined | null)?.limit;
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

/** The operation a request runs: the named one, or the document's only one. */
function operationOf(document: DocumentNode, operationName: string | null | undefined): DocumentNode {
  return operationName ? (separateOperations(document)[operationName] ?? document) : document;
}

/**
 * The response keys an operation's root selection has (`a: leads … b: leads` is two), following
 * fragment spreads and inline fragments, each fragment once. @skip and @include are not evaluated,
 * so the count is an upper bound. At least 1.
 */
export function rootFieldCount(document: DocumentNode, operationName?: string | null): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    else if (definition.kind === Kind.OPERATION_DEFINITION && (!operationName || definition.name?.value === operationName)) operation ??= definition;
  }
  if (!operation) return 1;
  const keys = new Set<string>();
  const seen = new Set<string>();
  const collect = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) keys.add((selection.alias ?? selection.name).value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(operation.selectionSet);
  return Math.max(1, keys.size);
}

/**
 * Estimators of one of the two budgets. Data and introspection are costed apart, each root field
 * of the other kind counting 0: a document may introspect the whole schema once (what GraphiQL,
 * Apollo Sandbox and code generators send) whatever data it also reads, but not twice. An
 * introspection value costs what a data value costs: answering the standard query takes about
 * 25 ms of CPU for 6,000 values, about what a few full pages of leads take.
 */
function budgetEstimators(schema: GraphQLSchema, budget: 'data' | 'introspection'): ComplexityEstimator[] {
  const roots = new Set([schema.getQueryType(), schema.getMutationType()].filter(Boolean));
  const otherBudget: ComplexityEstimator = ({ type, field }) =>
    roots.has(type as never) && field.name.startsWith('__') !== (budget === 'introspection') && field.name !== '__typename' ? 0 : undefined;
  return [otherBudget, introspectionEstimator(schema), fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })];
}

const tooComplex = (message: string) => requestError(new ApiError('query_too_complex', message));

/**
 * Refuses with 400 `query_too_complex`, before it runs, an operation over MAX_ROOT_FIELDS root fields, over
 * `maxComplexity` for its variables, over one standard introspection, or whose cost cannot be computed
 * (graphql-query-complexity gives up past 10,000 nodes: never run unchecked). Aliases and repeats count. An
 * operation whose upper bound fits is remembered by its parsed document and not estimated again: Apollo hands the
 * same document to every request with that text, and each REST route's is prepared once.
 */
export function createCostCheck(schema: GraphQLSchema, maxComplexity = MAX_COMPLEXITY): OperationCheck {
  const alwaysFits = new WeakMap<DocumentNode, Set<string | null>>();
  const estimators = { data: budgetEstimators(schema, 'data'), introspection: budgetEstimators(schema, 'introspection') };
  const cost = (query: DocumentNode, budget: keyof typeof estimators, variables: Record<string, unknown>, context?: CostContext) =>
    getComplexity({ schema, query, variables, estimators: estimators[budget], context });
  const standardIntrospection = parse(
    getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    }),
  );
  // One full introspection with room to spare (Apollo Sandbox's query asks a little more), never two.
  const maxIntrospection = Math.ceil(1.5 * cost(standardIntrospection, 'introspection', {}));

  return ({ document, operationName, variables }) => {
    const name = operationName ?? null;
    if (alwaysFits.get(document)?.has(name)) return;
    const operation = operationOf(document, operationName);
    const roots = rootFieldCount(operation);
    if (roots > MAX_ROOT_FIELDS) {
      throw tooComplex(`The operation selects ${roots} root fields (aliases included), above the limit of ${MAX_ROOT_FIELDS}; split it into several requests`);
    }
    let data: number;
    let introspection: number;
    try {
      data = cost(operation, 'data', variables);
      introspection = cost(operation, 'introspection', variables);
    } catch (error) {
      // Variables that do not fit their types: execution refuses them with BAD_USER_INPUT before
      // any resolver runs, so no work is done that the limit would have to stop.
      const definition = operation.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      if (definition && getVariableValues(schema, definition.variableDefinitions ?? [], variables).errors) return;
      throw tooComplex(
        `The operation's cost cannot be computed (${error instanceof Error ? error.message : 'unknown reason'}); ask for fewer fields, fragments or aliases`,
      );
    }
    if (data > maxComplexity) {
      throw tooComplex(`The operation's cost is ${data}, above the limit of ${maxComplexity}; ask for fewer fields, rows or aliases`);
    }
    if (introspection > maxIntrospection) {
      throw tooComplex(
        `The operation's introspection costs ${introspection}, above the limit of ${maxIntrospection} (the full schema, once); introspect once and reuse the answer`,
      );
    }
    if (!hasDirectives(operation) && cost(operation, 'data', variables, { upperBound: true }) <= maxComplexity) {
      alwaysFits.set(document, (alwaysFits.get(document) ?? new Set()).add(name));
    }
  };
}

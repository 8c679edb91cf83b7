import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import { DocumentNode, execute, ExecutionResult, GraphQLError, GraphQLSchema } from 'graphql';
import { compileQuery, CompiledQuery, isCompiledQuery } from 'graphql-jit';

type Gateway = ApolloServerOptionsWithGateway<never>['gateway'];
type Executor = NonNullable<Awaited<ReturnType<Gateway['load']>>['executor']>;

/** What a document's operation became: seen once, compiled, or not compilable (graphql-js runs it). */
type Compiled = 'seen' | 'uncompilable' | CompiledQuery;

/**
 * graphql-jit's errors can lack `extensions` (a read-only property there), which graphql-js' always
 * have (the original error's, or empty) and Apollo reads before formatError: such an error is
 * answered as itself with graphql-js' value (same message, locations, path and original error).
 */
function withExtensions(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.some((error) => error.extensions === undefined)) return result;
  const errors = result.errors.map((error) => {
    if (error.extensions !== undefined) return error;
    const original = (error.originalError as { extensions?: unknown } | null | undefined)?.extensions;
    const extensions = typeof original === 'object' && original !== null ? original : {};
    return Object.create(error, { extensions: { value: extensions, enumerable: true } }) as GraphQLError;
  });
  return { ...result, errors };
}

/**
 * /graphql's execution step, the one part of Apollo's pipeline swapped: a document run a second time
 * is compiled with graphql-jit, as REST's prepared operations are, and runs compiled from then on.
 * Apollo's document store hands back the same parsed and validated DocumentNode for the same text,
 * so the compiled query lives as long as that entry (a WeakMap on the node, no cache of its own).
 * A first sighting, a document rewritten for one request (the permission plugin takes refused root
 * fields out), a document without the operation asked for, and what graphql-jit cannot compile run
 * through graphql-js' execute, as before; so does a request whose variables do not coerce (jit
 * answers before any resolver runs, with data undefined), so its errors are graphql-js' own. Everything before execution (parsing, validation,
 * depth, the operation checks: text, cost, charge) and after it (formatError, the HTTP answer)
 * stays Apollo's. Apollo's gateway interface is its hook for supplying the executor.
 */
export function compiledExecution(schema: GraphQLSchema): Gateway {
  const compiled = new WeakMap<DocumentNode, Map<string, Compiled>>();

  const compiledFor = (document: DocumentNode, operationName: string | undefined): CompiledQuery | undefined => {
    let byName = compiled.get(document);
    if (!byName) compiled.set(document, (byName = new Map()));
    const key = operationName ?? '';
    const known = byName.get(key);
    if (known === undefined) {
      byName.set(key, 'seen');
      return undefined;
    }
    if (known !== 'seen') return known === 'uncompilable' ? undefined : known;
    let query: CompiledQuery | ExecutionResult | undefined;
    try {
      query = compileQuery(schema, document, operationName, { disablingCapturingStackErrors: true });
    } catch {
      // graphql-jit throws on what it does not support; graphql-js runs such a document, as before.
    }
    const usable = query && isCompiledQuery(query) ? query : undefined;
    byName.set(key, usable ?? 'uncompilable');
    return usable;
  };

  const executor: Executor = async ({ document, request, operation, context }) => {
    const variables = request.variables ?? {};
    // The name the client sent, as Apollo's own execution passes it (the resolved one is null when none resolved).
    const operationName = request.operationName ?? undefined;
    // No operation resolved (an operationName the document lacks): graphql-js answers it, and Apollo
    // turns that answer into its 400, as without this executor.
    const query = operation ? compiledFor(document, operationName) : undefined;
    if (query) {
      const result = (await query.query(undefined, context, variables)) as ExecutionResult;
      if (result.data !== undefined) return withExtensions(result);
    }
    return execute({ schema, document, contextValue: context, variableValues: variables, operationName });
  };

  return {
    async load() {
      return { executor };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => undefined;
    },
    async stop() {},
  };
}

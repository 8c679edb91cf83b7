import { DocumentNode, GraphQLFormattedError, GraphQLSchema, parse, specifiedRules, validate } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { depthLimitRule } from './checks/depth-limit';
import type { RequestContext } from './context';
import { OperationCheck, runChecks } from './operation-checks';

export type FormatError = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

export interface PreparedResult {
  data?: Record<string, unknown> | null;
  /** The first error, already through formatError (as /graphql would answer it). */
  error?: GraphQLFormattedError;
}

export type PreparedOperation = (
  variables: Record<string, unknown>,
  context: RequestContext,
  setHeader: (name: string, value: string) => void,
) => Promise<PreparedResult>;

/** What /graphql applies to every operation, applied to prepared ones too. */
export interface PreparedChecks {
  /** The same list the Apollo plugin runs (operation-checks.ts). */
  checks: readonly OperationCheck[];
  formatError: FormatError;
}

/**
 * An operation the server itself sends (each REST route's), parsed and validated once at start
 * with the rules /graphql applies (GraphQL's, the depth limit) instead of on every request. A
 * request then runs what /graphql runs after those steps: every operation check (text, cost,
 * charge), the same resolvers (compiled by graphql-jit, so no per-field interpretation), and
 * errors through the same formatError. Apollo's request pipeline (hashing the text for its
 * document cache, plugin hooks) is for documents clients send.
 */
export function prepareOperation(schema: GraphQLSchema, source: string, { checks, formatError }: PreparedChecks): PreparedOperation {
  const document: DocumentNode = parse(source);
  const invalid = validate(schema, document, [...specifiedRules, depthLimitRule()]);
  if (invalid.length) throw new Error(`prepared operation does not validate: ${invalid.map((e) => e.message).join('; ')}\n${source}`);
  const compiled = compileQuery(schema, document, undefined, { disablingCapturingStackErrors: true });
  if (!isCompiledQuery(compiled)) throw new Error(`prepared operation does not compile: ${compiled.errors?.map((e) => e.message).join('; ')}\n${source}`);
  return async (variables, context, setHeader) => {
    try {
      await runChecks(checks, { document, variables, context, setHeader });
    } catch (error) {
      return { error: formatError({ message: error instanceof Error ? error.message : String(error) }, error) };
    }
    const result = await compiled.query(undefined, context, variables);
    const first = result.errors?.[0];
    return { data: result.data as Record<string, unknown> | null | undefined, error: first ? formatError(first.toJSON(), first) : undefined };
  };
}

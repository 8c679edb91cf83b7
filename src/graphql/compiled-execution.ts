import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import type { NextFunction, Request, Response } from 'express';
import { DocumentNode, execute, ExecutionResult, GraphQLError, GraphQLFormattedError, GraphQLSchema, Kind } from 'graphql';
import { compileQuery, CompiledQuery, isCompiledQuery } from 'graphql-jit';
import { isPlainObject } from '../common/objects';
import { RequestContext, RequestInfo, requestInfoOf } from './context';
import { OperationCheck, runChecks } from './operation-checks';
import type { FormatError } from './prepared-operation';
import { callerPermissions } from '../modules/accounts/api-key.service';

type Gateway = ApolloServerOptionsWithGateway<never>['gateway'];
type Executor = NonNullable<Awaited<ReturnType<Gateway['load']>>['executor']>;

/** What a document's operation became: seen once, compiled, or not compilable (graphql-js runs it). */
type Compiled = 'seen' | 'uncompilable' | CompiledQuery;

/** A document Apollo parsed, validated and ran compiled: what a later sending of the same text needs. */
interface Known {
  document: DocumentNode;
  /** The operation's own name, as Apollo hands it to the operation checks (null for an anonymous one). */
  operationName: string | null;
  query: CompiledQuery;
}

/**
 * How many document texts are answered without Apollo's pipeline; beyond it the oldest goes (Apollo
 * still knows it). Only texts up to KNOWN_TEXT_LENGTH characters are kept (a dashboard's documents
 * are a few KB), so the texts held stay within 16 Mi characters whatever clients send.
 */
const KNOWN_DOCUMENTS = 1_000;
export const KNOWN_TEXT_LENGTH = 16 * 1024;

/** Apollo's answer types for a single result, in its order of preference (its MEDIA_TYPES). */
const APPLICATION_JSON = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json; charset=utf-8';
const ANSWER_TYPES = [APPLICATION_JSON, GRAPHQL_RESPONSE_JSON, 'application/json; callbackSpec=1.0; charset=utf-8'];

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

/** Apollo's ensureGraphQLError: what a thrown value becomes before formatError. */
const asGraphQLError = (thrown: unknown): GraphQLError =>
  thrown instanceof GraphQLError
    ? thrown
    : thrown instanceof Error
      ? new GraphQLError(thrown.message, { originalError: thrown })
      : new GraphQLError(`Unexpected error value: ${String(thrown)}`);

/**
 * Apollo's treatment of a variable that does not coerce (its UserInputError): graphql-js' error
 * with the code BAD_USER_INPUT, which formatError turns into `parameter_invalid`.
 */
function asUserInputError(error: GraphQLError): GraphQLError {
  const variable = error.nodes?.length === 1 && error.nodes[0].kind === Kind.VARIABLE_DEFINITION ? error.nodes[0].variable.name.value : undefined;
  const coercion =
    variable !== undefined &&
    error.extensions?.code == null &&
    ['has invalid value', 'got invalid value ', 'of required type ', 'of non-null type '].some((words) =>
      error.message.startsWith(`Variable "$${variable}" ${words}`),
    );
  if (!coercion) return error;
  const converted = new GraphQLError(error.message, {
    nodes: error.nodes,
    originalError: error.originalError ?? error,
    extensions: { ...error.extensions, code: ApolloServerErrorCode.BAD_USER_INPUT },
  });
  converted.name = 'UserInputError';
  return converted;
}

/** What /graphql's answer needs besides its body: status and headers, as Apollo merges them from errors' `http`. */
interface Head {
  status?: number;
  headers: Map<string, string>;
}

/** Apollo's single result: its fields in its order (undefined ones are left out of the JSON). */
interface Answer {
  errors?: GraphQLFormattedError[];
  data?: ExecutionResult['data'];
  extensions?: ExecutionResult['extensions'];
}

/** Apollo's normalizeAndFormatErrors: each error through formatError, its `extensions.http` into the answer's head. */
function formatErrors(errors: readonly GraphQLError[], formatError: FormatError, head: Head): GraphQLFormattedError[] {
  return errors.map((error) => {
    const extensions: Record<string, unknown> = { ...error.extensions, code: error.extensions.code ?? ApolloServerErrorCode.INTERNAL_SERVER_ERROR };
    const http = extensions.http as { status?: unknown; headers?: unknown } | undefined;
    if (isPlainObject(http) && (!('status' in http) || typeof http.status === 'number') && (!('headers' in http) || http.headers instanceof Map)) {
      if (http.status) head.status = http.status as number;
      for (const [name, value] of (http.headers as Map<string, string> | undefined) ?? []) head.headers.set(name.toLowerCase(), value);
      delete extensions.http;
    }
    try {
      return formatError({ ...error.toJSON(), extensions }, error);
    } catch {
      return { message: 'Internal server error', extensions: { code: ApolloServerErrorCode.INTERNAL_SERVER_ERROR } };
    }
  });
}

export interface RepeatedDocumentsDependencies {
  /** The same checks the Apollo plugin runs (operation-checks.ts), in the same order. */
  checks: readonly OperationCheck[];
  /** The same formatError Apollo was given. */
  formatError: FormatError;
  createContext: (request: RequestInfo) => RequestContext;
  /** Told of each operation answered here (the metric graphql_repeated_documents_total). */
  onAnswered?: () => void;
}

export interface CompiledExecution {
  /** Apollo's gateway: its executor runs a document compiled from its second sending on. */
  gateway: Gateway;
  /**
   * For POST /graphql, in front of Apollo's middleware: answers a document Apollo has already run
   * compiled, or hands the request on to Apollo.
   */
  repeatedDocuments(deps: RepeatedDocumentsDependencies): (req: Request, res: Response, next: NextFunction) => Promise<void> | void;
}

/**
 * /graphql's execution, compiled for documents run again (docs/DESIGN.md, "One domain, two surfaces").
 * In Apollo's executor hook a document's second run compiles it with graphql-jit, kept on the DocumentNode
 * Apollo's store reuses for that text. `repeatedDocuments` then answers such a text in front of Apollo with
 * the same checks, formatError and answer format: validation depends on the schema alone, so a text Apollo
 * accepted once stays valid. Whatever Apollo or graphql-js would answer differently (a rewritten document,
 * variables that do not coerce, persisted queries, restricted keys, another Accept) still goes to them.
 */
export function compiledExecution(schema: GraphQLSchema): CompiledExecution {
  const compiled = new WeakMap<DocumentNode, Map<string, Compiled>>();
  /** By document text, then by the operation name the client sent ('' for none). */
  const known = new Map<string, Map<string, Known>>();

  const compiledFor = (document: DocumentNode, operationName: string | undefined): CompiledQuery | undefined => {
    let byName = compiled.get(document);
    if (!byName) compiled.set(document, (byName = new Map()));
    const key = operationName ?? '';
    const seen = byName.get(key);
    if (seen === undefined) {
      byName.set(key, 'seen');
      return undefined;
    }
    if (seen !== 'seen') return seen === 'uncompilable' ? undefined : seen;
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

  /**
   * A compiled query's result. Variables that do not coerce get graphql-js' own errors (jit answers
   * them before any resolver runs, with data undefined).
   */
  const executeCompiled = async (
    query: CompiledQuery,
    document: DocumentNode,
    operationName: string | null | undefined,
    context: unknown,
    variables: Record<string, unknown>,
  ): Promise<ExecutionResult> => {
    const result = (await query.query(undefined, context, variables)) as ExecutionResult;
    if (result.data !== undefined) return withExtensions(result);
    return execute({ schema, document, contextValue: context, variableValues: variables, operationName });
  };

  const remember = (text: string, sentName: string | undefined, entry: Known): void => {
    let byName = known.get(text);
    if (!byName) {
      if (known.size >= KNOWN_DOCUMENTS) known.delete(known.keys().next().value!);
      known.set(text, (byName = new Map()));
    }
    byName.set(sentName ?? '', entry);
  };

  const executor: Executor = async ({ document, request, operation, context }) => {
    const variables = request.variables ?? {};
    // The name the client sent, as Apollo's own execution passes it (the resolved one is null when none resolved).
    const operationName = request.operationName ?? undefined;
    // No operation resolved (an operationName the document lacks): graphql-js answers it, and Apollo
    // turns that answer into its 400, as without this executor.
    const query = operation ? compiledFor(document, operationName) : undefined;
    if (query) {
      // Apollo's own document (a restricted key's may be rewritten): later sendings can skip Apollo.
      if (typeof request.query === 'string' && request.query.length <= KNOWN_TEXT_LENGTH && !callerPermissions((context as RequestContext).auth)) {
        remember(request.query, operationName, { document, operationName: operation?.name?.value ?? null, query });
      }
      return executeCompiled(query, document, operationName, context, variables);
    }
    return execute({ schema, document, contextValue: context, variableValues: variables, operationName });
  };

  const repeatedDocuments = ({ checks, formatError, createContext, onAnswered }: RepeatedDocumentsDependencies) => {
    /** Apollo's sendErrorResponse: a refused check or a failed execution is the only error, 500 unless it carries a status. */
    const failed = (error: unknown, head: Head): Answer => {
      const errors = formatErrors([asGraphQLError(error)], formatError, head);
      head.status ||= 500;
      return { errors };
    };
    /** Runs a known document as Apollo would after validation; the answer's head and Apollo's result. */
    const run = async (entry: Known, variables: Record<string, unknown>, context: RequestContext, head: Head): Promise<Answer> => {
      const setHeader = (name: string, value: string) => head.headers.set(name.toLowerCase(), value);
      try {
        await runChecks(checks, { document: entry.document, operationName: entry.operationName, variables, context, setHeader });
      } catch (error) {
        return failed(error, head);
      }
      let result: ExecutionResult;
      try {
        result = await executeCompiled(entry.query, entry.document, entry.operationName, context, variables);
      } catch (error) {
        return failed(error, head);
      }
      const errors = result.errors?.map(asUserInputError);
      const formatted = errors ? formatErrors(errors, formatError, head) : undefined;
      // Apollo's status400ForVariableCoercionErrors: errors and no data at all is the request's fault.
      if (formatted?.length && result.data === undefined && !head.status) head.status = 400;
      return { errors: formatted, data: result.data, extensions: result.extensions };
    };

    return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      const body: unknown = req.body;
      if (req.method !== 'POST' || !isPlainObject(body) || typeof body.query !== 'string' || 'extensions' in body) return next();
      const { variables = null, operationName = null } = body;
      if ((variables !== null && !isPlainObject(variables)) || (operationName !== null && typeof operationName !== 'string')) return next();
      const entry = known.get(body.query)?.get(operationName ?? '');
      const auth = res.locals.auth as RequestInfo['auth'] | undefined;
      if (!entry || !auth || callerPermissions(auth)) return next();
      // Apollo's choice of answer type; what it would refuse (406) or answer otherwise, it answers itself.
      const type = req.headers.accept ? req.accepts(ANSWER_TYPES) : APPLICATION_JSON;
      if (type !== APPLICATION_JSON && type !== GRAPHQL_RESPONSE_JSON) return next();

      onAnswered?.();
      const context = createContext({ ...requestInfoOf(res), auth });
      const head: Head = { headers: new Map() };
      const result = await run(entry, variables ?? {}, context, head);
      if (!head.headers.has('content-type')) head.headers.set('content-type', type);
      for (const [name, value] of head.headers) res.setHeader(name, value);
      res.statusCode = head.status || 200;
      // Apollo's stringifyResult, with its order of fields.
      res.send(`${JSON.stringify({ errors: result.errors, data: result.data, extensions: result.extensions })}\n`);
    };
  };

  return {
    gateway: {
      async load() {
        return { executor };
      },
      onSchemaLoadOrUpdate(callback) {
        callback({ apiSchema: schema, coreSupergraphSdl: '' });
        return () => undefined;
      },
      async stop() {},
    },
    repeatedDocuments,
  };
}

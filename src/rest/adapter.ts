import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  coerceInputValue,
  OperationDefinitionNode,
  parse,
  GraphQLArgument,
  GraphQLField,
  GraphQLInputType,
  GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isNonNullType,
} from 'graphql';
import { refusedRootFields } from '../auth/permission';
import { ApiError } from '../common/api-error';
import type { FileDownload } from '../common/file-download';
import { isPlainObject } from '../common/objects';
import { RequestContext, RequestInfo, requestInfoOf } from '../graphql/context';
import { PreparedChecks, PreparedOperation, prepareOperation } from '../graphql/prepared-operation';
import { methodNotAllowed } from '../http/error-handler';
import { type Authenticated, callerPermissions } from '../modules/accounts/api-key.service';
import type { KeyPermissions } from '../modules/accounts/key-permissions';
import { bodyNotAnObject } from '../http/json-body';
import { sendError } from '../http/send-error';
import { sendFile } from '../http/send-file';
import { camelToSnake, paramPath, toGraphQLInput } from './case-mapping';
import { RestRoute } from './routes';
import { selectAll } from './selection';

export interface RestAdapterDependencies {
  schema: GraphQLSchema;
  /** The checks /graphql runs on every operation, run here on each route's prepared operation. */
  checks: PreparedChecks;
  createContext: (request: RequestInfo) => RequestContext;
  /**
   * Runs between a request's route being found and allowed and the route running: the
   * Idempotency-Key middleware, so that a stored answer is replayed only to a caller the route's
   * permissions let make the request, and only requests to a route are stored.
   */
  beforeRun?: RequestHandler;
}

interface CompiledRoute {
  route: RestRoute;
  field: GraphQLField<unknown, unknown>;
  run: PreparedOperation;
  /** Why a restricted key may not run this route (every field its answer selects is judged), or undefined. */
  refusal(permissions: KeyPermissions): ApiError | undefined;
}

/** Builds `mutation CreateLead($input: LeadCreateInput!) { createLead(input: $input) { … } }` from the schema. */
function compile(route: RestRoute, schema: GraphQLSchema, checks: PreparedChecks): CompiledRoute {
  const { type, field: fieldName } = route.operation;
  const root = type === 'query' ? schema.getQueryType() : schema.getMutationType();
  const field = root?.getFields()[fieldName];
  if (!field) throw new Error(`REST route ${route.method} ${route.path} names unknown ${type} field "${fieldName}"`);
  const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
  for (const arg of field.args) {
    const sourced = pathParams.includes(arg.name) || arg.name === route.operation.body || arg.name === route.operation.query;
    if (!sourced && isNonNullType(arg.type)) {
      throw new Error(`REST route ${route.method} ${route.path} gives no value for required argument "${arg.name}"`);
    }
  }
  const operationName = fieldName.charAt(0).toUpperCase() + fieldName.slice(1);
  const definitions = field.args.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
  const args = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  // A JSON answer's fields are selected under their REST names (the answer needs no renaming); a
  // file's are read by sendFile under their own.
  const document =
    `${type} Rest${operationName}${definitions ? `(${definitions})` : ''} ` +
    `{ ${fieldName}${args ? `(${args})` : ''} ${selectAll(field.type, { restNames: !route.file })} }`;
  const parsed = parse(document);
  const operation = parsed.definitions[0] as OperationDefinitionNode;
  // A prepared document has no directives, so no variable changes what it selects.
  const refusal = (permissions: KeyPermissions) => refusedRootFields(schema, parsed, operation, {}, permissions).values().next().value?.error;
  return { route, field, run: prepareOperation(schema, document, checks), refusal };
}

function describeType(type: GraphQLInputType): string {
  const named = getNamedType(type);
  if (isEnumType(named))
    return `one of ${named
      .getValues()
      .map((v) => v.value as string)
      .join(', ')}`;
  if (isInputObjectType(named)) return 'an object';
  switch (named.name) {
    case 'Int':
      return 'an integer (32-bit)';
    case 'Float':
      return 'a number';
    case 'Boolean':
      return 'true or false';
    case 'DateTimeISO':
      return 'an ISO 8601 date-time such as 2026-11-22T03:18:04.361Z';
    case 'JSONObject':
      return 'a JSON object';
    default:
      return 'a string';
  }
}

/**
 * Type-checks a variable the way GraphQL will, but reports the failing parameter by its REST name
 * (`employees`, `metadata`), as 400 `parameter_missing` or `parameter_invalid`. A query-string
 * list is one comma-separated parameter (`stage=a,b`), so its item indexes are not part of the name.
 */
function checkVariable(value: unknown, arg: GraphQLArgument, prefix: Array<string | number>, fromQuery = false): void {
  let problem: ApiError | undefined;
  const restPath = (parts: ReadonlyArray<string | number>) =>
    parts.filter((p) => !(fromQuery && typeof p === 'number')).map((p) => (typeof p === 'string' ? camelToSnake(p) : p));
  coerceInputValue(value, arg.type, (path, invalid, error) => {
    if (problem) return;
    const missing = /^Field "(\w+)" of required type "([^"]+)" was not provided/.exec(error.message);
    if (missing) {
      const param = paramPath(restPath([...prefix, ...path, missing[1]]));
      problem = new ApiError('parameter_missing', `${param} is required`, { param });
      return;
    }
    const full = restPath([...prefix, ...path]);
    const param = full.length ? paramPath(full) : arg.name;
    const expected = path.length ? fieldTypeAt(arg.type, path) : arg.type;
    problem =
      invalid === undefined || invalid === null
        ? new ApiError('parameter_missing', `${param} is required`, { param })
        : new ApiError('parameter_invalid', `${param} must be ${describeType(expected ?? arg.type)}`, { param });
  });
  if (problem) throw problem;
}

function fieldTypeAt(type: GraphQLInputType, path: ReadonlyArray<string | number>): GraphQLInputType | undefined {
  let current: GraphQLInputType | undefined = type;
  for (const part of path) {
    const named: GraphQLInputType | undefined = current ? (getNamedType(current) as GraphQLInputType) : undefined;
    if (typeof part === 'number') continue;
    current = named && isInputObjectType(named) ? named.getFields()[part]?.type : undefined;
  }
  return current;
}

/**
 * Stripe-style nested query parameters as one object: `fields[seats][gte]=100&fields[tier]=gold`
 * is `fields: {seats: {gte: "100"}, tier: "gold"}` (custom field filters). A name given both
 * plain and nested is refused.
 */
function foldBrackets(query: Record<string, string>): Record<string, unknown> {
  const folded = Object.create(null) as Record<string, unknown>;
  for (const [key, value] of Object.entries(query)) {
    const match = /^([A-Za-z_]\w*)((?:\[[^[\]]+\])+)$/.exec(key);
    if (!match) {
      if (key in folded) throw new ApiError('parameter_invalid', `${key} is given both as a value and as ${key}[…]`, { param: key });
      folded[key] = value;
      continue;
    }
    const path = [...match[2].matchAll(/\[([^[\]]+)\]/g)].map((part) => part[1]);
    let at = folded as Record<string, unknown>;
    for (const [i, part] of [match[1], ...path].entries()) {
      const last = i === path.length;
      const existing = at[part];
      if (last) {
        if (existing !== undefined) throw new ApiError('parameter_invalid', `${key} is given twice`, { param: key });
        at[part] = value;
      } else {
        if (existing !== undefined && (typeof existing !== 'object' || existing === null)) {
          throw new ApiError('parameter_invalid', `${key} is given both as a value and with […]`, { param: key });
        }
        at = (at[part] ??= Object.create(null) as Record<string, unknown>) as Record<string, unknown>;
      }
    }
  }
  return folded;
}

function variablesFor(compiled: CompiledRoute, req: Request): Record<string, unknown> {
  const { route, field } = compiled;
  const operation = route.operation;
  const variables: Record<string, unknown> = {};
  const query = req.query as Record<string, unknown>;

  if (!operation.query) {
    const unknown = Object.keys(query)[0];
    if (unknown) throw new ApiError('parameter_unknown', `Received unknown parameter: ${unknown}`, { param: unknown });
  }
  for (const arg of field.args) {
    let value: unknown;
    if (arg.name in req.params) {
      value = req.params[arg.name];
    } else if (arg.name === operation.body) {
      const body: unknown = req.body ?? {};
      if (!isPlainObject(body)) throw bodyNotAnObject(body);
      value = toGraphQLInput(body, arg.type, 'body');
    } else if (arg.name === operation.query) {
      for (const [key, item] of Object.entries(query)) {
        if (typeof item !== 'string') {
          throw new ApiError('parameter_invalid', `${key} must be given once, as text (use a comma list for several values)`, { param: key });
        }
      }
      value = toGraphQLInput(foldBrackets(query as Record<string, string>), arg.type, 'query');
    } else {
      continue;
    }
    checkVariable(value, arg, [], arg.name === operation.query);
    variables[arg.name] = value;
  }
  return variables;
}

/** One row of the route table as the dispatcher matches it: its path as a regular expression. */
interface Entry {
  method: string;
  pattern: RegExp;
  params: string[];
  /** The 405 answer of this row's path, for a method none of its rows has. */
  notAllowed: RequestHandler;
  compiled: CompiledRoute;
  handle: (req: Request, res: Response) => Promise<void>;
}

/**
 * A route's path as express 5 matches it (path-to-regexp with the router's defaults): any case, an
 * optional trailing slash, a parameter being one non-empty segment.
 */
function pathPattern(path: string): { pattern: RegExp; params: string[] } {
  const params: string[] = [];
  const source = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_, name: string) => {
    params.push(name);
    return '([^/]+)';
  });
  return { pattern: new RegExp(`^${source}/?$`, 'i'), params };
}

/** A path parameter percent-decoded as express decodes it; a malformed one is a URIError (errorHandler: 404). */
function decodeParam(value: string): string {
  return value.includes('%') ? decodeURIComponent(value) : value;
}

/**
 * The generic REST handler: each route table row runs its GraphQL operation in-process, prepared once at start
 * (same schema, resolvers, checks and errors as /graphql), then maps the answer to snake_case and error codes to
 * statuses. One middleware dispatches every row (by first path segment, then table order), because an express
 * route per row was tried row by row, with express's layer bookkeeping around each try.
 */
export function createRestRouter(routes: readonly RestRoute[], deps: RestAdapterDependencies): RequestHandler {
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of routes) {
    const methods = methodsByPath.get(route.path) ?? methodsByPath.set(route.path, new Set()).get(route.path)!;
    methods.add(route.method);
    if (route.method === 'GET') methods.add('HEAD');
  }
  const bySegment = new Map<string, Entry[]>();
  for (const route of routes) {
    const compiled = compile(route, deps.schema, deps.checks);
    const handle = async (req: Request, res: Response): Promise<void> => {
      try {
        const variables = variablesFor(compiled, req);
        const contextValue = deps.createContext(requestInfoOf(res));
        try {
          const { data, error } = await compiled.run(variables, contextValue, (name, value) => res.setHeader(name, value));
          if (error) return sendError(res, error, 'rest');
          if (route.file) return sendFile(req, res, (data as Record<string, FileDownload>)[compiled.field.name]);
          const result = (data as Record<string, Record<string, unknown>>)[compiled.field.name];
          res.status(route.statusFrom ? route.statusFrom(result) : (route.status ?? 200)).json(result);
        } finally {
          contextValue.em.clear();
        }
      } catch (error) {
        // The adapter's own errors already name REST parameters (`contact_email`, or an unknown `contactEmail`).
        if (error instanceof ApiError) return sendError(res, error, 'rest', 'rest');
        throw error;
      }
    };
    // The dispatcher is mounted at /v1; rows keep their full path because that is what clients call.
    const path = route.path.replace(/^\/v1/, '');
    const segment = path.split('/')[1].toLowerCase();
    const entries = bySegment.get(segment) ?? bySegment.set(segment, []).get(segment)!;
    entries.push({ method: route.method, ...pathPattern(path), notAllowed: methodNotAllowed(methodsByPath.get(route.path)!), compiled, handle });
  }

  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    const end = path.indexOf('/', 1);
    const entries = bySegment.get((end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase());
    if (!entries) return next();
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    let known: Entry | undefined;
    for (const entry of entries) {
      const match = entry.pattern.exec(path);
      if (!match) continue;
      known ??= entry;
      if (entry.method !== method) continue;
      const params: Record<string, string> = {};
      try {
        entry.params.forEach((name, i) => (params[name] = decodeParam(match[i + 1])));
      } catch (error) {
        return next(error);
      }
      req.params = params;
      // Refused before anything else looks at the request: its body, its Idempotency-Key.
      const permissions = callerPermissions(res.locals.auth as Authenticated);
      const refused = permissions ? entry.compiled.refusal(permissions) : undefined;
      if (refused) return sendError(res, refused, 'rest', 'rest');
      const run = () => void entry.handle(req, res).catch(next);
      if (!deps.beforeRun) return run();
      void Promise.resolve(deps.beforeRun(req, res, (error?: unknown) => (error ? next(error) : run()))).catch(next);
      return;
    }
    // A known path asked with a method it lacks is 405 with the methods it has, not "unrecognized URL".
    if (known) return void known.notAllowed(req, res, next);
    next();
  };
}

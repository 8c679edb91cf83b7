import {
  GraphQLField,
  GraphQLInputObjectType,
  GraphQLNamedType,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { ERROR_CODES } from '../common/api-error';
import { NOT_NULL_EXTENSION } from '../common/validation';
import { camelToSnake } from './case-mapping';
import { RestRoute } from './routes';
import { restFields } from './selection';

/**
 * The OpenAPI 3.1 description of the REST API, generated from the route table and the GraphQL
 * types the routes run, so the document cannot drift from what the adapter serves: one operation
 * per row, parameters and bodies from the GraphQL input types, responses from the object types as
 * REST shows them (restFields, snake_case), errors in the CONTRACT §3 shape.
 */
export interface OpenApiOptions {
  version: string;
  serverUrl: string;
}

type JsonSchema = Record<string, unknown>;
type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, JsonSchema>> };

/** The server the committed openapi.json names (the default PUBLIC_URL); the served document names the configured one. */
export const DEFAULT_SERVER_URL = 'http://localhost:3000';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: a parameter is missing, unknown or invalid, or the body is not valid JSON',
  401: 'No API key, or an unknown, malformed or revoked key (or the expired old value of a rolled key)',
  403: "A restricted key (rk_) without the permission the route needs; the message names it, e.g. 'deals:write'",
  404: 'No such object in this account and mode',
  408: "The request did not arrive within the server's timeouts (10 s for the head, 30 s in all)",
  409: 'Conflict with the current state (duplicate, invalid transition, already registered, idempotent request in progress)',
  413: 'The request body is larger than 1 MiB',
  415: 'The request body is not application/json',
  431: 'The request line and headers are larger than 16 KiB',
  422: 'The request is well-formed but cannot be carried out (eligibility, agent config, credentials the provider refused, Idempotency-Key reused with another body)',
  429: 'Rate limit or daily quota exceeded; retry after Retry-After seconds',
  500: 'Internal error (never shows internals)',
  502: "A provider the request needs (a CRM verifying credentials) did not answer usably: refused connection, timeout, 5xx or 429 (with the provider's Retry-After)",
  503: 'Service temporarily unavailable (database unreachable, a statement over its time limit, or this instance at capacity rendering PDFs)',
};

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** A GraphQL description as REST readers need it: the fields it names (`contactEmail`) in their REST names (`contact_email`). */
export const restText = (text: string): string => text.replace(/\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b/g, camelToSnake);

const withDescription = (schema: JsonSchema, description?: string | null): JsonSchema =>
  description ? { ...schema, description: restText(description) } : schema;

const NOT_NULL_NOTE = 'Cannot be null: leave it out to keep the current value.';

/** `{type: x}` → `{type: [x, "null"]}`; a reference or enum becomes `anyOf` with null. */
function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string' && !schema.enum) return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

class SchemaBuilder {
  readonly components: Record<string, JsonSchema> = {};

  /** The JSON schema of a GraphQL type; named enums, inputs and objects go to components. */
  of(type: GraphQLType, orNull = true): JsonSchema {
    if (isNonNullType(type)) return this.of(type.ofType, false);
    const schema = isListType(type) ? { type: 'array', items: this.of(type.ofType) } : this.named(type);
    return orNull ? nullable(schema) : schema;
  }

  private named(type: GraphQLNamedType): JsonSchema {
    if (isEnumType(type)) return this.component(type, () => ({ type: 'string', enum: type.getValues().map((v) => v.value as string) }));
    if (isInputObjectType(type)) return this.component(type, () => this.input(type));
    if (isObjectType(type)) return this.component(type, () => this.object(type));
    switch (type.name) {
      case 'Int':
        return { type: 'integer', format: 'int32' };
      case 'Float':
        return { type: 'number' };
      case 'Boolean':
        return { type: 'boolean' };
      case 'DateTimeISO':
        return { type: 'string', format: 'date-time' };
      case 'JSONObject':
        return { type: 'object', additionalProperties: true };
      default:
        return { type: 'string' };
    }
  }

  private component(type: GraphQLNamedType, build: () => JsonSchema): JsonSchema {
    if (!this.components[type.name]) {
      this.components[type.name] = {}; // placeholder first: types may refer to themselves
      this.components[type.name] = withDescription(build(), type.description);
    }
    return ref(type.name);
  }

  /**
   * A request body: the input type's fields in snake_case, non-null ones required, nothing else
   * accepted. Optional fields take null (on an update, null clears them), except NotNull ones.
   */
  input(type: GraphQLInputObjectType): JsonSchema {
    const fields = Object.values(type.getFields());
    const property = (f: (typeof fields)[number]) => {
      const notNull = f.extensions?.[NOT_NULL_EXTENSION] === true;
      const description = notNull ? [f.description, NOT_NULL_NOTE].filter(Boolean).join(' ') : f.description;
      return withDescription(this.of(f.type, !notNull), description);
    };
    const properties = Object.fromEntries(fields.map((f) => [camelToSnake(f.name), property(f)]));
    const required = fields.filter((f) => isNonNullType(f.type)).map((f) => camelToSnake(f.name));
    return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
  }

  /** A response object exactly as REST shows it: every REST field, always present (null when empty). */
  object(type: GraphQLObjectType): JsonSchema {
    const fields = restFields(type);
    const properties = Object.fromEntries(fields.map((f) => [camelToSnake(f.name), withDescription(this.of(f.type), f.description)]));
    return { type: 'object', properties, required: fields.map((f) => camelToSnake(f.name)) };
  }
}

const rateLimitHeaders = (): Record<string, JsonSchema> => ({
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
  'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
});

/** The error statuses a route can answer, from what it takes: an id, a body, a POST (Idempotency-Key). */
function errorStatuses(route: RestRoute): number[] {
  const statuses = [400, 401, 403];
  if (route.path.includes(':id')) statuses.push(404);
  if (route.operation.type === 'mutation') statuses.push(409);
  if (route.method === 'POST' || route.method === 'PUT') statuses.push(413, 415);
  if (route.method === 'POST') statuses.push(422);
  statuses.push(408, 429, 431, 500, ...(route.errors ?? []));
  if (!route.statusFrom) statuses.push(503);
  return statuses;
}

function rootField(schema: GraphQLSchema, route: RestRoute): GraphQLField<unknown, unknown> {
  const root = route.operation.type === 'query' ? schema.getQueryType() : schema.getMutationType();
  const field = root?.getFields()[route.operation.field];
  if (!field) throw new Error(`REST route ${route.method} ${route.path} names unknown ${route.operation.type} field "${route.operation.field}"`);
  return field;
}

function operation(route: RestRoute, schema: GraphQLSchema, types: SchemaBuilder): JsonSchema {
  const field = rootField(schema, route);
  const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
  const parameters: JsonSchema[] = pathParams.map((name) => {
    const arg = field.args.find((a) => a.name === name);
    return { name, in: 'path', required: true, schema: arg ? types.of(arg.type, false) : { type: 'string' } };
  });
  const queryArg = field.args.find((a) => a.name === route.operation.query);
  const queryType = queryArg && isNonNullType(queryArg.type) ? queryArg.type.ofType : queryArg?.type;
  if (queryType && isInputObjectType(queryType)) {
    for (const f of Object.values(queryType.getFields())) {
      const schemaOf = types.of(f.type, false);
      parameters.push({
        name: camelToSnake(f.name),
        in: 'query',
        required: isNonNullType(f.type),
        ...(f.description ? { description: restText(f.description) } : {}),
        schema: schemaOf,
        ...(schemaOf.type === 'array' ? { style: 'form', explode: false } : {}),
      });
    }
  }
  if (route.method === 'POST') parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const bodyArg = field.args.find((a) => a.name === route.operation.body);
  const requestBody = bodyArg && {
    required: isNonNullType(bodyArg.type),
    content: { 'application/json': { schema: types.of(bodyArg.type, false) } },
  };

  const status = route.status ?? 200;
  const success = route.file
    ? {
        description: 'The file',
        headers: {
          ...rateLimitHeaders(),
          'Content-Disposition': { description: 'attachment; filename="…"', schema: { type: 'string' } },
          ETag: { description: 'Strong ETag of the bytes; send it as If-None-Match to get 304', schema: { type: 'string' } },
        },
        content: { 'application/pdf': { schema: { type: 'string', format: 'binary', contentMediaType: 'application/pdf' } } },
      }
    : { description: route.summary, headers: rateLimitHeaders(), content: { 'application/json': { schema: types.of(field.type, false) } } };
  const responses: Record<string, JsonSchema> = { [status]: success };
  if (route.statusFrom) responses['503'] = { ...success, description: 'Degraded: the database is unreachable' };
  if (route.file) responses['304'] = { description: 'Not modified (If-None-Match matched the ETag)', headers: rateLimitHeaders() };
  for (const code of errorStatuses(route)) responses[code] ??= { $ref: `#/components/responses/Error${code}` };

  return {
    operationId: field.name,
    summary: route.summary,
    ...(field.description ? { description: restText(field.description) } : {}),
    tags: [route.path.split('/')[2]],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/** The OpenAPI 3.1 document of the REST routes. */
export function buildOpenApi(schema: GraphQLSchema, routes: readonly RestRoute[], options: OpenApiOptions): OpenApiDocument {
  const types = new SchemaBuilder();
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const method = route.method.toLowerCase();
    if (paths[path]?.[method]) throw new Error(`REST route ${route.method} ${route.path} is in the table twice`);
    (paths[path] ??= {})[method] = operation(route, schema, types);
  }
  const codes = Object.keys(ERROR_CODES) as Array<keyof typeof ERROR_CODES>;
  const errorResponses = Object.fromEntries(
    Object.keys(ERROR_DESCRIPTIONS).map((status) => [
      `Error${status}`,
      {
        description: `${ERROR_DESCRIPTIONS[Number(status)]}. Codes: ${codes.filter((c) => ERROR_CODES[c].status === Number(status)).join(', ')}`,
        headers: {
          ...rateLimitHeaders(),
          ...(['429', '502', '503'].includes(status) ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : {}),
        },
        content: { 'application/json': { schema: ref('Error') } },
      },
    ]),
  );
  const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });

  return {
    openapi: '3.1.0',
    info: {
      title: 'Sales Pipeline API',
      version: options.version,
      description:
        'REST API for leads, deals, proposals, AI agents, integrations and webhooks. Field names are snake_case; ' +
        'every operation also exists in the GraphQL API at /graphql (operationId is the GraphQL field). ' +
        'Authenticate with `Authorization: Bearer sk_test_…` (test mode) or `sk_live_…` (live mode).',
    },
    servers: [{ url: options.serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(routes.map((r) => r.path.split('/')[2]))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: sk_test_… for test mode, sk_live_… for live mode.' },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Up to 255 characters. The same key with the same body within 24 h replays the first response (Idempotent-Replayed: true).',
          schema: { type: 'string', maxLength: 255 },
        },
      },
      headers: {
        'X-RateLimit-Limit': integerHeader('Requests allowed in the current window'),
        'X-RateLimit-Remaining': integerHeader('Requests left in the current window'),
        'X-RateLimit-Reset': integerHeader('Unix epoch seconds at which the window resets'),
        'Retry-After': integerHeader('Seconds to wait before retrying'),
        'X-Request-Id': { description: "The request id (req_…), or the client's own X-Request-Id", schema: { type: 'string' } },
      },
      responses: errorResponses,
      schemas: {
        ...Object.fromEntries(Object.entries(types.components).sort(([a], [b]) => a.localeCompare(b))),
        Error: {
          type: 'object',
          description: 'Every error, on every route (CONTRACT §3).',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['type', 'code', 'message', 'request_id'],
              additionalProperties: true,
              properties: {
                type: { type: 'string', enum: [...new Set(codes.map((c) => ERROR_CODES[c].type))] },
                code: { type: 'string', enum: codes },
                message: { type: 'string' },
                param: { type: 'string', description: 'The offending parameter, e.g. contact_email or line_items[0][quantity]' },
                request_id: { type: 'string' },
              },
            },
          },
        },
      },
    },
  };
}

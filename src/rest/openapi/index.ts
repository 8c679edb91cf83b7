import { GraphQLField, GraphQLSchema, isInputObjectType, isNonNullType } from 'graphql';
import type { EventCatalog } from '../../events/event-catalog';
import { ERROR_CODES } from '../../common/api-error';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../../idempotency/idempotency-key.entity';
import { camelToSnake } from '../case-mapping';
import { RestRoute } from '../routes';
import { exampleOf } from './examples';
import { createLinks, pageLinks } from './links';
import { ref, restText, SchemaBuilder } from './schema-builder';
import { ERROR_DESCRIPTIONS, errorExample, errorStatuses } from './statuses';

export { restText } from './schema-builder';

/**
 * The OpenAPI 3.1 description of the REST API, generated from the route table and the GraphQL
 * types the routes run, so the document cannot drift from what the adapter serves: one operation
 * per row, parameters and bodies from the GraphQL input types narrowed by their validators
 * (./constraints.ts), responses from the object types as REST shows them (restFields, snake_case),
 * errors in the CONTRACT §3 shape with the statuses each row can answer (./statuses.ts).
 */
export interface OpenApiOptions {
  version: string;
  serverUrl: string;
  /** The event types that event parameters list (src/app/modules.ts, EVENTS). */
  events: EventCatalog;
}

type JsonSchema = Record<string, unknown>;
type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, JsonSchema>> };

/** The server the committed openapi.json names (the default PUBLIC_URL); the served document names the configured one. */
export const DEFAULT_SERVER_URL = 'http://localhost:3000';

const rateLimitHeaders = (): Record<string, JsonSchema> => ({
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
  'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
});

function rootField(schema: GraphQLSchema, route: RestRoute): GraphQLField<unknown, unknown> {
  const root = route.operation.type === 'query' ? schema.getQueryType() : schema.getMutationType();
  const field = root?.getFields()[route.operation.field];
  if (!field) throw new Error(`REST route ${route.method} ${route.path} names unknown ${route.operation.type} field "${route.operation.field}"`);
  return field;
}

function operation(route: RestRoute, routes: readonly RestRoute[], schema: GraphQLSchema, types: SchemaBuilder): JsonSchema {
  const field = rootField(schema, route);
  const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
  const resource = route.path.split('/')[2].replace(/s$/, ''); // `leads` → lead, whose ids the examples show
  const example = (of: JsonSchema, name?: string) => exampleOf(of, types.resolve, name, resource);
  const parameters: JsonSchema[] = pathParams.map((name) => {
    const arg = field.args.find((a) => a.name === name);
    const schemaOf = arg ? types.of(arg.type, false) : { type: 'string' };
    return { name, in: 'path', required: true, schema: schemaOf, example: example(schemaOf, name) };
  });
  const queryArg = field.args.find((a) => a.name === route.operation.query);
  const queryType = queryArg && isNonNullType(queryArg.type) ? queryArg.type.ofType : queryArg?.type;
  if (queryType && isInputObjectType(queryType)) {
    for (const f of Object.values(queryType.getFields())) {
      const { schema: schemaOf, description } = types.field(queryType, f, false);
      parameters.push({
        name: camelToSnake(f.name),
        in: 'query',
        required: isNonNullType(f.type),
        ...(description ? { description } : {}),
        schema: schemaOf,
        example: example(schemaOf, camelToSnake(f.name)),
        ...(schemaOf.type === 'array' ? { style: 'form', explode: false } : {}),
        // fields[seats][gte]=100: an object is sent as bracketed names.
        ...(schemaOf.type === 'object' ? { style: 'deepObject', explode: true } : {}),
      });
    }
  }
  if (route.method === 'POST') parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const bodyArg = field.args.find((a) => a.name === route.operation.body);
  const bodySchema = bodyArg && types.of(bodyArg.type, false);
  const requestBody = bodyArg && {
    required: isNonNullType(bodyArg.type),
    content: { 'application/json': { schema: bodySchema, example: example(bodySchema!) } },
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
    : {
        description: route.summary,
        headers: rateLimitHeaders(),
        content: { 'application/json': { schema: types.of(field.type, false), example: example(types.of(field.type, false)) } },
      };
  const queryNames = parameters.filter((p) => p.in === 'query').map((p) => p.name as string);
  const links = createLinks(route, routes) ?? pageLinks(route, queryNames);
  const responses: Record<string, JsonSchema> = { [status]: links ? { ...success, links } : success };
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
  const types = new SchemaBuilder({ events: options.events });
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const method = route.method.toLowerCase();
    if (paths[path]?.[method]) throw new Error(`REST route ${route.method} ${route.path} is in the table twice`);
    (paths[path] ??= {})[method] = operation(route, routes, schema, types);
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
        content: { 'application/json': { schema: ref('Error'), example: errorExample(Number(status)) } },
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
        'Authenticate with `Authorization: Bearer sk_test_…` (test mode) or `sk_live_…` (live mode); restricted keys (`rk_test_…`, `rk_live_…`) ' +
        'carry a level per resource and are refused with 403 permission_denied outside it. ' +
        'Every constraint a parameter has is in its schema; besides them, no text may contain U+0000 or an unpaired surrogate ' +
        '(PostgreSQL cannot store either), and a few rules across fields or over stored objects are stated in the descriptions.',
    },
    servers: [{ url: options.serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(routes.map((r) => r.path.split('/')[2]))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key: sk_test_… or rk_test_… (restricted) for test mode, sk_live_… or rk_live_… for live mode.',
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: `1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters. The same key with the same body, from the same API key, within 24 h replays the first response (Idempotent-Replayed: true).`,
          schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
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

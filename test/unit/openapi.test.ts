import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GraphQLSchema, isObjectType } from 'graphql';
import { createSchema } from '../../src/app/schema';
import { camelToSnake } from '../../src/rest/case-mapping';
import { buildOpenApi, DEFAULT_SERVER_URL } from '../../src/rest/openapi';
import { RestRoute } from '../../src/rest/routes';
import { EVENTS, ROUTES } from '../../src/app/modules';
import { restFields } from '../../src/rest/selection';
import { CustomField, FieldObject, FieldOption, FieldType } from '../../src/modules/fields/field.entity';
import { accountDocument } from '../../src/modules/fields/field-document';

/**
 * The OpenAPI document (src/rest/openapi.ts): valid OpenAPI 3.1 by a real validator, one operation
 * per row of the route table and nothing else, the committed openapi.json up to date, and the
 * parameters, bodies, responses and errors derived from the GraphQL types as the adapter serves them.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- an OpenAPI document
const ROOT = path.resolve(__dirname, '../..');
const TOOLS = path.resolve(__dirname, '../helpers/openapi-tools.mjs');
const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

let schema: GraphQLSchema;
let doc: Json;
let dir: string;

beforeAll(async () => {
  schema = await createSchema();
  doc = buildOpenApi(schema, ROUTES, { version, serverUrl: DEFAULT_SERVER_URL, events: EVENTS });
  dir = mkdtempSync(path.join(tmpdir(), 'openapi-unit-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function validate(document: Json): { valid: boolean; errors?: unknown; version: string } {
  const file = path.join(dir, `doc-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(document));
  return JSON.parse(execFileSync(process.execPath, [TOOLS, 'validate', file], { encoding: 'utf8' }));
}

const key = (method: string, routePath: string) => `${method.toUpperCase()} ${routePath.replace(/:(\w+)/g, '{$1}')}`;
const operations = (document: Json): Array<[string, Json]> =>
  Object.entries(document.paths as Record<string, Json>).flatMap(([p, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => [key(method, p), op] as [string, Json]),
  );
const opFor = (route: RestRoute): Json => doc.paths[route.path.replace(/:(\w+)/g, '{$1}')][route.method.toLowerCase()];
const resolve = (ref: string): Json =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node: Json, part) => node[part], doc);

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 by @seriousme/openapi-schema-validator (with every $ref resolved)', () => {
    const result = validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result).toMatchObject({ valid: true, version: '3.1' });
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(version);
  });

  it("an account's own document (its custom fields of every type) is valid OpenAPI 3.1 too", () => {
    const field = (objectType: FieldObject, type: FieldType, extra: Partial<CustomField> = {}) =>
      Object.assign(new CustomField(), { objectType, key: `${objectType}_${type}`, label: type, type, options: [], required: false, unique: false, ...extra });
    const options = [Object.assign(new FieldOption(), { value: 'a', label: 'A', archived: false })];
    const fields = Object.values(FieldType).flatMap((type) =>
      [FieldObject.lead, FieldObject.deal].map((object) => field(object, type, type.includes('select') ? { options, required: type === 'select' } : {})),
    );
    const own: Json = accountDocument(doc, fields, false);
    const result = validate(own);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(Object.keys(own.components.schemas.Lead.properties.fields.properties)).toHaveLength(Object.values(FieldType).length);
    expect(doc.components.schemas.Lead.properties.fields.properties).toBeUndefined(); // the generic document is untouched
  });

  it('the validator is real: a dangling reference is invalid', () => {
    const broken = JSON.parse(JSON.stringify(doc));
    broken.paths['/v1/leads'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Nope' };
    expect(validate(broken).valid).toBe(false);
  });

  it('the committed openapi.json is what the code builds (run `npm run openapi` after changing routes or types)', () => {
    const committed = readFileSync(path.join(ROOT, 'openapi.json'), 'utf8');
    expect(committed).toBe(`${JSON.stringify(doc, null, 2)}\n`);
  });

  it('documents every route of the table, and only those (the committed file too)', () => {
    const expected = ROUTES.map((r) => key(r.method, r.path)).sort();
    expect(
      operations(doc)
        .map(([k]) => k)
        .sort(),
    ).toEqual(expected);
    const committed = JSON.parse(readFileSync(path.join(ROOT, 'openapi.json'), 'utf8'));
    expect(
      operations(committed)
        .map(([k]) => k)
        .sort(),
    ).toEqual(expected);
  });

  it('a route added to the table without regenerating the document is caught', () => {
    // A route no module declares (the table now has GET /v1/events/{id} itself).
    const extra: RestRoute = { method: 'GET', path: '/v1/events/:id/again', summary: 'Retrieve an event again', operation: { type: 'query', field: 'event' } };
    const withExtra = buildOpenApi(schema, [...ROUTES, extra], { version, serverUrl: DEFAULT_SERVER_URL, events: EVENTS });
    expect(withExtra.paths['/v1/events/{id}/again'].get).toMatchObject({ operationId: 'event', summary: 'Retrieve an event again' });
    const committed = JSON.parse(readFileSync(path.join(ROOT, 'openapi.json'), 'utf8'));
    expect(operations(committed).map(([k]) => k)).not.toContain('GET /v1/events/{id}/again');
  });

  it('names each operation after its GraphQL field, with the row summary, and unique operationIds', () => {
    for (const route of ROUTES) expect(opFor(route)).toMatchObject({ operationId: route.operation.field, summary: route.summary });
    const ids = operations(doc).map(([, op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('requires the bearer key everywhere', () => {
    expect(doc.components.securitySchemes.bearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('takes path ids, and the filter fields as query parameters in snake_case (lists comma-separated)', () => {
    for (const route of ROUTES) {
      const params: Json[] = opFor(route).parameters ?? [];
      const pathNames = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
      expect(params.filter((p) => p.in === 'path').map((p) => p.name)).toEqual(pathNames);
      if (route.operation.query) {
        const field = (route.operation.type === 'query' ? schema.getQueryType() : schema.getMutationType())!.getFields()[route.operation.field];
        const input = field.args.find((a) => a.name === route.operation.query)!.type as Json;
        const names = Object.keys((input.ofType ?? input).getFields()).map(camelToSnake);
        expect(params.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(names);
      } else {
        expect(params.filter((p) => p.in === 'query')).toEqual([]);
      }
    }
    const leads = doc.paths['/v1/leads'].get.parameters as Json[];
    expect(leads.find((p) => p.name === 'min_score')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer' } });
    expect(leads.find((p) => p.name === 'created_after').schema).toEqual({ type: 'string', format: 'date-time', pattern: '^(?!0000)' });
    expect(leads.find((p) => p.name === 'status').schema).toEqual({ $ref: '#/components/schemas/LeadStatus' });
    const stage = (doc.paths['/v1/deals'].get.parameters as Json[]).find((p) => p.name === 'stage');
    expect(stage).toMatchObject({ style: 'form', explode: false, schema: { type: 'array', items: { $ref: '#/components/schemas/DealStage' } } });
    expect(doc.components.schemas.DealStage.enum).toEqual(['prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost']);
  });

  it('takes the input type as a strict snake_case JSON body, required fields as required', () => {
    expect(doc.paths['/v1/leads'].post.requestBody).toEqual({
      required: true,
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/LeadCreateInput' }, example: expect.objectContaining({ company: 'Acme Robotics' }) },
      },
    });
    const create = doc.components.schemas.LeadCreateInput;
    expect(create).toMatchObject({ type: 'object', required: ['company', 'contact_email'], additionalProperties: false });
    expect(create.properties.employees).toEqual({ type: ['integer', 'null'], format: 'int32', minimum: 0, maximum: 10_000_000 });
    expect(create.properties.metadata).toEqual({
      type: ['object', 'null'],
      maxProperties: 50,
      propertyNames: { minLength: 1, maxLength: 40 },
      additionalProperties: { type: 'string', maxLength: 500 },
    });
    expect(doc.components.schemas.ProposalCreateInput.properties.line_items).toMatchObject({
      type: ['array', 'null'],
      items: { $ref: '#/components/schemas/ProposalLineItemInput' },
    });
    expect(doc.paths['/v1/agents/{id}/deploy'].post.requestBody.required).toBe(false); // deployAgent(input: AgentDeployInput)
    for (const route of ROUTES) expect(Boolean(opFor(route).requestBody)).toBe(Boolean(route.operation.body));
  });

  it('describes each response object exactly as REST shows it: restFields in snake_case, nullables typed with null', () => {
    for (const [name, component] of Object.entries(doc.components.schemas as Record<string, Json>)) {
      const type = schema.getType(name);
      if (!isObjectType(type)) continue;
      const fields = restFields(type).map((f) => camelToSnake(f.name));
      expect([name, Object.keys(component.properties)]).toEqual([name, fields]);
      expect(component.required).toEqual(fields);
    }
    const lead = doc.components.schemas.Lead.properties;
    expect(lead.website).toEqual({ type: ['string', 'null'] });
    expect(lead.score).toMatchObject({ type: 'integer' });
    expect(lead.created_at).toMatchObject({ type: 'string', format: 'date-time' });
    expect(Object.keys(doc.components.schemas.Deal.properties)).not.toContain('stage_history'); // @Extensions({ rest: false })
  });

  it('answers each route with its success status and schema; the PDF as application/pdf; health 503 when degraded', () => {
    for (const route of ROUTES) {
      const responses = opFor(route).responses;
      const success = responses[String(route.status ?? 200)];
      if (route.file) {
        expect(Object.keys(success.content)).toEqual(['application/pdf']);
        expect(success.content['application/pdf'].schema).toMatchObject({ type: 'string', format: 'binary' });
      } else {
        expect(Object.keys(success.content)).toEqual(['application/json']);
      }
    }
    expect(doc.paths['/v1/leads'].post.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Lead' });
    expect(doc.paths['/v1/leads'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/LeadList' });
    expect(doc.paths['/v1/health'].get.responses['503'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Health' });
  });

  it('lists the errors each route can answer, all in the CONTRACT §3 shape, with the rate-limit headers on every response', () => {
    const errorStatuses = (route: RestRoute) =>
      Object.entries(opFor(route).responses as Record<string, Json>)
        .filter(([, r]) => r.$ref?.startsWith('#/components/responses/Error'))
        .map(([s]) => Number(s));
    for (const route of ROUTES) {
      const statuses = errorStatuses(route);
      expect(statuses).toEqual(expect.arrayContaining([400, 401, 429, 500]));
      expect(statuses.includes(404)).toBe(route.path.includes(':id') || Boolean(route.errors?.includes('resource_missing')));
      if (route.method === 'POST') expect(statuses).toEqual(expect.arrayContaining([409, 413, 415, 422]));
      for (const [status, response] of Object.entries(opFor(route).responses as Record<string, Json>)) {
        const resolved = response.$ref ? resolve(response.$ref) : response;
        expect([status, Object.keys(resolved.headers)]).toEqual([
          status,
          expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
        ]);
        if (Number(status) >= 400 && response.$ref) expect(resolved.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
    expect(Object.keys(doc.components.responses.Error429.headers)).toContain('Retry-After');
    const error = doc.components.schemas.Error.properties.error;
    expect(error.required).toEqual(['type', 'code', 'message', 'request_id']);
    expect(error.properties.code.enum).toEqual(expect.arrayContaining(['parameter_invalid', 'resource_missing', 'rate_limit_exceeded']));
  });
});

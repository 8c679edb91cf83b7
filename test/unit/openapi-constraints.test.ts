import { IsUUID } from 'class-validator';
import { GraphQLSchema, isInputObjectType } from 'graphql';
import { Field, InputType } from 'type-graphql';
import { createSchema } from '../../src/app/schema';
import { validateCredentials } from '../../src/modules/integrations/integration-credentials';
import { IntegrationProvider, IntegrationType } from '../../src/modules/integrations/integration.entity';
import { buildOpenApi, DEFAULT_SERVER_URL } from '../../src/rest/openapi';
import { constraintsOf, inputClass, unmappedConstraints } from '../../src/rest/openapi/constraints';
import { EVENTS, ROUTES } from '../../src/app/modules';
import { OpenApiSchemas } from '../helpers/openapi-schemas';
import { matchesNot } from '../reliability/schema-arbitrary';

/**
 * The document's constraints come from the validators (src/rest/openapi/constraints.ts): every
 * kind of constraint an input class uses has a mapping, a new kind without one fails here and when
 * the document is built, and the rules the fuzzer of issue 20 met only in prose are in the schema.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- an OpenAPI document

let schema: GraphQLSchema;
let doc: Json;

beforeAll(async () => {
  schema = await createSchema();
  doc = buildOpenApi(schema, ROUTES, { version: '0.0.0', serverUrl: DEFAULT_SERVER_URL, events: EVENTS });
});

const param = (path: string, name: string, method = 'get') => (doc.paths[path][method].parameters as Json[]).find((p) => p.name === name);
const body = (name: string) => doc.components.schemas[name];

@InputType()
class UnmappedInput {
  @Field()
  @IsUUID()
  token!: string;
}

describe('constraints from the validators', () => {
  it('has a mapping for every kind of constraint of every input type of the schema', () => {
    const inputs = Object.values(schema.getTypeMap()).filter(isInputObjectType);
    expect(inputs.length).toBeGreaterThan(10);
    for (const input of inputs) {
      const target = inputClass(input.name);
      expect([input.name, Boolean(target)]).toEqual([input.name, true]);
      expect([input.name, unmappedConstraints(target!)]).toEqual([input.name, []]);
    }
  });

  it('fails on a constraint kind without a mapping, so a new rule cannot stay out of the document', () => {
    expect(unmappedConstraints(UnmappedInput)).toEqual(['isUuid']);
    expect(() => constraintsOf(UnmappedInput, 'token')).toThrow(/no JSON Schema mapping for constraint "isUuid"/);
  });

  it('states the rules the fuzzer met in prose: limits, scores, counts, days, percentages, windows, sorts', () => {
    expect(param('/v1/leads', 'limit').schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    expect(param('/v1/leads', 'min_score').schema).toMatchObject({ minimum: 0, maximum: 100 });
    expect(param('/v1/leads', 'sort').schema.enum).toEqual(expect.arrayContaining(['created_at', '-created_at', 'score', '-employees']));
    expect(param('/v1/agents/{id}/metrics', 'window').schema).toMatchObject({ enum: ['24h', '7d', '30d'] });
    expect(param('/v1/events', 'type').schema.pattern).toContain('deal\\.won');
    expect(body('LeadCreateInput').properties.employees).toMatchObject({ minimum: 0 });
    expect(body('ProposalCreateInput').properties.valid_days).toMatchObject({ minimum: 1, maximum: 365 });
    expect(body('ProposalCreateInput').properties.discount_percent).toMatchObject({ minimum: 0, maximum: 100, multipleOf: 0.001 });
    expect(body('ProposalCreateInput').properties.line_items).toMatchObject({ minItems: 1, maxItems: 500 });
    expect(body('ProposalLineItemInput').properties.quantity).toMatchObject({ exclusiveMinimum: 0, multipleOf: 0.001 });
    expect(body('DealCreateInput').properties.value).toMatchObject({ minimum: 0, multipleOf: 0.01 });
  });

  it('states formats, blank names, event names and metadata', () => {
    expect(body('LeadCreateInput').properties.contact_email).toMatchObject({ format: 'email', maxLength: 254 });
    expect(body('LeadCreateInput').properties.company).toMatchObject({ pattern: '\\S', minLength: 1, maxLength: 200 });
    expect(body('DealCreateInput').properties.expected_close_date).toMatchObject({ format: 'date' });
    expect(body('WebhookCreateInput').properties.url).toMatchObject({ format: 'uri' });
    expect(body('WebhookCreateInput').properties.events).toMatchObject({
      minItems: 1,
      uniqueItems: true,
      items: { enum: expect.arrayContaining(['deal.won', '*']) },
    });
    expect(body('LeadUpdateInput').properties.metadata.additionalProperties).toEqual({ type: ['string', 'null'], maxLength: 500 });
    for (const name of Object.keys(doc.components.schemas).filter((n) => n.endsWith('Input')))
      expect([name, body(name).additionalProperties]).toEqual([name, false]);
  });

  it('states per-provider credentials as oneOf, and the service checks the same schema', () => {
    const connect = body('IntegrationConnectInput');
    expect(connect.oneOf.map((branch: Json) => branch.title).sort()).toEqual(Object.values(IntegrationProvider).sort());
    const m365 = connect.oneOf.find((branch: Json) => branch.title === 'microsoft365');
    expect(m365.properties.type).toEqual({ const: 'm365' });
    expect(m365.properties.credentials).toMatchObject({ required: ['tenant_id', 'client_id', 'client_secret', 'mailbox'], additionalProperties: false });
    const guid = new RegExp(m365.properties.credentials.properties.tenant_id.pattern, 'u');
    expect(guid.test('00000000-0000-0000-0000-000000000000')).toBe(true);
    const refused = () => validateCredentials(IntegrationType.m365, IntegrationProvider.microsoft365, { tenant_id: 'x', client_id: 'y', client_secret: 'z' });
    expect(refused).toThrow(/credentials.tenant_id must be a GUID/);
    const upn = new RegExp(m365.properties.credentials.properties.mailbox.pattern, 'u');
    for (const name of ['sales@contoso.com', "o'neil.j@contoso.onmicrosoft.com", 'ann_contoso.com#EXT#@fabrikam.onmicrosoft.com'])
      expect([name, upn.test(name)]).toEqual([name, true]);
    for (const name of ['sales', 'sales@contoso', '.sales@contoso.com', 'sales.@contoso.com', '$sales@contoso.com'])
      expect([name, upn.test(name)]).toEqual([name, false]);
  });

  it('gives the hint in whole characters, never half a surrogate pair', () => {
    const { hint } = validateCredentials(IntegrationType.psa, IntegrationProvider.halopsa, {
      instance_url: 'https://acme.halopsa.com',
      client_id: 'client',
      client_secret: 'pat-secret-😀😀',
    });
    expect(hint).toBe('t-😀😀');
  });
});

describe('statuses and links', () => {
  it('documents the 404 of an id a body refers to, and every error a row declares', () => {
    expect(Object.keys(doc.paths['/v1/proposals'].post.responses)).toContain('404');
    expect(Object.keys(doc.paths['/v1/deals'].post.responses)).toContain('404');
    expect(Object.keys(doc.paths['/v1/deals/{id}/register'].post.responses)).toEqual(expect.arrayContaining(['404', '409', '422']));
    expect(Object.keys(doc.paths['/v1/leads'].get.responses)).not.toContain('404');
  });

  it('links each create to the retrieve, update and delete of what it made, by operationIds that exist', () => {
    const ids = new Set(ROUTES.map((r) => r.operation.field));
    expect(doc.paths['/v1/leads'].post.responses['201'].links).toEqual({
      RetrieveCreated: expect.objectContaining({ operationId: 'lead', parameters: { id: '$response.body#/id' } }),
      UpdateCreated: expect.objectContaining({ operationId: 'updateLead', parameters: { id: '$response.body#/id' } }),
      DeleteCreated: expect.objectContaining({ operationId: 'deleteLead', parameters: { id: '$response.body#/id' } }),
    });
    for (const route of ROUTES.filter((r) => r.method === 'POST' && r.status === 201)) {
      const links = doc.paths[route.path].post.responses['201'].links;
      expect([route.path, Object.keys(links ?? {}).length > 0]).toEqual([route.path, true]);
      for (const link of Object.values(links) as Json[]) expect(ids.has(link.operationId)).toBe(true);
    }
  });
});

describe('cross-field rules stated in the schema (issue 64)', () => {
  let schemas: OpenApiSchemas;
  beforeAll(() => {
    schemas = new OpenApiSchemas(doc);
  });
  const valid = (schemaName: string, value: unknown) => schemas.problem(body(schemaName), value) === undefined;
  const hubspot = { type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-abcdefgh' } };
  const compatible = { type: 'llm', provider: 'openai_compatible', credentials: { base_url: 'https://models.example/v1', api_key: 'sk-abcdefgh' } };

  it('an Idempotency-Key is 1 to 255 characters (the service refuses an empty one)', () => {
    expect(doc.components.parameters.IdempotencyKey.schema).toEqual({ type: 'string', minLength: 1, maxLength: 255 });
  });

  it('a deploy takes a config or a version, not both; null is leaving one out', () => {
    expect(valid('AgentDeployInput', { config: { qualify_at: 80 } })).toBe(true);
    expect(valid('AgentDeployInput', { version: 2 })).toBe(true);
    expect(valid('AgentDeployInput', { config: null, version: 2 })).toBe(true);
    expect(valid('AgentDeployInput', { config: { qualify_at: 80 }, version: null })).toBe(true);
    expect(valid('AgentDeployInput', { config: { qualify_at: 80 }, version: 2 })).toBe(false);
    // The generator's reading of that `not` agrees with Ajv's.
    expect(matchesNot({ config: {}, version: 2 }, body('AgentDeployInput').not)).toBe(true);
    expect(matchesNot({ config: null, version: 2 }, body('AgentDeployInput').not)).toBe(false);
  });

  it("a connect's settings are those of its provider: another provider's only as null, a PSA's delivery record among its own", () => {
    expect(valid('IntegrationConnectInput', { ...hubspot, settings: { stage_map: null } })).toBe(true);
    expect(valid('IntegrationConnectInput', { ...hubspot, settings: { delivery_record: null, model: null } })).toBe(true);
    for (const settings of [{ delivery_record: 'project' }, { sales_rep: 'alice' }, { model: 'gpt-4o' }]) {
      expect([settings, valid('IntegrationConnectInput', { ...hubspot, settings })]).toEqual([settings, false]);
    }
    const autotask = { type: 'psa', provider: 'autotask', credentials: { username: 'api@acme.example', secret: 'secret-1234', integration_code: 'CODE' } };
    expect(valid('IntegrationConnectInput', { ...autotask, settings: { delivery_record: 'project' } })).toBe(true);
    expect(valid('IntegrationConnectInput', { ...autotask, settings: { delivery_record: 'agreement' } })).toBe(false);
    expect(valid('IntegrationConnectInput', { ...autotask, settings: { sales_rep: 'alice' } })).toBe(false);
  });

  it('a compatible model server names its model on connect (it has no default)', () => {
    expect(valid('IntegrationConnectInput', { ...compatible, settings: { model: 'llama3.1:8b' } })).toBe(true);
    expect(valid('IntegrationConnectInput', compatible)).toBe(false);
    expect(valid('IntegrationConnectInput', { ...compatible, settings: null })).toBe(false);
    expect(valid('IntegrationConnectInput', { ...compatible, settings: { model: null } })).toBe(false);
  });
});

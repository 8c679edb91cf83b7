import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Plan } from '../../src/modules/accounts/plan';
import { OpenApiSchemas } from '../helpers/openapi-schemas';
import { startTestApp, TestAccount, TestApp } from '../helpers/app';
import { describeExchange, restErrorProblem, ROOMY_OPERATIONS, send, WireRequest, WireResponse } from './fuzz-harness';
import { arbitraryOf, Schema } from './schema-arbitrary';
import { applyViolation, violationsOf } from './schema-violations';

/**
 * What a client that reads only GET /v1/openapi.json can rely on, over every operation of the
 * document: requests generated from the document's own schemas (fast-check, with the generator of
 * ./schema-arbitrary.ts; each value checked valid by Ajv first) are accepted — 2xx, or a status the
 * operation documents for ids that do not exist (404) or for the state of the objects (409, 422) —
 * and every 2xx body is valid by the documented response schema; a request that breaks one stated
 * constraint (./schema-violations.ts; checked invalid by Ajv) is refused with 400 in the contract's
 * error shape. Every status answered must be one the operation documents. Loopback only; a few
 * hundred requests (CONFORMANCE_RUNS valid requests per operation, the violations of one request).
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- an OpenAPI document

const SEED = Number(process.env.CONFORMANCE_SEED ?? 20261124);
const RUNS = Number(process.env.CONFORMANCE_RUNS ?? 6);
const METHODS = ['get', 'post', 'put', 'delete'];

/**
 * Rules across fields or over the stored state that JSON Schema cannot state, answered 400 to a
 * request the document calls valid; each is said in the document's text. Anything else is a
 * mismatch between the validators and the document.
 */
/**
 * 403s a full-access key gets by a rule about who acts, which a schema cannot state (the field
 * descriptions say it): an API key acts as an admin, so it may not make or change owners.
 */
const UNSTATABLE_403: Array<{ operation: string; message: RegExp; why: string }> = [
  { operation: 'inviteMember', message: /Only an owner can invite an owner/, why: 'role owner, from a key (keys act as admins)' },
  { operation: 'updateMember', message: /Only an owner can change an owner's role or make an owner/, why: 'role owner, from a key (keys act as admins)' },
];

const UNSTATABLE_400: Array<{ operation: string; message: RegExp; why: string }> = [
  ...['createLead', 'updateLead', 'createDeal', 'updateDeal'].map((operation) => ({
    operation,
    message: /The owner must be an active member of this account/,
    why: "owner_id against the account's stored members",
  })),
  { operation: 'createProposal', message: /would exceed/, why: 'quantity × unit_price (and their sum) over the largest amount' },
  { operation: 'createAgent', message: /disqualify_below must not be above qualify_at/, why: 'one setting bounded by another' },
  { operation: 'createWebhook', message: /at most 16 enabled webhook subscriptions/, why: 'a limit on the stored subscriptions' },
  { operation: 'updateWebhook', message: /at most 16 enabled webhook subscriptions/, why: 'a limit on the stored subscriptions' },
  {
    operation: 'updateIntegration',
    message: /applies to [\w ]+ integrations|cannot be '\w+': \w+ takes/,
    why: "a setting of some providers only (stage_map, delivery_record, sales_rep, model) against the stored integration's provider (on connect the body names it: stated per provider)",
  },
  {
    operation: 'updateIntegration',
    message: /settings(\.|\[)model\]? is required for openai_compatible/,
    why: "a setting optional for every provider but a compatible model server, against the stored integration's provider",
  },
  { operation: 'deployAgent', message: /has no version \d+/, why: "a version number against the agent's stored versions" },
  {
    operation: 'createField',
    message: /is a built-in field of|has the value \w+ twice/,
    why: "the object's built-in names; option values distinct among the options",
  },
  {
    operation: 'updateField',
    message: /has no options|must have at least one option|must keep the value|has the value \w+ twice/,
    why: "options against the stored field's type and options",
  },
  { operation: 'resendWebhookEvent', message: /does not receive [\w.]+ events/, why: "the stored event's type against the stored endpoint's events" },
];

interface Operation {
  key: string;
  method: string;
  path: string;
  op: Json;
}

interface Generated {
  id?: string;
  query: Record<string, unknown>;
  body?: unknown;
}

let app: TestApp;
let owner: TestAccount;
let doc: Json;
let schemas: OpenApiSchemas;
/** Ids that exist, by collection (`leads`, `deals`…): the fixtures, then what generated creates made. */
const pools: Record<string, string[]> = {};
const answered = new Map<string, Map<number, number>>();

const collectionOf = (path: string) => path.split('/')[2];
const KNOWN_ID = /^(\w+)_id$/;

async function created(path: string, body: unknown): Promise<string> {
  const response = await send(app.baseUrl, request('POST', path, {}, body));
  if (response.status !== 201) throw new Error(`fixture ${path}: ${response.status} ${response.text}`);
  const id = (response.json as { id: string }).id;
  (pools[collectionOf(path)] ??= []).push(id);
  return id;
}

function request(method: string, path: string, query: Record<string, unknown>, body?: unknown): WireRequest {
  const search = new URLSearchParams();
  /** deepObject, as the document declares object parameters: fields[seats][gte]=100. */
  const add = (name: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    if (typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) add(`${name}[${key}]`, inner);
      return;
    }
    search.set(name, Array.isArray(value) ? value.join(',') : String(value));
  };
  for (const [name, value] of Object.entries(query)) add(name, value);
  const text = search.toString();
  return {
    method: method.toUpperCase(),
    path: `${path}${text ? `?${text}` : ''}`,
    headers: { authorization: `Bearer ${owner.testKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

beforeAll(async () => {
  app = await startTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' },
    // Every generated host is public here; no DNS query leaves the machine.
    resolveHost: async () => [{ address: '93.184.216.34', family: 4 }],
    operationLimits: ROOMY_OPERATIONS,
  });
  owner = await app.createAccount({ plan: Plan.enterprise });
  doc = (await send(app.baseUrl, { method: 'GET', path: '/v1/openapi.json', headers: {} })).json;
  schemas = new OpenApiSchemas(doc);
  const lead = await created('/v1/leads', { company: 'Fixture Co', contact_email: `fixture-${randomUUID()}@example.com` });
  const deal = await created('/v1/deals', { name: 'Fixture deal', value: 1200, lead_id: lead });
  await created('/v1/proposals', { deal_id: deal });
  await created('/v1/agents', { name: 'Fixture agent', type: 'lead_qualifier' });
  await created('/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: `pat-${randomUUID()}` } });
  await created('/v1/webhooks', { url: 'https://hooks.example.com/fixture', events: ['*'] });
  const events = (await send(app.baseUrl, request('GET', '/v1/events', { limit: 1 }))).json as { data: Array<{ id: string }> };
  pools.events = events.data.map((event) => event.id);
});
afterAll(() => app?.close());

/** Every operation of the document, creates first (their objects feed the others) and deletes last. */
function operations(document: Json): Operation[] {
  const rank = (o: Operation) => (o.method === 'post' && !o.path.includes('{') ? 0 : o.method === 'delete' ? 2 : 1);
  return Object.entries(document.paths as Record<string, Json>)
    .flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({ key: `${method.toUpperCase()} ${path}`, method, path, op: item[method] })),
    )
    .sort((a, b) => rank(a) - rank(b));
}

const parameters = (op: Json, where: string): Json[] => ((op.parameters ?? []) as Json[]).filter((p) => !p.$ref && p.in === where);
const bodySchema = (op: Json): Schema | undefined => op.requestBody?.content?.['application/json']?.schema;
const querySchema = (op: Json): Schema => ({
  type: 'object',
  properties: Object.fromEntries(parameters(op, 'query').map((p) => [p.name, p.schema])),
  additionalProperties: false,
});
/** The query a client can make up: a cursor is not made up but followed (the NextPage link from next_cursor). */
const madeUpQuery = (op: Json): Schema => {
  const schema = querySchema(op);
  const { cursor, ...properties } = schema.properties as Record<string, Schema>;
  void cursor;
  return { ...schema, properties };
};
/** next_cursor values answered so far, by operationId. */
const cursors: Record<string, string[]> = {};

function generated(operation: Operation): fc.Arbitrary<Generated> {
  const known = (property: string) => pools[`${KNOWN_ID.exec(property)?.[1]}s`] ?? [];
  const options = { resolve: schemas.resolve, known };
  const pool = pools[collectionOf(operation.path)] ?? [];
  // A random id gets the documented 404; dot segments are left out (URL syntax, not the API's).
  const randomId = fc.stringMatching(/^[a-z]{2,8}_[0-9A-Za-z]{4,26}$/);
  const id = operation.path.includes('{id}')
    ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(pool.length ? pool : ['none_0000'])) }, randomId)
    : fc.constant(undefined);
  const body = bodySchema(operation.op);
  return fc.record({
    id,
    query: fc
      .tuple(
        arbitraryOf(madeUpQuery(operation.op), options) as fc.Arbitrary<Record<string, unknown>>,
        fc.option(fc.constantFrom(...(cursors[operation.op.operationId] ?? [''])), { nil: undefined }),
      )
      .map(([query, cursor]) => (cursor ? { ...query, cursor } : query)),
    body: body
      ? operation.op.requestBody.required
        ? arbitraryOf(body, options)
        : fc.option(arbitraryOf(body, options), { nil: undefined })
      : fc.constant(undefined),
  });
}

const pathOf = (operation: Operation, id?: string) => operation.path.replace('{id}', encodeURIComponent(id ?? ''));

async function exchange(operation: Operation, input: Generated): Promise<{ request: WireRequest; response: WireResponse }> {
  const wire = request(operation.method, pathOf(operation, input.id), input.query, input.body);
  const response = await send(app.baseUrl, wire);
  const counts = answered.get(operation.key) ?? answered.set(operation.key, new Map()).get(operation.key)!;
  counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
  if (!operation.op.responses[String(response.status)]) throw new Error(`an undocumented status:\n${describeExchange(wire, response)}`);
  return { request: wire, response };
}

describe(`requests generated from GET /v1/openapi.json (seed ${SEED}, ${RUNS} valid requests per operation)`, () => {
  it('covers every operation of the document with schemas the generator knows', () => {
    expect(operations(doc).length).toBeGreaterThan(30);
    for (const operation of operations(doc)) expect(() => generated(operation)).not.toThrow();
  });

  it('accepts what the schemas allow, answers only documented statuses, and answers with the documented shapes', async () => {
    const failures: string[] = [];
    for (const operation of operations(doc)) {
      const cases = fc.sample(generated(operation), { seed: SEED, numRuns: RUNS });
      for (const input of cases) {
        const invalid = [
          schemas.problem(querySchema(operation.op), input.query),
          input.body === undefined ? undefined : schemas.problem(bodySchema(operation.op), input.body),
        ].filter(Boolean);
        if (invalid.length) throw new Error(`the generator made a value its schema refuses (${operation.key}): ${invalid.join('; ')} ${JSON.stringify(input)}`);
        if (operation.method === 'delete')
          input.id = input.id && pools[collectionOf(operation.path)]?.includes(input.id) ? pools[collectionOf(operation.path)].pop() : input.id;
        const { request: wire, response } = await exchange(operation, input).catch((error: Error) => {
          failures.push(`${operation.key}: ${error.message}`);
          return { request: undefined, response: undefined };
        });
        if (!wire || !response) continue;
        const report = (problem: string) => failures.push(`${operation.key}: ${problem}\n${describeExchange(wire, response)}`);
        if (response.status < 300) {
          const schema = operation.op.responses[String(response.status)].content?.['application/json']?.schema;
          const problem = schema && schemas.problem(schema, response.json);
          if (problem) report(`the answer does not match its documented schema: ${problem}`);
          if (operation.method === 'post' && response.status === 201) (pools[collectionOf(operation.path)] ??= []).push((response.json as { id: string }).id);
          const next = (response.json as { next_cursor?: string | null } | undefined)?.next_cursor;
          if (next && operation.op.responses['200'].links?.NextPage) (cursors[operation.op.operationId] ??= []).push(next);
          continue;
        }
        const errorProblem = restErrorProblem(response);
        if (errorProblem) report(errorProblem);
        if ([404, 409, 422].includes(response.status)) continue;
        const message = String((response.json as Json)?.error?.message);
        if (response.status === 400 && UNSTATABLE_400.some((rule) => rule.operation === operation.op.operationId && rule.message.test(message))) continue;
        if (response.status === 403 && UNSTATABLE_403.some((rule) => rule.operation === operation.op.operationId && rule.message.test(message))) continue;
        report('a request valid by the document was refused');
      }
    }
    expect(failures).toEqual([]);
    const accepted = (key: string) => [...(answered.get(key) ?? new Map<number, number>()).entries()].filter(([status]) => status < 300).length;
    for (const create of ['POST /v1/leads', 'POST /v1/deals', 'POST /v1/webhooks', 'POST /v1/integrations', 'POST /v1/agents'])
      expect([create, accepted(create) > 0]).toEqual([create, true]);
  });

  it('refuses with 400 each request that breaks one stated constraint', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const operation of operations(doc)) {
      if (operation.method === 'delete') continue;
      const [input] = fc.sample(generated(operation), { seed: SEED + 1, numRuns: 1 });
      const id = operation.path.includes('{id}') ? (pools[collectionOf(operation.path)]?.[0] ?? 'none_0000') : undefined;
      const body = bodySchema(operation.op);
      const variants = [
        // A query string is text (a number where text is expected arrives as text) and has no null.
        ...violationsOf(querySchema(operation.op), input.query, schemas.resolve, 1)
          .filter((v) => !(v.keyword === 'type' && (typeof v.value === 'number' || v.value === null)))
          .map((v) => ({ query: applyViolation(input.query, v), body: input.body, v })),
        ...(body && input.body !== undefined
          ? violationsOf(body, input.body, schemas.resolve).map((v) => ({ query: input.query, body: applyViolation(input.body, v), v }))
          : []),
      ];
      for (const variant of variants) {
        const query = variant.query as Record<string, unknown>;
        const stillValid = !schemas.problem(querySchema(operation.op), query) && (!body || variant.body === undefined || !schemas.problem(body, variant.body));
        if (stillValid) continue; // a keyword another keyword makes unbreakable alone
        sent += 1;
        const { request: wire, response } = await exchange(operation, { id, query, body: variant.body }).catch((error: Error) => {
          failures.push(`${operation.key}: ${error.message}`);
          return { request: undefined, response: undefined };
        });
        if (!wire || !response) continue;
        const where = `${variant.v.path.join('.') || '(whole)'} ${variant.v.keyword}`;
        if (response.status !== 400) failures.push(`${operation.key} ${where}: ${response.status}, not 400\n${describeExchange(wire, response)}`);
        else if (restErrorProblem(response)) failures.push(`${operation.key} ${where}: ${restErrorProblem(response)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(100);
  });
});

import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { GraphQLField, GraphQLInputType, GraphQLSchema } from 'graphql';
import { createSchema } from '../../src/app/schema';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { allows, parsePermissions } from '../../src/modules/accounts/key-permissions';
import { permissionOf } from '../../src/auth/permission';
import { Plan } from '../../src/modules/accounts/plan';
import { RestRoute } from '../../src/rest/routes';
import { ROUTES } from '../../src/app/modules';
import { proposeBrief } from '../helpers/suggestions';
import { startTestApp, TestAccount, TestApp } from '../helpers/app';
import * as arb from './fuzz-arbitraries';
import { graphqlCase, graphqlRequest } from './fuzz-graphql';
import {
  DatabaseSnapshots,
  describeExchange,
  graphqlOnlyNames,
  graphqlProblem,
  requestIdProblem,
  restErrorProblem,
  restNameProblem,
  ROOMY_OPERATIONS,
  send,
  WireRequest,
  WireResponse,
} from './fuzz-harness';
import { aliasDocument, schemaOperations } from './fuzz-schema';
import { MAX_ROOT_FIELDS } from '../../src/graphql/checks/cost-limit';

/**
 * Property-based fuzzing of every route of the REST table, and of /graphql, with hostile input:
 * wrong types, missing and unknown fields, huge strings (under and over the 1 MiB cap), edge and
 * unparseable numbers, deep nesting, NUL, lone surrogates, RTL marks, SQL and script injection,
 * malformed ids and cursors, bad query strings, bad Authorization, Content-Type, Idempotency-Key
 * and X-Request-Id headers, malformed JSON and bytes that are not UTF-8. For every answer:
 *
 * - never a 5xx: a 2xx, or a 4xx in the contract's error shape (CONTRACT §3), with X-Request-Id;
 * - a rejected request (4xx) left the account's data exactly as it was (row counts and a hash of
 *   every row of every data table, compared per request: requests run one at a time and no
 *   background worker runs, so only the request itself could have changed anything).
 *
 * The routes come from the table itself, so a route added later is fuzzed too, and the last test
 * checks that every route was exercised, with at least one success and one rejection.
 *
 * Replay a failure: fast-check prints `seed` and `path`; run
 *   FUZZ_SEED=<seed> FUZZ_PATH=<path> npx jest test/reliability/fuzz.test.ts -t '<route>'
 * (FUZZ_SHRINK=1 shrinks the counterexample, at the price of more requests; FUZZ_RUNS sets the
 * runs per route).
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const GRAPHQL_RUNS = Number(process.env.FUZZ_GRAPHQL_RUNS ?? 400);
const SCHEMA_RUNS = Number(process.env.FUZZ_SCHEMA_RUNS ?? 600);

const assertOptions = <T>(numRuns: number): fc.Parameters<T> => ({
  seed: SEED,
  numRuns,
  // Each run is a request: shrinking a failure could take thousands more. Opt in with FUZZ_SHRINK=1.
  endOnFailure: process.env.FUZZ_SHRINK !== '1',
  // The failed run's own error in the report: fast-check 4 otherwise puts it in `cause`, which jest
  // does not print, and a CI failure would say which input failed but not why.
  includeErrorInReport: true,
  ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
});

const routeKey = (route: Pick<RestRoute, 'method' | 'path'>) => `${route.method} ${route.path}`;

interface RouteStats {
  requests: number;
  succeeded: number;
  rejected: number;
  statuses: Map<number, number>;
}

describe(`fuzzing every route with hostile input (fast-check seed ${SEED}, ${RUNS} runs per route)`, () => {
  let app: TestApp;
  let schema: GraphQLSchema;
  let graphqlNames: Set<string>;
  let owner: TestAccount;
  let stranger: TestAccount;
  /** The owner's rk_test_ key: leads read, deals write, nothing else (403 on most routes, never a 5xx). */
  let restrictedKey: string;
  let snapshots: DatabaseSnapshots;
  /** The state before the next request, when nothing has run since it was taken. */
  let lastSnapshot: Map<string, string> | undefined;
  let previousWasKeyed = false;
  /** One object of each kind, keyed by the path segment that addresses it (leads, deals…). */
  const fixtures: arb.FixtureIds = {};
  const stats = new Map<string, RouteStats>(ROUTES.map((route) => [routeKey(route), { requests: 0, succeeded: 0, rejected: 0, statuses: new Map() }]));
  const totals = { fuzzed: 0, graphql: 0, setup: 0, rejectedUnchanged: 0, changedBySuccess: 0, snapshotMs: 0, requestMs: 0 };

  const ownerHeaders = () => ({ authorization: `Bearer ${owner.testKey}`, 'content-type': 'application/json' });

  /** A request that makes or finds what fuzzing needs; it must succeed. */
  async function setup(method: string, path: string, body?: unknown): Promise<WireResponse> {
    const request: WireRequest = { method, path, headers: ownerHeaders(), body: body === undefined ? undefined : JSON.stringify(body) };
    const response = await send(app.baseUrl, request);
    totals.setup += 1;
    lastSnapshot = undefined;
    if (response.status >= 300) throw new Error(`a setup request failed:\n${describeExchange(request, response)}`);
    return response;
  }

  const created = async (path: string, body: unknown): Promise<string> => ((await setup('POST', path, body)).json as { id: string }).id;

  /** A new object of a kind, for routes that would use up the fixture (DELETE) and for `fresh` ids. */
  const fresh: Record<string, () => Promise<string>> = {
    leads: () => created('/v1/leads', { company: 'Fresh Co', contact_email: `fresh-${randomUUID()}@example.com`, industry: 'Software' }),
    deals: () => created('/v1/deals', { name: 'Fresh deal', value: 5000, lead_id: fixtures.leads, stage: 'qualification' }),
    proposals: async () => created('/v1/proposals', { deal_id: await fresh.deals() }),
    agents: () => created('/v1/agents', { name: 'Fresh agent', type: 'lead_qualifier' }),
    // This app runs no agent runner: the suggestion is made by the service a writer's run uses.
    suggestions: async () =>
      (await proposeBrief(app, owner, await created('/v1/agents', { name: 'Fresh researcher', type: 'lead_researcher' }), fixtures.leads)).id,
    integrations: async () => {
      const listed = await setup('GET', '/v1/integrations?provider=hubspot&status=connected');
      const connected = (listed.json as { data: Array<{ id: string }> }).data[0];
      const id =
        connected?.id ?? (await created('/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: `pat-na1-${randomUUID()}` } }));
      // This app runs no sync worker: a run left running (the connect's, a fuzzed sync's) is ended as a worker would end it, so a sync can start.
      await app.orm.em
        .fork()
        .getConnection()
        .execute(`update integration_sync_runs set status = 'succeeded', finished_at = now() where integration_id = ? and status = 'running'`, [id]);
      return id;
    },
    members: () => created('/v1/members', { email: `fresh-${randomUUID()}@example.com`, role: 'member' }),
    fields: () => created('/v1/fields', { object_type: 'deal', key: `fresh_${randomUUID().slice(0, 8)}`, label: 'Fresh field', type: 'number' }),
    webhooks: async () => {
      // At most 16 enabled subscriptions per account and mode: when fuzzed creates have taken them all, one of theirs makes room.
      const enabled = (await setup('GET', '/v1/webhooks?status=enabled&limit=100')).json as { data: Array<{ id: string }> };
      const spare = enabled.data.find((webhook) => webhook.id !== fixtures.webhooks);
      if (enabled.data.length >= 16 && spare) await setup('PUT', `/v1/webhooks/${spare.id}`, { status: 'disabled' });
      return created('/v1/webhooks', { url: 'https://hooks.example.com/fresh', events: ['*'] });
    },
  };

  beforeAll(async () => {
    schema = await createSchema();
    graphqlNames = graphqlOnlyNames(schema);
    app = await startTestApp({
      // The address guard on, with a resolver of our own: no DNS query leaves the machine.
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' },
      resolveHost: async (host) => {
        if (host.endsWith('.invalid')) throw new Error('ENOTFOUND');
        if (host === 'localhost' || host.startsWith('internal.')) return [{ address: '10.0.0.7', family: 4 }];
        return [{ address: '93.184.216.34', family: 4 }];
      },
      operationLimits: ROOMY_OPERATIONS,
    });
    // Enterprise: live keys get 1,000 a minute, so the few live requests are never throttled either.
    owner = await app.createAccount({ plan: Plan.enterprise });
    stranger = await app.createAccount();
    const restricted = await new ApiKeyService(app.orm.em.fork()).create(owner.account, KeyType.test, 'fuzz', parsePermissions('leads=read,deals=write'));
    restrictedKey = restricted.secret;
    fixtures.leads = await created('/v1/leads', {
      company: 'Fixture Corp',
      contact_email: 'fixture@fixture-corp.example',
      industry: 'Software',
      employees: 250,
    });
    fixtures.integrations = await created('/v1/integrations', {
      type: 'm365',
      provider: 'microsoft365',
      credentials: { tenant_id: randomUUID(), client_id: randomUUID(), client_secret: 'fixture-client-secret', mailbox: 'sales@fixture-corp.example' },
    });
    fixtures.deals = await fresh.deals();
    fixtures.proposals = await created('/v1/proposals', { deal_id: fixtures.deals });
    fixtures.agents = await fresh.agents();
    fixtures.suggestions = await fresh.suggestions();
    fixtures.webhooks = await fresh.webhooks();
    fixtures.members = await fresh.members();
    fixtures.fields = await fresh.fields();
    // Events are only ever written by changes: the newest of the ones the fixtures made.
    fixtures.events = ((await setup('GET', '/v1/events?limit=1')).json as { data: Array<{ id: string }> }).data[0].id;
    snapshots = new DatabaseSnapshots(app.orm);
  });
  afterAll(() => app?.close());

  const rootField = (route: RestRoute): GraphQLField<unknown, unknown> => {
    const root = route.operation.type === 'query' ? schema.getQueryType() : schema.getMutationType();
    return root!.getFields()[route.operation.field];
  };
  const argType = (route: RestRoute, name: string | undefined): GraphQLInputType | undefined =>
    name ? rootField(route).args.find((arg) => arg.name === name)?.type : undefined;

  /** Plausible bodies for a route: from its input type, except integrations (credentials depend on the provider) and fields (options on the type). */
  function seedFor(route: RestRoute): fc.Arbitrary<Record<string, unknown>> | undefined {
    const input = arb.inputObjectOf(argType(route, route.operation.body));
    if (!input) return undefined;
    if (route.operation.field === 'connectIntegration') return arb.integrationBody(`${app.crms.chat.url}/v1`);
    if (route.operation.field === 'createField') return arb.fieldBody;
    return arb.plausibleObject(input, fixtures);
  }

  interface RestCase {
    id?: arb.IdChoice;
    query: arb.QueryItem[];
    body: arb.BodyChoice;
    auth: arb.AuthChoice;
    faults: arb.HeaderFaults;
  }

  function caseFor(route: RestRoute): fc.Arbitrary<RestCase> {
    return fc.record({
      id: route.path.includes(':id') ? arb.idChoice(fixtures) : fc.constant(undefined),
      query: arb.queryFor(arb.inputObjectOf(argType(route, route.operation.query)), fixtures),
      body: route.method === 'GET' ? fc.constant({ kind: 'none' as const }) : arb.bodyFor(seedFor(route)),
      auth: arb.authChoice,
      faults: arb.headersArb,
    });
  }

  function authorization(auth: arb.AuthChoice): string | undefined {
    switch (auth.kind) {
      case 'test':
        return `Bearer ${owner.testKey}`;
      case 'live':
        return `Bearer ${owner.liveKey}`;
      case 'stranger':
        return `Bearer ${stranger.testKey}`;
      case 'restricted':
        return `Bearer ${restrictedKey}`;
      case 'none':
        return undefined;
      default:
        return auth.value;
    }
  }

  function headersFor(auth: arb.AuthChoice, faults: arb.HeaderFaults, hasBody: boolean): Record<string, string> {
    const headers: Record<string, string> = {};
    const key = authorization(auth);
    if (key !== undefined) headers.authorization = key;
    if (hasBody || faults.contentType !== undefined) headers['content-type'] = faults.contentType ?? 'application/json';
    if (faults.idempotencyKey !== undefined) headers['idempotency-key'] = faults.idempotencyKey;
    if (faults.requestId !== undefined) headers['x-request-id'] = faults.requestId;
    if (faults.extra) headers[faults.extra[0]] = faults.extra[1];
    return headers;
  }

  function wireBody(body: arb.BodyChoice): string | Buffer | undefined {
    if (body.kind === 'json') return arb.toJsonText(body.value);
    if (body.kind === 'raw') return body.text;
    if (body.kind === 'bytes') return Buffer.from(body.hex, 'hex');
    return undefined;
  }

  async function idSegment(route: RestRoute, choice: arb.IdChoice): Promise<string> {
    const kind = arb.kindOf(route.path);
    // DELETE uses up what it is given: it gets an object of its own, never the shared fixture.
    const usesUp = route.method === 'DELETE';
    if (choice.kind === 'raw') return choice.segment;
    if (choice.kind === 'literal' && !(usesUp && choice.id === fixtures[kind])) return arb.percentEncode(choice.id);
    if (fresh[kind] && (choice.kind === 'fresh' || usesUp)) return fresh[kind]();
    if (!fixtures[kind]) throw new Error(`no fixture for /v1/${kind}/:id: add one (and a \`fresh\` factory) to fuzz.test.ts`);
    return fixtures[kind];
  }

  /** Sends one request and checks the answer and, unless it succeeded, that nothing changed. */
  async function exchange(
    request: WireRequest,
    check: (response: WireResponse) => string[],
    rejected: (response: WireResponse) => boolean,
  ): Promise<WireResponse> {
    let started = performance.now();
    const before = lastSnapshot ?? (await snapshots.take());
    totals.snapshotMs += performance.now() - started;
    started = performance.now();
    const response = await send(app.baseUrl, request);
    totals.requestMs += performance.now() - started;
    started = performance.now();
    const after = await snapshots.take();
    totals.snapshotMs += performance.now() - started;
    lastSnapshot = after;
    const problems = check(response);
    // A request with an Idempotency-Key keeps its answer, 4xx included (CONTRACT §12); allow for the
    // row being completed just after the answer left, by the time the next request is checked.
    const keyed = request.headers['idempotency-key'] !== undefined;
    const ignore = new Set(keyed || previousWasKeyed ? ['idempotency_keys'] : []);
    previousWasKeyed = keyed;
    const changes = DatabaseSnapshots.changes(before, after, ignore);
    if (rejected(response)) {
      if (changes.length) problems.push(`a rejected request changed the database:\n    ${changes.join('\n    ')}`);
      else totals.rejectedUnchanged += 1;
    } else if (changes.length) {
      totals.changedBySuccess += 1;
    }
    if (problems.length) throw new Error(`${problems.join('\n')}\n${describeExchange(request, response)}`);
    return response;
  }

  /** A cursor as toPage writes it (base64url JSON), carrying any value. */
  const cursor = (sort: string, value: unknown) =>
    Buffer.from(JSON.stringify({ s: sort, v: value, i: 'lead_00000000000000000000000000' })).toString('base64url');

  it('answers each input that fuzzing found answered with a 500 with a 4xx instead, changing nothing', async () => {
    const json = { 'content-type': 'application/json' };
    const cases: Array<[string, Omit<WireRequest, 'headers'> & { headers?: Record<string, string> }, { status: number; code: string; param?: string }]> = [
      ['a path id that is not percent-encoded UTF-8', { method: 'GET', path: '/v1/leads/%E0%A4%A' }, { status: 404, code: 'resource_missing' }],
      ['a path id that is a lone surrogate in UTF-8', { method: 'DELETE', path: '/v1/webhooks/%ED%A0%80' }, { status: 404, code: 'resource_missing' }],
      [
        'a lone surrogate in an e-mail address (the validator threw)',
        { method: 'POST', path: '/v1/leads', headers: json, body: '{"company":"Acme","contact_email":"a@\\ud800.com"}' },
        { status: 400, code: 'parameter_invalid', param: 'contact_email' },
      ],
      [
        'a lone surrogate in a metadata key (jsonb refused it)',
        { method: 'POST', path: '/v1/leads', headers: json, body: '{"company":"Acme","contact_email":"a@acme.example","metadata":{"\\udc00":"x"}}' },
        { status: 400, code: 'parameter_invalid', param: 'metadata' },
      ],
      [
        'a body nested 100,000 levels deep with an Idempotency-Key (its canonical JSON overflowed the stack)',
        {
          method: 'POST',
          path: '/v1/leads',
          headers: { ...json, 'idempotency-key': randomUUID() },
          body: `{"metadata":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_001)}`,
        },
        { status: 400, code: 'invalid_json' },
      ],
      [
        'created_after in the year 0000',
        { method: 'GET', path: '/v1/leads?created_after=0000-01-01T00:00:00Z' },
        { status: 400, code: 'parameter_invalid', param: 'created_after' },
      ],
      [
        'a created_at cursor in the year 0000',
        { method: 'GET', path: `/v1/agents?cursor=${cursor('-created_at', '0000-01-01T00:00:00.000Z')}` },
        { status: 400, code: 'parameter_invalid', param: 'cursor' },
      ],
      [
        'a value cursor of 1.5 (a bigint column)',
        { method: 'GET', path: `/v1/deals?sort=value&cursor=${cursor('value', 1.5)}` },
        { status: 400, code: 'parameter_invalid', param: 'cursor' },
      ],
      [
        'a value cursor of 1e308',
        { method: 'GET', path: `/v1/deals?sort=-value&cursor=${cursor('-value', 1e308)}` },
        { status: 400, code: 'parameter_invalid', param: 'cursor' },
      ],
      [
        'an expected_close_date cursor that is no date',
        { method: 'GET', path: `/v1/deals?sort=-expected_close_date&cursor=${cursor('-expected_close_date', '')}` },
        { status: 400, code: 'parameter_invalid', param: 'cursor' },
      ],
      [
        'an expected_close_date cursor on a day no month has',
        { method: 'GET', path: `/v1/deals?sort=expected_close_date&cursor=${cursor('expected_close_date', '2026-13-45')}` },
        { status: 400, code: 'parameter_invalid', param: 'cursor' },
      ],
    ];
    const answers: unknown[] = [];
    for (const [what, partial, expected] of cases) {
      const request: WireRequest = { ...partial, headers: { authorization: `Bearer ${owner.testKey}`, ...partial.headers } };
      const response = await exchange(
        request,
        (r) => [restErrorProblem(r)].filter((p): p is string => p !== undefined),
        () => true,
      );
      const error = (response.json as { error?: { code?: string; param?: string } } | undefined)?.error;
      answers.push({ what, status: response.status, code: error?.code, ...(expected.param ? { param: error?.param } : {}) });
    }
    expect(answers).toEqual(cases.map(([what, , expected]) => ({ what, ...expected })));

    const graphql = (query: string, extra: Record<string, unknown> = {}): WireRequest => ({
      method: 'POST',
      path: '/graphql',
      headers: { authorization: `Bearer ${owner.testKey}`, ...json },
      body: JSON.stringify({ query, ...extra }),
    });
    const graphqlCases: Array<[string, WireRequest, number]> = [
      ['a subscription (the schema has none)', graphql('subscription { leads { hasMore } }'), 200],
      ['a persisted query whose hash is not its text', graphql('{ __typename }', { extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } }), 400],
      ['a persisted query of an unknown version', graphql('{ __typename }', { extensions: { persistedQuery: { version: 2, sha256Hash: 'abc' } } }), 400],
      [
        // With `*/*` and no `query`, the gate took it for the Sandbox page and let it pass without a key.
        'a GET with only a persisted-query extension',
        {
          method: 'GET',
          path: `/graphql?extensions=${encodeURIComponent('{"persistedQuery":{"version":1,"sha256Hash":"' + '0'.repeat(64) + '"}}')}`,
          headers: { authorization: `Bearer ${owner.testKey}`, 'apollo-require-preflight': 'true' },
        },
        200,
      ],
    ];
    const graphqlAnswers: unknown[] = [];
    for (const [what, request] of graphqlCases) {
      const response = await exchange(
        request,
        (r) => [graphqlProblem(r)].filter((p): p is string => p !== undefined),
        () => true,
      );
      const errors = (response.json as { errors?: Array<{ extensions?: { errorCode?: string } }> } | undefined)?.errors;
      graphqlAnswers.push({ what, status: response.status, errorCode: errors?.[0]?.extensions?.errorCode });
    }
    expect(graphqlAnswers).toEqual(graphqlCases.map(([what, , status]) => ({ what, status, errorCode: 'invalid_query' })));
    const keyless = await send(app.baseUrl, { method: 'GET', path: '/graphql?extensions=%7B%7D', headers: {} });
    expect({ status: keyless.status, problem: graphqlProblem(keyless) }).toEqual({ status: 401, problem: undefined });
  });

  for (const route of ROUTES) {
    it(`${routeKey(route)}: never a 5xx, errors in the contract's shape, rejected requests change nothing`, async () => {
      const counts = stats.get(routeKey(route))!;
      await fc.assert(
        fc.asyncProperty(caseFor(route), async (c) => {
          const path = route.path.replace(':id', c.id ? await idSegment(route, c.id) : '') + arb.queryString(c.query);
          const body = wireBody(c.body);
          const request: WireRequest = { method: route.method, path, headers: headersFor(c.auth, c.faults, body !== undefined), body };
          totals.fuzzed += 1;
          await exchange(
            request,
            (r) => {
              counts.requests += 1;
              counts.statuses.set(r.status, (counts.statuses.get(r.status) ?? 0) + 1);
              if (r.status >= 200 && r.status < 300) counts.succeeded += 1;
              if (r.status >= 400 && r.status < 500) counts.rejected += 1;
              const problems: string[] = [];
              const notModified = r.status === 304 && route.file === true && request.headers['if-none-match'] !== undefined;
              if (!((r.status >= 200 && r.status < 300) || (r.status >= 400 && r.status < 500) || notModified)) problems.push(`status ${r.status}`);
              const idProblem = requestIdProblem(request, r);
              if (idProblem) problems.push(idProblem);
              if (r.status >= 400) {
                const shape = restErrorProblem(r);
                if (shape) problems.push(`error shape: ${shape}`);
                const names = restNameProblem(request, r, graphqlNames);
                if (names) problems.push(names);
              } else if (r.status < 300 && route.file) {
                if (r.headers.get('content-type') !== 'application/pdf') problems.push(`content-type ${r.headers.get('content-type')} is not application/pdf`);
              } else if (r.status < 300 && (!r.json || typeof r.json !== 'object' || Array.isArray(r.json))) {
                problems.push('a success that is not a JSON object');
              }
              if (!r.headers.get('x-ratelimit-limit')) problems.push('no X-RateLimit-Limit header');
              return problems;
            },
            (r) => r.status >= 300,
          );
        }),
        assertOptions(RUNS),
      );
    });
  }

  /** A /graphql exchange: never a 5xx, the X-Request-Id and GraphQL error shape right, and a failed operation changed nothing. */
  const exchangeGraphQL = (request: WireRequest, label: string) =>
    exchange(
      request,
      (r) => {
        const problems: string[] = [];
        if (!((r.status >= 200 && r.status < 300) || (r.status >= 400 && r.status < 500))) problems.push(`status ${r.status}`);
        const idProblem = requestIdProblem(request, r);
        if (idProblem) problems.push(idProblem);
        const shape = graphqlProblem(r);
        if (shape) problems.push(`${label}: ${shape}`);
        return problems;
      },
      (r) => r.status >= 300 || (r.json as { errors?: unknown } | undefined)?.errors !== undefined,
    );

  it('POST and GET /graphql: never a 5xx, errors in the GraphQL error shape, failed operations change nothing', async () => {
    const operations = ROUTES.map((route) => ({ route, field: rootField(route), body: seedFor(route) }));
    await fc.assert(
      fc.asyncProperty(graphqlCase(operations, fixtures), async (c) => {
        const request = graphqlRequest(c, headersFor(c.auth, c.faults, c.transport.startsWith('post')));
        totals.graphql += 1;
        await exchangeGraphQL(request, 'GraphQL shape');
      }),
      assertOptions(GRAPHQL_RUNS),
    );
  });

  /** Each operation of the schema, with variables generated from its input types (nulls and omissions included). */
  const schemaOperationCases = (operations: ReturnType<typeof schemaOperations>) =>
    fc.constantFrom(...operations).chain(({ name, document, variables }) => variables.map((values) => ({ name, document, variables: values })));
  const schemaRequest = (operation: { document: string; variables: unknown }, headers: Record<string, string>): WireRequest => ({
    method: 'POST',
    path: '/graphql',
    headers,
    body: arb.toJsonText({ query: operation.document, variables: operation.variables }),
  });

  it(`every operation of the schema, its arguments as variables generated from their input types (nulls and omissions included), ${SCHEMA_RUNS} runs`, async () => {
    const operations = schemaOperations(schema, fixtures);
    const seen = new Set<string>();
    const headers = { authorization: `Bearer ${owner.testKey}`, 'content-type': 'application/json' };
    await fc.assert(
      fc.asyncProperty(schemaOperationCases(operations), async (operation) => {
        seen.add(operation.name);
        totals.graphql += 1;
        await exchangeGraphQL(schemaRequest(operation, headers), `GraphQL shape (${operation.name})`);
      }),
      assertOptions(SCHEMA_RUNS),
    );
    // Every operation was sent at least once (they are few against the runs).
    expect(operations.map((o) => o.name).filter((name) => !seen.has(name))).toEqual([]);
    expect(operations.map((o) => o.name)).toEqual(
      expect.arrayContaining(['Query.leads', 'Mutation.deployAgent', 'Agent.runs', 'Deal.proposals', 'Webhook.attempts']),
    );
  });

  it(`every operation of the schema with a restricted key (leads read, deals write): refused fields are FORBIDDEN, never a 5xx, and change nothing`, async () => {
    const operations = schemaOperations(schema, fixtures);
    const headers = { authorization: `Bearer ${restrictedKey}`, 'content-type': 'application/json' };
    let forbidden = 0;
    await fc.assert(
      fc.asyncProperty(schemaOperationCases(operations), async (operation) => {
        totals.graphql += 1;
        const response = await exchangeGraphQL(schemaRequest(operation, headers), `GraphQL shape (${operation.name}, restricted key)`);
        const codes = ((response.json as { errors?: Array<{ extensions?: { code?: string } }> } | undefined)?.errors ?? []).map((e) => e.extensions?.code);
        if (codes.includes('FORBIDDEN')) forbidden += 1;
      }),
      assertOptions(Math.ceil(SCHEMA_RUNS / 4)),
    );
    expect(forbidden).toBeGreaterThan(0);
  });

  it('replayed Idempotency-Keys across keys of one account: a replay goes only to the key that made the request, a key without the permission gets 403 first', async () => {
    const posts = ROUTES.filter((route) => route.method === 'POST');
    const writer = (
      await new ApiKeyService(app.orm.em.fork()).create(owner.account, KeyType.test, 'fuzz writer', parsePermissions('leads=write,webhooks=write'))
    ).secret;
    // Made here, not through a request: the database changed (its security log too) since the last snapshot.
    lastSnapshot = undefined;
    const keys = { owner: owner.testKey, restricted: restrictedKey, writer };
    const permissions = { owner: null, restricted: parsePermissions('leads=read,deals=write'), writer: parsePermissions('leads=write,webhooks=write') };
    /** Every answer each API key got for each Idempotency-Key: a replay must be one of its own. */
    const answered = new Map<string, Set<string>>();
    let replays = 0;
    let refusedFirst = 0;
    const sequence = fc.array(
      fc.record({
        route: fc.constantFrom(...posts),
        who: fc.constantFrom<keyof typeof keys>('owner', 'restricted', 'writer'),
        idempotencyKey: fc.constantFrom('shared-1', 'shared-2', 'shared-3'),
        variant: fc.constantFrom(0, 1),
        // Sent again at once: a retry, so every run has replays to check whatever routes the table holds.
        twice: fc.boolean(),
      }),
      { minLength: 4, maxLength: 10 },
    );
    await fc.assert(
      fc.asyncProperty(sequence, async (steps) => {
        const run = randomUUID();
        for (const step of steps.flatMap((each) => (each.twice ? [each, each] : [each]))) {
          const body = step.route.operation.body
            ? { name: `Replay ${step.variant}`, company: 'Replay Co', contact_email: `replay-${step.variant}-${run}@example.com` }
            : {};
          const path = step.route.path.includes(':id') ? step.route.path.replace(':id', fixtures[arb.kindOf(step.route.path)] ?? 'missing') : step.route.path;
          const idempotencyKey = `${step.idempotencyKey}-${run}`;
          const request: WireRequest = {
            method: 'POST',
            path,
            headers: { authorization: `Bearer ${keys[step.who]}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
            body: JSON.stringify(body),
          };
          totals.fuzzed += 1;
          const mine = `${step.who} ${idempotencyKey}`;
          const allowed = allows(permissions[step.who], permissionOf(rootField(step.route))!);
          await exchange(
            request,
            (r) => {
              const problems: string[] = [];
              if (r.status >= 500) problems.push(`status ${r.status}`);
              const replayed = r.headers.get('idempotent-replayed') === 'true';
              if (replayed) {
                replays += 1;
                if (!answered.get(mine)?.has(r.text)) problems.push(`${step.who} was replayed an answer it never got itself`);
              }
              if (!allowed) {
                const code = (r.json as { error?: { code?: string } } | undefined)?.error?.code;
                if (r.status !== 403 || code !== 'permission_denied') problems.push(`${step.who} lacks the permission, yet got ${r.status} ${code ?? ''}`);
                else refusedFirst += 1;
              }
              if (!answered.has(mine)) answered.set(mine, new Set());
              answered.get(mine)!.add(r.text);
              return problems;
            },
            (r) => r.status >= 300,
          );
        }
      }),
      assertOptions(Math.ceil(RUNS / 4)),
    );
    expect(replays).toBeGreaterThan(0);
    expect(refusedFirst).toBeGreaterThan(0);
  });

  it('documents whose @skip/@include read defaulted, omitted, null or wrong variables: a restricted key gets the answers an sk_ key gets, never a 5xx', async () => {
    const fields = ['leads(filter: {limit: 1}) { data { id } }', 'deals { data { id } }', 'webhooks { data { id } }', 'health { status }'];
    const definitions = ['$s: Boolean = true', '$s: Boolean = false', '$s: Boolean', '$s: Boolean!', '$s: Boolean! = true'];
    const documents = fc
      .record({
        definition: fc.constantFrom(...definitions),
        directive: fc.constantFrom('@include(if: $s)', '@skip(if: $s)'),
        place: fc.constantFrom('root', 'nested', 'fragment', 'inline'),
        field: fc.constantFrom(...fields),
        other: fc.constantFrom(...fields),
        variables: fc.constantFrom<Record<string, unknown> | undefined>(undefined, {}, { s: null }, { s: true }, { s: false }, { s: 'yes' }, { s: 1 }),
      })
      .map((c) => {
        const [name, ...rest] = c.field.split(' ');
        const field =
          c.place === 'root'
            ? `${c.field.replace(/^(\w+(?:\([^)]*\))?)/, `$1 ${c.directive}`)}`
            : c.place === 'nested'
              ? `${name} { ${rest
                  .join(' ')
                  .replace(/^\{\s*/, '')
                  .replace(/^(\w+)/, `$1 ${c.directive}`)}`
              : c.place === 'fragment'
                ? `...F ${c.directive}`
                : `... ${c.directive} { ${c.field} }`;
        const fragment = c.place === 'fragment' ? ` fragment F on Query { ${c.field} }` : '';
        return { query: `query(${c.definition}) { ${field} ${c.other} }${fragment}`, variables: c.variables };
      });
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(documents, async ({ query, variables }) => {
        const answers: WireResponse[] = [];
        for (const key of [restrictedKey, owner.testKey]) {
          const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
          totals.graphql += 1;
          answers.push(
            await exchangeGraphQL({ method: 'POST', path: '/graphql', headers, body: JSON.stringify({ query, variables }) }, 'GraphQL shape (directives)'),
          );
        }
        const [restricted, full] = answers;
        const otherErrors = (r: WireResponse) =>
          ((r.json as { errors?: Array<{ message: string; extensions?: { code?: string } }> } | undefined)?.errors ?? [])
            .filter((e) => e.extensions?.code !== 'FORBIDDEN')
            .map((e) => e.message);
        expect({ query, variables, status: restricted.status, errors: otherErrors(restricted) }).toEqual({
          query,
          variables,
          status: full.status,
          errors: otherErrors(full),
        });
        compared += 1;
      }),
      assertOptions(Math.ceil(GRAPHQL_RUNS / 4)),
    );
    expect(compared).toBeGreaterThan(0);
  });

  it(`documents of many aliased root fields: more than ${MAX_ROOT_FIELDS} never run; the rest are charged what they select`, async () => {
    const headers = { authorization: `Bearer ${owner.testKey}`, 'content-type': 'application/json' };
    await fc.assert(
      fc.asyncProperty(aliasDocument, async (document) => {
        const request: WireRequest = { method: 'POST', path: '/graphql', headers, body: JSON.stringify({ query: document.query }) };
        totals.graphql += 1;
        await exchange(
          request,
          (r) => {
            const problems: string[] = [];
            const shape = graphqlProblem(r);
            if (shape) problems.push(`GraphQL shape: ${shape}`);
            const errorCode = (r.json as { errors?: Array<{ extensions?: { errorCode?: string } }> } | undefined)?.errors?.[0]?.extensions?.errorCode;
            if (document.roots > MAX_ROOT_FIELDS && (r.status !== 400 || errorCode !== 'query_too_complex'))
              problems.push(`${document.roots} root fields answered ${r.status} ${errorCode ?? ''}`);
            if (r.status === 200 && r.headers.get('x-ratelimit-cost') !== String(document.roots))
              problems.push(`charged ${r.headers.get('x-ratelimit-cost')} for ${document.roots} root fields`);
            if (r.status >= 500) problems.push(`status ${r.status}`);
            return problems;
          },
          (r) => r.status >= 300,
        );
      }),
      assertOptions(60),
    );
  });

  // -------------------------------------------------------------------------------------------

  it('exercised every route of the table, each with successes and rejections, and the database checks were meaningful', () => {
    const summary = [...stats].map(
      ([key, s]) =>
        `${key.padEnd(32)} ${String(s.requests).padStart(4)} requests  ${String(s.succeeded).padStart(3)} 2xx  ${String(s.rejected).padStart(3)} 4xx  ${[
          ...s.statuses,
        ]
          .sort(([a], [b]) => a - b)
          .map(([status, n]) => `${status}×${n}`)
          .join(' ')}`,
    );
    console.log(
      [
        `fuzz (seed ${SEED}): ${totals.fuzzed} REST + ${totals.graphql} GraphQL requests fuzzed, ${totals.setup} setup requests`,
        `${totals.rejectedUnchanged} rejected requests left the database unchanged; ${totals.changedBySuccess} successes changed it`,
        `time in requests ${Math.round(totals.requestMs)} ms, in database snapshots ${Math.round(totals.snapshotMs)} ms`,
        ...summary,
      ].join('\n'),
    );
    const thin = [...stats]
      .filter(([, s]) => s.requests < RUNS || s.succeeded === 0 || s.rejected === 0)
      .map(([key, s]) => `${key}: ${s.requests} requests, ${s.succeeded} 2xx, ${s.rejected} 4xx`);
    expect(thin).toEqual([]);
    expect(new Set(stats.keys())).toEqual(new Set(ROUTES.map(routeKey)));
    // The "unchanged" check can see a change: successful writes did change the snapshot.
    expect(totals.changedBySuccess).toBeGreaterThan(ROUTES.filter((route) => route.method !== 'GET').length);
    expect(totals.rejectedUnchanged).toBeGreaterThan(ROUTES.length * RUNS * 0.4);
  });
});

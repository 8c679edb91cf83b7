import { readFileSync } from 'node:fs';
import path from 'node:path';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';

const LEAD_FIELDS = `id object company contactEmail contactName industry employees website country source status
  score scoreLabel modelVersion scoredAt ownerId metadata fields livemode createdAt updatedAt`;

const CREATE = `mutation Create($input: LeadCreateInput!) { createLead(input: $input) { ${LEAD_FIELDS} } }`;
const GET = `query Get($id: ID!) { lead(id: $id) { ${LEAD_FIELDS} } }`;
const UPDATE = `mutation Update($id: ID!, $input: LeadUpdateInput!) { updateLead(id: $id, input: $input) { ${LEAD_FIELDS} } }`;
const DELETE = `mutation Delete($id: ID!) { deleteLead(id: $id) { id object deleted } }`;
const SCORE = `query Score($id: ID!) { leadScore(id: $id) { leadId score scoreLabel baseScore modelVersion scoredAt signals { name value impact description } } }`;
const LIST = `query List($filter: LeadListInput) { leads(filter: $filter) { object hasMore nextCursor data { ${LEAD_FIELDS} } } }`;
const HEALTH = `{ health { status version apiVersion database uptimeS } }`;

const packageVersion = (JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;
const ERROR_CODES = ['BAD_USER_INPUT', 'UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'RATE_LIMITED', 'INTERNAL_SERVER_ERROR'];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** The REST spelling of a GraphQL object: keys to snake_case, values (metadata included) as they are. */
function restShape(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[snake(key)] = Array.isArray(item)
      ? item.map((entry) => (entry && typeof entry === 'object' ? restShape(entry as Record<string, unknown>) : entry))
      : item;
  }
  return out;
}

interface GraphQLErrorBody {
  message: string;
  extensions: Record<string, unknown>;
}

/** Every GraphQL error answered in these tests, checked at the end for leaks. */
const allErrors: GraphQLErrorBody[] = [];

function errorsOf(response: HttpResponse): GraphQLErrorBody[] {
  const errors = (response.body as { errors?: GraphQLErrorBody[] }).errors;
  expect(Array.isArray(errors)).toBe(true);
  expect(errors!.length).toBeGreaterThan(0);
  for (const error of errors!) {
    allErrors.push(error);
    expect(ERROR_CODES).toContain(error.extensions?.code);
  }
  return errors!;
}

const firstError = (response: HttpResponse) => errorsOf(response)[0];

describe('GraphQL over HTTP', () => {
  let app: TestApp;
  let owner: TestAccount;
  let key: string;
  let counter = 0;
  const email = () => `contact${++counter}@acme${counter}.test`;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createAccount();
    key = owner.testKey;
  });
  afterAll(() => app.close());

  async function createLead(input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const response = await app.graphql(CREATE, { input }, key);
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    return response.body.data.createLead;
  }

  describe('leads', () => {
    it('createLead returns the scored lead and REST returns the same lead in snake_case', async () => {
      const input = {
        company: 'Initech',
        contactEmail: email(),
        contactName: 'Bill Lumbergh',
        industry: 'Software',
        employees: 250,
        website: 'https://initech.test',
        country: 'US',
        source: 'referral',
        metadata: { crmId: 'A-1', plan_tier: 'gold' },
      };
      const lead = await createLead(input);
      expect(lead).toMatchObject({ ...input, object: 'lead', status: 'new', livemode: false, modelVersion: 'prior-v1' });
      expect(lead.id).toMatch(/^lead_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(Number.isInteger(lead.score)).toBe(true);
      expect(['hot', 'warm', 'cold']).toContain(lead.scoreLabel);
      expect(lead.createdAt).toMatch(ISO_MS);

      const rest = await app.request('GET', `/v1/leads/${lead.id}`, { key });
      expect(rest.status).toBe(200);
      expect(rest.body).toEqual(restShape(lead));
      expect(rest.body.metadata).toEqual({ crmId: 'A-1', plan_tier: 'gold' });
    });

    it('lead(id) equals the REST representation and what createLead returned', async () => {
      const created = await createLead({ company: 'Globex', contactEmail: email() });
      const got = await app.graphql(GET, { id: created.id }, key);
      expect(got.body).toEqual({ data: { lead: created } });
      const rest = await app.request('GET', `/v1/leads/${created.id}`, { key });
      expect(rest.body).toEqual(restShape(created));
    });

    it('a lead created through REST reads the same through GraphQL', async () => {
      const rest = await app.request('POST', '/v1/leads', {
        key,
        body: { company: 'Hooli', contact_email: email(), employees: 40, industry: 'Retail', metadata: { someKey: 'v' } },
      });
      expect(rest.status).toBe(201);
      const got = await app.graphql(GET, { id: rest.body.id }, key);
      expect(restShape(got.body.data.lead)).toEqual(rest.body);
    });

    it('leads lists the same page as REST, with the list envelope', async () => {
      for (let i = 0; i < 3; i++) await createLead({ company: `Listed ${i}`, contactEmail: email() });
      const gql = await app.graphql(LIST, { filter: { limit: 2 } }, key);
      expect(gql.body.errors).toBeUndefined();
      const page = gql.body.data.leads;
      expect(page).toMatchObject({ object: 'list', hasMore: true });
      expect(page.data).toHaveLength(2);
      expect(typeof page.nextCursor).toBe('string');
      const rest = await app.request('GET', '/v1/leads?limit=2', { key });
      expect(rest.body).toEqual({ object: 'list', data: page.data.map(restShape), has_more: true, next_cursor: page.nextCursor });

      const next = await app.graphql(LIST, { filter: { limit: 2, cursor: page.nextCursor } }, key);
      const restNext = await app.request('GET', `/v1/leads?limit=2&cursor=${page.nextCursor}`, { key });
      expect(restNext.body.data).toEqual(next.body.data.leads.data.map(restShape));
      const firstIds = page.data.map((l: { id: string }) => l.id);
      for (const lead of next.body.data.leads.data as Array<{ id: string }>) expect(firstIds).not.toContain(lead.id);
    });

    it('leads filters and sorts with camelCase names', async () => {
      const big = await createLead({ company: 'Sortable Big', contactEmail: email(), employees: 9000, industry: 'Banking' });
      const small = await createLead({ company: 'Sortable Small', contactEmail: email(), employees: 2, industry: 'Banking' });
      const gql = await app.graphql(LIST, { filter: { q: 'sortable', sort: '-employees', minEmployees: 1 } }, key);
      expect(gql.body.data.leads.data.map((l: { id: string }) => l.id)).toEqual([big.id, small.id]);
      const rest = await app.request('GET', '/v1/leads?q=sortable&sort=-employees&min_employees=1', { key });
      expect(rest.body.data.map((l: { id: string }) => l.id)).toEqual([big.id, small.id]);
    });

    it('updateLead changes only the fields sent, like PUT, and rescoring shows in leadScore', async () => {
      const created = await createLead({ company: 'Umbrella', contactEmail: email(), industry: 'Retail', employees: 5, country: 'UK' });
      const updated = await app.graphql(UPDATE, { id: created.id, input: { employees: 600, industry: 'Software', metadata: { a: '1' } } }, key);
      expect(updated.body.errors).toBeUndefined();
      const lead = updated.body.data.updateLead;
      expect(lead).toMatchObject({ id: created.id, company: 'Umbrella', country: 'UK', employees: 600, industry: 'Software', metadata: { a: '1' } });
      expect(lead.score).toBeGreaterThan(created.score as number);
      expect(lead.createdAt).toBe(created.createdAt);

      const rest = await app.request('GET', `/v1/leads/${created.id}`, { key });
      expect(rest.body).toEqual(restShape(lead));

      const restPut = await app.request('PUT', `/v1/leads/${created.id}`, { key, body: { status: 'contacted' } });
      expect(restPut.status).toBe(200);
      const afterPut = await app.graphql(GET, { id: created.id }, key);
      expect(restShape(afterPut.body.data.lead)).toEqual(restPut.body);
      expect(afterPut.body.data.lead).toMatchObject({ status: 'contacted', employees: 600, country: 'UK' });
    });

    it('leadScore matches GET /v1/leads/{id}/score and explains the score', async () => {
      const created = await createLead({ company: 'Stark', contactEmail: email(), industry: 'Healthcare', employees: 80, source: 'partner' });
      const gql = await app.graphql(SCORE, { id: created.id }, key);
      expect(gql.body.errors).toBeUndefined();
      const score = gql.body.data.leadScore;
      expect(score).toMatchObject({ leadId: created.id, score: created.score, scoreLabel: created.scoreLabel, modelVersion: 'prior-v1' });
      expect(score.baseScore + score.signals.reduce((sum: number, s: { impact: number }) => sum + s.impact, 0)).toBe(score.score);
      const rest = await app.request('GET', `/v1/leads/${created.id}/score`, { key });
      expect(rest.status).toBe(200);
      expect(rest.body).toEqual(restShape(score));
      expect(rest.body.lead_id).toBe(created.id);
      expect(rest.body.signals[0]).toEqual(score.signals[0]);
    });

    it('deleteLead answers like DELETE and the lead is gone from both surfaces', async () => {
      const created = await createLead({ company: 'Doomed', contactEmail: email() });
      const deleted = await app.graphql(DELETE, { id: created.id }, key);
      expect(deleted.body).toEqual({ data: { deleteLead: { id: created.id, object: 'lead', deleted: true } } });
      expect((await app.request('GET', `/v1/leads/${created.id}`, { key })).status).toBe(404);
      expect(firstError(await app.graphql(GET, { id: created.id }, key)).extensions.code).toBe('NOT_FOUND');

      const other = await createLead({ company: 'Doomed too', contactEmail: email() });
      const restDelete = await app.request('DELETE', `/v1/leads/${other.id}`, { key });
      expect(restDelete.status).toBe(200);
      expect(restDelete.body).toEqual({ id: other.id, object: 'lead', deleted: true });
    });
  });

  describe('health', () => {
    it('matches GET /v1/health', async () => {
      const gql = await app.graphql(HEALTH, {}, key);
      expect(gql.body.errors).toBeUndefined();
      const health = gql.body.data.health;
      expect(health).toMatchObject({ status: 'ok', version: packageVersion, apiVersion: 'v1', database: 'ok' });
      expect(Number.isInteger(health.uptimeS)).toBe(true);
      const rest = await app.request('GET', '/v1/health', { key });
      expect(rest.body).toMatchObject({ status: 'ok', version: packageVersion, api_version: 'v1', database: 'ok' });
      expect(Math.abs(rest.body.uptime_s - health.uptimeS)).toBeLessThanOrEqual(1);
    });
  });

  describe('errors', () => {
    it('text holding U+0000, in variables or literals, is BAD_USER_INPUT (400) and nothing is stored', async () => {
      const before = await app.orm.em.fork().getConnection().execute('select count(*)::int as n from leads');
      const variable = await app.graphql(CREATE, { input: { company: 'Ac\u0000me', contactEmail: email() } }, key);
      expect(variable.status).toBe(400);
      expect(firstError(variable).extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', param: 'company' });
      const nested = await app.graphql(CREATE, { input: { company: 'Acme', contactEmail: email(), metadata: { a: 'x\u0000' } } }, key);
      expect(firstError(nested).extensions).toMatchObject({ errorCode: 'parameter_invalid', param: 'metadata.a' });
      const literal = await app.graphql('{ leads(filter: { q: "a\\u0000b" }) { hasMore } }', {}, key);
      expect(literal.status).toBe(400);
      expect(firstError(literal).extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid' });
      expect(firstError(literal).extensions).not.toHaveProperty('http');
      const after = await app.orm.em.fork().getConnection().execute('select count(*)::int as n from leads');
      expect(after[0].n).toBe(before[0].n);
    });

    it('validation failures are BAD_USER_INPUT with errorCode parameter_invalid and the camelCase param', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ company: 'Acme', contactEmail: 'not-an-email' }, 'contactEmail'],
        [{ company: 'Acme', contactEmail: email(), employees: -1 }, 'employees'],
        [{ company: '', contactEmail: email() }, 'company'],
        [{ company: 'Acme', contactEmail: email(), contactName: '' }, 'contactName'],
        [{ company: 'Acme', contactEmail: email(), metadata: { k: 42 } }, 'metadata'],
        [{ company: 'Acme', contactEmail: email(), status: 'converted' }, 'status'],
      ];
      for (const [input, param] of cases) {
        const response = await app.graphql(CREATE, { input }, key);
        const error = firstError(response);
        expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', type: 'invalid_request_error', param });
        expect(error.message).toContain(param);
        expect(response.body.data).toBeNull();
      }
      const list = await app.graphql(LIST, { filter: { limit: 1000 } }, key);
      expect(firstError(list).extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', param: 'limit' });
      const sort = await app.graphql(LIST, { filter: { sort: 'bogus' } }, key);
      expect(firstError(sort).extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', param: 'sort' });
      const cursor = await app.graphql(LIST, { filter: { cursor: 'garbage' } }, key);
      expect(firstError(cursor).extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', param: 'cursor' });
    });

    it('variables of the wrong type are BAD_USER_INPUT', async () => {
      const response = await app.graphql(CREATE, { input: { company: 'Acme', contactEmail: email(), employees: 'many' } }, key);
      expect(firstError(response).extensions.code).toBe('BAD_USER_INPUT');
      const missing = await app.graphql(CREATE, { input: { company: 'Acme' } }, key);
      expect(firstError(missing).extensions.code).toBe('BAD_USER_INPUT');
    });

    it('an unknown or malformed id is NOT_FOUND with errorCode resource_missing', async () => {
      for (const id of ['lead_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'lead_nope', 'deal_01ARZ3NDEKTSV4RRFFQ69G5FAV', '']) {
        for (const query of [GET, SCORE, DELETE]) {
          const error = firstError(await app.graphql(query, { id }, key));
          expect(error.extensions).toMatchObject({ code: 'NOT_FOUND', errorCode: 'resource_missing', type: 'invalid_request_error' });
        }
        const update = firstError(await app.graphql(UPDATE, { id, input: { company: 'X' } }, key));
        expect(update.extensions).toMatchObject({ code: 'NOT_FOUND', errorCode: 'resource_missing' });
      }
    });

    it('a duplicate contact email is CONFLICT with errorCode resource_conflict, on create and on update', async () => {
      const taken = email();
      await createLead({ company: 'First', contactEmail: taken });
      const duplicate = firstError(await app.graphql(CREATE, { input: { company: 'Second', contactEmail: taken.toUpperCase() } }, key));
      expect(duplicate.extensions).toMatchObject({ code: 'CONFLICT', errorCode: 'resource_conflict', param: 'contactEmail' });

      const other = await createLead({ company: 'Other', contactEmail: email() });
      const update = firstError(await app.graphql(UPDATE, { id: other.id, input: { contactEmail: taken } }, key));
      expect(update.extensions).toMatchObject({ code: 'CONFLICT', errorCode: 'resource_conflict', param: 'contactEmail' });
    });

    it('a refused status move is CONFLICT with errorCode invalid_status_transition', async () => {
      const lead = await createLead({ company: 'Mover', contactEmail: email(), status: 'qualified' });
      const error = firstError(await app.graphql(UPDATE, { id: lead.id, input: { status: 'contacted' } }, key));
      expect(error.extensions).toMatchObject({ code: 'CONFLICT', errorCode: 'invalid_status_transition', param: 'status' });
    });

    it('a syntax error is BAD_USER_INPUT', async () => {
      const response = await app.graphql('{ leads { data { id } ', {}, key);
      expect(response.status).toBe(400);
      expect(firstError(response).extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'invalid_query' });
    });

    it('an unknown field or argument is BAD_USER_INPUT', async () => {
      const field = await app.graphql('{ leads { data { id password } } }', {}, key);
      expect(field.status).toBe(400);
      expect(firstError(field).extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'invalid_query' });
      const root = await app.graphql('{ gadgets { data { id } } }', {}, key);
      expect(firstError(root).extensions.code).toBe('BAD_USER_INPUT');
      const argument = await app.graphql('{ lead(id: "lead_x", tenant: "other") { id } }', {}, key);
      expect(firstError(argument).extensions.code).toBe('BAD_USER_INPUT');
      const inputField = await app.graphql(CREATE, { input: { company: 'Acme', contactEmail: email(), score: 100 } }, key);
      expect(firstError(inputField).extensions.code).toBe('BAD_USER_INPUT');
    });

    it('a request without a query is BAD_USER_INPUT', async () => {
      const response = await app.request('POST', '/graphql', { key, body: { variables: {} } });
      expect(response.status).toBe(400);
      expect(firstError(response).extensions.code).toBe('BAD_USER_INPUT');
      const noBody = await app.request('POST', '/graphql', { key, headers: { 'content-type': 'application/json' } });
      expect(noBody.status).toBe(400);
      expect(firstError(noBody).extensions.code).toBe('BAD_USER_INPUT');
      const badJson = await app.request('POST', '/graphql', { key, rawBody: '{"query":', headers: { 'content-type': 'application/json' } });
      expect(badJson.status).toBe(400);
      expect(firstError(badJson).extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'invalid_json' });
    });

    it('a missing or invalid key is UNAUTHENTICATED with HTTP 401', async () => {
      const cases: Array<[string | null, string]> = [
        [null, 'api_key_missing'],
        ['sk_test_nope', 'api_key_invalid'],
        [`sk_test_${'A'.repeat(32)}`, 'api_key_invalid'],
        [`pk_test_${'A'.repeat(32)}`, 'api_key_invalid'],
      ];
      for (const [badKey, code] of cases) {
        const response = await app.graphql(HEALTH, {}, badKey);
        expect(response.status).toBe(401);
        expect(response.body.data).toBeUndefined();
        const error = firstError(response);
        expect(error.extensions).toMatchObject({ code: 'UNAUTHENTICATED', errorCode: code, type: 'authentication_error' });
        expect(error.extensions.requestId).toBe(response.headers.get('x-request-id'));
      }
      const wrongScheme = await app.request('POST', '/graphql', {
        headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
        body: { query: HEALTH },
      });
      expect(wrongScheme.status).toBe(401);
      expect(firstError(wrongScheme).extensions).toMatchObject({ code: 'UNAUTHENTICATED', errorCode: 'api_key_invalid' });
    });

    it("never shows a stack trace, SQL or a library's message", () => {
      expect(allErrors.length).toBeGreaterThan(20);
      for (const error of allErrors) {
        const text = JSON.stringify(error);
        expect(text).not.toMatch(/\bat .+\(.+:\d+:\d+\)|\.ts:\d+|node_modules|stacktrace/i);
        expect(text).not.toMatch(/\b(select|insert into|update|delete from)\b.+\b(from|values|set|where)\b/i);
        expect(text).not.toMatch(/duplicate key|violates|constraint|relation "|syntax error at|postgres/i);
        expect(error.extensions.exception).toBeUndefined();
      }
    });
  });

  describe('landing page', () => {
    it('GET /graphql from a browser shows Apollo Sandbox without a key', async () => {
      const response = await app.request('GET', '/graphql', { headers: { accept: 'text/html' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.text).toMatch(/<!DOCTYPE html>/i);
      expect(response.text).toMatch(/apollo/i);
    });

    it('GET /graphql asking for JSON still needs a key', async () => {
      const response = await app.request('GET', '/graphql?query=%7Bhealth%7Bstatus%7D%7D', { headers: { accept: 'application/json' } });
      expect(response.status).toBe(401);
      expect(firstError(response).extensions.code).toBe('UNAUTHENTICATED');
      const withQuery = await app.request('GET', '/graphql?query=%7Bhealth%7Bstatus%7D%7D', { headers: { accept: 'text/html' } });
      expect(withQuery.status).toBe(401);
    });

    it('GET /graphql with a key and a query runs it', async () => {
      const response = await app.request('GET', '/graphql?query=%7Bhealth%7Bstatus%7D%7D', {
        key,
        headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { health: { status: 'ok' } } });
    });
  });
});

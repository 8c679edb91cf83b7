import { request as httpRequest } from 'node:http';
import { HttpResponse, LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * Inputs that escaped the contract until the outside fuzzer found them: explicit null for an
 * optional GraphQL argument (a crash), null meaning two things on REST, JSON bodies that are not
 * objects, camelCase in REST messages, and websites that are not http(s).
 */

function expectRestError(res: HttpResponse, status: number, code: string, param?: string): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { error: { code, ...(param ? { param } : {}) } } });
  expect(res.body.error.request_id).toMatch(/^req_/);
}

describe('the input contract', () => {
  let app: TestApp;
  let owner: TestAccount;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ env: LOCAL_RECEIVERS });
    owner = await app.createAccount();
    const post = async (path: string, body: unknown) => {
      const res = await app.request('POST', path, { key: owner.testKey, body });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    ids.lead = await post('/v1/leads', { company: 'Nulls', contact_email: 'nulls@nulls.test' });
    ids.deal = await post('/v1/deals', { name: 'Nulls deal', value: 1200, lead_id: ids.lead });
    ids.agent = await post('/v1/agents', { name: 'Nulls agent', type: 'lead_qualifier' });
    ids.webhook = await post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
  });
  afterAll(() => app.close());

  describe('explicit null for an optional GraphQL argument is the same as leaving it out', () => {
    const documents: Array<[string, string, (vars: Record<string, string>) => string]> = [
      ['leads', 'query ($f: LeadListInput) { leads(filter: $f) { hasMore } }', () => '{ leads(filter: null) { hasMore } }'],
      ['deals', 'query ($f: DealListInput) { deals(filter: $f) { hasMore } }', () => '{ deals(filter: null) { hasMore } }'],
      ['agents', 'query ($f: AgentListInput) { agents(filter: $f) { hasMore } }', () => '{ agents(filter: null) { hasMore } }'],
      ['events', 'query ($f: EventListInput) { events(filter: $f) { hasMore } }', () => '{ events(filter: null) { hasMore } }'],
      ['integrations', 'query ($f: IntegrationListInput) { integrations(filter: $f) { hasMore } }', () => '{ integrations(filter: null) { hasMore } }'],
      ['webhooks', 'query ($f: WebhookListInput) { webhooks(filter: $f) { hasMore } }', () => '{ webhooks(filter: null) { hasMore } }'],
      [
        'Agent.runs',
        'query ($id: ID!, $f: AgentRunListInput) { agent(id: $id) { runs(filter: $f) { hasMore } } }',
        (v) => `{ agent(id: "${v.id}") { runs(filter: null) { hasMore } } }`,
      ],
      [
        'Deal.proposals',
        'query ($id: ID!, $f: ProposalListInput) { deal(id: $id) { proposals(filter: $f) { hasMore } } }',
        (v) => `{ deal(id: "${v.id}") { proposals(filter: null) { hasMore } } }`,
      ],
      [
        'Webhook.attempts',
        'query ($id: ID!, $f: PageInput) { webhook(id: $id) { attempts(filter: $f) { hasMore } } }',
        (v) => `{ webhook(id: "${v.id}") { attempts(filter: null) { hasMore } } }`,
      ],
      [
        'agentMetrics',
        'query ($id: ID!, $f: AgentMetricsInput) { agentMetrics(id: $id, filter: $f) { runs } }',
        (v) => `{ agentMetrics(id: "${v.id}", filter: null) { runs } }`,
      ],
    ];
    const idFor: Record<string, () => string> = {
      'Agent.runs': () => ids.agent,
      'Deal.proposals': () => ids.deal,
      'Webhook.attempts': () => ids.webhook,
      agentMetrics: () => ids.agent,
    };

    it.each(documents.map(([name]) => name))('%s, as a literal and through variables', async (name) => {
      const [, withVariables, literal] = documents.find(([each]) => each === name)!;
      const id = idFor[name]?.();
      for (const response of [
        await app.graphql(literal({ id: id ?? '' }), {}, owner.testKey),
        await app.graphql(withVariables, { f: null, ...(id ? { id } : {}) }, owner.testKey),
        await app.graphql(withVariables, id ? { id } : {}, owner.testKey),
      ]) {
        expect({ status: response.status, errors: response.body.errors }).toEqual({ status: 200, errors: undefined });
      }
    });

    it('deployAgent(id, input: null)', async () => {
      const literal = await app.graphql(`mutation { deployAgent(id: "${ids.agent}", input: null) { status version } }`, {}, owner.testKey);
      expect(literal.body.errors).toBeUndefined();
      expect(literal.body.data.deployAgent.status).toBe('deployed');
      const variables = await app.graphql(
        'mutation ($id: ID!, $input: AgentDeployInput) { deployAgent(id: $id, input: $input) { version } }',
        { id: ids.agent, input: null },
        owner.testKey,
      );
      expect(variables.body.errors).toBeUndefined();
      expect(variables.body.data.deployAgent.version).toBe(literal.body.data.deployAgent.version + 1);
    });
  });

  describe('null on REST: on create it is left out, on update it clears an optional field and is refused for a required one', () => {
    it('clears optional fields', async () => {
      const lead = await app.request('PUT', `/v1/leads/${ids.lead}`, { key: owner.testKey, body: { industry: 'Software' } });
      expect(lead.body.industry).toBe('Software');
      expect((await app.request('PUT', `/v1/leads/${ids.lead}`, { key: owner.testKey, body: { industry: null } })).body.industry).toBeNull();
      expect((await app.request('PUT', `/v1/deals/${ids.deal}`, { key: owner.testKey, body: { owner: null } })).body.owner).toBeNull();
    });

    it.each([
      ['leads', 'company'],
      ['leads', 'contact_email'],
      ['leads', 'status'],
      ['leads', 'metadata'],
      ['deals', 'name'],
      ['deals', 'value'],
      ['deals', 'currency'],
      ['deals', 'stage'],
      ['webhooks', 'url'],
      ['webhooks', 'events'],
      ['webhooks', 'status'],
    ])('refuses null for %s %s with a message that says so', async (kind, param) => {
      const id = { leads: ids.lead, deals: ids.deal, webhooks: ids.webhook }[kind]!;
      const before = await app.request('GET', `/v1/${kind}/${id}`, { key: owner.testKey });
      const res = await app.request('PUT', `/v1/${kind}/${id}`, { key: owner.testKey, body: { [param]: null } });
      expectRestError(res, 400, 'parameter_invalid', param);
      expect(res.body.error.message).toBe(`${param} cannot be null: leave it out to keep its current value`);
      if (before.status === 200) expect((await app.request('GET', `/v1/${kind}/${id}`, { key: owner.testKey })).body).toEqual(before.body);
    });

    it('says the same through GraphQL, in GraphQL names', async () => {
      const res = await app.graphql('mutation ($id: ID!) { updateDeal(id: $id, input: { value: null }) { id } }', { id: ids.deal }, owner.testKey);
      expect(res.body.errors[0].message).toBe('value cannot be null: leave it out to keep its current value');
      expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', param: 'value' });
      const email = await app.graphql('mutation ($id: ID!) { updateLead(id: $id, input: { contactEmail: null }) { id } }', { id: ids.lead }, owner.testKey);
      expect(email.body.errors[0].message).toBe('contactEmail cannot be null: leave it out to keep its current value');
    });

    it('takes the default for null on create', async () => {
      const deal = await app.request('POST', '/v1/deals', { key: owner.testKey, body: { name: 'Default currency', value: 5, currency: null, stage: null } });
      expect(deal.status).toBe(201);
      expect(deal.body).toMatchObject({ currency: 'USD', stage: 'prospecting' });
    });
  });

  it('answers a JSON body that is not an object alike, and truly, on REST and GraphQL', async () => {
    for (const [rawBody, kind] of [
      ['"x"', 'a string'],
      ['1', 'a number'],
      ['null', 'null'],
      ['true', 'a boolean'],
      ['[]', 'an array'],
      ['[{"company":"A"}]', 'an array'],
    ]) {
      const rest = await app.request('POST', '/v1/leads', { key: owner.testKey, rawBody, headers: { 'content-type': 'application/json' } });
      expectRestError(rest, 400, 'parameter_invalid');
      expect(rest.body.error.message).toBe(`The request body must be a JSON object, not ${kind}`);
    }
    for (const rawBody of ['"x"', '1', 'null']) {
      const gql = await app.request('POST', '/graphql', { key: owner.testKey, rawBody, headers: { 'content-type': 'application/json' } });
      expect(gql.status).toBe(400);
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid' });
      expect(gql.body.errors[0].message).toMatch(/^The request body must be a JSON object, not /);
    }
    // Malformed JSON stays invalid_json.
    expectRestError(
      await app.request('POST', '/v1/leads', { key: owner.testKey, rawBody: '{"a":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_json',
    );
  });

  it('reads a plain JSON body (read directly) exactly as body-parser reads any other', async () => {
    interface Answer {
      status: number;
      body: {
        error?: { code: string; message: string };
        errors?: Array<{ message: string; extensions: { code: string; errorCode?: string } }>;
        company?: string;
      };
    }
    /** Sends `body` as it is, with a Content-Length or, with `chunked`, without one. */
    const send = (path: string, contentType: string, body: Buffer, chunked: boolean) =>
      new Promise<Answer>((resolve, reject) => {
        const url = new URL(path, app.baseUrl);
        const headers: Record<string, string> = { authorization: `Bearer ${owner.testKey}`, 'content-type': contentType };
        if (!chunked) headers['content-length'] = String(body.length);
        const req = httpRequest(url, { method: path.startsWith('/v1') ? 'PUT' : 'POST', headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
        });
        req.on('error', reject);
        if (chunked) {
          // Two writes, so the body really arrives in chunks.
          req.write(body.subarray(0, 3));
          req.end(body.subarray(3));
        } else req.end(body);
      });
    const utf8 = (text: string) => Buffer.from(text, 'utf8');
    const deep = '{"company":' + '['.repeat(70) + ']'.repeat(70) + '}';
    const bodies: Array<[string, Buffer]> = [
      ['an object', utf8('{"company":"Read directly"}')],
      ['a byte order mark first', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('{"company":"Marked"}')])],
      ['invalid UTF-8 in a string', Buffer.concat([utf8('{"company":"Bad'), Buffer.from([0xff, 0xfe]), utf8('"}')])],
      ['multi-byte characters', utf8('{"company":"Zürich 株式会社 🚀"}')],
      ['malformed JSON', utf8('{"company":')],
      ['whitespace only', utf8('   ')],
      ['a string', utf8('"x"')],
      ['nesting past the limit', utf8(deep)],
    ];
    const outcome = ({ status, body }: Answer) =>
      body.error
        ? { status, code: body.error.code, message: body.error.message }
        : body.errors
          ? { status, code: body.errors[0].extensions.errorCode ?? body.errors[0].extensions.code, message: body.errors[0].message }
          : { status, company: body.company };
    for (const [what, body] of bodies) {
      for (const path of [`/v1/leads/${ids.lead}`, '/graphql']) {
        // body-parser's path: a chunked body, and a JSON type other than application/json.
        const parsed = outcome(await send(path, 'application/json', body, true));
        expect({ what, ...outcome(await send(path, 'application/vnd.api+json', body, false)) }).toEqual({ what, ...parsed });
        // The direct path: application/json, with or without a UTF-8 charset, and a Content-Length.
        for (const contentType of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"']) {
          expect({ what, contentType, ...outcome(await send(path, contentType, body, false)) }).toEqual({ what, contentType, ...parsed });
        }
      }
    }
    // What the two paths agreed on is what the contract says.
    expect(outcome(await send(`/v1/leads/${ids.lead}`, 'application/json', bodies[1][1], false))).toEqual({ status: 200, company: 'Marked' });
    expect(outcome(await send(`/v1/leads/${ids.lead}`, 'application/json', bodies[4][1], false))).toMatchObject({ status: 400, code: 'invalid_json' });
    expect(outcome(await send(`/v1/leads/${ids.lead}`, 'application/json', bodies[7][1], false))).toMatchObject({ status: 400, code: 'invalid_json' });
    // A charset other than UTF-8 is still refused, by body-parser.
    expect(outcome(await send(`/v1/leads/${ids.lead}`, 'application/json; charset=koi8-r', bodies[0][1], false))).toMatchObject({
      status: 415,
      code: 'unsupported_media_type',
    });
  });

  it('names nested parameters in REST names in REST messages', async () => {
    const res = await app.request('POST', '/v1/proposals', {
      key: owner.testKey,
      body: { deal_id: ids.deal, line_items: [{ description: 'Seat', quantity: 1, unit_price: -5 }] },
    });
    expectRestError(res, 400, 'parameter_invalid', 'line_items[0][unit_price]');
    expect(res.body.error.message).toBe('line_items[0][unit_price] must be an amount from 0 to 10000000000000 with at most 2 decimals');
    expect(res.body.error.message).not.toMatch(/unitPrice|lineItems/);
  });

  it('accepts only http(s) websites (or a bare domain), on create and update', async () => {
    for (const website of [
      'javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'JAVASCRIPT:alert(1)',
      'ftp://files.example.com',
      'vbscript:x',
      'http://',
      'https:// spaced.example',
      'acme .com',
    ]) {
      const created = await app.request('POST', '/v1/leads', {
        key: owner.testKey,
        body: { company: 'Web', contact_email: `web${Math.random()}@web.test`, website },
      });
      expectRestError(created, 400, 'parameter_invalid', 'website');
      expect(created.body.error.message).toBe('website must be an http or https URL, or a domain such as acme.com');
      expectRestError(await app.request('PUT', `/v1/leads/${ids.lead}`, { key: owner.testKey, body: { website } }), 400, 'parameter_invalid', 'website');
    }
    for (const website of ['https://www.acme.test', 'http://acme.test/about?x=1', 'acme-corp.test', 'www.acme.co.uk/about']) {
      const updated = await app.request('PUT', `/v1/leads/${ids.lead}`, { key: owner.testKey, body: { website } });
      expect(updated.status).toBe(200);
      expect(updated.body.website).toBe(website);
    }
  });
});

import { HttpResponse, startTestApp, TestApp } from '../helpers/app';
import { Lead, Signal } from '../helpers/rest-shapes';

/**
 * The REST lead routes (CONTRACT §1–§5) through real HTTP and real PostgreSQL: POST, GET, PUT and
 * DELETE /v1/leads, GET /v1/leads/{id}/score, every error a lead route can answer, and the
 * X-Request-Id header.
 */

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LEAD_ID = /^lead_[0-9A-HJKMNP-TV-Z]{26}$/;
const MINTED_REQUEST_ID = /^req_[0-9A-HJKMNP-TV-Z]{26}$/;
const ERROR_KEYS = ['code', 'message', 'param', 'request_id', 'type'];

const labelFor = (score: number): string => (score >= 70 ? 'hot' : score >= 40 ? 'warm' : 'cold');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let emailCounter = 0;
const uniqueEmail = (local = 'contact') => `${local}${++emailCounter}-${Date.now()}@acme-corp.test`;

/**
 * Asserts the contract's error shape: exactly `{error: {type, code, message, param?, request_id}}`,
 * the status, and an X-Request-Id header equal to error.request_id. `param: undefined` means the
 * error must not name a parameter.
 */
function expectError(res: HttpResponse, status: number, code: string, param: string | undefined, type = 'invalid_request_error'): void {
  const context = `${status} ${code} ${param ?? ''}: got ${res.status} ${res.text.slice(0, 300)}`;
  expect({ context, status: res.status }).toEqual({ context, status });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['error']);
  const error = res.body.error as Record<string, unknown>;
  for (const key of Object.keys(error)) expect(ERROR_KEYS).toContain(key);
  expect(error.type).toBe(type);
  expect(error.code).toBe(code);
  expect(typeof error.message).toBe('string');
  expect((error.message as string).length).toBeGreaterThan(0);
  // The REST surface never leaks GraphQL internals, stack traces or SQL.
  expect(error.message).not.toMatch(/\$input|Variable "|LeadCreateInput|LeadUpdateInput|LeadListInput|graphql|\bat .+\(.*:\d+:\d+\)|select |insert /i);
  if (param === undefined) expect(error).not.toHaveProperty('param');
  else expect(error.param).toBe(param);
  expect(typeof error.request_id).toBe('string');
  expect(res.headers.get('x-request-id')).toBe(error.request_id);
}

describe('REST lead routes', () => {
  let app: TestApp;
  let testKey: string;
  let liveKey: string;

  const post = (body: unknown, key: string = testKey) => app.request('POST', '/v1/leads', { key, body });
  const get = (id: string, key: string = testKey) => app.request('GET', `/v1/leads/${id}`, { key });
  const put = (id: string, body: unknown, key: string = testKey) => app.request('PUT', `/v1/leads/${id}`, { key, body });
  const del = (id: string, key: string = testKey) => app.request('DELETE', `/v1/leads/${id}`, { key });
  const score = (id: string, key: string = testKey) => app.request('GET', `/v1/leads/${id}/score`, { key });

  const countLeads = async (): Promise<number> => {
    const rows = await app.orm.em.fork().getConnection().execute<{ count: string }[]>('select count(*) from leads');
    return Number(rows[0].count);
  };

  async function createLead(fields: Record<string, unknown> = {}, key: string = testKey): Promise<Lead> {
    const res = await post({ company: 'Acme', contact_email: uniqueEmail(), ...fields }, key);
    expect(res.status).toBe(201);
    return res.body;
  }

  beforeAll(async () => {
    app = await startTestApp();
    await app.reset();
    ({ testKey, liveKey } = await app.createAccount());
  });
  afterAll(() => app.close());

  describe('POST /v1/leads', () => {
    it('creates a lead and answers 201 with the full object', async () => {
      const email = uniqueEmail('Jane.Doe');
      const before = Date.now();
      const res = await post({
        company: 'Globex Software',
        contact_email: email.toUpperCase(),
        industry: 'Software',
        employees: 250,
        contact_name: 'Jane Doe',
        website: 'https://www.acme-corp.test',
        country: 'US',
        source: 'referral',
        metadata: { crm_id: '42', someCamelKey: 'kept as sent' },
      });
      const after = Date.now();
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const lead = res.body;
      expect(lead.id).toMatch(LEAD_ID);
      expect(Object.keys(lead).slice(0, 2)).toEqual(['id', 'object']);
      expect(lead.object).toBe('lead');
      expect(lead.livemode).toBe(false);
      expect(lead.company).toBe('Globex Software');
      expect(lead.contact_email).toBe(email.toLowerCase());
      expect(lead.industry).toBe('Software');
      expect(lead.employees).toBe(250);
      expect(lead.contact_name).toBe('Jane Doe');
      expect(lead.website).toBe('https://www.acme-corp.test');
      expect(lead.country).toBe('US');
      expect(lead.source).toBe('referral');
      expect(lead.status).toBe('new');
      // Opaque metadata keys are the client's own: never renamed to snake_case.
      expect(lead.metadata).toEqual({ crm_id: '42', someCamelKey: 'kept as sent' });
      for (const field of ['created_at', 'updated_at', 'scored_at'] as const) {
        expect(lead[field]).toMatch(ISO_MS);
        const t = Date.parse(lead[field]);
        expect(t).toBeGreaterThanOrEqual(before - 1);
        expect(t).toBeLessThanOrEqual(after + 1);
      }
      expect(Number.isInteger(lead.score)).toBe(true);
      expect(lead.score).toBeGreaterThanOrEqual(0);
      expect(lead.score).toBeLessThanOrEqual(100);
      expect(lead.score_label).toBe(labelFor(lead.score));
      expect(typeof lead.model_version).toBe('string');
      expect(lead.model_version.length).toBeGreaterThan(0);
      // snake_case on the wire, nothing internal exposed.
      for (const key of Object.keys(lead)) expect(key).toMatch(/^[a-z][a-z0-9_]*$/);
      for (const hidden of ['account', 'account_id', 'score_signals', 'score_base', 'signals', 'contactEmail']) {
        expect(lead).not.toHaveProperty(hidden);
      }
      // The stored row is what the response said.
      const fetched = await get(lead.id);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(lead);
    });

    it('applies defaults to optional fields and marks live-key data livemode true', async () => {
      const minimal = await post({ company: 'Minimal', contact_email: uniqueEmail() });
      expect(minimal.status).toBe(201);
      expect(minimal.body).toMatchObject({
        industry: null,
        employees: null,
        contact_name: null,
        website: null,
        country: null,
        source: null,
        status: 'new',
        metadata: {},
        livemode: false,
      });
      const live = await post({ company: 'Live Co', contact_email: uniqueEmail() }, liveKey);
      expect(live.status).toBe(201);
      expect(live.body.livemode).toBe(true);
      // A test key never sees live data, and the reverse.
      expectError(await get(live.body.id, testKey), 404, 'resource_missing', 'id');
      expectError(await get(minimal.body.id, liveKey), 404, 'resource_missing', 'id');
    });

    it('accepts a status other than converted on create, and application/json with a charset', async () => {
      const res = await app.request<Lead>('POST', '/v1/leads', {
        key: testKey,
        rawBody: JSON.stringify({ company: 'Charset', contact_email: uniqueEmail(), status: 'qualified' }),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('qualified');
    });

    it('gives every score label consistently with hot ≥ 70, warm 40–69, cold < 40', async () => {
      const hot = await createLead({
        industry: 'Software',
        employees: 500,
        source: 'referral',
        contact_name: 'Pat',
        contact_email: uniqueEmail('pat'),
        website: 'acme-corp.test',
      });
      const warm = await createLead({ industry: 'Retail', employees: 30 });
      const cold = await createLead({ industry: 'Non-profit', employees: 3, contact_email: `cold${Date.now()}@gmail.com` });
      expect(hot.score).toBeGreaterThanOrEqual(70);
      expect(hot.score_label).toBe('hot');
      expect(warm.score).toBeGreaterThanOrEqual(40);
      expect(warm.score).toBeLessThan(70);
      expect(warm.score_label).toBe('warm');
      expect(cold.score).toBeLessThan(40);
      expect(cold.score_label).toBe('cold');
      for (const lead of [hot, warm, cold]) {
        expect(lead.score).toBeGreaterThanOrEqual(0);
        expect(lead.score).toBeLessThanOrEqual(100);
      }
    });

    it('accepts the metadata limits exactly: 50 keys, 40-character keys, 500-character values', async () => {
      const metadata: Record<string, string> = {};
      for (let i = 0; i < 49; i++) metadata[`key${i}`] = `value ${i}`;
      metadata['k'.repeat(40)] = 'v'.repeat(500);
      const res = await post({ company: 'Limits', contact_email: uniqueEmail(), metadata });
      expect(res.status).toBe(201);
      expect(res.body.metadata).toEqual(metadata);
    });

    it('is 409 resource_conflict for a duplicate contact_email in the same account and mode, case-insensitively', async () => {
      const email = uniqueEmail('dup');
      await createLead({ contact_email: email });
      const before = await countLeads();
      const res = await post({ company: 'Other', contact_email: email.toUpperCase() });
      expectError(res, 409, 'resource_conflict', 'contact_email');
      expect(res.body.error.message).not.toMatch(/contactEmail/);
      expect(await countLeads()).toBe(before);
      // The same address is free in the other mode and in another account.
      expect((await post({ company: 'Live', contact_email: email }, liveKey)).status).toBe(201);
      const other = await app.createAccount();
      expect((await post({ company: 'Other account', contact_email: email }, other.testKey)).status).toBe(201);
    });
  });

  describe('GET /v1/leads/{id}', () => {
    it('returns the lead', async () => {
      const lead = await createLead({ industry: 'Healthcare', employees: 12 });
      const res = await get(lead.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(lead);
    });

    it('is 404 resource_missing for unknown, malformed, wrong-prefix and hostile ids', async () => {
      const lead = await createLead();
      const body = lead.id.slice('lead_'.length);
      const ids = [
        `lead_${'0'.repeat(26)}`,
        'lead_x',
        `deal_${body}`,
        `${lead.id}x`,
        lead.id.toLowerCase(),
        encodeURIComponent("lead_' OR '1'='1"),
        encodeURIComponent("'; DROP TABLE leads; --"),
        encodeURIComponent('lead_%'),
        'x'.repeat(5000),
      ];
      for (const id of ids) {
        expectError(await get(id), 404, 'resource_missing', 'id');
        expectError(await score(id), 404, 'resource_missing', 'id');
        expectError(await put(id, { company: 'X' }), 404, 'resource_missing', 'id');
        expectError(await del(id), 404, 'resource_missing', 'id');
      }
      // Nothing was dropped or changed.
      expect((await get(lead.id)).body).toEqual(lead);
    });

    it("is 404 for another account's lead, never 403", async () => {
      const lead = await createLead();
      const other = await app.createAccount();
      expectError(await get(lead.id, other.testKey), 404, 'resource_missing', 'id');
      expectError(await put(lead.id, { company: 'Stolen' }, other.testKey), 404, 'resource_missing', 'id');
      expectError(await del(lead.id, other.testKey), 404, 'resource_missing', 'id');
      expect((await get(lead.id)).body.company).toBe(lead.company);
    });

    it('is 400 parameter_unknown for a query parameter', async () => {
      const lead = await createLead();
      expectError(await app.request('GET', `/v1/leads/${lead.id}?expand=deals`, { key: testKey }), 400, 'parameter_unknown', 'expand');
      expectError(await app.request('GET', `/v1/leads/${lead.id}/score?foo=1`, { key: testKey }), 400, 'parameter_unknown', 'foo');
    });
  });

  describe('PUT /v1/leads/{id}', () => {
    it('changes only the fields sent', async () => {
      const lead = await createLead({
        industry: 'Retail',
        employees: 30,
        contact_name: 'Sam',
        website: 'https://shop.test',
        country: 'DE',
        source: 'event',
        metadata: { a: '1', b: '2' },
      });
      await sleep(5);
      // status is not a scored field: nothing but status and updated_at may change.
      const res = await put(lead.id, { status: 'contacted' });
      expect(res.status).toBe(200);
      const { status, updated_at, ...rest } = res.body;
      const { status: oldStatus, updated_at: oldUpdatedAt, ...oldRest } = lead;
      expect(oldStatus).toBe('new');
      expect(status).toBe('contacted');
      expect(rest).toEqual(oldRest);
      expect(updated_at).toMatch(ISO_MS);
      expect(Date.parse(updated_at)).toBeGreaterThan(Date.parse(oldUpdatedAt));
      expect((await get(lead.id)).body).toEqual(res.body);

      // country is a scoring feature, so the score fields may be recomputed; nothing else changes.
      await sleep(5);
      const res2 = await put(lead.id, { country: 'FR' });
      expect(res2.status).toBe(200);
      const { country, updated_at: updatedAt2, score: _s, score_label: _l, scored_at: _a, model_version: _m, ...rest2 } = res2.body;
      const { country: oldCountry, updated_at: _u, score: _s0, score_label: _l0, scored_at: _a0, model_version: _m0, ...oldRest2 } = res.body;
      expect(oldCountry).toBe('DE');
      expect(country).toBe('FR');
      expect(rest2).toEqual(oldRest2);
      expect(Date.parse(updatedAt2)).toBeGreaterThan(Date.parse(updated_at));
      expect(res2.body.score_label).toBe(labelFor(res2.body.score));
      expect((await get(lead.id)).body).toEqual(res2.body);
    });

    it('treats an empty body as no change', async () => {
      const lead = await createLead({ industry: 'Retail' });
      const res = await put(lead.id, {});
      expect(res.status).toBe(200);
      const { updated_at: _u, ...rest } = res.body;
      const { updated_at: _o, ...oldRest } = lead;
      expect(rest).toEqual(oldRest);
    });

    it('clears optional fields sent as null', async () => {
      const lead = await createLead({
        industry: 'Retail',
        employees: 30,
        contact_name: 'Sam',
        website: 'https://shop.test',
        country: 'DE',
        source: 'event',
      });
      const res = await put(lead.id, {
        industry: null,
        employees: null,
        contact_name: null,
        website: null,
        country: null,
        source: null,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        industry: null,
        employees: null,
        contact_name: null,
        website: null,
        country: null,
        source: null,
        company: lead.company,
        contact_email: lead.contact_email,
      });
      expect((await get(lead.id)).body).toEqual(res.body);
    });

    it('refuses null for the required fields company and contact_email, and an empty company', async () => {
      const lead = await createLead();
      expectError(await put(lead.id, { company: null }), 400, 'parameter_invalid', 'company');
      expectError(await put(lead.id, { contact_email: null }), 400, 'parameter_invalid', 'contact_email');
      expectError(await put(lead.id, { contact_email: 'not-an-email' }), 400, 'parameter_invalid', 'contact_email');
      expectError(await put(lead.id, { company: '' }), 400, 'parameter_invalid', 'company');
      expectError(await put(lead.id, { status: null }), 400, 'parameter_invalid', 'status');
      expect((await get(lead.id)).body).toEqual(lead);
    });

    it('merges metadata: a null value removes its key, other keys stay, new keys are added', async () => {
      const lead = await createLead({ metadata: { k: 'remove me', keep: 'kept', change: 'old' } });
      const res = await put(lead.id, { metadata: { k: null, change: 'new', added: 'yes' } });
      expect(res.status).toBe(200);
      expect(res.body.metadata).toEqual({ keep: 'kept', change: 'new', added: 'yes' });
      expect((await get(lead.id)).body.metadata).toEqual({ keep: 'kept', change: 'new', added: 'yes' });
      // Removing a key that is not there is harmless; an empty object changes nothing.
      expect((await put(lead.id, { metadata: { nothere: null } })).body.metadata).toEqual({ keep: 'kept', change: 'new', added: 'yes' });
      expect((await put(lead.id, { metadata: {} })).body.metadata).toEqual({ keep: 'kept', change: 'new', added: 'yes' });
    });

    it('refuses a metadata update that would leave more than 50 keys, and changes nothing else', async () => {
      const existing: Record<string, string> = {};
      for (let i = 0; i < 10; i++) existing[`old${i}`] = 'o';
      const lead = await createLead({ metadata: existing });
      const patch: Record<string, string | null> = {};
      for (let i = 0; i < 45; i++) patch[`new${i}`] = 'x';
      // 10 + 45 = 55 keys: refused as a whole, the company change included.
      const res = await put(lead.id, { company: 'Renamed', metadata: patch });
      expectError(res, 400, 'parameter_invalid', 'metadata');
      expect((await get(lead.id)).body).toEqual(lead);
      // Removing 5 keys in the same patch leaves exactly 50: accepted.
      for (let i = 0; i < 5; i++) patch[`old${i}`] = null;
      const ok = await put(lead.id, { metadata: patch });
      expect(ok.status).toBe(200);
      expect(Object.keys(ok.body.metadata)).toHaveLength(50);
      expect(ok.body.metadata).not.toHaveProperty('old0');
      expect(ok.body.metadata.old9).toBe('o');
      expect(ok.body.metadata.new44).toBe('x');
      // One more key is one too many.
      expectError(await put(lead.id, { metadata: { extra: 'y' } }), 400, 'parameter_invalid', 'metadata');
    });

    it('rescores when a scored field changes, and changes scored_at', async () => {
      const lead = await createLead({ industry: 'Retail', employees: 30 });
      const before = (await score(lead.id)).body;
      await sleep(5);
      const res = await put(lead.id, { industry: 'Software', employees: 500, source: 'referral' });
      expect(res.status).toBe(200);
      expect(res.body.score).toBeGreaterThan(lead.score);
      expect(res.body.score_label).toBe(labelFor(res.body.score));
      expect(res.body.scored_at).toMatch(ISO_MS);
      expect(Date.parse(res.body.scored_at)).toBeGreaterThan(Date.parse(lead.scored_at));
      const after = (await score(lead.id)).body;
      expect(after.score).toBe(res.body.score);
      expect(after.scored_at).toBe(res.body.scored_at);
      expect(after.signals).not.toEqual(before.signals);
      expect(after.signals.find((s: Signal) => s.name === 'source')).toBeDefined();

      // Clearing a scored field with null rescores too.
      await sleep(5);
      const cleared = await put(lead.id, { industry: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.score).toBeLessThan(res.body.score);
      expect(Date.parse(cleared.body.scored_at)).toBeGreaterThan(Date.parse(res.body.scored_at));
      expect(cleared.body.score_label).toBe(labelFor(cleared.body.score));

      // A change of a field the scorer does not read keeps the score and scored_at.
      await sleep(5);
      const unscored = await put(lead.id, { status: 'contacted', metadata: { note: 'called' } });
      expect(unscored.status).toBe(200);
      expect(unscored.body.score).toBe(cleared.body.score);
      expect(unscored.body.scored_at).toBe(cleared.body.scored_at);
    });

    it('crosses a label boundary on rescoring (warm → hot → cold)', async () => {
      const lead = await createLead({ industry: 'Retail', employees: 30 });
      expect(lead.score_label).toBe('warm');
      const hot = await put(lead.id, { industry: 'Software', employees: 500, source: 'referral', contact_name: 'Kim' });
      expect(hot.body.score_label).toBe('hot');
      expect(hot.body.score).toBeGreaterThanOrEqual(70);
      const cold = await put(lead.id, {
        industry: 'Non-profit',
        employees: 2,
        source: 'purchased_list',
        contact_name: null,
        contact_email: `cold-${Date.now()}@gmail.com`,
      });
      expect(cold.body.score_label).toBe('cold');
      expect(cold.body.score).toBeLessThan(40);
    });

    it('lower-cases a new contact_email; changing only its case is not a conflict with itself', async () => {
      const lead = await createLead();
      const res = await put(lead.id, { contact_email: lead.contact_email.toUpperCase() });
      expect(res.status).toBe(200);
      expect(res.body.contact_email).toBe(lead.contact_email);
      const fresh = uniqueEmail('Fresh');
      const changed = await put(lead.id, { contact_email: fresh.toUpperCase() });
      expect(changed.status).toBe(200);
      expect(changed.body.contact_email).toBe(fresh.toLowerCase());
    });

    it('is 409 resource_conflict when the new contact_email belongs to another lead, and changes nothing', async () => {
      const first = await createLead();
      const second = await createLead();
      const res = await put(second.id, { company: 'Renamed', contact_email: first.contact_email.toUpperCase() });
      expectError(res, 409, 'resource_conflict', 'contact_email');
      expect((await get(second.id)).body).toEqual(second);
    });

    it('allows the documented status moves', async () => {
      const lead = await createLead();
      const path: string[] = ['contacted', 'qualified', 'disqualified', 'qualified', 'qualified', 'disqualified'];
      for (const status of path) {
        const res = await put(lead.id, { status });
        expect({ status, code: res.status }).toEqual({ status, code: 200 });
        expect(res.body.status).toBe(status);
      }
      // Steps may be skipped forward.
      const skipper = await createLead();
      expect((await put(skipper.id, { status: 'qualified' })).body.status).toBe('qualified');
      const straightOut = await createLead();
      expect((await put(straightOut.id, { status: 'disqualified' })).body.status).toBe('disqualified');
    });

    it('is 409 invalid_status_transition for refused moves, and changes nothing', async () => {
      const refusals: Array<[string[], string]> = [
        [['qualified'], 'new'],
        [['qualified'], 'contacted'],
        [['contacted'], 'new'],
        [['disqualified'], 'new'],
        [['disqualified'], 'contacted'],
      ];
      for (const [setup, target] of refusals) {
        const lead = await createLead();
        let current = lead;
        for (const status of setup) current = (await put(lead.id, { status })).body;
        const res = await put(lead.id, { status: target, company: 'Should not change' });
        expectError(res, 409, 'invalid_status_transition', 'status');
        expect(res.body.error.message).toContain(current.status);
        expect((await get(lead.id)).body).toEqual(current);
      }
    });

    it('refuses status converted with 400, on update and on create', async () => {
      const lead = await createLead();
      expectError(await put(lead.id, { status: 'converted' }), 400, 'parameter_invalid', 'status');
      expect((await get(lead.id)).body.status).toBe('new');
      const before = await countLeads();
      expectError(await post({ company: 'C', contact_email: uniqueEmail(), status: 'converted' }), 400, 'parameter_invalid', 'status');
      expectError(await put(lead.id, { status: 'bogus' }), 400, 'parameter_invalid', 'status');
      expect(await countLeads()).toBe(before);
    });

    it('is 400 parameter_unknown for fields a client may not set', async () => {
      const lead = await createLead();
      for (const [field, value] of [
        ['score', 99],
        ['score_label', 'hot'],
        ['id', 'lead_00000000000000000000000000'],
        ['created_at', '2020-01-01T00:00:00.000Z'],
        ['livemode', true],
        ['object', 'lead'],
        ['contactEmail', 'camel@case.test'],
        ['foo', 'bar'],
      ] as const) {
        expectError(await put(lead.id, { [field]: value }), 400, 'parameter_unknown', field);
      }
      expect((await get(lead.id)).body).toEqual(lead);
    });
  });

  describe('DELETE /v1/leads/{id}', () => {
    it('answers 200 with exactly {id, object, deleted}, after which the lead is gone', async () => {
      const lead = await createLead({ metadata: { a: 'b' } });
      const before = await countLeads();
      const res = await del(lead.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: lead.id, object: 'lead', deleted: true });
      expect(Object.keys(res.body).sort()).toEqual(['deleted', 'id', 'object']);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(await countLeads()).toBe(before - 1);
      expectError(await get(lead.id), 404, 'resource_missing', 'id');
      expectError(await score(lead.id), 404, 'resource_missing', 'id');
      expectError(await put(lead.id, { company: 'Back' }), 404, 'resource_missing', 'id');
      expectError(await del(lead.id), 404, 'resource_missing', 'id');
      // Its contact_email is free again.
      expect((await post({ company: 'Again', contact_email: lead.contact_email })).status).toBe(201);
    });

    it("does not delete another mode's lead", async () => {
      const live = await createLead({}, liveKey);
      expectError(await del(live.id, testKey), 404, 'resource_missing', 'id');
      expect((await get(live.id, liveKey)).status).toBe(200);
    });
  });

  describe('GET /v1/leads/{id}/score', () => {
    it('explains the score: base_score + the impacts = score, signals by size', async () => {
      const leads = [
        await createLead({
          industry: 'Software',
          employees: 500,
          source: 'referral',
          contact_name: 'Pat',
          website: 'https://www.acme-corp.test',
        }),
        await createLead({ industry: 'Retail', employees: 30, website: 'https://elsewhere.test' }),
        await createLead({ industry: 'Non-profit', employees: 3, source: 'purchased_list', contact_email: `np${Date.now()}@gmail.com` }),
        await createLead({}),
      ];
      for (const lead of leads) {
        const res = await score(lead.id);
        expect(res.status).toBe(200);
        const body = res.body;
        expect(Object.keys(body).sort()).toEqual(['base_score', 'lead_id', 'model_version', 'score', 'score_label', 'scored_at', 'signals'].sort());
        expect(body.lead_id).toBe(lead.id);
        expect(body.score).toBe(lead.score);
        expect(body.score_label).toBe(lead.score_label);
        expect(body.score_label).toBe(labelFor(body.score));
        expect(body.model_version).toBe(lead.model_version);
        expect(body.scored_at).toBe(lead.scored_at);
        expect(body.scored_at).toMatch(ISO_MS);
        expect(Number.isInteger(body.base_score)).toBe(true);
        expect(Array.isArray(body.signals)).toBe(true);
        expect(body.signals.length).toBeGreaterThan(0);
        let sum = 0;
        for (const signal of body.signals as Signal[]) {
          expect(Object.keys(signal).sort()).toEqual(['description', 'impact', 'name', 'value']);
          expect(typeof signal.name).toBe('string');
          expect(signal.name.length).toBeGreaterThan(0);
          expect(typeof signal.value).toBe('string');
          expect(Number.isInteger(signal.impact)).toBe(true);
          expect(typeof signal.description).toBe('string');
          expect(signal.description.length).toBeGreaterThan(0);
          sum += signal.impact;
        }
        expect(body.base_score + sum).toBe(body.score);
        const sizes = (body.signals as Signal[]).map((s) => Math.abs(s.impact));
        expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
        // One signal per feature.
        const names = (body.signals as Signal[]).map((s) => s.name);
        expect(new Set(names).size).toBe(names.length);
      }
    });

    it('signals point the right way for clearly good and clearly bad features', async () => {
      const good = await createLead({ industry: 'Software', employees: 500 });
      const bad = await createLead({ industry: 'Software', employees: 500, contact_email: `g${Date.now()}@gmail.com` });
      const goodSignals = (await score(good.id)).body.signals as Signal[];
      const badSignals = (await score(bad.id)).body.signals as Signal[];
      const email = (signals: Signal[]) => signals.find((s) => s.name === 'email_domain');
      expect(email(goodSignals)?.impact).toBeGreaterThan(0);
      expect(email(badSignals)?.impact).toBeLessThan(0);
      expect(bad.score).toBeLessThan(good.score);
    });

    it('is the score of the mode the key belongs to', async () => {
      const live = await createLead({}, liveKey);
      expect((await score(live.id, liveKey)).status).toBe(200);
      expectError(await score(live.id, testKey), 404, 'resource_missing', 'id');
    });
  });

  describe('errors of the lead routes', () => {
    const validBody = () => ({ company: 'Valid', contact_email: uniqueEmail() });

    it('parameter_missing: no company, no contact_email, no body', async () => {
      const before = await countLeads();
      expectError(await post({ contact_email: uniqueEmail() }), 400, 'parameter_missing', 'company');
      expectError(await post({ company: 'No email' }), 400, 'parameter_missing', 'contact_email');
      expectError(await post({ company: null, contact_email: uniqueEmail() }), 400, 'parameter_missing', 'company');
      expectError(await post({}), 400, 'parameter_missing', 'company');
      expectError(await app.request('POST', '/v1/leads', { key: testKey }), 400, 'parameter_missing', 'company');
      expect(await countLeads()).toBe(before);
    });

    it('parameter_invalid: bad values in a create body', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ contact_email: 'not-an-email' }, 'contact_email'],
        [{ contact_email: 'a@b' }, 'contact_email'],
        [{ contact_email: 42 }, 'contact_email'],
        [{ company: '' }, 'company'],
        [{ company: 'x'.repeat(201) }, 'company'],
        [{ company: ['Acme'] }, 'company'],
        [{ employees: 'abc' }, 'employees'],
        [{ employees: '12' }, 'employees'],
        [{ employees: -1 }, 'employees'],
        [{ employees: 1.5 }, 'employees'],
        [{ employees: 1e12 }, 'employees'],
        [{ employees: true }, 'employees'],
        [{ industry: 7 }, 'industry'],
        [{ status: 'bogus' }, 'status'],
        [{ metadata: { plan: 5 } }, 'metadata'],
        [{ metadata: { nested: { a: 'b' } } }, 'metadata'],
        [{ metadata: { removed: null } }, 'metadata'],
        [{ metadata: ['a'] }, 'metadata'],
        [{ metadata: 'text' }, 'metadata'],
        [{ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
        [{ metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
        [{ metadata: { '': 'v' } }, 'metadata'],
        [{ metadata: { k: 'v'.repeat(501) } }, 'metadata'],
      ];
      const before = await countLeads();
      for (const [patch, param] of cases) {
        const res = await post({ ...validBody(), ...patch });
        expectError(res, 400, 'parameter_invalid', param);
        expect(res.body.error.message).toContain(param);
      }
      expect(await countLeads()).toBe(before);
    });

    it('parameter_invalid: text a database cannot store (U+0000) or a blank company, never a 500', async () => {
      const before = await countLeads();
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ company: 'Nul\u0000Corp' }, 'company'],
        [{ industry: 'soft\u0000ware' }, 'industry'],
        [{ contact_name: '\u0000' }, 'contact_name'],
        [{ metadata: { a: 'x\u0000y' } }, 'metadata[a]'],
        [{ metadata: { 'k\u0000': 'v' } }, 'metadata'],
        [{ company: '   ' }, 'company'],
      ];
      for (const [patch, param] of cases) expectError(await post({ ...validBody(), ...patch }), 400, 'parameter_invalid', param);
      const lead = await createLead();
      expectError(await put(lead.id, { company: 'a\u0000' }), 400, 'parameter_invalid', 'company');
      expectError(await put(lead.id, { company: ' \t ' }), 400, 'parameter_invalid', 'company');
      expectError(await put(lead.id, { metadata: { a: '\u0000' } }), 400, 'parameter_invalid', 'metadata[a]');
      expect(await countLeads()).toBe(before + 1);
      expect((await get(lead.id)).body).toEqual(lead);
      for (const query of [
        'q=a%00b',
        'industry=%00',
        'sort=company&cursor=' + Buffer.from('{"s":"company","v":"a\\u0000","i":"lead_x"}').toString('base64url'),
      ]) {
        const param = query.startsWith('sort') ? 'cursor' : query.split('=')[0];
        expectError(await app.request('GET', `/v1/leads?${query}`, { key: testKey }), 400, 'parameter_invalid', param);
      }
    });

    it('parameter_invalid: the same bad values in an update body', async () => {
      const lead = await createLead({ metadata: { a: 'b' } });
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ contact_email: 'bad email' }, 'contact_email'],
        [{ employees: 'abc' }, 'employees'],
        [{ employees: -1 }, 'employees'],
        [{ employees: 1.5 }, 'employees'],
        [{ employees: 1e12 }, 'employees'],
        [{ metadata: { plan: 5 } }, 'metadata'],
        [{ metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
        [{ metadata: { k: 'v'.repeat(501) } }, 'metadata'],
        [{ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
        [{ metadata: null }, 'metadata'],
      ];
      for (const [body, param] of cases) expectError(await put(lead.id, body), 400, 'parameter_invalid', param);
      expect((await get(lead.id)).body).toEqual(lead);
    });

    it('parameter_invalid: bad list parameters', async () => {
      const cases: Array<[string, string]> = [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=-5', 'limit'],
        ['limit=abc', 'limit'],
        ['limit=1.5', 'limit'],
        ['status=bogus', 'status'],
        ['score_label=lukewarm', 'score_label'],
        ['sort=nope', 'sort'],
        ['sort=-nope', 'sort'],
        ['sort=metadata', 'sort'],
        ['cursor=garbage', 'cursor'],
        [`cursor=${Buffer.from('{"s":"-created_at"}').toString('base64url')}`, 'cursor'],
        [`cursor=${Buffer.from('{"s":"-created_at","v":"not a date","i":"lead_x"}').toString('base64url')}`, 'cursor'],
        [`cursor=${Buffer.from('null').toString('base64url')}`, 'cursor'],
        [`cursor=${Buffer.from('{"s":"-created_at","v":"+275760-09-13T00:00:00.000Z","i":"lead_x"}').toString('base64url')}`, 'cursor'],
        [`cursor=${Buffer.from('{"s":"-created_at","v":null,"i":"lead_x"}').toString('base64url')}`, 'cursor'],
        [`sort=score&cursor=${Buffer.from('{"s":"score","v":"high","i":"lead_x"}').toString('base64url')}`, 'cursor'],
        ['min_score=abc', 'min_score'],
        ['min_score=101', 'min_score'],
        ['max_score=-1', 'max_score'],
        ['min_employees=-1', 'min_employees'],
        ['max_employees=lots', 'max_employees'],
        ['created_after=notadate', 'created_after'],
        ['created_before=2026-13-45', 'created_before'],
        ['status=new&status=contacted', 'status'],
      ];
      for (const [query, param] of cases) {
        const res = await app.request('GET', `/v1/leads?${query}`, { key: testKey });
        expectError(res, 400, 'parameter_invalid', param);
      }
    });

    it('parameter_unknown: fields a client may not set, unknown fields and camelCase names in a create body', async () => {
      const before = await countLeads();
      for (const [field, value] of [
        ['score', 99],
        ['id', 'lead_00000000000000000000000000'],
        ['created_at', '2020-01-01T00:00:00.000Z'],
        ['updated_at', '2020-01-01T00:00:00.000Z'],
        ['score_label', 'hot'],
        ['livemode', true],
        ['foo', 'bar'],
        ['contactEmail', 'camel@case.test'],
        ['Company', 'Capital'],
      ] as const) {
        const body: Record<string, unknown> = { ...validBody(), [field]: value };
        if (field === 'contactEmail') delete body.contact_email;
        const res = await post(body);
        expectError(res, 400, 'parameter_unknown', field);
        expect(res.body.error.message).toContain(field);
      }
      expect(await countLeads()).toBe(before);
    });

    it('parameter_unknown: an unknown query parameter on the list', async () => {
      expectError(await app.request('GET', '/v1/leads?foo=bar', { key: testKey }), 400, 'parameter_unknown', 'foo');
      expectError(await app.request('GET', '/v1/leads?minScore=3', { key: testKey }), 400, 'parameter_unknown', 'minScore');
      expectError(await app.request('GET', '/v1/leads?limit=5&offset=10', { key: testKey }), 400, 'parameter_unknown', 'offset');
    });

    it('invalid_json: a malformed body', async () => {
      const before = await countLeads();
      for (const rawBody of ['{"company": "Acme",', '{company: "Acme"}', "{'a': 1}", '{"a":1}}']) {
        const res = await app.request('POST', '/v1/leads', { key: testKey, rawBody, headers: { 'content-type': 'application/json' } });
        expectError(res, 400, 'invalid_json', undefined);
      }
      const lead = await createLead();
      const res = await app.request('PUT', `/v1/leads/${lead.id}`, {
        key: testKey,
        rawBody: '{"company":',
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'invalid_json', undefined);
      expect(await countLeads()).toBe(before + 1);
      expect((await get(lead.id)).body).toEqual(lead);
    });

    it('a JSON array body is 400', async () => {
      const before = await countLeads();
      const res = await post([{ company: 'Acme', contact_email: uniqueEmail() }]);
      expectError(res, 400, 'parameter_invalid', undefined);
      const lead = await createLead();
      expectError(await put(lead.id, [{ company: 'Array' }]), 400, 'parameter_invalid', undefined);
      expect(await countLeads()).toBe(before + 1);
      expect((await get(lead.id)).body).toEqual(lead);
    });

    it('unsupported_media_type: a body that is not JSON', async () => {
      const before = await countLeads();
      const body = JSON.stringify(validBody());
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'text/html']) {
        const res = await app.request('POST', '/v1/leads', { key: testKey, rawBody: body, headers: { 'content-type': contentType } });
        expectError(res, 415, 'unsupported_media_type', undefined);
      }
      const lead = await createLead();
      const res = await app.request('PUT', `/v1/leads/${lead.id}`, {
        key: testKey,
        rawBody: '{"company":"Plain"}',
        headers: { 'content-type': 'text/plain' },
      });
      expectError(res, 415, 'unsupported_media_type', undefined);
      expect(await countLeads()).toBe(before + 1);
      expect((await get(lead.id)).body).toEqual(lead);
    });

    it('request_too_large: a body over 1 MiB', async () => {
      const before = await countLeads();
      const rawBody = JSON.stringify({ company: 'Big', contact_email: uniqueEmail(), metadata: { a: 'x'.repeat(1024 * 1024) } });
      expect(Buffer.byteLength(rawBody)).toBeGreaterThan(1024 * 1024);
      const res = await app.request('POST', '/v1/leads', { key: testKey, rawBody, headers: { 'content-type': 'application/json' } });
      expectError(res, 413, 'request_too_large', undefined);
      expect(await countLeads()).toBe(before);
      // Just under the limit is not "too large" (it fails validation instead).
      const under = JSON.stringify({ company: 'Big', contact_email: uniqueEmail(), metadata: { a: 'x'.repeat(1024 * 1024 - 200) } });
      expect(Buffer.byteLength(under)).toBeLessThanOrEqual(1024 * 1024);
      const res2 = await app.request('POST', '/v1/leads', { key: testKey, rawBody: under, headers: { 'content-type': 'application/json' } });
      expectError(res2, 400, 'parameter_invalid', 'metadata');
      expect(await countLeads()).toBe(before);
    });

    it('api_key_missing and api_key_invalid: 401 authentication_error on every lead route', async () => {
      const lead = await createLead();
      const routes: Array<[string, string, unknown]> = [
        ['GET', '/v1/leads', undefined],
        ['POST', '/v1/leads', validBody()],
        ['GET', `/v1/leads/${lead.id}`, undefined],
        ['PUT', `/v1/leads/${lead.id}`, { company: 'Hacked' }],
        ['DELETE', `/v1/leads/${lead.id}`, undefined],
        ['GET', `/v1/leads/${lead.id}/score`, undefined],
      ];
      const before = await countLeads();
      for (const [method, path, body] of routes) {
        expectError(await app.request(method, path, { body }), 401, 'api_key_missing', undefined, 'authentication_error');
        for (const headers of [
          { authorization: 'Bearer sk_test_wrongwrongwrongwrongwrongwrong12' },
          { authorization: 'Bearer sk_live_wrongwrongwrongwrongwrongwrong12' },
          { authorization: 'Bearer nonsense' },
          { authorization: `Basic ${Buffer.from(`${testKey}:`).toString('base64')}` },
          { authorization: `Bearer ${testKey}x` },
        ]) {
          expectError(await app.request(method, path, { body, headers }), 401, 'api_key_invalid', undefined, 'authentication_error');
        }
      }
      expect(await countLeads()).toBe(before);
      expect((await get(lead.id)).body).toEqual(lead);
    });

    it('an unknown route under /v1 is 404 resource_missing', async () => {
      for (const [method, path] of [
        ['GET', '/v1/nope'],
        ['GET', '/v1/leads/lead_x/nope'],
        ['GET', '/v2/leads'],
      ] as const) {
        expectError(await app.request(method, path, { key: testKey }), 404, 'resource_missing', undefined);
      }
    });

    it('routes match paths as express does: any case, an optional trailing slash, percent-decoded ids, HEAD as GET without a body', async () => {
      const lead = await createLead();
      for (const path of [`/v1/leads/${lead.id}/`, `/V1/Leads/${lead.id}`, `/v1/leads/${lead.id.replace('_', '%5F')}`]) {
        const res = await app.request('GET', path, { key: testKey });
        expect([path, res.status, res.body]).toEqual([path, 200, lead]);
      }
      const head = await app.request('HEAD', `/v1/leads/${lead.id}`, { key: testKey });
      expect([head.status, head.text]).toEqual([200, '']);
      expectError(await app.request('GET', `/v1/leads/${lead.id}/score/x`, { key: testKey }), 404, 'resource_missing', undefined);
    });

    it('a known path asked with a method it lacks is 405 method_not_allowed with Allow, still behind authentication', async () => {
      for (const [method, path, allow] of [
        ['PATCH', '/v1/leads', 'GET, HEAD, POST'],
        ['POST', '/v1/leads/lead_x/score', 'GET, HEAD'],
        ['PATCH', '/v1/agents', 'GET, HEAD, POST'],
        ['POST', '/v1/leads/lead_x', 'GET, HEAD, PUT, DELETE'],
        ['DELETE', '/v1/deals', 'GET, HEAD, POST'],
      ] as const) {
        const res = await app.request(method, path, { key: testKey, body: { name: 'x' } });
        expectError(res, 405, 'method_not_allowed', undefined);
        expect(res.headers.get('allow')).toBe(allow);
        expect(res.body.error.message).toContain(allow);
      }
      const options = await app.request('OPTIONS', '/v1/leads', { key: testKey });
      expect(options.status).toBe(204);
      expect(options.headers.get('allow')).toBe('GET, HEAD, POST');
      expect((await app.request('HEAD', '/v1/leads', { key: testKey })).status).toBe(200);
      expectError(await app.request('PATCH', '/v1/leads'), 401, 'api_key_missing', undefined, 'authentication_error');
      // The service's own probes and public documents too; /graphql answers Apollo's 405 in the GraphQL shape.
      for (const path of ['/healthz', '/readyz', '/v1/openapi.json', '/docs']) {
        const res = await app.request('POST', path);
        expect([path, res.status, res.headers.get('allow')]).toEqual([path, 405, 'GET, HEAD']);
        expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
      }
      const graphql = await app.request('PUT', '/graphql', { key: testKey, body: { query: '{ __typename }' } });
      expect([graphql.status, graphql.headers.get('allow')]).toEqual([405, 'GET, POST']);
      expect(graphql.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    });

    it('a path outside the route table is 404 resource_missing, still behind authentication', async () => {
      expectError(await app.request('GET', '/v1/gadgets', { key: testKey }), 404, 'resource_missing', undefined);
      expectError(await app.request('GET', '/v1/gadgets'), 401, 'api_key_missing', undefined, 'authentication_error');
    });

    it('rejected requests leave the database unchanged', async () => {
      const lead = await createLead({ metadata: { a: 'b' } });
      const before = await countLeads();
      const rejected = [
        await post({ company: 'No email' }),
        await post({ ...validBody(), employees: -1 }),
        await post({ ...validBody(), score: 100 }),
        await post({ company: 'Dup', contact_email: lead.contact_email }),
        await app.request('POST', '/v1/leads', { key: testKey, rawBody: '{', headers: { 'content-type': 'application/json' } }),
        await app.request('POST', '/v1/leads', { key: testKey, rawBody: JSON.stringify(validBody()), headers: { 'content-type': 'text/plain' } }),
        await app.request('POST', '/v1/leads', { body: validBody() }),
        await put(lead.id, { company: 'Changed', employees: 1.5 }),
        await put(lead.id, { company: 'Changed', status: 'converted' }),
        await put(lead.id, { company: 'Changed', id: 'lead_00000000000000000000000000' }),
        await put(lead.id, { company: 'Changed', metadata: { a: 5 } }),
      ];
      for (const res of rejected) expect(res.status).toBeGreaterThanOrEqual(400);
      expect(await countLeads()).toBe(before);
      expect((await get(lead.id)).body).toEqual(lead);
    });
  });

  describe('X-Request-Id', () => {
    it('is on every response, success and error, and equals error.request_id', async () => {
      const lead = await createLead();
      const responses = [
        await post(validBodyFor()),
        await get(lead.id),
        await put(lead.id, { country: 'NL' }),
        await score(lead.id),
        await app.request('GET', '/v1/leads', { key: testKey }),
        await get('lead_x'),
        await post({ company: 'x' }),
        await app.request('GET', '/v1/leads'),
        await app.request('GET', '/v1/nope', { key: testKey }),
        await app.request('POST', '/v1/leads', { key: testKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } }),
      ];
      const ids = new Set<string>();
      for (const res of responses) {
        const id = res.headers.get('x-request-id');
        expect(id).toMatch(MINTED_REQUEST_ID);
        ids.add(id!);
        if (res.status >= 400) expect(res.body.error.request_id).toBe(id);
      }
      expect(ids.size).toBe(responses.length);
      const deleted = await del(lead.id);
      expect(deleted.headers.get('x-request-id')).toMatch(MINTED_REQUEST_ID);
    });

    it('echoes a sane client X-Request-Id, on success and in errors', async () => {
      const ok = await app.request('GET', '/v1/leads', { key: testKey, headers: { 'x-request-id': 'client-trace.42:abc_DEF' } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-request-id')).toBe('client-trace.42:abc_DEF');
      const longest = 'a'.repeat(128);
      const bad = await app.request('GET', '/v1/leads/lead_x', { key: testKey, headers: { 'x-request-id': longest } });
      expectError(bad, 404, 'resource_missing', 'id');
      expect(bad.body.error.request_id).toBe(longest);
      const unauthenticated = await app.request('GET', '/v1/leads', { headers: { 'x-request-id': 'trace-401' } });
      expectError(unauthenticated, 401, 'api_key_missing', undefined, 'authentication_error');
      expect(unauthenticated.body.error.request_id).toBe('trace-401');
    });

    it('replaces an insane client X-Request-Id with its own req_ id', async () => {
      for (const insane of ['x'.repeat(300), 'a'.repeat(129), 'has spaces in it', 'semi;colon', '<script>', 'ünïcödé']) {
        const headers = { 'x-request-id': insane };
        const ok = await app.request('GET', '/v1/leads', { key: testKey, headers });
        expect(ok.status).toBe(200);
        expect(ok.headers.get('x-request-id')).toMatch(MINTED_REQUEST_ID);
        const bad = await app.request('GET', '/v1/leads/lead_x', { key: testKey, headers });
        expectError(bad, 404, 'resource_missing', 'id');
        expect(bad.body.error.request_id).toMatch(MINTED_REQUEST_ID);
      }
    });
  });

  function validBodyFor() {
    return { company: 'Request Id', contact_email: uniqueEmail() };
  }
});

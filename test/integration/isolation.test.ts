import { startTestApp, TestAccount, TestApp } from '../helpers/app';

const LEAD_FIELDS = 'id company contactEmail livemode score status metadata updatedAt';

interface Lead {
  id: string;
  contact_email: string;
  livemode: boolean;
  [field: string]: unknown;
}

describe('tenant and mode isolation', () => {
  let app: TestApp;
  let a: TestAccount;
  let b: TestAccount;
  /** A's leads: one made with the test key, one with the live key. */
  let aTest: Lead;
  let aLive: Lead;
  let bTest: Lead;
  let bLive: Lead;

  const create = async (key: string, body: Record<string, unknown>): Promise<Lead> => {
    const response = await app.request('POST', '/v1/leads', { key, body });
    expect(response.status).toBe(201);
    return response.body;
  };
  const ids = (leads: Array<{ id: string }>) => leads.map((lead) => lead.id).sort();
  const listAll = async (key: string, query = ''): Promise<Lead[]> => {
    const response = await app.request('GET', `/v1/leads?limit=100${query}`, { key });
    expect(response.status).toBe(200);
    expect(response.body.has_more).toBe(false);
    return response.body.data;
  };

  beforeAll(async () => {
    app = await startTestApp();
    a = await app.createAccount({ name: 'Account A' });
    b = await app.createAccount({ name: 'Account B' });
    aTest = await create(a.testKey, { company: 'A test co', contact_email: 'shared@example.test', industry: 'Software', metadata: { owner: 'a' } });
    aLive = await create(a.liveKey, { company: 'A live co', contact_email: 'shared@example.test', industry: 'Software' });
    bTest = await create(b.testKey, { company: 'B test co', contact_email: 'shared@example.test' });
    bLive = await create(b.liveKey, { company: 'B live co', contact_email: 'shared@example.test' });
  });
  afterAll(() => app.close());

  it('marks objects made with a test key livemode false and with a live key livemode true', async () => {
    expect(aTest.livemode).toBe(false);
    expect(bTest.livemode).toBe(false);
    expect(aLive.livemode).toBe(true);
    expect(bLive.livemode).toBe(true);
    expect((await app.request('GET', `/v1/leads/${aTest.id}`, { key: a.testKey })).body.livemode).toBe(false);
    expect((await app.request('GET', `/v1/leads/${aLive.id}`, { key: a.liveKey })).body.livemode).toBe(true);
    const updated = await app.request('PUT', `/v1/leads/${aLive.id}`, { key: a.liveKey, body: { country: 'NL' } });
    expect(updated.body.livemode).toBe(true);
    for (const lead of await listAll(a.testKey)) expect(lead.livemode).toBe(false);
    for (const lead of await listAll(a.liveKey)) expect(lead.livemode).toBe(true);
    const gql = await app.graphql(`{ leads { data { livemode } } }`, {}, a.liveKey);
    expect(gql.body.data.leads.data.length).toBeGreaterThan(0);
    for (const lead of gql.body.data.leads.data) expect(lead.livemode).toBe(true);
  });

  it('allows the same contact_email once in test and once in live of an account, and once per account', async () => {
    expect(new Set([aTest.id, aLive.id, bTest.id, bLive.id]).size).toBe(4);
    for (const key of [a.testKey, a.liveKey, b.testKey, b.liveKey]) {
      const again = await app.request('POST', '/v1/leads', { key, body: { company: 'Again', contact_email: 'SHARED@example.test' } });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'resource_conflict', param: 'contact_email' });
    }
  });

  describe.each([
    ["B's test key", "A's test lead", () => b.testKey, () => aTest],
    ["B's live key", "A's test lead", () => b.liveKey, () => aTest],
    ["B's test key", "A's live lead", () => b.testKey, () => aLive],
    ["B's live key", "A's live lead", () => b.liveKey, () => aLive],
    ["A's live key", "A's test lead", () => a.liveKey, () => aTest],
    ["A's test key", "A's live lead", () => a.testKey, () => aLive],
  ])('%s on %s', (_who, _what, keyOf, leadOf) => {
    const expectMissing = (response: { status: number; body: { error: Record<string, unknown> } }) => {
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
      expect(JSON.stringify(response.body)).not.toContain('A test co');
      expect(JSON.stringify(response.body)).not.toContain('A live co');
    };

    it('gets 404 resource_missing on every lead route and leaves the lead unchanged', async () => {
      const lead = leadOf();
      const ownerKey = lead.livemode ? a.liveKey : a.testKey;
      const before = await app.request('GET', `/v1/leads/${lead.id}`, { key: ownerKey });
      expect(before.status).toBe(200);

      expectMissing(await app.request('GET', `/v1/leads/${lead.id}`, { key: keyOf() }));
      expectMissing(await app.request('GET', `/v1/leads/${lead.id}/score`, { key: keyOf() }));
      expectMissing(await app.request('PUT', `/v1/leads/${lead.id}`, { key: keyOf(), body: { company: 'Hijacked', metadata: { owner: 'b' } } }));
      expectMissing(await app.request('PUT', `/v1/leads/${lead.id}`, { key: keyOf(), body: { status: 'disqualified' } }));
      expectMissing(await app.request('DELETE', `/v1/leads/${lead.id}`, { key: keyOf() }));

      const after = await app.request('GET', `/v1/leads/${lead.id}`, { key: ownerKey });
      expect(after.status).toBe(200);
      expect(after.body).toEqual(before.body);
      const score = await app.request('GET', `/v1/leads/${lead.id}/score`, { key: ownerKey });
      expect(score.status).toBe(200);
    });

    it('gets NOT_FOUND through GraphQL for lead, leadScore, updateLead and deleteLead', async () => {
      const lead = leadOf();
      const ownerKey = lead.livemode ? a.liveKey : a.testKey;
      const before = await app.graphql(`query($id: ID!) { lead(id: $id) { ${LEAD_FIELDS} } }`, { id: lead.id }, ownerKey);
      const operations = [
        `query($id: ID!) { lead(id: $id) { ${LEAD_FIELDS} } }`,
        `query($id: ID!) { leadScore(id: $id) { score } }`,
        `mutation($id: ID!) { updateLead(id: $id, input: { company: "Hijacked" }) { ${LEAD_FIELDS} } }`,
        `mutation($id: ID!) { deleteLead(id: $id) { deleted } }`,
      ];
      for (const query of operations) {
        const response = await app.graphql(query, { id: lead.id }, keyOf());
        expect(response.status).toBe(200);
        expect(response.body.data).toBeNull();
        expect(response.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', errorCode: 'resource_missing' });
      }
      const after = await app.graphql(`query($id: ID!) { lead(id: $id) { ${LEAD_FIELDS} } }`, { id: lead.id }, ownerKey);
      expect(after.body).toEqual(before.body);
    });
  });

  it("lists only the key's own account and mode", async () => {
    const extraATest = await create(a.testKey, { company: 'A test extra', contact_email: 'extra@a.test' });
    const extraBLive = await create(b.liveKey, { company: 'B live extra', contact_email: 'extra@b.test' });
    expect(ids(await listAll(a.testKey))).toEqual(ids([aTest, extraATest]));
    expect(ids(await listAll(a.liveKey))).toEqual(ids([aLive]));
    expect(ids(await listAll(b.testKey))).toEqual(ids([bTest]));
    expect(ids(await listAll(b.liveKey))).toEqual(ids([bLive, extraBLive]));
  });

  it('filters never reach into another data set', async () => {
    // Every lead uses the same contact email and 'co' in its company: a leak would show here.
    expect(ids(await listAll(b.testKey, '&q=shared'))).toEqual([bTest.id]);
    expect(ids(await listAll(b.testKey, '&q=co'))).toEqual([bTest.id]);
    expect(ids(await listAll(a.liveKey, '&industry=software'))).toEqual([aLive.id]);
    expect(ids(await listAll(a.testKey, '&industry=software&sort=score'))).toEqual([aTest.id]);
    expect(await listAll(b.testKey, '&industry=software')).toEqual([]);
  });

  it('a cursor from one data set pages only through the data set of the key that uses it', async () => {
    for (let i = 0; i < 3; i++) await create(a.testKey, { company: `A page ${i}`, contact_email: `page${i}@a.test` });
    const page = await app.request('GET', '/v1/leads?limit=1', { key: a.testKey });
    expect(page.body.has_more).toBe(true);
    for (const key of [b.testKey, b.liveKey, a.liveKey]) {
      const response = await app.request('GET', `/v1/leads?limit=100&cursor=${page.body.next_cursor}`, { key });
      expect(response.status).toBe(200);
      const own = await listAll(key);
      for (const lead of response.body.data as Lead[]) expect(ids(own)).toContain(lead.id);
    }
  });

  it('lists through GraphQL are scoped the same way', async () => {
    const query = `{ leads(filter: { limit: 100 }) { data { id livemode } } }`;
    for (const [key, rest] of [
      [a.testKey, await listAll(a.testKey)],
      [a.liveKey, await listAll(a.liveKey)],
      [b.testKey, await listAll(b.testKey)],
      [b.liveKey, await listAll(b.liveKey)],
    ] as const) {
      const response = await app.graphql(query, {}, key);
      expect(ids(response.body.data.leads.data)).toEqual(ids(rest));
    }
  });

  it('a deleted lead in one data set leaves the same email in the others alone', async () => {
    const response = await app.request('DELETE', `/v1/leads/${bTest.id}`, { key: b.testKey });
    expect(response.body).toEqual({ id: bTest.id, object: 'lead', deleted: true });
    for (const [key, lead] of [
      [a.testKey, aTest],
      [a.liveKey, aLive],
      [b.liveKey, bLive],
    ] as const) {
      const got = await app.request('GET', `/v1/leads/${lead.id}`, { key });
      expect(got.status).toBe(200);
      expect(got.body.contact_email).toBe('shared@example.test');
    }
    expect(await listAll(b.testKey, '&q=shared')).toEqual([]);
  });
});

import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { parsePermissions } from '../../src/modules/accounts/key-permissions';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * Issue 20, "Restricted keys": rk_ keys with a level per resource, refused per root field (403
 * permission_denied on REST, FORBIDDEN beside the answered fields on GraphQL), scoped to their
 * mode and counted in the account's quota like sk_ keys; rolled keys, whose old value works until
 * it expires. Real HTTP, real PostgreSQL.
 */

function expectDenied(res: HttpResponse, permission: string): void {
  const context = `${res.status} ${res.text.slice(0, 300)}`;
  expect({ context, status: res.status }).toEqual({ context, status: 403 });
  expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'permission_denied' });
  expect(res.body.error.message).toBe(`This key lacks the ${permission} permission this request needs.`);
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
}

describe('restricted keys', () => {
  let app: TestApp;
  let owner: TestAccount;

  const restrictedKey = async (permissions: string, type = KeyType.test, account = owner.account) =>
    (await new ApiKeyService(app.orm.em.fork()).create(account, type, `restricted ${permissions}`, parsePermissions(permissions))).secret;
  const made = async (path: string, body: unknown, key = owner.testKey) => {
    const res = await app.request('POST', path, { key, body });
    expect({ path, status: res.status }).toEqual({ path, status: 201 });
    return res.body as { id: string; livemode: boolean };
  };

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  beforeEach(async () => {
    await app.reset();
    owner = await app.createAccount();
  });

  it('a leads=read key lists leads, and creating one is 403 permission_denied naming leads:write', async () => {
    const key = await restrictedKey('leads=read');
    expect(key).toMatch(/^rk_test_[A-Za-z0-9]{32}$/);
    const lead = await made('/v1/leads', { company: 'Initech', contact_email: 'bill@initech.example' });
    const list = await app.request('GET', '/v1/leads', { key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((item: { id: string }) => item.id)).toEqual([lead.id]);
    expect((await app.request('GET', `/v1/leads/${lead.id}`, { key })).status).toBe(200);
    expectDenied(await app.request('POST', '/v1/leads', { key, body: { company: 'Globex', contact_email: 'hank@globex.example' } }), 'leads:write');
    expectDenied(await app.request('DELETE', `/v1/leads/${lead.id}`, { key }), 'leads:write');
    // Refused before its input is looked at: a bad body is still a permission error, not a 400.
    expectDenied(await app.request('PUT', `/v1/leads/${lead.id}`, { key, body: { employees: -1 } }), 'leads:write');
    expectDenied(await app.request('GET', '/v1/deals', { key }), 'deals:read');
    expect((await app.request('GET', '/v1/leads', { key: owner.testKey })).body.data).toHaveLength(1);
  });

  it('a deals=write key reads deals too (write implies read), and nothing else', async () => {
    const key = await restrictedKey('deals=write');
    const deal = await made('/v1/deals', { name: 'Initech renewal', value: 1200 }, key);
    const read = await app.request('GET', `/v1/deals/${deal.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: deal.id, livemode: false });
    expect((await app.request('GET', '/v1/deals', { key })).body.data).toHaveLength(1);
    expectDenied(await app.request('GET', '/v1/leads', { key }), 'leads:read');
    expectDenied(await app.request('GET', '/v1/proposals', { key }), 'proposals:read');
  });

  it('none everywhere denies every resource; health, which reads no account data, still answers', async () => {
    const key = await restrictedKey('leads=none');
    for (const [path, permission] of [
      ['/v1/leads', 'leads:read'],
      ['/v1/deals', 'deals:read'],
      ['/v1/proposals', 'proposals:read'],
      ['/v1/agents', 'agents:read'],
      ['/v1/integrations', 'integrations:read'],
      ['/v1/webhooks', 'webhooks:read'],
      ['/v1/events', 'events:read'],
    ]) {
      expectDenied(await app.request('GET', path, { key }), permission);
    }
    expectDenied(await app.request('POST', '/v1/webhooks', { key, body: { url: 'https://example.com/hook', events: ['lead.created'] } }), 'webhooks:write');
    expect((await app.request('GET', '/v1/health', { key })).status).toBe(200);
    // Introspection reads no account data either.
    expect((await app.graphql('{ __schema { queryType { name } } }', undefined, key)).body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });

  it('GraphQL answers the allowed root fields of a document and gives FORBIDDEN for the others', async () => {
    const key = await restrictedKey('leads=read');
    await made('/v1/leads', { company: 'Initech', contact_email: 'bill@initech.example' });
    const res = await app.graphql('{ leads { data { company } } deals { data { id } } health { status } }', undefined, key);
    expect(res.status).toBe(200);
    expect(res.body.data.leads).toEqual({ data: [{ company: 'Initech' }] });
    // Left out of data (its type is non-null: a null would null the whole answer), named in errors.
    expect(res.body.data).not.toHaveProperty('deals');
    expect(res.body.data.health).toMatchObject({ status: expect.any(String) });
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        message: 'This key lacks the deals:read permission this request needs.',
        path: ['deals'],
        extensions: expect.objectContaining({ code: 'FORBIDDEN', errorCode: 'permission_denied', type: 'permission_error' }),
      }),
    ]);
    const mutation = await app.graphql('mutation { createLead(input: { company: "Globex", contactEmail: "hank@globex.example" }) { id } }', undefined, key);
    // Nothing of it may run: nothing is answered, and nothing was written.
    expect(mutation.body.data).toEqual({});
    expect(mutation.body.errors).toEqual([expect.objectContaining({ path: ['createLead'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
    expect(mutation.body.errors[0].message).toContain('leads:write');
    expect((await app.request('GET', '/v1/leads', { key })).body.data).toHaveLength(1);
    // Aliases and fragments on the root type are refused by their response key; a skipped field is not looked at.
    const aliased = await app.graphql(
      'query($no: Boolean!) { __typename mine: leads { data { company } } ...Other agents @skip(if: $no) { data { id } } } fragment Other on Query { theirs: deals { data { id } } }',
      { no: true },
      key,
    );
    expect(aliased.body.data).toEqual({ __typename: 'Query', mine: { data: [{ company: 'Initech' }] } });
    expect(aliased.body.errors.map((error: { path: string[] }) => error.path)).toEqual([['theirs']]);
  });

  it("a nested field that reaches another resource needs that resource's permission (Deal.proposals): its root field is refused whole", async () => {
    const key = await restrictedKey('deals=read');
    await made('/v1/deals', { name: 'Initech renewal', value: 1200 });
    const res = await app.graphql('{ deals { data { name proposals { data { id } } } } health { status } }', undefined, key);
    // Judged before execution, like a root field: the root field selecting it is left out, the others answered.
    expect(res.body.data).toEqual({ health: { status: expect.any(String) } });
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        message: 'This key lacks the proposals:read permission this request needs.',
        path: ['deals'],
        locations: [{ line: 1, column: 23 }],
        extensions: expect.objectContaining({ code: 'FORBIDDEN' }),
      }),
    ]);
    // Through a fragment and an inline fragment, too.
    const viaFragments = await app.graphql('{ deals { ...D } } fragment D on DealList { data { ... on Deal { proposals { data { id } } } } }', undefined, key);
    expect(viaFragments.body.errors.map((error: { path: string[] }) => error.path)).toEqual([['deals']]);
    const allowed = await app.graphql('{ deals { data { name proposals { data { id } } } } }', undefined, await restrictedKey('deals=read,proposals=read'));
    expect(allowed.body).toEqual({ data: { deals: { data: [{ name: 'Initech renewal', proposals: { data: [] } }] } } });
  });

  it('a mutation whose answer selects a refused field does not run: nothing is written behind the refusal', async () => {
    const key = await restrictedKey('deals=write');
    const deal = await made('/v1/deals', { name: 'Initech renewal', value: 1200 });
    const update = await app.graphql(`mutation { updateDeal(id: "${deal.id}", input: {name: "x"}) { id name proposals { data { id } } } }`, undefined, key);
    expect(update.body.data).toEqual({});
    expect(update.body.errors).toEqual([
      expect.objectContaining({ path: ['updateDeal'], message: 'This key lacks the proposals:read permission this request needs.' }),
    ]);
    expect((await app.request('GET', `/v1/deals/${deal.id}`, { key: owner.testKey })).body.name).toBe('Initech renewal');
    const created = await app.graphql('mutation { createDeal(input: {name: "Second", value: 5}) { id proposals { data { id } } } }', undefined, key);
    expect(created.body.errors[0]).toMatchObject({ path: ['createDeal'], extensions: { code: 'FORBIDDEN' } });
    expect((await app.request('GET', '/v1/deals', { key: owner.testKey })).body.data).toHaveLength(1);
    // Without the refused field it runs.
    const plain = await app.graphql(`mutation { updateDeal(id: "${deal.id}", input: {name: "x"}) { id name } }`, undefined, key);
    expect(plain.body).toEqual({ data: { updateDeal: { id: deal.id, name: 'x' } } });
  });

  it('judges @skip and @include with the variables as execution coerces them: the same answers as an sk_ key', async () => {
    const key = await restrictedKey('leads=read');
    await made('/v1/leads', { company: 'Initech', contact_email: 'bill@initech.example' });
    const include = 'query($s: Boolean = true) { leads(filter: {limit: 1}) @include(if: $s) { data { company } } }';
    const skipDeals = 'query($s: Boolean = true) { deals @skip(if: $s) { data { id } } leads(filter: {limit: 1}) { data { company } } }';
    const required = 'query($s: Boolean!) { leads(filter: {limit: 1}) @include(if: $s) { data { company } } }';
    const cases: Array<[string, Record<string, unknown> | undefined]> = [
      [include, {}],
      [include, undefined],
      [include, { s: null }],
      [include, { s: false }],
      [skipDeals, {}],
      [required, {}],
      [required, { s: 'yes' }],
    ];
    for (const [query, variables] of cases) {
      const [restricted, full] = [await app.graphql(query, variables, key), await app.graphql(query, variables, owner.testKey)];
      const context = { query, variables };
      expect({ ...context, status: restricted.status, body: restricted.body }).toEqual({ ...context, status: full.status, body: full.body });
      expect({ ...context, status: restricted.status }).not.toEqual({ ...context, status: 500 });
    }
    // A field the defaults keep is judged: deals is refused when $s defaults to false.
    const kept = await app.graphql('query($s: Boolean = false) { deals @skip(if: $s) { data { id } } }', {}, key);
    expect(kept.body.errors[0]).toMatchObject({ path: ['deals'], extensions: { code: 'FORBIDDEN' } });
  });

  it("an rk_test key sees only the account's test data, an rk_live key only its live data", async () => {
    const testLead = await made('/v1/leads', { company: 'Test Co', contact_email: 'a@test.example' }, owner.testKey);
    const liveLead = await made('/v1/leads', { company: 'Live Co', contact_email: 'a@live.example' }, owner.liveKey);
    const testKey = await restrictedKey('leads=read');
    const liveKey = await restrictedKey('leads=read', KeyType.live);
    expect(liveKey).toMatch(/^rk_live_/);
    expect((await app.request('GET', '/v1/leads', { key: testKey })).body.data.map((lead: { id: string }) => lead.id)).toEqual([testLead.id]);
    expect((await app.request('GET', `/v1/leads/${liveLead.id}`, { key: testKey })).status).toBe(404);
    expect((await app.request('GET', '/v1/leads', { key: liveKey })).body.data.map((lead: { id: string }) => lead.id)).toEqual([liveLead.id]);
    const stranger = await app.createAccount();
    const strangers = await restrictedKey('leads=write', KeyType.test, stranger.account);
    expect((await app.request('GET', `/v1/leads/${testLead.id}`, { key: strangers })).status).toBe(404);
  });

  it('a rolled key: the new value works with the same id, name and permissions; the old one until it expires, then 401', async () => {
    const keys = () => new ApiKeyService(app.orm.em.fork());
    const created = await keys().create(owner.account, KeyType.test, 'CRM sync', parsePermissions('leads=read'));
    const rolled = await keys().roll(created.key.id, 1);
    expect(rolled.secret).toMatch(/^rk_test_/);
    expect(rolled.secret).not.toBe(created.secret);
    expect({ id: rolled.key.id, name: rolled.key.name, permissions: rolled.key.permissions }).toEqual({
      id: created.key.id,
      name: 'CRM sync',
      permissions: created.key.permissions,
    });
    for (const key of [rolled.secret, created.secret]) {
      expect((await app.request('GET', '/v1/leads', { key })).status).toBe(200);
      expectDenied(await app.request('POST', '/v1/leads', { key, body: { company: 'X', contact_email: 'x@x.example' } }), 'leads:write');
    }
    // The hour passes.
    await app.orm.em
      .fork()
      .getConnection()
      .execute(`update api_keys set previous_secret_expires_at = now() - interval '1 second' where id = ?`, [created.key.id]);
    const expired = await app.request('GET', '/v1/leads', { key: created.secret });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatchObject({ type: 'authentication_error', code: 'api_key_revoked' });
    expect(expired.body.error.message).toMatch(/rolled; its old value expired at .*Use its new value/);
    expect(expired.text).not.toContain(created.secret);
    expect((await app.request('GET', '/v1/leads', { key: rolled.secret })).status).toBe(200);

    // Rolled at once (the default): the value before is refused from the next request.
    const again = await keys().roll(created.key.id);
    expect((await app.request('GET', '/v1/leads', { key: rolled.secret })).status).toBe(401);
    expect((await app.request('GET', '/v1/leads', { key: again.secret })).status).toBe(200);
    const graphql = await app.graphql('{ health { status } }', undefined, rolled.secret);
    expect(graphql.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('an sk_ key rolls too and keeps full access; a revoked key cannot be rolled', async () => {
    const keys = () => new ApiKeyService(app.orm.em.fork());
    const created = await keys().create(owner.account, KeyType.live, 'server');
    const rolled = await keys().roll(created.key.id, 24);
    expect(rolled.secret).toMatch(/^sk_live_/);
    expect((await app.request('POST', '/v1/leads', { key: rolled.secret, body: { company: 'Y', contact_email: 'y@y.example' } })).status).toBe(201);
    await keys().revoke(created.key.id);
    await expect(keys().roll(created.key.id)).rejects.toThrow('is revoked and cannot be rolled');
    await expect(keys().roll(created.key.id, 500)).rejects.toThrow('from 0 to 168');
  });
});

describe('restricted keys and the plan quota', () => {
  let app: TestApp;
  afterAll(() => app?.close());

  it('count against the same per-minute allowance as the sk_ keys of their mode', async () => {
    app = await startTestApp({ quotaSettings: { testMode: { perMinute: 3, perDay: null }, unauthenticatedPerMinute: 100, signupsPerHour: 100 } });
    const owner = await app.createAccount();
    const restricted = (await new ApiKeyService(app.orm.em.fork()).create(owner.account, KeyType.test, 'ro', parsePermissions('leads=read'))).secret;
    expect((await app.request('GET', '/v1/leads', { key: owner.testKey })).status).toBe(200);
    expect((await app.request('GET', '/v1/leads', { key: owner.testKey })).status).toBe(200);
    const third = await app.request('GET', '/v1/leads', { key: restricted });
    expect(third.status).toBe(200);
    expect(third.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await app.request('GET', '/v1/leads', { key: restricted })).status).toBe(429);
    expect((await app.request('GET', '/v1/leads', { key: owner.testKey })).status).toBe(429);
    // A denied request is a request: it counts too (here, it is refused by the quota first).
    expect((await app.request('GET', '/v1/leads', { key: owner.liveKey })).status).toBe(200);
  });
});

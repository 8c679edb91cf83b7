import type { LookupAddress } from 'node:dns';
import type { HostResolver } from '../../src/http/address-guard';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * The webhook address guard at creation (CONTRACT §10, §15): with WEBHOOK_ALLOW_PRIVATE_URLS=false
 * a subscription URL that is, or resolves to, a loopback, private, link-local or metadata address
 * is refused with 400 url_not_allowed (param url), on create and on update, and nothing is stored;
 * a public one is accepted; non-http(s) URLs are parameter_invalid. With the setting true (local
 * development) a loopback URL is accepted. Host names resolve through a fake resolver, never DNS.
 */

const ERROR_KEYS = ['code', 'message', 'param', 'request_id', 'type'];

const DNS: Record<string, LookupAddress[]> = {
  localhost: [{ address: '127.0.0.1', family: 4 }],
  'internal.example': [{ address: '10.0.0.5', family: 4 }],
  'metadata.example': [{ address: '169.254.169.254', family: 4 }],
  'v6loop.example': [{ address: '::1', family: 6 }],
  'mixed.example': [
    { address: '93.184.216.34', family: 4 },
    { address: '192.168.1.20', family: 4 },
  ],
  'public.example': [
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ],
  'public2.example': [{ address: '1.1.1.1', family: 4 }],
};

/** Host names the fake resolver was asked about, to tell a literal address (no lookup) from a name. */
const asked: string[] = [];

const fakeResolver: HostResolver = async (hostname) => {
  asked.push(hostname);
  const answer = DNS[hostname];
  if (answer) return answer;
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
};

/** CONTRACT §3: every error has exactly this shape, with the status its code maps to. */
function expectError(response: HttpResponse, status: number, code: string, param: string): void {
  expect(response.status).toBe(status);
  expect(Object.keys(response.body.error).sort()).toEqual(ERROR_KEYS);
  expect(response.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
  expect(typeof response.body.error.message).toBe('string');
  expect(response.body.error.message.length).toBeGreaterThan(0);
  expect(response.body.error.request_id).toMatch(/^req_/);
  expect(response.headers.get('x-request-id')).toBe(response.body.error.request_id);
}

const REFUSED: Array<[string, string]> = [
  ['http://127.0.0.1:8080/hook', 'the literal loopback address'],
  ['http://localhost/hook', 'localhost'],
  ['http://10.1.2.3/', 'a literal private address'],
  ['http://169.254.169.254/latest/meta-data', 'the literal metadata address'],
  ['http://[::1]:9000/', 'the literal IPv6 loopback address'],
  ['http://[::ffff:127.0.0.1]/hook', 'an IPv4-mapped loopback address'],
  ['http://2130706433/', 'loopback written as one decimal number'],
  ['https://internal.example/', 'a name resolving to a private address'],
  ['http://internal.example/', 'a name resolving to a private address (http)'],
  ['http://metadata.example/', 'a name resolving to the metadata address'],
  ['http://v6loop.example/', 'a name resolving to IPv6 loopback'],
  ['http://mixed.example/hook', 'a name resolving to a public and a private address'],
  ['http://does-not-resolve.example/hook', 'a name that does not resolve'],
];

describe('webhook URLs with WEBHOOK_ALLOW_PRIVATE_URLS=false', () => {
  let app: TestApp;
  let owner: TestAccount;

  const post = (url: string, key = owner.testKey) => app.request('POST', '/v1/webhooks', { key, body: { url, events: ['lead.created'] } });
  const list = async (key = owner.testKey) => {
    const response = await app.request('GET', '/v1/webhooks', { key });
    expect(response.status).toBe(200);
    return response.body.data as Array<{ id: string; url: string }>;
  };
  const storedRows = async () => app.orm.em.getConnection().execute<Array<{ id: string; url: string }>>('select id, url from webhooks order by created_at');

  beforeAll(async () => {
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' }, resolveHost: fakeResolver });
  });
  afterAll(() => app.close());
  beforeEach(async () => {
    await app.reset();
    owner = await app.createAccount();
    asked.length = 0;
  });

  it('is configured with the guard on', () => {
    expect(app.config.webhookAllowPrivateUrls).toBe(false);
  });

  it.each(REFUSED)('refuses %s (%s) with 400 url_not_allowed, param url', async (url) => {
    const response = await post(url);
    expectError(response, 400, 'url_not_allowed', 'url');
    expect(await list()).toEqual([]);
  });

  it('checks a literal address without a lookup, and resolves a name', async () => {
    expectError(await post('http://10.1.2.3/'), 400, 'url_not_allowed', 'url');
    expectError(await post('http://[::1]:9000/'), 400, 'url_not_allowed', 'url');
    expect(asked).toEqual([]);
    expectError(await post('http://internal.example/'), 400, 'url_not_allowed', 'url');
    expect(asked).toEqual(['internal.example']);
  });

  it('says which address was refused, or that the name does not resolve', async () => {
    expect((await post('http://metadata.example/')).body.error.message).toContain('169.254.169.254');
    expect((await post('http://mixed.example/')).body.error.message).toContain('192.168.1.20');
    expect((await post('http://does-not-resolve.example/')).body.error.message).toMatch(/does not resolve/);
  });

  it('accepts a name that resolves only to public addresses (201, with a whsec_ secret)', async () => {
    const created = await post('http://public.example/hook');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'webhook', url: 'http://public.example/hook', events: ['lead.created'], status: 'enabled' });
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.body.id).toMatch(/^wh_/);
    expect(asked).toContain('public.example');
  });

  it('accepts a public literal address', async () => {
    const created = await post('https://8.8.8.8/hook');
    expect(created.status).toBe(201);
    expect(created.body.url).toBe('https://8.8.8.8/hook');
  });

  it('refuses non-http(s) and malformed URLs with 400 parameter_invalid, param url', async () => {
    for (const url of ['ftp://public.example/hook', 'file:///etc/passwd', 'javascript:alert(1)', '/relative/hook', 'http://user:secret@public.example/hook']) {
      expectError(await post(url), 400, 'parameter_invalid', 'url');
    }
    expect(await list()).toEqual([]);
  });

  it('stores nothing for refused requests: only the accepted subscription is listed', async () => {
    const accepted = await post('http://public.example/hook');
    expect(accepted.status).toBe(201);
    for (const [url] of REFUSED) expect((await post(url)).status).toBe(400);
    expect((await post('ftp://public.example/hook')).status).toBe(400);

    const listed = await list();
    expect(listed.map((webhook) => webhook.id)).toEqual([accepted.body.id]);
    expect(listed[0].url).toBe('http://public.example/hook');
    // Not hidden by the list either: the table itself holds only the one row.
    expect(await storedRows()).toEqual([{ id: accepted.body.id, url: 'http://public.example/hook' }]);
  });

  it('refuses an update to a private URL with 400 url_not_allowed and leaves the stored URL unchanged', async () => {
    const created = await post('http://public.example/hook');
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const put = (body: Record<string, unknown>) => app.request('PUT', `/v1/webhooks/${id}`, { key: owner.testKey, body });

    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]:9000/',
      'http://internal.example/',
      'http://v6loop.example/',
      'http://does-not-resolve.example/',
    ]) {
      expectError(await put({ url }), 400, 'url_not_allowed', 'url');
    }
    // A refused URL spoils the whole update: the other fields sent with it do not change either.
    expectError(await put({ url: 'http://metadata.example/', events: ['deal.won'], description: 'moved' }), 400, 'url_not_allowed', 'url');
    expectError(await put({ url: 'ftp://public.example/hook' }), 400, 'parameter_invalid', 'url');

    const listed = await list();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id, url: 'http://public.example/hook', events: ['lead.created'], description: null });
    expect(await storedRows()).toEqual([{ id, url: 'http://public.example/hook' }]);

    // A public URL is still accepted on update.
    const moved = await put({ url: 'https://public2.example/v2' });
    expect(moved.status).toBe(200);
    expect(moved.body.url).toBe('https://public2.example/v2');
    expect((await list())[0].url).toBe('https://public2.example/v2');
  });

  it('applies the same rule in live mode and through GraphQL', async () => {
    expectError(await post('http://internal.example/', owner.liveKey), 400, 'url_not_allowed', 'url');
    expect(await list(owner.liveKey)).toEqual([]);

    const response = await app.graphql(
      'mutation ($input: WebhookCreateInput!) { createWebhook(input: $input) { id url } }',
      { input: { url: 'http://169.254.169.254/latest/meta-data', events: ['lead.created'] } },
      owner.testKey,
    );
    expect(response.body.data?.createWebhook ?? null).toBeNull();
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'url_not_allowed', param: 'url' });
    expect(await storedRows()).toEqual([]);
  });
});

describe('webhook URLs with WEBHOOK_ALLOW_PRIVATE_URLS=true (local development)', () => {
  let app: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }, resolveHost: fakeResolver });
  });
  afterAll(() => app.close());
  beforeEach(async () => {
    await app.reset();
    owner = await app.createAccount();
    asked.length = 0;
  });

  it('accepts loopback and private URLs without resolving them', async () => {
    expect(app.config.webhookAllowPrivateUrls).toBe(true);
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://internal.example/', 'http://[::1]:9000/']) {
      const created = await app.request('POST', '/v1/webhooks', { key: owner.testKey, body: { url, events: ['lead.created'] } });
      expect(created.status).toBe(201);
      expect(created.body.url).toBe(url);
      expect(created.body.secret).toMatch(/^whsec_/);
    }
    expect(asked).toEqual([]);
    const listed = await app.request('GET', '/v1/webhooks', { key: owner.testKey });
    expect(listed.body.data).toHaveLength(4);
  });

  it('still refuses non-http(s) URLs with parameter_invalid', async () => {
    const response = await app.request('POST', '/v1/webhooks', { key: owner.testKey, body: { url: 'ftp://127.0.0.1/hook', events: ['lead.created'] } });
    expectError(response, 400, 'parameter_invalid', 'url');
  });
});

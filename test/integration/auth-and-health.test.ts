import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiKey } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService, hashKey } from '../../src/modules/accounts/api-key.service';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';

const packageVersion = (JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;

/** The contract's error shape, with the status and code expected. */
function expectAuthError(response: HttpResponse, code: string): void {
  expect(response.status).toBe(401);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(response.body)).toEqual(['error']);
  const error = response.body.error;
  expect(error).toMatchObject({ type: 'authentication_error', code });
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.request_id).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
  expect(response.headers.get('x-request-id')).toBe(error.request_id);
  expect(Object.keys(error).sort()).toEqual(['code', 'message', 'request_id', 'type']);
}

describe('authentication', () => {
  let app: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createAccount();
  });
  afterAll(() => app.close());

  const keyRow = (secret: string) => app.orm.em.fork().findOneOrFail(ApiKey, { secretHash: hashKey(secret) });

  describe('401 on /v1', () => {
    const routes: Array<[string, string]> = [
      ['GET', '/v1/health'],
      ['GET', '/v1/leads'],
      ['POST', '/v1/leads'],
      ['GET', '/v1/leads/lead_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['PUT', '/v1/leads/lead_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['DELETE', '/v1/leads/lead_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['GET', '/v1/leads/lead_01ARZ3NDEKTSV4RRFFQ69G5FAV/score'],
      ['GET', '/v1/deals'],
      ['GET', '/v1/no-such-route'],
    ];

    it.each(routes)('%s %s without an Authorization header is api_key_missing', async (method, route) => {
      const body = method === 'POST' || method === 'PUT' ? { company: 'X', contact_email: 'x@x.test' } : undefined;
      expectAuthError(await app.request(method, route, { body }), 'api_key_missing');
    });

    it('an empty Authorization header is api_key_missing or api_key_invalid, never a pass', async () => {
      const response = await app.request('GET', '/v1/leads', { headers: { authorization: '' } });
      expect(response.status).toBe(401);
      expect(['api_key_missing', 'api_key_invalid']).toContain(response.body.error.code);
    });

    const invalid: Array<[string, () => string]> = [
      ['a malformed key', () => 'Bearer sk_test_tooshort'],
      ['a key with a bad character', () => `Bearer sk_test_${'A'.repeat(31)}!`],
      ['a key one character too long', () => `Bearer ${owner.testKey}x`],
      ['the wrong prefix', () => `Bearer ${owner.testKey.replace('sk_test_', 'pk_test_')}`],
      ['an unknown mode', () => `Bearer ${owner.testKey.replace('sk_test_', 'sk_prod_')}`],
      ['a test key relabelled live', () => `Bearer ${owner.testKey.replace('sk_test_', 'sk_live_')}`],
      ['a well-formed but unknown key', () => `Bearer sk_live_${'Z'.repeat(32)}`],
      ['a key with one character changed', () => `Bearer ${owner.testKey.slice(0, -1)}${owner.testKey.endsWith('A') ? 'B' : 'A'}`],
      ['the Basic scheme', () => `Basic ${Buffer.from(`${owner.testKey}:`).toString('base64')}`],
      ['the key without a scheme', () => owner.testKey],
      ['a Bearer with nothing after it', () => 'Bearer'],
      ['two keys', () => `Bearer ${owner.testKey} ${owner.liveKey}`],
      ['the hash of a key', () => `Bearer ${hashKey(owner.testKey)}`],
    ];

    it.each(invalid)('%s is api_key_invalid', async (_case, header) => {
      expectAuthError(await app.request('GET', '/v1/leads', { headers: { authorization: header() } }), 'api_key_invalid');
    });

    it('accepts the scheme in any case and the valid keys themselves', async () => {
      expect((await app.request('GET', '/v1/leads', { headers: { authorization: `bearer ${owner.testKey}` } })).status).toBe(200);
      expect((await app.request('GET', '/v1/leads', { key: owner.testKey })).status).toBe(200);
      expect((await app.request('GET', '/v1/leads', { key: owner.liveKey })).status).toBe(200);
    });

    it('answers 401 before looking at the body', async () => {
      const response = await app.request('POST', '/v1/leads', { rawBody: '{not json', headers: { 'content-type': 'application/json' } });
      expectAuthError(response, 'api_key_missing');
    });
  });

  describe('revoked keys', () => {
    it("fail at once with api_key_revoked on REST and GraphQL, while the account's other keys still work", async () => {
      const account = await app.createAccount();
      expect((await app.request('GET', '/v1/leads', { key: account.testKey })).status).toBe(200);
      const key = await keyRow(account.testKey);
      const revoked = await new ApiKeyService(app.orm.em.fork()).revoke(key.id);
      expect(revoked.revokedAt).toBeInstanceOf(Date);

      expectAuthError(await app.request('GET', '/v1/leads', { key: account.testKey }), 'api_key_revoked');
      expectAuthError(await app.request('GET', '/v1/health', { key: account.testKey }), 'api_key_revoked');
      const gql = await app.graphql('{ health { status } }', {}, account.testKey);
      expect(gql.status).toBe(401);
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'UNAUTHENTICATED', errorCode: 'api_key_revoked' });

      expect((await app.request('GET', '/v1/leads', { key: account.liveKey })).status).toBe(200);
      // Revoking again keeps the first revocation time.
      const again = await new ApiKeyService(app.orm.em.fork()).revoke(key.id);
      expect(again.revokedAt?.toISOString()).toBe(revoked.revokedAt?.toISOString());
    });
  });

  describe('last_used_at', () => {
    it('is empty for a new key and set once the key is used', async () => {
      const account = await app.createAccount();
      expect((await keyRow(account.testKey)).lastUsedAt ?? null).toBeNull();
      const before = Date.now();
      expect((await app.request('GET', '/v1/leads', { key: account.testKey })).status).toBe(200);
      const after = Date.now();
      // Written beside the request, not inside it: wait briefly for it to land.
      let lastUsedAt: Date | null | undefined;
      for (let i = 0; i < 50 && !lastUsedAt; i++) {
        lastUsedAt = (await keyRow(account.testKey)).lastUsedAt;
        if (!lastUsedAt) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(lastUsedAt).toBeInstanceOf(Date);
      expect(lastUsedAt!.getTime()).toBeGreaterThanOrEqual(before - 5);
      expect(lastUsedAt!.getTime()).toBeLessThanOrEqual(after + 5);
      // The other key was not used.
      expect((await keyRow(account.liveKey)).lastUsedAt ?? null).toBeNull();
    });

    it('is not set by a failed attempt with a revoked key', async () => {
      const account = await app.createAccount();
      const key = await keyRow(account.testKey);
      await new ApiKeyService(app.orm.em.fork()).revoke(key.id);
      await app.request('GET', '/v1/leads', { key: account.testKey });
      // A later request's note of use has landed, so one this attempt made before its answer would have too.
      expect((await app.request('GET', '/v1/leads', { key: account.liveKey })).status).toBe(200);
      await waitFor("the live key's use to be noted", async () => (await keyRow(account.liveKey)).lastUsedAt);
      expect((await keyRow(account.testKey)).lastUsedAt ?? null).toBeNull();
    });
  });

  describe('key storage', () => {
    it('keeps only a hash of each key: no column of any table holds the secret', async () => {
      const account = await app.createAccount();
      await app.request('GET', '/v1/leads', { key: account.testKey }); // sets last_used_at too
      const connection = app.orm.em.getConnection();
      const tables = (await connection.execute(
        "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
      )) as Array<{ table_name: string }>;
      expect(tables.map((t) => t.table_name)).toContain('api_keys');
      const secrets = [account.testKey, account.liveKey].flatMap((key) => [key, key.slice('sk_test_'.length)]);
      for (const { table_name } of tables) {
        const rows = await connection.execute(`select * from "${table_name}"`);
        const dump = JSON.stringify(rows);
        for (const secret of secrets) expect(dump).not.toContain(secret);
      }
      const [row] = (await connection.execute('select * from api_keys where id = ?', [(await keyRow(account.testKey)).id])) as Array<Record<string, unknown>>;
      expect(row).toMatchObject({ prefix: 'sk_test_', last4: account.testKey.slice(-4), type: 'test' });
      expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('finds a key by its current value and by a rolled old value, with its account', async () => {
      const account = await app.createAccount({ name: 'Lookup Ltd' });
      const keys = new ApiKeyService(app.orm.em.fork());
      const current = await keys.authenticate(`Bearer ${account.testKey}`);
      expect(current).toMatchObject({ livemode: false, keyHash: hashKey(account.testKey) });
      expect(current.key).toMatchObject({ prefix: 'sk_test_', last4: account.testKey.slice(-4) });
      expect(current.account).toMatchObject({ id: account.account.id, name: 'Lookup Ltd', plan: 'starter' });
      expect(current.account.createdAt).toBeInstanceOf(Date);
      expect(current.expiresAt).toBeUndefined();

      // Rolled with the old value kept an hour: both values find the key, the old one with its expiry.
      const { secret } = await new ApiKeyService(app.orm.em.fork()).roll(current.key!.id, 1);
      const old = await keys.authenticate(`Bearer ${account.testKey}`);
      expect(old.key!.id).toBe(current.key!.id);
      expect(old.expiresAt!.getTime()).toBeGreaterThan(Date.now());
      const renewed = await keys.authenticate(`Bearer ${secret}`);
      expect(renewed).toMatchObject({ livemode: false, keyHash: hashKey(secret) });
      expect(renewed.key!.id).toBe(current.key!.id);
      expect(renewed.expiresAt).toBeUndefined();
      await expect(keys.authenticate(`Bearer sk_test_${'x'.repeat(32)}`)).rejects.toMatchObject({ errorCode: 'api_key_invalid' });
    });

    it('creates keys of the documented shape, each different', async () => {
      const account = await app.createAccount();
      expect(account.testKey).toMatch(/^sk_test_[A-Za-z0-9]{32}$/);
      expect(account.liveKey).toMatch(/^sk_live_[A-Za-z0-9]{32}$/);
      expect(account.testKey.slice(8)).not.toBe(account.liveKey.slice(8));
    });
  });
});

describe('health', () => {
  let app: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createAccount();
  });
  afterAll(() => app.close());

  it('GET /v1/health with a key reports status, versions, database and uptime', async () => {
    for (const key of [owner.testKey, owner.liveKey]) {
      const response = await app.request('GET', '/v1/health', { key });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
      expect(response.body).toEqual({ status: 'ok', version: packageVersion, api_version: 'v1', database: 'ok', uptime_s: expect.any(Number) });
      expect(Number.isInteger(response.body.uptime_s)).toBe(true);
      expect(response.body.uptime_s).toBeGreaterThanOrEqual(0);
    }
  });

  it('GET /v1/health refuses query parameters it does not know', async () => {
    const response = await app.request('GET', '/v1/health?verbose=1', { key: owner.testKey });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'parameter_unknown', param: 'verbose' });
  });

  it('GET /v1/health without a key is 401', async () => {
    expectAuthError(await app.request('GET', '/v1/health'), 'api_key_missing');
  });

  it('/healthz and /readyz answer without a key', async () => {
    const live = await app.request('GET', '/healthz');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    const ready = await app.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', database: 'ok' });
    expect(ready.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('echoes a sane X-Request-Id and replaces an insane one', async () => {
    const echoed = await app.request('GET', '/v1/health', { key: owner.testKey, headers: { 'x-request-id': 'client-trace.123' } });
    expect(echoed.headers.get('x-request-id')).toBe('client-trace.123');
    const replaced = await app.request('GET', '/v1/health', { headers: { 'x-request-id': 'bad id <script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
    expect(replaced.body.error.request_id).toBe(replaced.headers.get('x-request-id'));
  });
});

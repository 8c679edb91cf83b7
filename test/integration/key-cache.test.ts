import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { KeyCache } from '../../src/auth/key-cache';
import { AccountService } from '../../src/modules/accounts/account.service';
import { ApiKey } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService, Authenticated, hashKey } from '../../src/modules/accounts/api-key.service';
import { Plan } from '../../src/modules/accounts/plan';
import { createRedis, redisReady } from '../../src/limits/counters';
import { DEFAULT_QUOTA_SETTINGS } from '../../src/limits/quota';
import { HttpResponse, startTestApp, TestApp, testRedisUrl } from '../helpers/app';
import { CliApi, CliHarness, startCliApi } from '../helpers/cli';

const REDIS_URL = testRedisUrl();

function expectRevoked(response: HttpResponse): void {
  expect(response.status).toBe(401);
  expect(response.body.error).toMatchObject({ type: 'authentication_error', code: 'api_key_revoked' });
}

/**
 * The gate keeps keys found valid in memory and uses them while the stamp in Redis is unchanged
 * (src/auth/key-cache.ts). What must hold: every change of a key or an account made through the
 * service or the CLI takes effect on the next request on every instance, as when each request
 * looked its key up; a stamp renewed by another process, seen only in Redis, is enough for that.
 */
(REDIS_URL ? describe : describe.skip)('API keys answered from memory, checked against the stamp in Redis', () => {
  const namespace = `kc-${randomUUID()}`;
  const stampKey = `${namespace}:auth-stamp`;
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    // Two instances sharing one Redis namespace, as two processes of one deployment.
    a = await startTestApp({ redisNamespace: namespace, quotaSettings: DEFAULT_QUOTA_SETTINGS });
    b = await startTestApp({ redisNamespace: namespace, quotaSettings: DEFAULT_QUOTA_SETTINGS });
    redis = createRedis(REDIS_URL!);
    expect(await redisReady(redis, 10_000)).toBe(true);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    redis?.disconnect();
  });

  const keyRow = (secret: string) => a.orm.em.fork().findOneOrFail(ApiKey, { secretHash: hashKey(secret) });
  const read = (app: TestApp, key: string) => app.request('GET', '/v1/leads', { key });
  /** Revokes by hand in SQL: no flush, so no stamp is renewed (what an operator's UPDATE would do). */
  const revokeBehindTheStamp = (secret: string) =>
    a.orm.em.getConnection().execute('update api_keys set revoked_at = now() where secret_hash = ?', [hashKey(secret)]);

  it('answers a kept key from memory until the stamp changes in Redis, then looks it up again on every instance', async () => {
    const owner = await a.createAccount();
    expect((await read(a, owner.liveKey)).status).toBe(200);
    expect((await read(b, owner.liveKey)).status).toBe(200);
    const stamp = await redis.get(stampKey);
    expect(stamp).toEqual(expect.any(String));

    await revokeBehindTheStamp(owner.liveKey);
    // Nothing renewed the stamp: both instances still answer the key from memory.
    expect((await read(a, owner.liveKey)).status).toBe(200);
    expect((await read(b, owner.liveKey)).status).toBe(200);

    // Another process renews the stamp: this process learns it from Redis alone.
    await redis.set(stampKey, `another-instance-${randomUUID()}`);
    expectRevoked(await read(a, owner.liveKey));
    expectRevoked(await read(b, owner.liveKey));
    // The account's other key is looked up again and still works.
    expect((await read(b, owner.testKey)).status).toBe(200);
  });

  it('a revocation through the service takes effect at once on both instances, on REST and GraphQL', async () => {
    const owner = await a.createAccount();
    for (const app of [a, b]) {
      expect((await read(app, owner.testKey)).status).toBe(200);
      expect((await app.graphql('{ health { status } }', {}, owner.testKey)).status).toBe(200);
    }
    const before = await redis.get(stampKey);
    await new ApiKeyService(b.orm.em.fork()).revoke((await keyRow(owner.testKey)).id);
    expect(await redis.get(stampKey)).not.toBe(before);
    for (const app of [b, a]) {
      expectRevoked(await read(app, owner.testKey));
      const gql = await app.graphql('{ health { status } }', {}, owner.testKey);
      expect(gql.status).toBe(401);
      expect(gql.body.errors[0].extensions).toMatchObject({ errorCode: 'api_key_revoked' });
    }
  });

  it('a rolled key: the old value without a grace period is refused at once, with one it works until then; the new value works', async () => {
    const owner = await a.createAccount();
    expect((await read(b, owner.liveKey)).status).toBe(200);
    const { secret } = await new ApiKeyService(a.orm.em.fork()).roll((await keyRow(owner.liveKey)).id, 0);
    expectRevoked(await read(b, owner.liveKey));
    expect((await read(b, secret)).status).toBe(200);

    const { secret: next } = await new ApiKeyService(a.orm.em.fork()).roll((await keyRow(secret)).id, 2);
    expect((await read(b, secret)).status).toBe(200); // the old value, within its two hours
    expect((await read(b, next)).status).toBe(200);
  });

  it('a plan change gives the new limits on the next request of either instance, and each request counts once', async () => {
    const owner = await a.createAccount({ plan: Plan.starter });
    const limit = (response: HttpResponse) => [response.headers.get('x-ratelimit-limit'), response.headers.get('x-ratelimit-remaining')];
    expect(limit(await read(a, owner.liveKey))).toEqual(['60', '59']);
    expect(limit(await read(b, owner.liveKey))).toEqual(['60', '58']);
    await new AccountService(a.orm.em.fork()).setPlan(owner.account.email, Plan.professional);
    expect(limit(await read(b, owner.liveKey))).toEqual(['300', '297']);
    expect(limit(await read(a, owner.liveKey))).toEqual(['300', '296']);

    // The same change made by another process: this one sees only the stamp change in Redis. Each
    // instance's kept key had the professional plan: its count is given back, and the request
    // counted again, once, under the new plan.
    await a.orm.em.getConnection().execute(`update accounts set plan = 'enterprise' where id = ?`, [owner.account.id]);
    await redis.set(stampKey, `another-instance-${randomUUID()}`);
    expect(limit(await read(b, owner.liveKey))).toEqual(['1000', '995']);
    expect(limit(await read(a, owner.liveKey))).toEqual(['1000', '994']);
  });

  it('a change inside a transaction renews the stamp when the root transaction commits, and not at all when it rolls back', async () => {
    const owner = await a.createAccount();
    expect((await read(b, owner.liveKey)).status).toBe(200);
    const id = (await keyRow(owner.liveKey)).id;
    const before = await redis.get(stampKey);

    await expect(
      a.orm.em.fork().transactional(async (em) => {
        await em.transactional((inner) => new ApiKeyService(inner).revoke(id)); // a savepoint
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await redis.get(stampKey)).toBe(before);
    expect((await read(b, owner.liveKey)).status).toBe(200);

    let duringTransaction: string | null = null;
    await a.orm.em.fork().transactional(async (em) => {
      await em.transactional((inner) => new ApiKeyService(inner).revoke(id));
      duringTransaction = await redis.get(stampKey);
      // Not committed yet: the key still works on B, from memory or from the database.
      expect((await read(b, owner.liveKey)).status).toBe(200);
    });
    expect(duringTransaction).toBe(before);
    expect(await redis.get(stampKey)).not.toBe(before);
    expectRevoked(await read(b, owner.liveKey));
  });

  it('a request with an Idempotency-Key changing nothing of keys leaves the stamp alone; creating keys and accounts renews nothing', async () => {
    const before = await redis.get(stampKey);
    const owner = await a.createAccount();
    await new ApiKeyService(a.orm.em.fork()).create(owner.account, 'test' as never, 'Another');
    const created = await a.request('POST', '/v1/leads', {
      key: owner.testKey,
      body: { company: 'Stamp Co', contact_email: `stamp-${randomUUID()}@co.test` },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(created.status).toBe(201);
    expect(await redis.get(stampKey)).toBe(before);
  });
});

(REDIS_URL ? describe : describe.skip)('the key stamp without a reachable Redis', () => {
  it('keeps nothing: the stamp cannot be read, and a failed check forgets every kept key', async () => {
    // Nothing listens on port 1; with no offline queue every command fails at once.
    const dead = createRedis('redis://127.0.0.1:1');
    dead.on('error', () => undefined);
    try {
      const cache = new KeyCache(dead, `dead-${randomUUID()}`);
      expect(await cache.stampBeforeLookup()).toBeUndefined();
      const auth = { livemode: false } as Authenticated;
      cache.keep('hash', auth, 'stamp');
      const entry = cache.find('hash')!;
      expect(entry.auth).toBe(auth);
      expect(await cache.stillCurrent(entry)).toBe(false);
      expect(cache.find('hash')).toBeUndefined();
      await expect(cache.renew()).rejects.toThrow();
    } finally {
      dead.disconnect();
    }
  });

  it('forgets a kept key after its time to live, and a rolled value at its expiry', async () => {
    const live = createRedis(REDIS_URL!);
    expect(await redisReady(live, 10_000)).toBe(true);
    try {
      const cache = new KeyCache(live, `ttl-${randomUUID()}`, undefined, 50);
      cache.keep('short', { livemode: false } as Authenticated, 'stamp');
      expect(cache.find('short')).toBeDefined();
      const keptAt = Date.now();
      await new Promise<void>((resolve) => {
        const poll = () => (Date.now() - keptAt > 50 ? resolve() : setImmediate(poll));
        poll();
      });
      expect(cache.find('short')).toBeUndefined();
      cache.keep('rolled', { livemode: false, expiresAt: new Date(Date.now() - 1) } as Authenticated, 'stamp');
      expect(cache.find('rolled')).toBeUndefined();
    } finally {
      live.disconnect();
    }
  });
});

(REDIS_URL ? describe : describe.skip)('the CLI renews the key stamp of running instances', () => {
  const cli = new CliHarness();
  let api: CliApi;

  beforeAll(async () => {
    await cli.start();
    api = await startCliApi(cli.databaseUrl, { redisUrl: REDIS_URL });
  });
  afterAll(async () => {
    await api?.stop();
    await cli.stop();
  });

  it('keys revoke and keys roll, run in another process, take effect on the next request', async () => {
    const email = cli.uniqueEmail('stamp');
    cli.createAccount(email);
    const created = cli.run('keys', 'create', '--email', email, '--type', 'test', '--name', 'Kept');
    expect(created.status).toBe(0);
    const secret = created.stdout.trim();
    expect((await api.call('/v1/leads', secret)).status).toBe(200);
    expect((await api.call('/v1/leads', secret)).status).toBe(200);
    const id = (await cli.db.query('select id from api_keys where secret_hash = $1', [hashKey(secret)])).rows[0].id as string;

    const rolled = cli.runWith({ REDIS_URL: REDIS_URL! }, 'keys', 'roll', '--id', id);
    expect(rolled.status).toBe(0);
    const next = rolled.stdout.trim();
    expect((await api.call('/v1/leads', secret)).body.error).toMatchObject({ code: 'api_key_revoked' });
    expect((await api.call('/v1/leads', next)).status).toBe(200);

    expect(cli.runWith({ REDIS_URL: REDIS_URL! }, 'keys', 'revoke', '--id', id).status).toBe(0);
    const refused = await api.call('/v1/leads', next);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'api_key_revoked' });
  });
});

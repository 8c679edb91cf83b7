import { randomUUID } from 'node:crypto';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { REPEATED_REFUSAL_PAUSE_MS } from '../../src/auth/authenticate';
import { DEFAULT_QUOTA_SETTINGS } from '../../src/limits/quota';
import { AccountService } from '../../src/modules/accounts/account.service';
import { Plan } from '../../src/modules/accounts/plan';
import { HttpResponse, startTestApp, TestAccount, TestApp, TestAppOptions, testRedisUrl } from '../helpers/app';

/**
 * CONTRACT §11 through real HTTP: plan quotas, headers, daily caps, the per-address limit for
 * requests without a valid key, and per-operation limits. Everything that can run on one instance
 * runs twice, once counting in process memory and once in Redis; what needs several instances to
 * agree needs Redis.
 */

const REDIS_URL = testRedisUrl();
const NO_REDIS = 'SKIPPED: REDIS_URL is not set (CI sets redis://127.0.0.1:6379)';
const MISSING_LEAD = '/v1/leads/lead_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const nowS = () => Date.now() / 1000;

const header = (response: HttpResponse, name: string): string => {
  const value = response.headers.get(name);
  expect(value).not.toBeNull();
  return value!;
};
const intHeader = (response: HttpResponse, name: string): number => {
  const value = header(response, name);
  expect(value).toMatch(/^\d+$/);
  return Number(value);
};

interface Window {
  limit: number;
  remaining: number;
  reset: number;
}

/** The three X-RateLimit headers, present and integers. */
function rateLimit(response: HttpResponse): Window {
  return {
    limit: intHeader(response, 'x-ratelimit-limit'),
    remaining: intHeader(response, 'x-ratelimit-remaining'),
    reset: intHeader(response, 'x-ratelimit-reset'),
  };
}

/** A one-minute window's reset: whole epoch seconds after the request was sent, at most a minute after it was answered. */
function expectMinuteReset(reset: number, sentAtS: number, answeredAtS: number): void {
  expect(reset).toBeGreaterThan(Math.floor(sentAtS));
  expect(reset).toBeLessThanOrEqual(Math.ceil(answeredAtS) + 60);
}

const nextUtcMidnight = (): number => {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) / 1000;
};

/** The contract's REST error shape with the status, type and code expected. */
function expectRestError(response: HttpResponse, status: number, type: string, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(response.body)).toEqual(['error']);
  const error = response.body.error;
  expect(error).toMatchObject({ type, code });
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.request_id).toMatch(/^req_/);
  expect(response.headers.get('x-request-id')).toBe(error.request_id);
  expect(JSON.stringify(response.body)).not.toMatch(/\bat .+\.(ts|js):\d+/);
}

/** A 429 from the gate: contract error, and Retry-After in whole seconds, at least one. */
function expectThrottled(response: HttpResponse, code = 'rate_limit_exceeded'): number {
  expectRestError(response, 429, 'rate_limit_error', code);
  const retryAfter = intHeader(response, 'retry-after');
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  return retryAfter;
}

const backends = [
  { name: 'in-memory counters', redis: false },
  { name: REDIS_URL ? 'Redis counters' : `Redis counters (${NO_REDIS})`, redis: true },
];

for (const backend of backends) {
  (backend.redis && !REDIS_URL ? describe.skip : describe)(`rate limits with ${backend.name}`, () => {
    const apps: TestApp[] = [];
    /** An app with the real quota settings, counting in this backend; its own namespace unless one is given. */
    const start = async (options: TestAppOptions = {}): Promise<TestApp> => {
      const app = await startTestApp({
        quotaSettings: DEFAULT_QUOTA_SETTINGS,
        redisNamespace: backend.redis ? `rl-${randomUUID()}` : undefined,
        ...options,
      });
      apps.push(app);
      return app;
    };
    let app: TestApp;

    beforeAll(async () => {
      app = await start();
    });
    afterAll(async () => {
      await Promise.all(apps.map((each) => each.close()));
    });

    const accounts = () => new AccountService(app.orm.em.fork());

    describe('headers', () => {
      it('are on every response, errors included, and Remaining drops by one per request of the key', async () => {
        const owner = await app.createAccount({ plan: Plan.starter });
        const key = owner.liveKey;
        const sentAt = nowS();
        const responses: Array<[string, HttpResponse, number]> = [
          ['200 REST list', await app.request('GET', '/v1/leads', { key }), 200],
          ['404 missing lead', await app.request('GET', MISSING_LEAD, { key }), 404],
          ['404 unknown /v1 route', await app.request('GET', '/v1/no-such-route', { key }), 404],
          ['400 malformed JSON', await app.request('POST', '/v1/leads', { key, rawBody: '{nope', headers: { 'content-type': 'application/json' } }), 400],
          ['400 missing field', await app.request('POST', '/v1/leads', { key, body: { company: 'Acme' } }), 400],
          ['415 wrong content type', await app.request('POST', '/v1/leads', { key, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415],
          ['201 create', await app.request('POST', '/v1/leads', { key, body: { company: 'Acme', contact_email: 'a@acme.test' } }), 201],
          ['200 GraphQL', await app.graphql('{ health { status } }', {}, key), 200],
          ['400 GraphQL syntax error', await app.graphql('{ health { status ', {}, key), 400],
        ];
        const answeredAt = nowS();
        const windows = responses.map(([label, response, status]) => {
          expect([label, response.status]).toEqual([label, status]);
          return rateLimit(response);
        });
        windows.forEach((window, i) => {
          expect(window.limit).toBe(60);
          expect(window.remaining).toBe(59 - i);
          expectMinuteReset(window.reset, sentAt, answeredAt);
        });
        // One fixed window: every response names the same reset time.
        expect(new Set(windows.map((w) => w.reset)).size).toBe(1);
      });

      it('describe the per-address window on 401s, which count against the address', async () => {
        const fresh = await start();
        const sentAt = nowS();
        const bad = await fresh.request('GET', '/v1/leads', { key: `sk_live_${'Z'.repeat(32)}` });
        const missing = await fresh.request('GET', '/v1/leads');
        const gql = await fresh.graphql('{ health { status } }', {}, 'sk_test_nope');
        const answeredAt = nowS();
        expectRestError(bad, 401, 'authentication_error', 'api_key_invalid');
        expectRestError(missing, 401, 'authentication_error', 'api_key_missing');
        expect(gql.status).toBe(401);
        expect(gql.body.errors[0].extensions).toMatchObject({ code: 'UNAUTHENTICATED', errorCode: 'api_key_invalid' });
        const windows = [bad, missing, gql].map(rateLimit);
        expect(windows.map((w) => [w.limit, w.remaining])).toEqual([
          [30, 29],
          [30, 28],
          [30, 27],
        ]);
        for (const window of windows) expectMinuteReset(window.reset, sentAt, answeredAt);
      });

      it('are on 429s: Limit, Remaining 0, the same Reset, and Retry-After up to that reset', async () => {
        const owner = await app.createAccount({ plan: Plan.starter });
        const sentAt = nowS();
        const allowed = await Promise.all(Array.from({ length: 60 }, () => app.request('GET', '/v1/leads', { key: owner.liveKey })));
        const refused = await app.request('GET', '/v1/leads', { key: owner.liveKey });
        const refusedGql = await app.graphql('{ health { status } }', {}, owner.liveKey);
        const answeredAt = nowS();
        expect(allowed.map((r) => r.status)).toEqual(Array(60).fill(200));
        const retryAfter = expectThrottled(refused);
        const window = rateLimit(refused);
        expect(window).toMatchObject({ limit: 60, remaining: 0 });
        expectMinuteReset(window.reset, sentAt, answeredAt);
        expect(window.reset).toBe(rateLimit(allowed[0]).reset);
        // At most the window, plus the second that rounding Reset up to a whole second can add.
        expect(retryAfter).toBeLessThanOrEqual(61);
        expect(Math.abs(nowS() + retryAfter - window.reset)).toBeLessThanOrEqual(2);

        // GraphQL: the same refusal in the GraphQL shape, with the same headers.
        expect(refusedGql.status).toBe(429);
        expect(refusedGql.body.data).toBeUndefined();
        expect(refusedGql.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', errorCode: 'rate_limit_exceeded', type: 'rate_limit_error' });
        expect(intHeader(refusedGql, 'retry-after')).toBeGreaterThanOrEqual(1);
        expect(rateLimit(refusedGql)).toMatchObject({ limit: 60, remaining: 0, reset: window.reset });
      });

      it('are absent from /healthz and /readyz, which are not limited', async () => {
        const healthz = await app.request('GET', '/healthz');
        expect(healthz.status).toBe(200);
        expect(healthz.headers.get('x-ratelimit-limit')).toBeNull();
        expect((await app.request('GET', '/readyz')).status).toBe(200);
      });
    });

    describe('test mode', () => {
      it('allows exactly 100 per minute whatever the plan, counted apart from live mode', async () => {
        const owner = await app.createAccount({ plan: Plan.professional });
        const burst = await Promise.all(Array.from({ length: 100 }, () => app.request('GET', '/v1/leads', { key: owner.testKey })));
        expect(burst.map((r) => r.status)).toEqual(Array(100).fill(200));
        const windows = burst.map(rateLimit);
        for (const window of windows) expect(window.limit).toBe(100);
        // Exact under concurrency: each request took its own slot.
        expect(windows.map((w) => w.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));

        const over = await app.request('GET', '/v1/leads', { key: owner.testKey });
        expectThrottled(over);
        expect(rateLimit(over)).toMatchObject({ limit: 100, remaining: 0 });

        // Live mode of the same account is untouched and follows the plan.
        const live = await app.request('GET', '/v1/leads', { key: owner.liveKey });
        expect(live.status).toBe(200);
        expect(rateLimit(live)).toMatchObject({ limit: 300, remaining: 299 });
        // ...and the test key is still refused.
        expectThrottled(await app.request('GET', '/v1/leads', { key: owner.testKey }));
      });

      it('is 100 for starter and enterprise accounts too, and exhausting live leaves test alone', async () => {
        const starter = await app.createAccount({ plan: Plan.starter });
        const enterprise = await app.createAccount({ plan: Plan.enterprise });
        expect(rateLimit(await app.request('GET', '/v1/leads', { key: starter.testKey }))).toMatchObject({ limit: 100, remaining: 99 });
        expect(rateLimit(await app.request('GET', '/v1/leads', { key: enterprise.testKey }))).toMatchObject({ limit: 100, remaining: 99 });

        const live = await Promise.all(Array.from({ length: 61 }, () => app.request('GET', '/v1/leads', { key: starter.liveKey })));
        expect(live.filter((r) => r.status === 200)).toHaveLength(60);
        expect(live.filter((r) => r.status === 429)).toHaveLength(1);
        const test = await app.request('GET', '/v1/leads', { key: starter.testKey });
        expect(test.status).toBe(200);
        expect(rateLimit(test)).toMatchObject({ limit: 100, remaining: 98 });
      });
    });

    describe('plans', () => {
      it.each([
        [Plan.starter, 60],
        [Plan.professional, 300],
        [Plan.enterprise, 1000],
      ])('%s live keys get %i per minute', async (plan, limit) => {
        const owner = await app.createAccount({ plan });
        const sentAt = nowS();
        const first = await app.request('GET', '/v1/leads', { key: owner.liveKey });
        const second = await app.request('GET', '/v1/health', { key: owner.liveKey });
        const answeredAt = nowS();
        expect([first.status, second.status]).toEqual([200, 200]);
        expect(rateLimit(first)).toMatchObject({ limit, remaining: limit - 1 });
        expect(rateLimit(second)).toMatchObject({ limit, remaining: limit - 2 });
        // The minute is the tighter window for every plan's defaults, so the headers describe it.
        expectMinuteReset(rateLimit(second).reset, sentAt, answeredAt);
      });

      it('setPlan and setLimits take effect on the next request, keeping the count', async () => {
        const owner = await app.createAccount({ plan: Plan.starter });
        const email = owner.account.email;
        const get = () => app.request('GET', '/v1/leads', { key: owner.liveKey });
        expect(rateLimit(await get())).toMatchObject({ limit: 60, remaining: 59 });
        expect(rateLimit(await get())).toMatchObject({ limit: 60, remaining: 58 });

        await accounts().setPlan(email, Plan.professional);
        expect(rateLimit(await get())).toMatchObject({ limit: 300, remaining: 297 });
        await accounts().setPlan(email, Plan.enterprise);
        expect(rateLimit(await get())).toMatchObject({ limit: 1000, remaining: 996 });
        await accounts().setPlan(email, Plan.starter);
        expect(rateLimit(await get())).toMatchObject({ limit: 60, remaining: 55 });

        // A custom per-minute limit below what was used: the next request is refused at once.
        await accounts().setLimits(email, { perMinute: 6 });
        const sixth = await get();
        expect(sixth.status).toBe(200);
        expect(rateLimit(sixth)).toMatchObject({ limit: 6, remaining: 0 });
        const seventh = await get();
        expectThrottled(seventh);
        expect(rateLimit(seventh)).toMatchObject({ limit: 6, remaining: 0 });

        // Back to the plan's limit: allowed again, with the count of the minute kept.
        await accounts().setLimits(email, 'reset');
        const eighth = await get();
        expect(eighth.status).toBe(200);
        expect(rateLimit(eighth)).toMatchObject({ limit: 60, remaining: 52 });
      });
    });

    describe('a client that does not wait for Retry-After', () => {
      it('gets its next 429s after a pause, with the same window, and a changed limit is seen at once', async () => {
        const owner = await app.createAccount({ plan: Plan.starter });
        await accounts().setLimits(owner.account.email, { perMinute: 2 });
        const get = async () => {
          const started = performance.now();
          const response = await app.request('GET', '/v1/leads', { key: owner.liveKey });
          return { response, ms: performance.now() - started };
        };
        expect((await get()).response.status).toBe(200);
        expect((await get()).response.status).toBe(200);
        const first = await get();
        const retryAfter = expectThrottled(first.response);
        // Asked again before Retry-After: refused from the instance's memory, after a pause (a lower bound, so a slow machine cannot fail it).
        const again = await get();
        expectThrottled(again.response);
        expect(again.ms).toBeGreaterThanOrEqual(REPEATED_REFUSAL_PAUSE_MS - 50);
        expect(rateLimit(again.response)).toEqual(rateLimit(first.response));
        expect(intHeader(again.response, 'retry-after')).toBeLessThanOrEqual(retryAfter);
        // A raised limit is counted afresh at once, not refused from memory.
        await accounts().setLimits(owner.account.email, { perMinute: 10 });
        const raised = await get();
        expect(raised.response.status).toBe(200);
        expect(rateLimit(raised.response)).toMatchObject({ limit: 10 });
      });
    });

    describe('daily cap', () => {
      it('refuses the request after the cap with daily_quota_exceeded, and the headers describe the day', async () => {
        const owner = await app.createAccount({ plan: Plan.starter });
        const email = owner.account.email;
        await accounts().setLimits(email, { perDay: 3 });
        const get = () => app.request('GET', '/v1/leads', { key: owner.liveKey });
        const midnight = nextUtcMidnight();

        for (const remaining of [2, 1, 0]) {
          const response = await get();
          expect(response.status).toBe(200);
          expect(rateLimit(response)).toEqual({ limit: 3, remaining, reset: midnight });
        }
        const fourth = await get();
        const retryAfter = expectThrottled(fourth, 'daily_quota_exceeded');
        expect(rateLimit(fourth)).toEqual({ limit: 3, remaining: 0, reset: midnight });
        // Retry-After points at midnight UTC, not at the end of the minute.
        expect(Math.abs(nowS() + retryAfter - midnight)).toBeLessThanOrEqual(2);

        // Test mode has no daily cap and is not touched.
        expect((await app.request('GET', '/v1/leads', { key: owner.testKey })).status).toBe(200);

        // perDay: null removes the cap: allowed again, and the headers describe the minute.
        await accounts().setLimits(email, { perDay: null });
        const uncapped = await get();
        expect(uncapped.status).toBe(200);
        expect(rateLimit(uncapped)).toMatchObject({ limit: 60, remaining: 55 });
        expect(rateLimit(uncapped).reset).toBeLessThan(nowS() + 61);

        // The cap back: the day's count was kept, so the next request is refused at once.
        await accounts().setLimits(email, { perDay: 3 });
        expectThrottled(await get(), 'daily_quota_exceeded');
        // The plan's own daily cap (10,000 for starter) again: allowed, headers back on the minute.
        await accounts().setLimits(email, 'reset');
        const planCap = await get();
        expect(planCap.status).toBe(200);
        expect(rateLimit(planCap).limit).toBe(60);
      });
    });

    describe('requests without a valid key', () => {
      it('are limited to 30 per minute per address; a valid key from that address is judged by its own quota alone', async () => {
        const fresh = await start();
        const owner = await fresh.createAccount();
        // Valid keys do not count against the address.
        const valid = await Promise.all(Array.from({ length: 40 }, () => fresh.request('GET', '/v1/leads', { key: owner.testKey })));
        expect(valid.map((r) => r.status)).toEqual(Array(40).fill(200));

        const guesses = await Promise.all(
          Array.from({ length: 30 }, (_, i) => fresh.request('GET', '/v1/leads', { key: `sk_live_${String(i).padStart(32, 'Q')}` })),
        );
        for (const guess of guesses) expectRestError(guess, 401, 'authentication_error', 'api_key_invalid');
        expect(guesses.map((r) => rateLimit(r).remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));

        const thirtyFirst = await fresh.request('GET', '/v1/leads', { key: `sk_live_${'Q'.repeat(32)}` });
        expectThrottled(thirtyFirst);
        expect(rateLimit(thirtyFirst)).toMatchObject({ limit: 30, remaining: 0 });
        expectThrottled(await fresh.request('GET', '/v1/leads'));
        expectThrottled(await fresh.request('GET', '/v1/leads', { key: 'sk_test_malformed' }));

        // Someone else behind the same address (an office, a NAT) with a valid key is not locked
        // out by those failures: its own plan quota judges it, on REST and GraphQL alike.
        const owner2 = await fresh.createAccount({ plan: Plan.starter });
        const withValidKey = await fresh.request('GET', '/v1/leads', { key: owner2.liveKey });
        expect(withValidKey.status).toBe(200);
        expect(rateLimit(withValidKey)).toMatchObject({ limit: 60, remaining: 59 });
        const gql = await fresh.graphql('{ health { status } }', {}, owner2.liveKey);
        expect(gql.status).toBe(200);
        expect(rateLimit(gql)).toMatchObject({ limit: 60, remaining: 58 });
        // ...while the address stays refused for requests without a valid key.
        expectThrottled(await fresh.request('GET', '/v1/leads', { key: `sk_live_${'R'.repeat(32)}` }));

        // Health checks for load balancers are not limited.
        for (let i = 0; i < 3; i++) {
          expect((await fresh.request('GET', '/healthz')).status).toBe(200);
          expect((await fresh.request('GET', '/readyz')).status).toBe(200);
        }
      });

      it('count IPv6 clients by their /64', async () => {
        const fresh = await start({ env: { TRUST_PROXY: 'loopback' } });
        const from = (address: string) => ({ 'x-forwarded-for': address });
        for (let i = 0; i < 30; i++) {
          const guess = await fresh.request('GET', '/v1/leads', { headers: from(`2001:db8:1:2::${(i + 1).toString(16)}`) });
          expect(guess.status).toBe(401);
        }
        // Another address of the same /64 has no fresh allowance; another /64 has.
        expectThrottled(await fresh.request('GET', '/v1/leads', { headers: from('2001:db8:1:2:ffff:ffff:ffff:ffff') }));
        expect((await fresh.request('GET', '/v1/leads', { headers: from('2001:db8:1:3::1') })).status).toBe(401);
        // IPv4 addresses stay one each.
        expect((await fresh.request('GET', '/v1/leads', { headers: from('198.51.100.7') })).status).toBe(401);
      });
    });

    describe('GraphQL root fields', () => {
      const cost = (response: HttpResponse) => intHeader(response, 'x-ratelimit-cost');
      let counter = 0;
      const creates = (n: number) =>
        Array.from({ length: n }, () => {
          counter += 1;
          return `c${counter}: createLead(input: { company: "Root ${counter}", contactEmail: "root${counter}@root.test" }) { id }`;
        }).join(' ');
      const leadCount = async (owner: TestAccount) =>
        (await app.orm.em.getConnection().execute<Array<{ n: number }>>('select count(*)::int as n from leads where account_id = ?', [owner.account.id]))[0].n;

      it('charge a request once per root field it selects, aliases and fragments included, and say so in the headers', async () => {
        const owner = await app.createAccount({ plan: Plan.starter });
        const key = owner.liveKey;
        const five = await app.graphql(
          'query { a: health { status } b: health { status } c: leads { hasMore } ...More } fragment More on Query { d: deals { hasMore } ... on Query { e: agents { hasMore } } }',
          {},
          key,
        );
        expect(five.status).toBe(200);
        expect(five.body.errors).toBeUndefined();
        expect(cost(five)).toBe(5);
        expect(rateLimit(five)).toMatchObject({ limit: 60, remaining: 55 });
        const one = await app.graphql('{ health { status } }', {}, key);
        expect(cost(one)).toBe(1);
        expect(rateLimit(one)).toMatchObject({ remaining: 54 });
        // A document that fails before its fields are known still counts once.
        expect(rateLimit(await app.graphql('{ health { status ', {}, key))).toMatchObject({ remaining: 53 });
        // REST routes stay one each.
        expect(rateLimit(await app.request('GET', '/v1/leads', { key }))).toMatchObject({ remaining: 52 });
      });

      it('refuse a request the allowance cannot cover whole (429) before anything runs, and give its charge back', async () => {
        const owner = await app.createAccount({ plan: Plan.starter });
        await accounts().setLimits(owner.account.email, { perMinute: 10 });
        const key = owner.liveKey;
        for (let i = 0; i < 3; i++) expect((await app.request('GET', '/v1/leads', { key })).status).toBe(200);

        const over = await app.graphql(`mutation { ${creates(8)} }`, {}, key);
        expect(over.status).toBe(429);
        expect(over.body.data ?? null).toBeNull();
        expect(over.body.errors).toHaveLength(1);
        expect(over.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', errorCode: 'rate_limit_exceeded', type: 'rate_limit_error' });
        expect(over.body.errors[0].message).toMatch(/8 root fields/);
        expect(intHeader(over, 'retry-after')).toBeGreaterThanOrEqual(1);
        expect(cost(over)).toBe(8);
        // Nothing ran, and only the gate's count of the request stays.
        expect(await leadCount(owner)).toBe(0);
        expect(rateLimit(over)).toMatchObject({ limit: 10, remaining: 6 });

        const fits = await app.graphql(`mutation { ${creates(6)} }`, {}, key);
        expect(fits.status).toBe(200);
        expect(fits.body.errors).toBeUndefined();
        expect(await leadCount(owner)).toBe(6);
        expect(rateLimit(fits)).toMatchObject({ limit: 10, remaining: 0 });
        expectThrottled(await app.request('GET', '/v1/leads', { key }));
      });
    });

    describe('per-operation limits', () => {
      let limited: TestApp;
      let counter = 0;
      const leadFor = async (owner: TestAccount, key = owner.testKey): Promise<string> => {
        counter += 1;
        const created = await limited.request('POST', '/v1/leads', { key, body: { company: `Op ${counter}`, contact_email: `op${counter}@op.test` } });
        expect(created.status).toBe(201);
        return created.body.id;
      };
      const gqlScore = (aliases: string[], id: string, key: string) =>
        limited.graphql(`query { ${aliases.map((alias) => `${alias}: leadScore(id: "${id}") { score }`).join(' ')} }`, {}, key);

      beforeAll(async () => {
        limited = await start({ quotaSettings: undefined, operationLimits: { ...OPERATION_LIMITS, leadScore: { windowS: 60, max: 3 } } });
      });

      it('REST and GraphQL share one count; over it, REST is 429 with Retry-After 60 and GraphQL RATE_LIMITED', async () => {
        const owner = await limited.createAccount();
        const id = await leadFor(owner);
        expect((await limited.request('GET', `/v1/leads/${id}/score`, { key: owner.testKey })).status).toBe(200);
        expect((await limited.request('GET', `/v1/leads/${id}/score`, { key: owner.testKey })).status).toBe(200);
        const third = await gqlScore(['s'], id, owner.testKey);
        expect(third.status).toBe(200);
        expect(third.body.errors).toBeUndefined();
        expect(typeof third.body.data.s.score).toBe('number');

        const restOver = await limited.request('GET', `/v1/leads/${id}/score`, { key: owner.testKey });
        expectRestError(restOver, 429, 'rate_limit_error', 'rate_limit_exceeded');
        expect(header(restOver, 'retry-after')).toBe('60');
        expect(restOver.body.error.message).toMatch(/leadScore/);

        const gqlOver = await gqlScore(['s'], id, owner.testKey);
        // On /graphql too the answer is 429 with Retry-After, and `http` stays out of the body.
        expect(gqlOver.status).toBe(429);
        expect(header(gqlOver, 'retry-after')).toBe('60');
        expect(gqlOver.body.errors[0].extensions).not.toHaveProperty('http');
        expect(gqlOver.body.data?.s ?? null).toBeNull();
        expect(gqlOver.body.errors).toHaveLength(1);
        expect(gqlOver.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', errorCode: 'rate_limit_exceeded', type: 'rate_limit_error' });
        expect(gqlOver.body.errors[0].path).toEqual(['s']);

        // Other operations of the account go on; the count is per account and mode.
        expect((await limited.request('GET', `/v1/leads/${id}`, { key: owner.testKey })).status).toBe(200);
        const liveId = await leadFor(owner, owner.liveKey);
        expect((await limited.request('GET', `/v1/leads/${liveId}/score`, { key: owner.liveKey })).status).toBe(200);
        const other = await limited.createAccount();
        expect((await limited.request('GET', `/v1/leads/${await leadFor(other)}/score`, { key: other.testKey })).status).toBe(200);
      });

      it('counts every alias of one GraphQL operation', async () => {
        const owner = await limited.createAccount();
        const id = await leadFor(owner);
        // Exactly the limit in one operation: every alias runs.
        const three = await gqlScore(['a', 'b', 'c'], id, owner.testKey);
        expect(three.body.errors).toBeUndefined();
        expect(Object.keys(three.body.data).sort()).toEqual(['a', 'b', 'c']);
        for (const alias of ['a', 'b', 'c']) expect(typeof three.body.data[alias].score).toBe('number');
        // ...and all three counted: the next call, on either surface, is over.
        expectRestError(await limited.request('GET', `/v1/leads/${id}/score`, { key: owner.testKey }), 429, 'rate_limit_error', 'rate_limit_exceeded');
        const gqlOver = await gqlScore(['x'], id, owner.testKey);
        expect(gqlOver.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', errorCode: 'rate_limit_exceeded' });
      });

      it('refuses the aliases past the limit within one operation', async () => {
        const owner = await limited.createAccount();
        const id = await leadFor(owner);
        expect((await gqlScore(['a', 'b'], id, owner.testKey)).body.errors).toBeUndefined();
        // One call left: of two more aliases one is refused. leadScore is non-null, so the refusal
        // nulls the whole result, as GraphQL prescribes.
        const next = await gqlScore(['c', 'd'], id, owner.testKey);
        expect(next.status).toBe(429);
        expect(next.body.data).toBeNull();
        expect(next.body.errors).toHaveLength(1);
        expect(next.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', errorCode: 'rate_limit_exceeded', retryAfter: 60 });
        expect(['c', 'd']).toContain(next.body.errors[0].path[0]);

        // Many aliases at once on a fresh count: refused too, never more than the limit let through.
        const other = await limited.createAccount();
        const otherId = await leadFor(other);
        const six = await gqlScore(['a', 'b', 'c', 'd', 'e', 'f'], otherId, other.testKey);
        expect(six.body.data).toBeNull();
        expect(six.body.errors.length).toBeGreaterThanOrEqual(1);
        for (const error of six.body.errors) expect(error.extensions.code).toBe('RATE_LIMITED');
        expectRestError(await limited.request('GET', `/v1/leads/${otherId}/score`, { key: other.testKey }), 429, 'rate_limit_error', 'rate_limit_exceeded');
      });
    });
  });
}

(REDIS_URL ? describe : describe.skip)(`rate limits across instances sharing Redis${REDIS_URL ? '' : ` (${NO_REDIS})`}`, () => {
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    const redisNamespace = `rl-shared-${randomUUID()}`;
    first = await startTestApp({ quotaSettings: DEFAULT_QUOTA_SETTINGS, redisNamespace });
    second = await startTestApp({ quotaSettings: DEFAULT_QUOTA_SETTINGS, redisNamespace });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  it('lets exactly 60 of 80 concurrent starter requests through, 40 to each instance', async () => {
    const owner = await first.createAccount({ plan: Plan.starter });
    const sentAt = nowS();
    const responses = await Promise.all(
      Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? first : second).request('GET', '/v1/leads', { key: owner.liveKey })),
    );
    const answeredAt = nowS();
    const ok = responses.filter((r) => r.status >= 200 && r.status < 300);
    const refused = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(60);
    expect(refused).toHaveLength(20);
    for (const response of refused) {
      expectThrottled(response);
      expect(intHeader(response, 'retry-after')).toBeLessThanOrEqual(61);
      expect(rateLimit(response)).toMatchObject({ limit: 60, remaining: 0 });
    }
    // Each allowed request took its own slot of the shared count.
    expect(ok.map((r) => rateLimit(r).remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    for (const response of responses) expectMinuteReset(rateLimit(response).reset, sentAt, answeredAt);
    expect(new Set(responses.map((r) => rateLimit(r).reset)).size).toBeLessThanOrEqual(2);

    // Still refused on either instance.
    expectThrottled(await first.request('GET', '/v1/leads', { key: owner.liveKey }));
    expectThrottled(await second.request('GET', '/v1/leads', { key: owner.liveKey }));
  });

  it('shares a per-operation count between instances', async () => {
    const ns = `rl-op-${randomUUID()}`;
    const operationLimits = { ...OPERATION_LIMITS, leadScore: { windowS: 60, max: 3 } };
    const a = await startTestApp({ redisNamespace: ns, operationLimits });
    const b = await startTestApp({ redisNamespace: ns, operationLimits });
    try {
      const owner = await a.createAccount();
      const lead = await a.request('POST', '/v1/leads', { key: owner.testKey, body: { company: 'Shared', contact_email: 'shared@op.test' } });
      const responses = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).request('GET', `/v1/leads/${lead.body.id}/score`, { key: owner.testKey })),
      );
      expect(responses.filter((r) => r.status === 200)).toHaveLength(3);
      expect(responses.filter((r) => r.status === 429)).toHaveLength(5);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

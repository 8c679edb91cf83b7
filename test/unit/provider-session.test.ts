import { jsonOf } from '../../src/modules/integrations/providers/provider-http';
import {
  AccessToken,
  Failure,
  pauseAfterFailure,
  ProviderSession,
  SessionCall,
  SessionPolicy,
  sharedTokens,
  TokenStore,
} from '../../src/modules/integrations/providers/provider-session';
import { RollingWindow } from '../../src/modules/integrations/providers/rolling-window';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from '../helpers/fakes/fake-provider';
import { providerSettings } from '../helpers/provider-settings';
import { waitFor } from '../helpers/wait';

/**
 * The one policy between provider-http and the provider clients (provider-session.ts): retries
 * and their schedule, throttles and Retry-After, the access token, pacing and budgets, against a
 * loopback provider that answers from a script. Each provider's own words and rules stay in its
 * client test (hubspot-client, salesforce-client, …); here the policy is configured the way a
 * provider configures it, by data. Times are only lower bounds (a pause is at least as long as
 * asked); nothing waits for a length of time.
 */

/** Timers may fire a millisecond before Date.now() says they are due. */
const TIMER_SLACK_MS = 5;

/** A provider answering from a script, one answer a request (then 200), that notes when each request arrived. */
class ScriptedProvider extends FakeProvider {
  readonly script: FakeAnswer[] = [];
  readonly arrivals: number[] = [];
  /** Answers instead of the script while it returns one (the token tests' refusals). */
  answerFor?: (request: SeenRequest) => FakeAnswer | undefined;
  private granted = 0;

  protected answer(request: SeenRequest): FakeAnswer {
    this.arrivals.push(Date.now());
    if (request.path === '/token') return { status: 200, body: { access_token: `token-${++this.granted}` } };
    return this.answerFor?.(request) ?? this.script.shift() ?? { status: 200, body: { ok: true } };
  }

  protected rateLimitedAnswer(retryAfterS: number): FakeAnswer {
    return { status: 429, headers: { 'retry-after': String(retryAfterS) } };
  }

  protected failureAnswer(status: number): FakeAnswer {
    return { status };
  }

  /** The gaps between one arrival and the next. */
  gaps(): number[] {
    return this.arrivals.slice(1).map((arrival, i) => arrival - this.arrivals[i]);
  }
}

class Failed extends Error {
  constructor(readonly failure: Failure) {
    super(failure.kind === 'unreachable' ? `unreachable: ${failure.message}` : `answered ${failure.response.status}`);
  }
}

class Throttled extends Error {
  constructor(
    readonly status: number,
    readonly waitMs: number,
  ) {
    super(`throttled (${status}), come back in ${waitMs} ms`);
  }
}

class Refused extends Error {}

let fake: ScriptedProvider;

beforeEach(async () => {
  fake = await new ScriptedProvider().start();
});

afterEach(async () => {
  await fake.close();
});

function policy(overrides: Partial<SessionPolicy> = {}): SessionPolicy {
  return {
    host: 'configured',
    failures: { backoffMs: [40, 80], statuses: 'unexpected' },
    throttle: { retries: 3, intervalHeader: 'x-wait-ms', defaultWaitMs: 50 },
    maxWaitMs: 5_000,
    failed: (failure) => new Failed(failure),
    throttled: (response, waitMs) => new Throttled(response.status, waitMs),
    ...overrides,
  };
}

const session = (overrides: Partial<SessionPolicy> = {}) => new ProviderSession(providerSettings({}), policy(overrides));
const get = (path = '/data') => ({ method: 'GET' as const, url: `${fake.url}${path}` });
const post = (body: unknown) => ({ method: 'POST' as const, url: `${fake.url}/data`, body: JSON.stringify(body) });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => new Error('the call succeeded'),
    (error: Error) => error,
  );

describe('after a 5xx or no answer', () => {
  it('tries again after each pause of the schedule, then gives up with the failure', async () => {
    fake.script.push({ status: 503 }, { status: 502 }, { status: 500 }, { status: 200 });
    const error = await failure(session().send(get(), {}));
    expect(error).toBeInstanceOf(Failed);
    expect((error as Failed).failure).toMatchObject({ kind: 'answered', outcomeUnknown: false, response: { status: 500 } });
    expect(fake.requests).toHaveLength(3);
    const [first, second] = fake.gaps();
    expect(first).toBeGreaterThanOrEqual(40 - TIMER_SLACK_MS);
    expect(second).toBeGreaterThanOrEqual(80 - TIMER_SLACK_MS);
  });

  it('returns the answer that follows a failure, and treats a lost answer like a 5xx', async () => {
    fake.script.push({ status: 200, dropConnection: true }, { status: 503 }, { status: 201, body: { made: true } });
    const response = await session().send(post({ name: 'Acme' }), {});
    expect(response.status).toBe(201);
    expect(fake.requests.map((request) => request.body)).toEqual(Array(3).fill('{"name":"Acme"}'));
  });

  it("hands a 3xx back under 'server-errors' and tries it again under 'unexpected'", async () => {
    fake.script.push({ status: 302 });
    expect((await session({ failures: { backoffMs: [10], statuses: 'server-errors' } }).send(get(), {})).status).toBe(302);
    expect(fake.requests).toHaveLength(1);

    fake.script.push({ status: 302 });
    expect((await session().send(get(), {})).status).toBe(200);
    expect(fake.requests).toHaveLength(3);
  });

  it('never sends again a call that is not repeatable: its failure says the outcome is unknown', async () => {
    fake.script.push({ status: 500 });
    const answered = await failure(session().send(post({ n: 1 }), { repeatable: false }));
    expect((answered as Failed).failure).toMatchObject({ kind: 'answered', outcomeUnknown: true });

    fake.script.push({ status: 200, dropConnection: true });
    const lost = await failure(session().send(post({ n: 2 }), { repeatable: false }));
    expect((lost as Failed).failure).toMatchObject({ kind: 'unreachable', outcomeUnknown: true });
    expect(fake.requests).toHaveLength(2);
  });

  it("pauses for a 5xx's Retry-After when the rule says so, and gives up at once when it is beyond maxWaitMs", async () => {
    const graphLike = { failures: { backoffMs: [10, 10], statuses: 'server-errors' as const, pauseForRetryAfter: true } };
    fake.script.push({ status: 503, headers: { 'retry-after': '1' } });
    expect((await session(graphLike).send(get(), {})).status).toBe(200);
    expect(fake.gaps()[0]).toBeGreaterThanOrEqual(1_000 - TIMER_SLACK_MS);

    fake.script.push({ status: 503, headers: { 'retry-after': '60' } });
    const error = await failure(session({ ...graphLike, maxWaitMs: 30_000 }).send(get(), {}));
    expect((error as Failed).failure).toMatchObject({ kind: 'answered', response: { status: 503 } });
    expect(fake.requests).toHaveLength(3);
  });

  it('backOff waits the schedule for a caller that repeats a call itself, and says when it is spent', async () => {
    const tries = session({ failures: { backoffMs: [30], statuses: 'unexpected' } });
    const started = Date.now();
    expect(await tries.backOff(0)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(30 - TIMER_SLACK_MS);
    expect(await tries.backOff(1)).toBe(false);
  });

  it("backOff pauses for the failure's Retry-After when the rule says so, and says false when it is beyond maxWaitMs", async () => {
    const graphLike = { failures: { backoffMs: [10, 10], statuses: 'server-errors' as const, pauseForRetryAfter: true }, maxWaitMs: 500 };
    const tries = session(graphLike);
    const started = Date.now();
    expect(await tries.backOff(0, 200)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200 - TIMER_SLACK_MS);
    expect(await tries.backOff(1, 60_000)).toBe(false);
    // Without the rule, the schedule's pause whatever was asked.
    expect(await session({ maxWaitMs: 500 }).backOff(0, 60_000)).toBe(true);
  });

  it('pauseAfterFailure, the decision a caller that owns its transport shares: the asked wait or the schedule, none when spent or too long', () => {
    const rule = { backoffMs: [1_000, 2_000], pauseForRetryAfter: true };
    expect([0, 1, 2].map((failures) => pauseAfterFailure(rule, 30_000, failures))).toEqual([1_000, 2_000, undefined]);
    expect(pauseAfterFailure(rule, 30_000, 0, 0)).toBe(0);
    expect(pauseAfterFailure(rule, 30_000, 1, 30_000)).toBe(30_000);
    expect(pauseAfterFailure(rule, 30_000, 1, 30_001)).toBeUndefined();
    expect(pauseAfterFailure(rule, 30_000, 2, 5)).toBeUndefined();
    expect(pauseAfterFailure({ backoffMs: [1_000] }, 30_000, 0, 60_000)).toBe(1_000);
  });

  it("with no schedule, a failure is the caller's error at once", async () => {
    fake.script.push({ status: 503, headers: { 'retry-after': '1' } });
    const error = await failure(session({ failures: { backoffMs: [], statuses: 'server-errors', pauseForRetryAfter: true } }).send(get(), {}));
    expect((error as Failed).failure).toMatchObject({ kind: 'answered', response: { status: 503 } });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('throttles', () => {
  it('waits out a 429 for its Retry-After and sends the same request again, even one that is not repeatable', async () => {
    fake.script.push({ status: 429, headers: { 'retry-after': '1' } });
    expect((await session().send(post({ n: 1 }), { repeatable: false })).status).toBe(200);
    expect(fake.requests.map((request) => request.body)).toEqual(['{"n":1}', '{"n":1}']);
    expect(fake.gaps()[0]).toBeGreaterThanOrEqual(1_000 - TIMER_SLACK_MS);
  });

  it("without Retry-After: the provider's interval header, else the default wait, else (defaultIsWindow) the call's window", async () => {
    fake.script.push({ status: 429, headers: { 'x-wait-ms': '120' } }, { status: 429 });
    await session().send(get(), {});
    const [interval, fallback] = fake.gaps();
    expect(interval).toBeGreaterThanOrEqual(120 - TIMER_SLACK_MS);
    expect(fallback).toBeGreaterThanOrEqual(50 - TIMER_SLACK_MS);

    fake.script.push({ status: 429 });
    const windowed = session({ throttle: { retries: 3, defaultWaitMs: 10_000, defaultIsWindow: true } });
    await windowed.send(get(), { window: new RollingWindow(10, 150) });
    expect(fake.gaps()[3]).toBeGreaterThanOrEqual(150 - TIMER_SLACK_MS);
    expect(fake.requests).toHaveLength(5);
  });

  it('gives up after `retries` throttles, or at once when the wait is beyond maxWaitMs, saying when to come back', async () => {
    fake.rateLimit(60);
    const beyond = await failure(session({ maxWaitMs: 30_000 }).send(get(), {}));
    expect(beyond).toMatchObject({ status: 429, waitMs: 60_000 });
    expect(fake.requests).toHaveLength(1);

    fake.recover();
    fake.script.push(...Array(4).fill({ status: 429, headers: { 'x-wait-ms': '20' } }));
    const persistent = await failure(session({ throttle: { retries: 2, intervalHeader: 'x-wait-ms', defaultWaitMs: 50 } }).send(get(), {}));
    expect(persistent).toMatchObject({ status: 429, waitMs: 20 });
    expect(fake.requests).toHaveLength(1 + 3);
  });

  it('with no retries, a throttle is the error at once, saying when to come back: its Retry-After, else the default wait', async () => {
    const handsBack = session({ throttle: { retries: 0, defaultWaitMs: 10_000 }, maxWaitMs: 0 });
    fake.script.push({ status: 429, headers: { 'retry-after': '7' } }, { status: 429 });
    expect(await failure(handsBack.send(get(), {}))).toMatchObject({ status: 429, waitMs: 7_000 });
    expect(await failure(handsBack.send(get(), {}))).toMatchObject({ status: 429, waitMs: 10_000 });
    expect(fake.requests).toHaveLength(2);
  });

  it('takes a listed status as a throttle only with Retry-After (a 503 without one is a failure)', async () => {
    const salesforceLike = {
      throttle: { retries: 3, withRetryAfter: [503], defaultWaitMs: 50 },
      failures: { backoffMs: [], statuses: 'server-errors' as const },
    };
    fake.script.push({ status: 503, headers: { 'retry-after': '1' } });
    expect((await session(salesforceLike).send(get(), {})).status).toBe(200);
    expect(fake.gaps()[0]).toBeGreaterThanOrEqual(1_000 - TIMER_SLACK_MS);

    fake.script.push({ status: 503 });
    const error = await failure(session(salesforceLike).send(get(), {}));
    expect(error).toBeInstanceOf(Failed);
    expect(fake.requests).toHaveLength(3);
  });
});

describe('refusals', () => {
  it("ends the call at once with the provider's refusal, but never a grant's, which reads its own answer", async () => {
    const refusing = session({ refusal: (response) => (response.status === 401 ? new Refused('refused') : undefined) });
    fake.script.push({ status: 401 }, { status: 401 });
    expect(await failure(refusing.send(get(), {}))).toBeInstanceOf(Refused);
    expect((await refusing.send(get(), { grant: true })).status).toBe(401);
    expect(fake.requests).toHaveLength(2);
  });
});

describe('the access token', () => {
  /** A session whose grant is a POST /token through itself, each token living for the next of `lifetimesMs` (else for ever). */
  function withToken(options: { store?: TokenStore; lifetimesMs?: number[]; refusal?: SessionPolicy['refusal'] } = {}): ProviderSession {
    const lifetimes = [...(options.lifetimesMs ?? [])];
    const grant = async (): Promise<AccessToken> => {
      const response = await tokens.send({ method: 'POST', url: `${fake.url}/token` }, { grant: true });
      const lifetime = lifetimes.shift() ?? Infinity;
      return { value: (jsonOf(response) as { access_token: string }).access_token, expiresAt: Date.now() + lifetime };
    };
    const tokens: ProviderSession = session({ token: { grant, store: options.store, renewOn: [401] }, refusal: options.refusal });
    return tokens;
  }
  const withBearer = (accessToken: string) => ({ ...get(), headers: { authorization: `Bearer ${accessToken}` } });
  const grants = () => fake.seen('/token').length;
  const bearers = () => fake.seen('/data').map(bearerOf);

  it('is granted once and used until it expires, then granted anew', async () => {
    const tokens = withToken({ lifetimesMs: [-1] });
    await tokens.send(withBearer, {});
    await tokens.send(withBearer, {});
    await tokens.send(withBearer, {});
    expect(bearers()).toEqual(['token-1', 'token-2', 'token-2']);
    expect(grants()).toBe(2);
    expect(tokens.accessToken).toBe('token-2');
  });

  it('is dropped on an answer that says it lapsed: one new grant, the call once more; a second such answer is refused', async () => {
    const refusal = (response: { status: number }) => (response.status === 401 ? new Refused('refused') : undefined);
    const lapsed = new Set(['token-1']);
    fake.answerFor = (request) => (request.path === '/data' && lapsed.has(bearerOf(request) ?? '') ? { status: 401 } : undefined);
    const tokens = withToken({ refusal });
    expect((await tokens.send(withBearer, {})).status).toBe(200);
    expect(bearers()).toEqual(['token-1', 'token-2']);

    lapsed.add('token-2').add('token-3');
    expect(await failure(tokens.send(withBearer, {}))).toBeInstanceOf(Refused);
    expect(bearers()).toEqual(['token-1', 'token-2', 'token-2', 'token-3']);
    expect(grants()).toBe(3);
  });

  it('kept in a shared store, serves every session of the app, and one that drops it makes the next grant for all', async () => {
    const key = ['https://login.example', 'tenant', `client-${Date.now()}`, 'secret'];
    const first = withToken({ store: sharedTokens(key) });
    const second = withToken({ store: sharedTokens(key) });
    await first.send(withBearer, {});
    await second.send(withBearer, {});
    expect(grants()).toBe(1);

    fake.answerFor = (request) => (bearerOf(request) === 'token-1' ? { status: 401 } : undefined);
    await second.send(withBearer, {});
    await first.send(withBearer, {});
    expect(bearers()).toEqual(['token-1', 'token-1', 'token-1', 'token-2', 'token-2']);
    expect(grants()).toBe(2);

    await withToken({ store: sharedTokens([...key, 'another app']) }).send(withBearer, {});
    expect(grants()).toBe(3);
  });
});

describe('pacing and budgets', () => {
  it('never lets more calls arrive within one window than its limit', async () => {
    const window = new RollingWindow(2, 200);
    const paced = session({ pacing: { window } });
    await Promise.all(Array.from({ length: 6 }, () => paced.send(get(), {})));
    expect(fake.requests).toHaveLength(6);
    for (let i = 2; i < fake.arrivals.length; i++) expect(fake.arrivals[i] - fake.arrivals[i - 2]).toBeGreaterThanOrEqual(200 - TIMER_SLACK_MS);
  });

  it('a call exempt from the window (null) is not held by it', async () => {
    const window = new RollingWindow(1, 60_000);
    const paced = session({ pacing: { window } });
    await paced.send(get(), {});
    await paced.send(get(), { window: null });
    expect(fake.requests).toHaveLength(2);
    expect(window.full).toBe(true);
  });

  it('a throttle pauses the window, so a call waiting for a slot waits it out too', async () => {
    const window = new RollingWindow(1, 50);
    const paced = session({ pacing: { window } });
    fake.script.push({ status: 429, headers: { 'x-wait-ms': '300' } });
    const throttled = paced.send(get('/throttled'), {});
    await waitFor('the first call to be sent', () => fake.requests.length === 1);
    await Promise.all([throttled, paced.send(get('/waiting'), {})]);
    const throttledAt = fake.arrivals[0];
    expect(fake.seen('/waiting')).toHaveLength(1);
    for (const arrival of fake.arrivals.slice(1)) expect(arrival - throttledAt).toBeGreaterThanOrEqual(300 - TIMER_SLACK_MS);
  });

  it("reads the provider's count: a lower limit is taken, and a window others spent waits out its interval", async () => {
    const window = new RollingWindow(5, 10_000);
    const counted = session({
      pacing: { window, countHeaders: { max: 'x-max', remaining: 'x-remaining', intervalMs: 'x-interval', longestPauseMs: 10_000 } },
    });
    fake.script.push({ status: 200, headers: { 'x-max': '3', 'x-remaining': '0', 'x-interval': '150' } });
    await counted.send(get(), {});
    expect(window.limit).toBe(3);
    await counted.send(get(), {});
    expect(fake.gaps()[0]).toBeGreaterThanOrEqual(150 - TIMER_SLACK_MS);
  });

  it('asks the budget before each try of a call (not of a grant) and shows it every answer', async () => {
    let left = 2;
    const seen: number[] = [];
    const budgeted = session({
      budget: {
        beforeTry: () => {
          if (left-- <= 0) throw new Refused('the budget is spent');
        },
        afterAnswer: (response) => seen.push(response.status),
      },
    });
    fake.script.push({ status: 503 });
    expect((await budgeted.send(get(), {})).status).toBe(200);
    expect((await budgeted.send(get(), { grant: true })).status).toBe(200);
    expect(await failure(budgeted.send(get(), {}))).toBeInstanceOf(Refused);
    expect(seen).toEqual([503, 200]);
    expect(fake.requests).toHaveLength(3);
  });
});

it('names the call to the policy: a provider adds what its messages need', async () => {
  const named = new ProviderSession<SessionCall & { label: string }>(providerSettings({}), {
    ...policy(),
    failures: { backoffMs: [], statuses: 'unexpected' },
    failed: (failure, call) => new Error(`${call.label}: ${failure.kind}`),
  });
  fake.script.push({ status: 500 });
  expect((await failure(named.send(get(), { label: 'GET /data' }))).message).toBe('GET /data: answered');
});

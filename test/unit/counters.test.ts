import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { consume, Counters } from '../../src/limits/counters';
import { DEFAULT_QUOTA_SETTINGS, Quota } from '../../src/limits/quota';
import type { Authenticated } from '../../src/modules/accounts/api-key.service';

/**
 * X-RateLimit-Reset is read as "now + time left in the window". The clock moves between the
 * counter's answer and that reading, so two requests of one window can land on either side of a
 * whole second; the header must still name one second per window.
 */
describe('window reset seconds', () => {
  const base = 1_800_000_000_000; // a whole second, in ms
  let nowMs = base;
  beforeEach(() => {
    jest.spyOn(Date, 'now').mockImplementation(() => nowMs);
  });
  afterEach(() => jest.restoreAllMocks());

  /** A counter whose window ends at `endMs`, answering as the store would at `nowMs - lagMs`. */
  const counterEndingAt = (endMs: () => number, lagMs: number) => {
    let consumed = 0;
    return {
      consume: async () => {
        consumed += 1;
        return { consumedPoints: consumed, msBeforeNext: endMs() - (nowMs - lagMs) } as RateLimiterRes;
      },
    } as unknown as RateLimiterAbstract;
  };

  it('stays on one second when a late reading crosses it', async () => {
    nowMs = base + 10;
    const end = base + 60_000; // exactly on a whole second
    const limiter = counterEndingAt(() => end, 0);
    const first = await consume(limiter, 'k', 100);
    expect(first.resetAt).toBe(end / 1000);

    // Two milliseconds of lag between the store's answer and our clock read: end + 2 ms.
    const late = counterEndingAt(() => end, 2);
    Object.assign(limiter, { consume: late.consume });
    nowMs = base + 20_000;
    const second = await consume(limiter, 'k', 100);
    expect(second.resetAt).toBe(end / 1000);
    expect(second.remaining).toBe(99);
  });

  it('moves on with the next window and keeps keys apart', async () => {
    nowMs = base + 10;
    let end = base + 60_000;
    const limiter = counterEndingAt(() => end, 0);
    expect((await consume(limiter, 'a', 10)).resetAt).toBe(end / 1000);
    expect((await consume(limiter, 'b', 10)).resetAt).toBe(end / 1000);

    nowMs = base + 60_500; // the first window is over; a new one ends a minute later
    end = base + 120_500;
    expect((await consume(limiter, 'a', 10)).resetAt).toBe(Math.ceil(end / 1000));
  });

  it('agrees with a real in-memory counter on every request of a window', async () => {
    jest.restoreAllMocks();
    const limiter = new RateLimiterMemory({ points: 1000, duration: 60 });
    const resets = new Set<number>();
    for (let i = 0; i < 200; i += 1) resets.add((await consume(limiter, 'real', 1000)).resetAt);
    expect(resets.size).toBe(1);
  });
});

/**
 * A /graphql request is charged once per root field. A charge the window cannot take is refused
 * whole and given back, so it does not use up what smaller requests could still do.
 */
describe('charges of several requests at once', () => {
  const account = (perMinute: number, perDay: number | null) =>
    ({
      account: { id: `acct_${Math.random()}`, liveLimits: () => ({ perMinute, perDay }) },
      key: { id: 'key_unit' },
      livemode: true,
    }) as unknown as Authenticated;
  const quota = () => new Quota(new Counters(undefined, `t${Math.random()}`), DEFAULT_QUOTA_SETTINGS);

  it('lowers the remaining allowance by the charge', async () => {
    const limits = quota();
    const auth = account(10, null);
    expect((await limits.consume(auth, 4)).window).toMatchObject({ limit: 10, remaining: 6 });
    expect((await limits.consume(auth)).window).toMatchObject({ remaining: 5 });
  });

  it('refuses a charge over what is left, and gives it back', async () => {
    const limits = quota();
    const auth = account(10, null);
    await limits.consume(auth, 7);
    const refused = await limits.consume(auth, 4, { refundRefused: true });
    expect(refused).toMatchObject({ allowed: false, code: 'rate_limit_exceeded', window: { remaining: 3 } });
    expect(refused.retryAfterS).toBeGreaterThanOrEqual(1);
    expect((await limits.consume(auth, 3)).allowed).toBe(true);
    expect((await limits.consume(auth)).allowed).toBe(false);
  });

  it('gives back the minute as well when the daily cap refuses', async () => {
    const limits = quota();
    const auth = account(100, 5);
    await limits.consume(auth, 3);
    expect(await limits.consume(auth, 3, { refundRefused: true })).toMatchObject({
      allowed: false,
      code: 'daily_quota_exceeded',
      window: { limit: 5, remaining: 2 },
    });
    expect((await limits.consume(auth, 2)).window).toMatchObject({ limit: 5, remaining: 0 });
  });

  it('keeps a refused single request counted (the gate): a client knocking past its limit stays refused', async () => {
    const limits = quota();
    const auth = account(2, null);
    await limits.consume(auth, 2);
    expect((await limits.consume(auth)).allowed).toBe(false);
    expect((await limits.consume(auth, 1, { refundRefused: true })).allowed).toBe(false);
  });
});

import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { consume, Counters } from '../../src/limits/counters';
import { DEFAULT_QUOTA_SETTINGS, Quota } from '../../src/limits/quota';

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
 * The gate asks whether an address is blocked before every key lookup. An address found not
 * blocked is taken as such for a second, so two instances sharing one count (here, one Counters)
 * agree within that second, and an instance that counts the blocking refusal itself knows at once.
 */
describe('blocked addresses across instances', () => {
  const settings = { ...DEFAULT_QUOTA_SETTINGS, unauthenticatedPerMinute: 3 };
  let nowMs = 1_800_000_000_000;
  beforeEach(() => {
    jest.spyOn(Date, 'now').mockImplementation(() => nowMs);
  });
  afterEach(() => jest.restoreAllMocks());

  it('sees a block counted here at once, and one counted elsewhere within a second', async () => {
    const shared = new Counters(undefined, `t${Math.random()}`);
    const here = new Quota(shared, settings);
    const elsewhere = new Quota(shared, settings);
    expect(await here.isAddressBlocked('10.0.0.1')).toBe(false);
    expect(await here.isAddressBlocked('10.0.0.2')).toBe(false);

    for (let i = 0; i < 3; i++) await elsewhere.consumeUnauthenticated('10.0.0.1');
    expect(await elsewhere.isAddressBlocked('10.0.0.1')).toBe(true);
    expect(await here.isAddressBlocked('10.0.0.1')).toBe(false); // remembered for up to a second
    nowMs += 1_001;
    expect(await here.isAddressBlocked('10.0.0.1')).toBe(true);

    for (let i = 0; i < 3; i++) await here.consumeUnauthenticated('10.0.0.2');
    expect(await here.isAddressBlocked('10.0.0.2')).toBe(true); // no wait for its own refusals
  });
});

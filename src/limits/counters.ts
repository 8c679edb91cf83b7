import { Redis } from 'ioredis';
import { IRateLimiterStoreOptions, RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** Limiters count without a ceiling of their own; each call compares the count with the limit in force. */
const UNBOUNDED = 2 ** 31 - 1;

/** The service's namespace in Redis: its counters and the API key stamp (src/auth/key-cache.ts), which the CLI renews too. */
export const SERVICE_NAMESPACE = 'spa';

type Upsert = (rlKey: string, points: number, msDuration: number, forceExpire?: boolean) => Promise<unknown>;
const libraryUpsert = (RateLimiterRedis.prototype as unknown as { _upsert: Upsert })._upsert;

/** Remembered window ends kept before a sweep drops the ended ones. */
const SWEEP_ABOVE = 10_000;
/** A window ending sooner than this is asked about again (PTTL) rather than trusted from memory. */
const NEAR_END_MS = 1_000;

/**
 * rate-limiter-flexible's Redis limiter, counting with plain INCRBY (and PTTL when needed) in the request's
 * auto-pipelined write instead of the library's Lua script (docs/DECISIONS.md, "One Redis client per process").
 * A window's end never moves once its key has an expiry, so it is remembered per key; a key not seen, a window's
 * last second, or a count showing a fresh key asks PTTL again. INCRBY is atomic: counts stay exact across instances.
 */
class PlainCommandsLimiter extends RateLimiterRedis {
  /** Per Redis key, when its window ends (epoch ms), as its PTTL last told. */
  private readonly windowEnds = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    options: Omit<IRateLimiterStoreOptions, 'storeClient'>,
  ) {
    super({ ...options, storeClient: redis });
  }

  /** What the library's Lua script answers: the count and the window's milliseconds left. */
  async _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<unknown> {
    const seconds = Math.floor(msDuration / 1000);
    if (forceExpire || seconds <= 0) {
      this.windowEnds.delete(rlKey);
      return libraryUpsert.call(this, rlKey, points, msDuration, forceExpire);
    }
    const end = this.windowEnds.get(rlKey);
    let consumed: number;
    let ttlMs: number;
    if (end !== undefined && end - Date.now() > NEAR_END_MS) {
      consumed = await this.redis.incrby(rlKey, points);
      // More than this count: the key was there before it, in the window remembered.
      if (consumed > points) return [consumed, end - Date.now()];
      ttlMs = await this.redis.pttl(rlKey);
    } else {
      [consumed, ttlMs] = await Promise.all([this.redis.incrby(rlKey, points), this.redis.pttl(rlKey)]);
    }
    if (ttlMs < 0) {
      await this.redis.expire(rlKey, seconds);
      ttlMs = seconds * 1000;
    }
    return [consumed, this.remember(rlKey, ttlMs)];
  }

  private remember(rlKey: string, ttlMs: number): number {
    const now = Date.now();
    if (this.windowEnds.size >= SWEEP_ABOVE) {
      for (const [key, end] of this.windowEnds) if (end <= now) this.windowEnds.delete(key);
      // Still full (that many live windows): forget them all; each asks PTTL again once.
      if (this.windowEnds.size >= SWEEP_ABOVE) this.windowEnds.clear();
    }
    this.windowEnds.set(rlKey, now + ttlMs);
    return ttlMs;
  }
}

/**
 * Where request counters live: Redis when REDIS_URL is set (one round trip a count, a second for
 * a window's first, and exact across every instance sharing it), else process memory (exact for
 * one instance). rate-limiter-flexible does the counting and the windows. There is one limiter per
 * window name, whatever the limit, so a plan or limit change applies at once and keeps the count.
 */
export class Counters {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    readonly redis: Redis | undefined,
    /** Namespace of every key, so tests and environments sharing one Redis never mix counts. */
    readonly namespace: string,
  ) {}

  /** The counter for keys under `name`, in windows of `durationS` seconds. */
  limiter(name: string, durationS: number): RateLimiterAbstract {
    const id = `${name}:${durationS}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const options = { keyPrefix: `${this.namespace}:${name}`, points: UNBOUNDED, duration: durationS };
      limiter = this.redis
        ? new PlainCommandsLimiter(this.redis, {
            ...options,
            // Redis unreachable: keep limiting, per instance, rather than fail every request.
            insuranceLimiter: new RateLimiterMemory(options),
          })
        : new RateLimiterMemory(options);
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}

export interface WindowResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the window resets. */
  resetAt: number;
}

/**
 * The reset second last answered per limiter and key. A window's end is read as "now + ms left",
 * which drifts by the few milliseconds the answer took; near a whole second that would round to
 * two different Reset values within one window. A reading within a second of the remembered one
 * is the same window, so every response of a window names the same second.
 */
const answeredResets = new WeakMap<RateLimiterAbstract, Map<string, number>>();

function stableReset(limiter: RateLimiterAbstract, key: string, msBeforeNext: number): number {
  const nowMs = Date.now();
  const reading = Math.ceil((nowMs + msBeforeNext) / 1000);
  let resets = answeredResets.get(limiter);
  if (!resets) answeredResets.set(limiter, (resets = new Map()));
  const remembered = resets.get(key);
  if (remembered !== undefined && remembered * 1000 > nowMs && Math.abs(reading - remembered) <= 1) return remembered;
  if (resets.size >= SWEEP_ABOVE) {
    for (const [each, resetAt] of resets) if (resetAt * 1000 <= nowMs) resets.delete(each);
  }
  resets.set(key, reading);
  return reading;
}

function result(limiter: RateLimiterAbstract, key: string, res: RateLimiterRes, limit: number, resetAt?: (res: RateLimiterRes) => number): WindowResult {
  return {
    allowed: res.consumedPoints <= limit,
    limit,
    remaining: Math.max(0, limit - res.consumedPoints),
    resetAt: resetAt ? resetAt(res) : stableReset(limiter, key, res.msBeforeNext),
  };
}

/** Counts `points` requests (one unless said) against a window of at most `limit` requests. */
export async function consume(
  limiter: RateLimiterAbstract,
  key: string,
  limit: number,
  resetAt?: (res: RateLimiterRes) => number,
  points = 1,
): Promise<WindowResult> {
  return result(limiter, key, await limiter.consume(key, points), limit, resetAt);
}

/** Gives back `points` counted by a consume whose request was then refused as a whole. */
export async function refund(
  limiter: RateLimiterAbstract,
  key: string,
  limit: number,
  points: number,
  resetAt?: (res: RateLimiterRes) => number,
): Promise<WindowResult> {
  return result(limiter, key, await limiter.reward(key, points), limit, resetAt);
}

/** The window's state without counting a request; undefined when nothing was counted yet. */
export async function peek(limiter: RateLimiterAbstract, key: string, limit: number): Promise<WindowResult | undefined> {
  const res = await limiter.get(key);
  return res ? result(limiter, key, res, limit) : undefined;
}

/**
 * Resolves true once Redis accepts commands, or false after `timeoutMs`. Callers wait for it before
 * serving: with no offline queue, a command sent while the connection is still opening fails, and
 * that request would be counted in this instance's memory instead of the shared count.
 */
export function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    redis.once('ready', onReady);
  });
}

export function createRedis(url: string): Redis {
  // No offline queue: while Redis is away, commands fail at once and the insurance limiter counts.
  // Auto-pipelining sends the commands of concurrent requests in one write.
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, enableAutoPipelining: true });
}

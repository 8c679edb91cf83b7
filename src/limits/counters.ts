import { Redis } from 'ioredis';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** Limiters count without a ceiling of their own; each call compares the count with the limit in force. */
const UNBOUNDED = 2 ** 31 - 1;

/**
 * Where request counters live: Redis when REDIS_URL is set (atomic INCR + expiry in one round
 * trip, so the count is exact across every instance sharing it), else process memory (exact for
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
        ? new RateLimiterRedis({
            ...options,
            storeClient: this.redis,
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

function result(res: RateLimiterRes, limit: number, resetAt?: (res: RateLimiterRes) => number): WindowResult {
  return {
    allowed: res.consumedPoints <= limit,
    limit,
    remaining: Math.max(0, limit - res.consumedPoints),
    resetAt: resetAt ? resetAt(res) : Math.ceil((Date.now() + res.msBeforeNext) / 1000),
  };
}

/** Counts one request against a window of at most `limit` requests. */
export async function consume(
  limiter: RateLimiterAbstract,
  key: string,
  limit: number,
  resetAt?: (res: RateLimiterRes) => number,
): Promise<WindowResult> {
  return result(await limiter.consume(key, 1), limit, resetAt);
}

/** The window's state without counting a request; undefined when nothing was counted yet. */
export async function peek(limiter: RateLimiterAbstract, key: string, limit: number): Promise<WindowResult | undefined> {
  const res = await limiter.get(key);
  return res ? result(res, limit) : undefined;
}

export function createRedis(url: string): Redis {
  // No offline queue: while Redis is away, commands fail at once and the insurance limiter counts.
  // Auto-pipelining sends the commands of concurrent requests in one write.
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, enableAutoPipelining: true });
}

import { Redis } from 'ioredis';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Where request counters live: Redis when REDIS_URL is set (atomic INCR + expiry in one round
 * trip, so the count is exact across every instance sharing it), else process memory (exact for
 * one instance). rate-limiter-flexible does the counting; nothing here does arithmetic on windows.
 */
export class Counters {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    readonly redis: Redis | undefined,
    /** Namespace of every key, so tests and environments sharing one Redis never mix counts. */
    readonly namespace: string,
  ) {}

  /**
   * A limiter allowing `points` per `durationS` for keys under `name`. Limiters that differ only
   * in `points` share their keys, so a plan change takes effect at once with the count kept.
   */
  limiter(name: string, points: number, durationS: number): RateLimiterAbstract {
    const id = `${name}:${points}:${durationS}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const keyPrefix = `${this.namespace}:${name}`;
      limiter = this.redis
        ? new RateLimiterRedis({
            storeClient: this.redis,
            keyPrefix,
            points,
            duration: durationS,
            // Redis unreachable: keep limiting, per instance, rather than fail every request.
            insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: durationS }),
          })
        : new RateLimiterMemory({ keyPrefix, points, duration: durationS });
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

/** Counts one request against a window; over the limit is a result, not an exception. */
export async function consume(limiter: RateLimiterAbstract, key: string, resetAt?: (res: RateLimiterRes) => number): Promise<WindowResult> {
  let res: RateLimiterRes;
  let allowed = true;
  try {
    res = await limiter.consume(key, 1);
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    res = error;
    allowed = false;
  }
  return {
    allowed,
    limit: limiter.points,
    remaining: Math.max(0, res.remainingPoints),
    resetAt: resetAt ? resetAt(res) : Math.ceil((Date.now() + res.msBeforeNext) / 1000),
  };
}

export function createRedis(url: string): Redis {
  // No offline queue: while Redis is away, commands fail at once and the insurance limiter counts.
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
}

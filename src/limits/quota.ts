import type { Authenticated } from '../modules/accounts/api-key.service';
import { RateLimits, TEST_MODE_LIMITS } from '../modules/accounts/plan';
import { consume, Counters, peek, WindowResult } from './counters';

export interface QuotaSettings {
  /** Test keys: 100 per minute (spec §5). Tests that send many requests may raise it. */
  testMode: RateLimits;
  /** Requests without a valid key, per client address per minute. */
  unauthenticatedPerMinute: number;
}

export const DEFAULT_QUOTA_SETTINGS: QuotaSettings = {
  testMode: TEST_MODE_LIMITS,
  unauthenticatedPerMinute: 30,
};

export interface QuotaDecision {
  allowed: boolean;
  code?: 'rate_limit_exceeded' | 'daily_quota_exceeded';
  /** The window the headers describe: the tighter one (CONTRACT §11); absent when limits are off. */
  window?: WindowResult;
  retryAfterS: number;
}

/** What every check answers when limits are off (RATE_LIMITS=off): allowed, nothing counted, no headers. */
const UNCOUNTED: QuotaDecision = { allowed: true, retryAfterS: 0 };

const nextUtcMidnight = (): number => {
  const now = new Date();
  return Math.floor(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) / 1000);
};

/** How long an address found not blocked is taken as such (see Quota.isAddressBlocked). */
const ADDRESS_CHECK_MS = 1_000;
const REMEMBERED_ADDRESSES = 10_000;

/**
 * Plan quotas per account and mode (CONTRACT §11): a fixed one-minute window and, where the plan
 * has one, a daily cap that resets at midnight UTC (the day is part of the key).
 */
export class Quota {
  private readonly notBlockedUntil = new Map<string, number>();
  /** Addresses this instance has seen use up their allowance, ever (see isAddressBlocked). */
  private blocks = 0;

  constructor(
    private readonly counters: Counters,
    private readonly settings: QuotaSettings,
    /** false with RATE_LIMITS=off: nothing is counted or refused. */
    private readonly enabled = true,
  ) {}

  limitsFor(auth: Authenticated): RateLimits {
    return auth.livemode ? auth.account.liveLimits() : this.settings.testMode;
  }

  async consume(auth: Authenticated): Promise<QuotaDecision> {
    if (!this.enabled) return UNCOUNTED;
    const limits = this.limitsFor(auth);
    const key = `${auth.account.id}:${auth.livemode ? 'live' : 'test'}`;
    const minute = await consume(this.counters.limiter('minute', 60), key, limits.perMinute);
    const now = Math.floor(Date.now() / 1000);
    if (!minute.allowed) {
      return { allowed: false, code: 'rate_limit_exceeded', window: minute, retryAfterS: Math.max(1, minute.resetAt - now) };
    }
    if (limits.perDay === null) return { allowed: true, window: minute, retryAfterS: 0 };

    const day = new Date().toISOString().slice(0, 10);
    const daily = await consume(this.counters.limiter('day', 26 * 3600), `${key}:${day}`, limits.perDay, () => nextUtcMidnight());
    if (!daily.allowed) {
      return { allowed: false, code: 'daily_quota_exceeded', window: daily, retryAfterS: Math.max(1, daily.resetAt - now) };
    }
    return { allowed: true, window: daily.remaining < minute.remaining ? daily : minute, retryAfterS: 0 };
  }

  /** Requests counted so far in this minute and this UTC day, for the web app's Plan page (does not count). */
  async usage(auth: Pick<Authenticated, 'account' | 'livemode'>): Promise<{ minute: number; day: number }> {
    const limits = this.limitsFor(auth as Authenticated);
    const key = `${auth.account.id}:${auth.livemode ? 'live' : 'test'}`;
    const minute = await peek(this.counters.limiter('minute', 60), key, limits.perMinute);
    const daily = await peek(this.counters.limiter('day', 26 * 3600), `${key}:${new Date().toISOString().slice(0, 10)}`, limits.perDay ?? Number.MAX_SAFE_INTEGER);
    return { minute: minute ? minute.limit - minute.remaining : 0, day: daily ? daily.limit - daily.remaining : 0 };
  }

  /** Requests without a valid key, counted per client address. */
  consumeUnauthenticated(address: string): Promise<QuotaDecision> {
    return this.consumePerAddress('anonymous', address);
  }

  /**
   * Requests to the public routes (the OpenAPI document and its Swagger UI), per client address,
   * with the allowance of requests without a key but a count of their own: reading the docs must
   * never lock an address out of the API, which a used-up `anonymous` count does (isAddressBlocked).
   */
  consumePublic(address: string): Promise<QuotaDecision> {
    return this.consumePerAddress('public', address);
  }

  private async consumePerAddress(counter: 'anonymous' | 'public', address: string): Promise<QuotaDecision> {
    if (!this.enabled) return UNCOUNTED;
    const window = await consume(this.counters.limiter(counter, 60), address, this.settings.unauthenticatedPerMinute);
    if (counter === 'anonymous' && window.remaining === 0) {
      this.blocks += 1;
      this.notBlockedUntil.delete(address);
    }
    const retryAfterS = Math.max(1, window.resetAt - Math.floor(Date.now() / 1000));
    return window.allowed ? { allowed: true, window, retryAfterS: 0 } : { allowed: false, code: 'rate_limit_exceeded', window, retryAfterS };
  }

  /**
   * True when an address has already used up its unauthenticated allowance (checked before any key
   * lookup, so a blocked address learns nothing from guessing a key). An address found not blocked
   * is not asked again for ADDRESS_CHECK_MS: a client with a valid key costs no Redis read of its
   * own per request. Each refusal this instance counts ends that at once (consumePerAddress);
   * another instance's refusals are seen here within ADDRESS_CHECK_MS.
   */
  async isAddressBlocked(address: string): Promise<boolean> {
    if (!this.enabled) return false;
    const now = Date.now();
    if ((this.notBlockedUntil.get(address) ?? 0) > now) return false;
    const blocks = this.blocks;
    const blocked = (await this.counters.count('anonymous', 60, address)) >= this.settings.unauthenticatedPerMinute;
    if (blocked) this.notBlockedUntil.delete(address);
    // A block counted while the count was read may postdate it: take no answer as lasting then.
    else if (blocks === this.blocks) {
      if (this.notBlockedUntil.size >= REMEMBERED_ADDRESSES) this.notBlockedUntil.clear();
      this.notBlockedUntil.set(address, now + ADDRESS_CHECK_MS);
    }
    return blocked;
  }
}

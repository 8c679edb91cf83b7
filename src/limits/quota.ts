import { ApiError } from '../common/api-error';
import type { Authenticated } from '../modules/accounts/api-key.service';
import { RateLimits, TEST_MODE_LIMITS } from '../modules/accounts/plan';
import { consume, Counters, peek, refund, WindowResult } from './counters';

export interface QuotaSettings {
  /** Test keys: 100 per minute (spec §5). Tests that send many requests may raise it. */
  testMode: RateLimits;
  /** Requests without a valid key, per client address per minute. */
  unauthenticatedPerMinute: number;
  /** Sign-ups in the web app per client address per hour: each account comes with fresh quotas. */
  signupsPerHour: number;
  /**
   * The web app's own /graphql requests (a session cookie, no key) per account and mode per
   * minute, counted apart from the plan's quota: a busy script must not blank its owner's
   * dashboard, nor the dashboard use up the script's allowance. WEB_APP_DEFAULT_PER_MINUTE when not given.
   */
  webAppPerMinute?: number;
}

/** A person's pages make a few requests each: 600 a minute is ten a second, far beyond a person and bounded for a script replaying a session. */
export const WEB_APP_DEFAULT_PER_MINUTE = 600;

export const DEFAULT_QUOTA_SETTINGS: QuotaSettings = {
  testMode: TEST_MODE_LIMITS,
  unauthenticatedPerMinute: 30,
  signupsPerHour: 5,
  webAppPerMinute: WEB_APP_DEFAULT_PER_MINUTE,
};

export interface QuotaDecision {
  allowed: boolean;
  code?: 'rate_limit_exceeded' | 'daily_quota_exceeded';
  /** The window the headers describe: the tighter one (CONTRACT §11); absent when limits are off. */
  window?: WindowResult;
  retryAfterS: number;
  /**
   * A refusal answered from this instance's memory of a window found exhausted moments ago, without
   * counting: the client asked again before Retry-After (refusalMemory below).
   */
  repeated?: boolean;
}

/**
 * How long an instance remembers that a window is exhausted, and refuses from memory without
 * asking the counters: a client that ignores Retry-After costs no Redis round trip, and a change of
 * its limits (a plan upgrade) is seen within this long. The window is fixed and shared by every
 * instance, so a refusal from memory is the answer the counters would give.
 */
export const REFUSAL_MEMORY_MS = 1_000;
const MAX_REMEMBERED_REFUSALS = 10_000;

/** Exhausted windows, by counter key: until when to refuse from memory, and with what. */
class RefusalMemory {
  private readonly refused = new Map<string, { until: number; limit: number | string; decision: QuotaDecision }>();

  /** The remembered refusal of `key`, while it is fresh and the limits it was made under (`limit`) are unchanged. */
  recall(key: string, limit: number | string): QuotaDecision | undefined {
    const memory = this.refused.get(key);
    if (!memory) return undefined;
    const now = Date.now();
    if (now >= memory.until || memory.limit !== limit) {
      this.refused.delete(key);
      return undefined;
    }
    const { decision } = memory;
    const resetAt = decision.window?.resetAt ?? Math.ceil(memory.until / 1000);
    return {
      ...decision,
      window: decision.window && { ...decision.window, remaining: 0 },
      retryAfterS: Math.max(1, resetAt - Math.floor(now / 1000)),
      repeated: true,
    };
  }

  remember(key: string, limit: number | string, decision: QuotaDecision): QuotaDecision {
    if (!decision.allowed && decision.window) {
      if (this.refused.size >= MAX_REMEMBERED_REFUSALS) this.refused.delete(this.refused.keys().next().value!);
      const until = Math.min(Date.now() + REFUSAL_MEMORY_MS, decision.window.resetAt * 1000);
      this.refused.set(key, { until, limit, decision });
    }
    return decision;
  }
}

/** The 429 of a refused decision, with its Retry-After, for every surface (keys, sessions, GraphQL root fields). */
export function quotaRefusal(decision: QuotaDecision, detail = ''): ApiError {
  const options = { retryAfterS: decision.retryAfterS };
  return decision.code === 'daily_quota_exceeded'
    ? new ApiError('daily_quota_exceeded', `Daily request quota exceeded for this account and mode; it resets at midnight UTC.${detail}`, options)
    : new ApiError('rate_limit_exceeded', `Too many requests; slow down and retry after the number of seconds in Retry-After.${detail}`, options);
}

/** What every check answers when limits are off (RATE_LIMITS=off): allowed, nothing counted, no headers. */
const UNCOUNTED: QuotaDecision = { allowed: true, retryAfterS: 0 };

/** An account's counters are per mode: live and test requests never share a window. */
const accountKey = (auth: Pick<Authenticated, 'account' | 'livemode'>): string => `${auth.account.id}:${auth.livemode ? 'live' : 'test'}`;
/** The limits a refusal was made under: one changed (a new plan, a custom limit) makes it stale. */
const limitsKey = (limits: RateLimits): string => `${limits.perMinute}/${limits.perDay ?? 'none'}`;
/** The daily cap's counter: the UTC day is part of the key, so each day starts from zero. */
const todayKey = (key: string): string => `${key}:${new Date().toISOString().slice(0, 10)}`;

const nextUtcMidnight = (): number => {
  const now = new Date();
  return Math.floor(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) / 1000);
};

/**
 * Plan quotas per account and mode (CONTRACT §11): a fixed one-minute window and, where the plan
 * has one, a daily cap that resets at midnight UTC (the day is part of the key).
 */
export class Quota {
  private readonly refusals = new RefusalMemory();

  constructor(
    private readonly counters: Counters,
    private readonly settings: QuotaSettings,
    /** false with RATE_LIMITS=off: nothing is counted or refused. */
    private readonly enabled = true,
  ) {}

  limitsFor(auth: Authenticated): RateLimits {
    return auth.livemode ? auth.account.liveLimits() : this.settings.testMode;
  }

  /**
   * Counts `points` requests of the account and mode (a /graphql request is charged once per root
   * field). With `refundRefused`, a refusal gives its points back: the request runs nothing, so it
   * must not use up what smaller requests could still do. The gate's own count of every request
   * is kept even when refused, so a client that keeps knocking past its limit stays refused.
   */
  async consume(auth: Authenticated, points = 1, options: { refundRefused?: boolean } = {}): Promise<QuotaDecision> {
    if (!this.enabled) return UNCOUNTED;
    if (auth.key === null) return this.consumeWebApp(auth, points, options);
    const known = options.refundRefused ? undefined : this.knownRefusal(auth);
    if (known) return known;
    const decision = await this.count(auth, points, options);
    return options.refundRefused ? decision : this.refusals.remember(accountKey(auth), limitsKey(this.limitsFor(auth)), decision);
  }

  /**
   * A refusal this instance already knows the account's window for, moments ago (RefusalMemory):
   * the gate answers it without counting. The limits are part of what is remembered, so a plan
   * changed meanwhile is counted afresh.
   */
  private knownRefusal(auth: Authenticated): QuotaDecision | undefined {
    return this.refusals.recall(accountKey(auth), limitsKey(this.limitsFor(auth)));
  }

  private async count(auth: Authenticated, points: number, options: { refundRefused?: boolean }): Promise<QuotaDecision> {
    const limits = this.limitsFor(auth);
    const key = accountKey(auth);
    const minuteLimiter = this.counters.limiter('minute', 60);
    const minute = await consume(minuteLimiter, key, limits.perMinute, undefined, points);
    const now = Math.floor(Date.now() / 1000);
    if (!minute.allowed) {
      const window = options.refundRefused ? await refund(minuteLimiter, key, limits.perMinute, points) : minute;
      return { allowed: false, code: 'rate_limit_exceeded', window, retryAfterS: Math.max(1, minute.resetAt - now) };
    }
    if (limits.perDay === null) return { allowed: true, window: minute, retryAfterS: 0 };

    const dayKey = todayKey(key);
    const dayLimiter = this.counters.limiter('day', 26 * 3600);
    const daily = await consume(dayLimiter, dayKey, limits.perDay, () => nextUtcMidnight(), points);
    if (!daily.allowed) {
      let window = daily;
      if (options.refundRefused) {
        [window] = await Promise.all([
          refund(dayLimiter, dayKey, limits.perDay, points, () => nextUtcMidnight()),
          refund(minuteLimiter, key, limits.perMinute, points),
        ]);
      }
      return { allowed: false, code: 'daily_quota_exceeded', window, retryAfterS: Math.max(1, daily.resetAt - now) };
    }
    return { allowed: true, window: daily.remaining < minute.remaining ? daily : minute, retryAfterS: 0 };
  }

  /**
   * Gives back what `consume` counted for a request that is then judged again from the start (the
   * gate's kept key whose stamp had changed): the minute's count always, the day's when it was counted.
   */
  async giveBack(auth: Authenticated, decision: QuotaDecision, points = 1): Promise<void> {
    if (!this.enabled || auth.key === null || !decision.window || decision.repeated) return;
    const limits = this.limitsFor(auth);
    const key = accountKey(auth);
    const dayCounted = limits.perDay !== null && (decision.allowed || decision.code === 'daily_quota_exceeded');
    await Promise.all([
      refund(this.counters.limiter('minute', 60), key, limits.perMinute, points),
      dayCounted ? refund(this.counters.limiter('day', 26 * 3600), todayKey(key), limits.perDay!, points, () => nextUtcMidnight()) : undefined,
    ]);
  }

  /** The web app's allowance (a session, no key): its own one-minute window per account and mode, no daily cap. */
  private async consumeWebApp(auth: Authenticated, points: number, options: { refundRefused?: boolean }): Promise<QuotaDecision> {
    const limit = this.settings.webAppPerMinute ?? WEB_APP_DEFAULT_PER_MINUTE;
    const key = accountKey(auth);
    const limiter = this.counters.limiter('web-minute', 60);
    const minute = await consume(limiter, key, limit, undefined, points);
    if (minute.allowed) return { allowed: true, window: minute, retryAfterS: 0 };
    const window = options.refundRefused ? await refund(limiter, key, limit, points) : minute;
    return { allowed: false, code: 'rate_limit_exceeded', window, retryAfterS: Math.max(1, minute.resetAt - Math.floor(Date.now() / 1000)) };
  }

  /** Requests counted so far in this minute and this UTC day, for the web app's Plan page (does not count). */
  async usage(auth: Pick<Authenticated, 'account' | 'livemode'>): Promise<{ minute: number; day: number }> {
    const limits = this.limitsFor(auth as Authenticated);
    const key = accountKey(auth);
    const minute = await peek(this.counters.limiter('minute', 60), key, limits.perMinute);
    const daily = await peek(this.counters.limiter('day', 26 * 3600), todayKey(key), limits.perDay ?? Number.MAX_SAFE_INTEGER);
    return { minute: minute ? minute.limit - minute.remaining : 0, day: daily ? daily.limit - daily.remaining : 0 };
  }

  /** Requests without a valid key, counted per client address. */
  consumeUnauthenticated(address: string): Promise<QuotaDecision> {
    return this.consumePerAddress('anonymous', address, this.settings.unauthenticatedPerMinute, 60);
  }

  /** Sign-ups in the web app, per client address: every attempt counts, made or not. */
  consumeSignup(address: string): Promise<QuotaDecision> {
    return this.consumePerAddress('signup', address, this.settings.signupsPerHour, 3600);
  }

  /**
   * Requests to the public routes (the OpenAPI document and its Swagger UI), per client address,
   * with the allowance of requests without a key but a count of their own: reading the docs must
   * never use up the allowance of a client that is setting up its key.
   */
  consumePublic(address: string): Promise<QuotaDecision> {
    return this.consumePerAddress('public', address, this.settings.unauthenticatedPerMinute, 60);
  }

  private async consumePerAddress(counter: 'anonymous' | 'public' | 'signup', address: string, limit: number, windowS: number): Promise<QuotaDecision> {
    if (!this.enabled) return UNCOUNTED;
    const known = this.refusals.recall(`${counter}:${address}`, limit);
    if (known) return known;
    const window = await consume(this.counters.limiter(counter, windowS), address, limit);
    const retryAfterS = Math.max(1, window.resetAt - Math.floor(Date.now() / 1000));
    const decision: QuotaDecision = window.allowed
      ? { allowed: true, window, retryAfterS: 0 }
      : { allowed: false, code: 'rate_limit_exceeded', window, retryAfterS };
    return this.refusals.remember(`${counter}:${address}`, limit, decision);
  }
}

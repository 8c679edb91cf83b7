import { createHash } from 'node:crypto';
import type { ProviderSettings } from './provider-settings';
import { providerRequest, ProviderRequest, ProviderResponse, ProviderUnreachable, retryAfterOf } from './provider-http';
import type { RollingWindow } from './rolling-window';
import { callOptions } from './verification-outcomes';

/** What the session does after a 5xx or no answer. */
export interface FailureRule {
  /** The pause before each further try: as many further tries as pauses. */
  backoffMs: readonly number[];
  /**
   * Which answers are failures: 'server-errors' (5xx), or 'unexpected' (anything but a 2xx or a
   * 4xx: a 5xx, or a 1xx or 3xx, since redirects are not followed). Every other answer is the caller's.
   */
  statuses: 'server-errors' | 'unexpected';
  /** A 5xx's Retry-After is the pause instead of the schedule's (Graph asks for it on 503). */
  pauseForRetryAfter?: boolean;
}

/** What the session does when the provider says "too many": the request was not carried out, so every method is sent again. */
export interface ThrottleRule {
  /** How many times one call waits a throttle out before it gives up. */
  retries: number;
  /** Statuses that are a throttle, besides 429, when they carry Retry-After (Salesforce's 503). */
  withRetryAfter?: readonly number[];
  /** Read when there is no Retry-After: a header that gives the wait in milliseconds (HubSpot's interval). */
  intervalHeader?: string;
  /** The wait when the answer names none. */
  defaultWaitMs: number;
  /** Instead, for a paced call: the length of its window (HubSpot: 10 s, or 1 s for a search). */
  defaultIsWindow?: boolean;
}

/** Headers in which the provider reports its own count of a window (HubSpot's X-HubSpot-RateLimit-*). */
export interface CountHeaders {
  /** The limit it applies: one lower than configured is taken. */
  max: string;
  /** '0' while our own requests do not fill the window: the app's other tools spent it, so the window pauses. */
  remaining: string;
  /** How long that pause is, at most `longestPauseMs` (which is also the pause without this header). */
  intervalMs: string;
  longestPauseMs: number;
}

export interface PacingRule {
  /** The window every call counts against unless it names its own (see rolling-window.ts, sharedWindow). */
  window?: RollingWindow;
  countHeaders?: CountHeaders;
}

export interface AccessToken {
  value: string;
  /** Date.now() from which it is not used; Infinity when only a refusal ends it. */
  expiresAt: number;
}

/** Where a token is kept: by one session, or by every session of one app in this process (sharedTokens). */
export interface TokenStore {
  get(): AccessToken | undefined;
  set(token: AccessToken): void;
  drop(): void;
}

export interface TokenRule {
  /** A new token: the provider's grant, sent through this session as a call with `grant: true`. */
  grant(): Promise<AccessToken>;
  /** Default: the session's own. */
  store?: TokenStore;
  /** Answers that mean the token lapsed or predates a consent: one new grant, then the call once more. */
  renewOn: readonly number[];
}

/** A budget the provider counts besides pacing (Salesforce's daily API requests, Autotask's hourly threshold). */
export interface BudgetHooks {
  /** Before each try of a call (not of a grant); throws when the budget is spent. */
  beforeTry(): void | Promise<void>;
  /** Every answer to such a call, which may carry the provider's count. */
  afterAnswer?(response: ProviderResponse): void;
}

/** What a call needs besides its request; a provider adds what its messages name. */
export interface SessionCall {
  /** Default: the policy's (see verification-outcomes.ts, callOptions). */
  host?: 'configured' | 'named';
  /** False for a write that may have been carried out when its answer was lost or a 5xx: never sent again here. */
  repeatable?: boolean;
  /** The window the call counts against instead of the policy's; null when it is exempt. */
  window?: RollingWindow | null;
  /** A token grant: outside the budget, and its answer is read by the grant itself (no refusal). */
  grant?: boolean;
}

/** A try that came to nothing usable, for the provider's words about it. */
export type Failure = ({ kind: 'unreachable'; message: string } | { kind: 'answered'; response: ProviderResponse }) & {
  /** The call was not repeatable, so it was not tried again: a write may or may not have been carried out. */
  outcomeUnknown: boolean;
};

/** The plain data of a provider's policy, first in each provider's file so the providers can be compared. */
export interface SessionRules {
  /** Whose host the calls go to, unless a call says. */
  host: 'configured' | 'named';
  failures: FailureRule;
  throttle: ThrottleRule;
}

export interface SessionPolicy<Call extends SessionCall = SessionCall> extends SessionRules {
  /** The longest wait at once (a throttle's, a pause after a failure); one longer gives up instead. */
  maxWaitMs: number;
  pacing?: PacingRule;
  token?: TokenRule;
  budget?: BudgetHooks;
  /** An answer that ends the call with the provider's error (401/403, a daily limit); asked after a token's renewal. */
  refusal?(response: ProviderResponse, call: Call): Error | undefined;
  /** The error once a failure is not tried again. */
  failed(failure: Failure, call: Call): Error;
  /** The error once a throttle is not waited out; `waitMs` is when to come back. */
  throttled(response: ProviderResponse, waitMs: number, call: Call): Error;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One client's conversation with a provider: every call through provider-http (address guard,
 * a fresh deadline of settings.timeoutMs per try, no redirects, a bounded answer), with the policy
 * between that transport and the client in one place: pacing under the provider's windows and
 * budget, the access token (cached until it expires, renewed once on a refusal that says it
 * lapsed), throttles waited out, 5xx and no answer tried again by the schedule. What comes back
 * is an answer the caller reads (a 2xx or a 4xx); the rest is thrown as the policy words it.
 * Nothing here logs.
 */
export class ProviderSession<Call extends SessionCall = SessionCall> {
  private readonly tokens: TokenStore;
  private lastToken?: string;

  constructor(
    private readonly settings: ProviderSettings,
    private readonly policy: SessionPolicy<Call>,
  ) {
    this.tokens = policy.token?.store ?? ownToken();
  }

  /** The token last used or granted, for taking it out of messages. */
  get accessToken(): string | undefined {
    return this.lastToken;
  }

  /** The stored token while it is fresh, else a new grant. */
  async token(): Promise<string> {
    const stored = this.tokens.get();
    if (stored && stored.expiresAt > Date.now()) return (this.lastToken = stored.value);
    return this.renewToken();
  }

  /** A new grant, stored, whatever is stored now. */
  async renewToken(): Promise<string> {
    if (!this.policy.token) throw new Error('this provider is called without a token');
    const token = await this.policy.token.grant();
    this.tokens.set(token);
    return (this.lastToken = token.value);
  }

  /** One call; a request built from the access token is sent with the stored one, and once more with a new one when refused for it. */
  async send(request: ProviderRequest | ((accessToken: string) => ProviderRequest), call: Call): Promise<ProviderResponse> {
    if (typeof request !== 'function') return this.exchange(request, call, false);
    const renewOn = this.policy.token?.renewOn ?? [];
    const response = await this.exchange(request(await this.token()), call, true);
    if (!renewOn.includes(response.status)) return response;
    this.tokens.drop();
    return this.exchange(request(await this.token()), call, false);
  }

  /**
   * After the `failures`-th failure (0 for the first) of a call its caller repeats itself (a
   * create looked for before it is made again): waits the pause the session would (`askedMs`, the
   * failure's Retry-After, when the rule takes it, else the schedule's) and says true, or says
   * false when the schedule is spent or the pause is beyond maxWaitMs.
   */
  async backOff(failures: number, askedMs?: number): Promise<boolean> {
    const pauseMs = pauseAfterFailure(this.policy.failures, this.policy.maxWaitMs, failures, askedMs);
    if (pauseMs === undefined) return false;
    await sleep(pauseMs);
    return true;
  }

  /** The tries of one request; `renewable`: an answer the token rule renews on is handed back rather than refused. */
  private async exchange(request: ProviderRequest, call: Call, renewable: boolean): Promise<ProviderResponse> {
    const { policy } = this;
    const window = call.window === undefined ? policy.pacing?.window : (call.window ?? undefined);
    const budget = call.grant ? undefined : policy.budget;
    let throttles = 0;
    let failures = 0;
    for (;;) {
      await budget?.beforeTry();
      const answer = await this.attempt(request, call, window);
      let failure: Failure;
      if (answer instanceof ProviderUnreachable) {
        failure = { kind: 'unreachable', message: answer.message, outcomeUnknown: call.repeatable === false };
      } else {
        if (window && policy.pacing?.countHeaders) learn(answer, window, policy.pacing.countHeaders);
        budget?.afterAnswer?.(answer);
        const { status } = answer;
        if (renewable && policy.token?.renewOn.includes(status)) return answer;
        const refusal = call.grant ? undefined : policy.refusal?.(answer, call);
        if (refusal) throw refusal;
        if (this.isThrottle(answer)) {
          const waitMs = this.waitOf(answer, window);
          if (throttles >= policy.throttle.retries || waitMs > policy.maxWaitMs) throw policy.throttled(answer, waitMs, call);
          throttles++;
          // A paced call pauses its window, so every call of the app waits, not only this one.
          if (window) window.pause(waitMs);
          else await sleep(waitMs);
          continue;
        }
        if (!this.isFailure(status)) return answer;
        failure = { kind: 'answered', response: answer, outcomeUnknown: call.repeatable === false };
      }
      if (failure.outcomeUnknown) throw policy.failed(failure, call);
      const askedMs = failure.kind === 'answered' ? retryAfterMsOf(failure.response) : undefined;
      const pauseMs = pauseAfterFailure(policy.failures, policy.maxWaitMs, failures, askedMs);
      if (pauseMs === undefined) throw policy.failed(failure, call);
      failures++;
      await sleep(pauseMs);
    }
  }

  /** One try, in a slot of the window when the call is paced; no answer at all comes back as ProviderUnreachable. */
  private async attempt(request: ProviderRequest, call: Call, window: RollingWindow | undefined): Promise<ProviderResponse | ProviderUnreachable> {
    const release = await window?.take();
    try {
      return await providerRequest(request, callOptions(this.settings, Date.now() + this.settings.timeoutMs, call.host ?? this.policy.host));
    } catch (error) {
      if (error instanceof ProviderUnreachable) return error;
      throw error;
    } finally {
      release?.();
    }
  }

  private isThrottle(response: ProviderResponse): boolean {
    if (response.status === 429) return true;
    return (this.policy.throttle.withRetryAfter ?? []).includes(response.status) && retryAfterOf(response) !== undefined;
  }

  private isFailure(status: number): boolean {
    if (status >= 500) return true;
    return this.policy.failures.statuses === 'unexpected' && (status < 200 || (status >= 300 && status < 400));
  }

  /** Retry-After, else the provider's interval header, else the default (or the call's window). */
  private waitOf(response: ProviderResponse, window: RollingWindow | undefined): number {
    const rule = this.policy.throttle;
    const askedMs = retryAfterMsOf(response);
    if (askedMs !== undefined) return askedMs;
    const interval = rule.intervalHeader === undefined ? NaN : Number(response.headers[rule.intervalHeader]);
    if (Number.isFinite(interval) && interval > 0) return interval;
    return rule.defaultIsWindow && window ? window.windowMs : rule.defaultWaitMs;
  }
}

/**
 * The pause before another try after the `failures`-th failure (0 for the first), or undefined
 * when the call gives up: the schedule is spent, or the pause (`askedMs`, the provider's Retry-After,
 * when the rule takes it, else the schedule's) is beyond `maxWaitMs`. Exported for the LLM client,
 * whose transport the openai SDK owns, so that its tries follow the same rule.
 */
export function pauseAfterFailure(
  rule: Pick<FailureRule, 'backoffMs' | 'pauseForRetryAfter'>,
  maxWaitMs: number,
  failures: number,
  askedMs?: number,
): number | undefined {
  if (failures >= rule.backoffMs.length) return undefined;
  const pauseMs = (rule.pauseForRetryAfter ? askedMs : undefined) ?? rule.backoffMs[failures];
  return pauseMs > maxWaitMs ? undefined : pauseMs;
}

function retryAfterMsOf(response: ProviderResponse): number | undefined {
  const seconds = retryAfterOf(response);
  return seconds === undefined ? undefined : seconds * 1000;
}

/** The provider's own count: a lower limit than configured is taken, and a budget spent by the app's other tools waits out the interval. */
function learn(response: ProviderResponse, window: RollingWindow, headers: CountHeaders): void {
  const max = Number(response.headers[headers.max]);
  if (Number.isInteger(max) && max > 0 && max < window.limit) window.limit = max;
  if (response.headers[headers.remaining] === '0' && response.status !== 429 && !window.full) {
    const interval = Number(response.headers[headers.intervalMs]);
    window.pause(Number.isFinite(interval) && interval > 0 ? Math.min(interval, headers.longestPauseMs) : headers.longestPauseMs);
  }
}

function ownToken(): TokenStore {
  let token: AccessToken | undefined;
  return {
    get: () => token,
    set: (value) => (token = value),
    drop: () => (token = undefined),
  };
}

/** Tokens by app: a run makes a new session, and one token serves them all until it expires. */
const sharedTokenValues = new Map<string, AccessToken>();

/** The token store of the app `key` names (its login host, tenant, client id and secret) in this process; hashed, so no secret is kept as a key. */
export function sharedTokens(key: string[]): TokenStore {
  const id = createHash('sha256').update(key.join('\n')).digest('hex');
  return {
    get: () => sharedTokenValues.get(id),
    set: (token) => sharedTokenValues.set(id, token),
    drop: () => sharedTokenValues.delete(id),
  };
}

import { createHash } from 'node:crypto';
import { CrmAuthRefused, CrmLimitReached, CrmUnavailable } from './crm-client';
import type { ProviderSettings } from './crm-verification';
import { jsonOf, providerRequest, ProviderResponse, ProviderUnreachable, retryAfterOf } from './provider-http';

/**
 * How a request-count limit of HubSpot's is kept from our side: a rolling window of slots. A slot
 * is taken when a request is sent and counts until `windowMs` after its answer came (not after it
 * was sent): HubSpot counts a request when it arrives, which is between the two, so a window
 * measured from the answer can never hold more than `limit` arrivals, however the network delays them.
 */
export class RollingWindow {
  private readonly slots: Array<{ expiresAt: number }> = [];
  private readonly waiters = new Set<() => void>();
  private pausedUntil = 0;

  constructor(
    public limit: number,
    readonly windowMs: number,
  ) {}

  /** Waits for a free slot and takes it; call the returned function when the answer (or the failure) came. */
  async take(): Promise<() => void> {
    for (;;) {
      const now = Date.now();
      for (let i = this.slots.length - 1; i >= 0; i--) if (this.slots[i].expiresAt <= now) this.slots.splice(i, 1);
      if (now >= this.pausedUntil && this.slots.length < this.limit) {
        const slot = { expiresAt: Infinity };
        this.slots.push(slot);
        return () => {
          slot.expiresAt = Date.now() + this.windowMs;
          for (const wake of [...this.waiters]) wake();
        };
      }
      const nextExpiry = Math.min(...this.slots.map((slot) => slot.expiresAt));
      const until = now < this.pausedUntil ? this.pausedUntil : nextExpiry;
      // Every slot in flight (Infinity): a release wakes us.
      await this.sleep(Number.isFinite(until) ? until - now : undefined);
    }
  }

  /** No request for `ms` (HubSpot said to wait, or the app's budget is spent by other tools). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
  }

  /** Whether our own requests fill the window. */
  get full(): boolean {
    const now = Date.now();
    return this.slots.filter((slot) => slot.expiresAt > now).length >= this.limit;
  }

  private sleep(ms: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}

/** HubSpot's limits for one private app: requests per rolling 10 seconds, and 5 searches a second (searches are exempt from the first). */
interface Pacer {
  tenSecondly: RollingWindow;
  search: RollingWindow;
}

const TEN_SECONDS = 10_000;
export const SEARCHES_PER_SECOND = 5;
/** The limit is the app's, not one client's: every client of one token in this process shares one pacer (a sync run makes a new client). */
const pacers = new Map<string, Pacer>();

function pacerFor(baseUrl: string, token: string, requestsPer10s: number): Pacer {
  const key = createHash('sha256').update(`${baseUrl}\n${token}`).digest('hex');
  let pacer = pacers.get(key);
  if (!pacer) {
    pacer = { tenSecondly: new RollingWindow(requestsPer10s, TEN_SECONDS), search: new RollingWindow(SEARCHES_PER_SECOND, 1_000) };
    pacers.set(key, pacer);
  }
  pacer.tenSecondly.limit = requestsPer10s;
  return pacer;
}

export interface HubSpotCall {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** Which of HubSpot's limits the endpoint counts against (its OpenAPI `x-hubspot-rate-limit-exemptions`): search has its own; `none` for the exempt ones. */
  limit: 'ten-secondly' | 'search' | 'none';
}

export interface HubSpotHttpOptions {
  maxWaitMs: number;
  requestsPer10s: number;
}

/** 5xx and no answer are tried this many more times, after these pauses. */
const FAILURE_BACKOFF_MS = [250, 1_000];
const MAX_RATE_LIMITED_RETRIES = 3;
/** Batch and search answers of 100 records are far longer than provider-http's default. */
const MAX_ANSWER_CHARS = 8 * 1024 * 1024;
const MAX_REASON = 300;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** HubSpot's error body ({status, message, correlationId, category}): its message, else its category. */
export function hubspotReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { message?: unknown; category?: unknown } | undefined;
  if (typeof body?.message === 'string') return body.message;
  return typeof body?.category === 'string' ? body.category : `answered ${response.status}`;
}

/**
 * Every call to HubSpot of one client: through provider-http (address guard, deadline of
 * settings.timeoutMs per exchange, no redirects), paced under the app's limits, 429s waited out
 * (Retry-After, else the window's interval) and 5xx or no answer tried again. What comes back is a
 * 2xx or a 4xx the caller reads (400, 404, 409); refusals and unusable answers are thrown as the
 * CrmClient errors. Nothing here logs, and no message carries the token.
 */
export class HubSpotHttp {
  private readonly pacer: Pacer;

  constructor(
    private readonly token: string,
    private readonly settings: ProviderSettings,
    private readonly options: HubSpotHttpOptions,
  ) {
    this.pacer = pacerFor(settings.hubspotApiUrl, token, options.requestsPer10s);
  }

  async send(call: HubSpotCall): Promise<ProviderResponse> {
    let rateLimited = 0;
    let failures = 0;
    const window = call.limit === 'none' ? undefined : call.limit === 'search' ? this.pacer.search : this.pacer.tenSecondly;
    for (;;) {
      const release = await window?.take();
      let response: ProviderResponse;
      try {
        response = await providerRequest(
          {
            method: call.method,
            url: `${this.settings.hubspotApiUrl}${call.path}`,
            headers: { authorization: `Bearer ${this.token}`, ...(call.body === undefined ? {} : { 'content-type': 'application/json' }) },
            body: call.body === undefined ? undefined : JSON.stringify(call.body),
            maxAnswerChars: MAX_ANSWER_CHARS,
          },
          {
            deadline: Date.now() + this.settings.timeoutMs,
            resolve: this.settings.resolve,
            guard: this.settings.guardConfiguredUrls && !this.settings.allowPrivateUrls,
          },
        );
      } catch (error) {
        if (!(error instanceof ProviderUnreachable)) throw error;
        if (failures >= FAILURE_BACKOFF_MS.length) throw new CrmUnavailable(`HubSpot could not be reached (${this.clean(error.message)})`);
        await pause(FAILURE_BACKOFF_MS[failures++]);
        continue;
      } finally {
        release?.();
      }
      if (window) this.learn(response, window);
      const { status } = response;
      if (status === 401 || status === 403) throw new CrmAuthRefused(`HubSpot refused the credentials: ${this.clean(hubspotReason(response))}`);
      if (status === 429) {
        const waitMs = this.waitOf(response, window);
        if ((jsonOf(response) as { policyName?: unknown } | undefined)?.policyName === 'DAILY') {
          throw new CrmLimitReached(`HubSpot's daily request limit is used up (${this.clean(hubspotReason(response))})`);
        }
        if (rateLimited >= MAX_RATE_LIMITED_RETRIES || waitMs > this.options.maxWaitMs) {
          throw new CrmUnavailable(`HubSpot is rate limiting this app (${this.clean(hubspotReason(response))})`, waitMs);
        }
        rateLimited++;
        window?.pause(waitMs);
        if (!window) await pause(waitMs);
        continue;
      }
      if (status >= 500 || status < 200 || (status >= 300 && status < 400)) {
        if (failures >= FAILURE_BACKOFF_MS.length) throw new CrmUnavailable(`HubSpot answered ${status} (${this.clean(hubspotReason(response))})`);
        await pause(FAILURE_BACKOFF_MS[failures++]);
        continue;
      }
      return response;
    }
  }

  /** POST a JSON body and read the JSON answer; a 4xx other than a refusal is returned with its status for the caller to read. */
  async post<Answer>(
    path: string,
    body: unknown,
    limit: HubSpotCall['limit'] = 'ten-secondly',
  ): Promise<{ status: number; body: Answer | undefined; reason: string }> {
    const response = await this.send({ method: 'POST', path, body, limit });
    if (response.status >= 200 && response.status < 300 && response.text !== '' && jsonOf(response) === undefined) {
      throw new CrmUnavailable(`HubSpot's answer to ${path} was not JSON`);
    }
    const reason = response.status >= 400 ? this.clean(hubspotReason(response)) : '';
    return { status: response.status, body: jsonOf(response) as Answer | undefined, reason };
  }

  /** Retry-After, else HubSpot's interval header, else the window of the limit the call counts against (10 s; 1 s for search). */
  private waitOf(response: ProviderResponse, window: RollingWindow | undefined): number {
    const retryAfterS = retryAfterOf(response);
    if (retryAfterS !== undefined) return retryAfterS * 1000;
    const interval = Number(response.headers['x-hubspot-ratelimit-interval-milliseconds']);
    return Number.isFinite(interval) && interval > 0 ? interval : (window?.windowMs ?? TEN_SECONDS);
  }

  /** HubSpot's own count: a lower limit than configured is taken, and a budget spent by the app's other users waits out the interval. */
  private learn(response: ProviderResponse, window: RollingWindow): void {
    const max = Number(response.headers['x-hubspot-ratelimit-max']);
    if (Number.isInteger(max) && max > 0 && max < window.limit) window.limit = max;
    const remaining = response.headers['x-hubspot-ratelimit-remaining'];
    if (remaining === '0' && response.status !== 429 && !window.full) {
      const interval = Number(response.headers['x-hubspot-ratelimit-interval-milliseconds']);
      window.pause(Number.isFinite(interval) && interval > 0 ? Math.min(interval, TEN_SECONDS) : TEN_SECONDS);
    }
  }

  /** HubSpot's words, short and without the token, in case an answer echoes it. */
  private clean(reason: string): string {
    let text = reason.replace(/\s+/g, ' ').trim();
    if (this.token.length >= 4) text = text.split(this.token).join('[redacted]');
    return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text || 'no reason given';
  }
}

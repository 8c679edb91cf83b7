import { CrmAuthRefused, CrmLimitReached, CrmUnavailable } from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { jsonOf, ProviderResponse } from './provider-http';
import { CountHeaders, ProviderSession, SessionRules } from './provider-session';
import { RollingWindow, sharedWindow } from './rolling-window';
import { cleanReason } from './verification-outcomes';

const TEN_SECONDS = 10_000;
/** HubSpot's limit on search requests, which are exempt from the ten-secondly one. */
export const SEARCHES_PER_SECOND = 5;

/**
 * How HubSpot's calls are retried: 5xx and no answer twice more, after 250 ms and 1 s; a 429 waited
 * out three times, for its Retry-After, else HubSpot's interval header, else the window of the limit
 * the call counts against (10 s; 1 s for search).
 */
const HUBSPOT_RULES: SessionRules = {
  host: 'configured',
  failures: { backoffMs: [250, 1_000], statuses: 'unexpected' },
  throttle: { retries: 3, intervalHeader: 'x-hubspot-ratelimit-interval-milliseconds', defaultWaitMs: TEN_SECONDS, defaultIsWindow: true },
};

/** HubSpot's own count of the ten-secondly limit, on every answer that counts against it. */
const HUBSPOT_COUNT: CountHeaders = {
  max: 'x-hubspot-ratelimit-max',
  remaining: 'x-hubspot-ratelimit-remaining',
  intervalMs: 'x-hubspot-ratelimit-interval-milliseconds',
  longestPauseMs: TEN_SECONDS,
};

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

/** Batch and search answers of 100 records are far longer than provider-http's default. */
const MAX_ANSWER_CHARS = 8 * 1024 * 1024;

/** HubSpot's error body ({status, message, correlationId, category}): its message, else its category. */
export function hubspotReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { message?: unknown; category?: unknown } | undefined;
  if (typeof body?.message === 'string') return body.message;
  return typeof body?.category === 'string' ? body.category : `answered ${response.status}`;
}

/**
 * Every call to HubSpot of one client, through one ProviderSession: paced under the app's limits
 * (requests per rolling 10 seconds, and 5 searches a second, which are exempt from the first; every
 * client of one token in this process shares them, since a sync run makes a new client), 429s
 * waited out and 5xx or no answer tried again (HUBSPOT_RULES). What comes back is a 2xx or a 4xx
 * the caller reads (400, 404, 409); refusals and unusable answers are thrown as the CrmClient
 * errors. Nothing here logs, and no message carries the token.
 */
export class HubSpotHttp {
  private readonly session: ProviderSession;
  private readonly tenSecondly: RollingWindow;
  private readonly search: RollingWindow;

  constructor(
    private readonly token: string,
    private readonly settings: ProviderSettings,
    options: HubSpotHttpOptions,
  ) {
    this.tenSecondly = sharedWindow(['hubspot ten-secondly', settings.hubspotApiUrl, token], options.requestsPer10s, TEN_SECONDS);
    this.tenSecondly.limit = options.requestsPer10s;
    this.search = sharedWindow(['hubspot search', settings.hubspotApiUrl, token], SEARCHES_PER_SECOND, 1_000);
    this.session = new ProviderSession(settings, {
      ...HUBSPOT_RULES,
      maxWaitMs: options.maxWaitMs,
      pacing: { countHeaders: HUBSPOT_COUNT },
      refusal: (response) => {
        if (response.status === 401 || response.status === 403)
          return new CrmAuthRefused(`HubSpot refused the credentials: ${this.clean(hubspotReason(response))}`);
        if (response.status === 429 && (jsonOf(response) as { policyName?: unknown } | undefined)?.policyName === 'DAILY') {
          return new CrmLimitReached(`HubSpot's daily request limit is used up (${this.clean(hubspotReason(response))})`);
        }
        return undefined;
      },
      throttled: (response, waitMs) => new CrmUnavailable(`HubSpot is rate limiting this app (${this.clean(hubspotReason(response))})`, waitMs),
      failed: (failure) =>
        new CrmUnavailable(
          failure.kind === 'unreachable'
            ? `HubSpot could not be reached (${this.clean(failure.message)})`
            : `HubSpot answered ${failure.response.status} (${this.clean(hubspotReason(failure.response))})`,
        ),
    });
  }

  send(call: HubSpotCall): Promise<ProviderResponse> {
    return this.session.send(
      {
        method: call.method,
        url: `${this.settings.hubspotApiUrl}${call.path}`,
        headers: { authorization: `Bearer ${this.token}`, ...(call.body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        maxAnswerChars: MAX_ANSWER_CHARS,
      },
      { window: call.limit === 'none' ? null : call.limit === 'search' ? this.search : this.tenSecondly },
    );
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

  /** HubSpot's words, short and without the token, in case an answer echoes it. */
  private clean(reason: string): string {
    return cleanReason(reason, { access_token: this.token });
  }
}

import { CrmAuthRefused, CrmUnavailable } from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { CONNECTWISE_API_PATH } from './connectwise-verification';
import { jsonOf, ProviderResponse } from './provider-http';
import { ProviderSession, SessionCall, SessionRules } from './provider-session';
import { cleanReason } from './verification-outcomes';

export const CONNECTWISE = 'ConnectWise PSA';

/**
 * How ConnectWise's calls are retried: 5xx (a 1xx or 3xx alike) and no answer to a read, an update
 * or a delete twice more, after 250 ms and 1 s; a 429 waited out three times, for its Retry-After,
 * else 5 s (ConnectWise's guide asks for a pause before trying again, not how long). The host is
 * set per site (see the constructor).
 */
const CONNECTWISE_RULES: Omit<SessionRules, 'host'> = {
  failures: { backoffMs: [250, 1_000], statuses: 'unexpected' },
  throttle: { retries: 3, defaultWaitMs: 5_000 },
};

/** A list of a thousand records (the most one page holds) is far longer than provider-http's default. */
const MAX_ANSWER_CHARS = 8 * 1024 * 1024;

export interface ConnectwiseCall {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Below the API root (/company/companies). */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

export interface ConnectwiseAnswer<Body> {
  status: number;
  body: Body | undefined;
  /** ConnectWise's words for a 4xx ("opportunity object is invalid: The contact field is required."), cleaned of every secret. */
  reason: string;
}

/** One `{op: "replace", path, value}` of a ConnectWise PATCH body. */
export const replace = (path: string, value: unknown) => ({ op: 'replace', path, value });

/** A string value inside `conditions`: double-quoted, with quotes and backslashes escaped. */
export const quoted = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/**
 * Every call of one client to a ConnectWise PSA site (https://{site}/v4_6_release/apis/3.0, or
 * CONNECTWISE_SITE_URL outside production): through provider-http (address guard, deadline of
 * settings.timeoutMs per exchange, no redirects, bounded answer), with the member's key pair as
 * Basic auth and the integration's clientId header. One request at a time: ConnectWise publishes
 * no fixed quota, it answers 429 with a Retry-After (seconds) when a site is over capacity, which
 * is waited out up to maxWaitMs, three times. A 5xx or no answer to a GET, PATCH or DELETE is tried
 * twice more; a POST is not tried again, because ConnectWise may have made the record before the
 * answer was lost: the run fails, and the next one finds what was made by its marker (our deal
 * id on the opportunity, the opportunity on the project or agreement) instead of making it twice.
 * 401/403 are CrmAuthRefused; what comes back is a 2xx or a 4xx for the caller to read.
 * Nothing here logs, and no message carries a key.
 */
export class ConnectwiseHttp {
  private readonly authorization: string;
  private readonly secrets: Record<string, string>;
  private readonly baseUrl: string;
  private readonly session: ProviderSession<SessionCall & { label: string }>;

  constructor(
    private readonly credentials: Record<string, string>,
    settings: ProviderSettings,
    maxWaitMs: number,
  ) {
    const basic = Buffer.from(`${credentials.company_id}+${credentials.public_key}:${credentials.private_key}`).toString('base64');
    this.authorization = `Basic ${basic}`;
    // The header value is as secret as the private key it carries.
    this.secrets = { ...credentials, authorization: basic };
    this.baseUrl = `${settings.connectwiseSiteUrl ?? `https://${credentials.site}`}${CONNECTWISE_API_PATH}`;
    this.session = new ProviderSession(settings, {
      ...CONNECTWISE_RULES,
      // The site is the customer's host: always guarded, unless private addresses are allowed; the
      // configured CONNECTWISE_SITE_URL (outside production only) is the operator's choice.
      host: settings.connectwiseSiteUrl ? 'configured' : 'named',
      maxWaitMs,
      refusal: (response) =>
        response.status === 401 || response.status === 403
          ? new CrmAuthRefused(`${CONNECTWISE} refused the credentials: ${this.clean(connectwiseReason(response))}`)
          : undefined,
      throttled: (response, waitMs) =>
        new CrmUnavailable(`${CONNECTWISE} is rate limiting this integration (${this.clean(connectwiseReason(response))})`, waitMs),
      failed: (failure, call) =>
        new CrmUnavailable(
          failure.kind === 'unreachable'
            ? `${CONNECTWISE} could not be reached (${this.clean(failure.message)})`
            : `${CONNECTWISE} answered ${failure.response.status} to ${call.label} (${this.clean(connectwiseReason(failure.response))})`,
        ),
    });
  }

  async request<Body>(call: ConnectwiseCall): Promise<ConnectwiseAnswer<Body>> {
    const response = await this.send(call);
    const ok = response.status >= 200 && response.status < 300;
    if (ok && response.text !== '' && jsonOf(response) === undefined)
      throw new CrmUnavailable(`${CONNECTWISE}'s answer to ${call.method} ${call.path} was not JSON`);
    return { status: response.status, body: jsonOf(response) as Body | undefined, reason: ok ? '' : this.clean(connectwiseReason(response)) };
  }

  /** A GET that must succeed (a setup table, a search): its records; anything but 200 fails the run. */
  async list<Item>(path: string, query: Record<string, string>): Promise<Item[]> {
    const answer = await this.request<Item[]>({ method: 'GET', path, query });
    if (answer.status !== 200 || !Array.isArray(answer.body)) {
      throw new CrmUnavailable(`${CONNECTWISE} answered ${answer.status} to GET ${path} (${answer.reason || 'not a list'})`);
    }
    return answer.body;
  }

  /** ConnectWise's words, short and without any key, in case an answer echoes one. */
  clean(reason: string): string {
    return cleanReason(reason, this.secrets);
  }

  private send(call: ConnectwiseCall): Promise<ProviderResponse> {
    const query = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
    return this.session.send(
      {
        method: call.method,
        url: `${this.baseUrl}${call.path}${query}`,
        headers: {
          authorization: this.authorization,
          clientId: this.credentials.client_id ?? '',
          ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        maxAnswerChars: MAX_ANSWER_CHARS,
      },
      // A POST may have made the record before its answer was lost: the next run finds it instead.
      { repeatable: call.method !== 'POST', label: `${call.method} ${call.path}` },
    );
  }
}

/** ConnectWise's error body ({code, message, errors: [{message, field}]}): the message and each field's, else the status. */
export function connectwiseReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { message?: unknown; errors?: Array<{ message?: unknown }> } | undefined;
  if (typeof body?.message !== 'string') return `answered ${response.status}`;
  const details = (Array.isArray(body.errors) ? body.errors : [])
    .map((error) => error?.message)
    .filter((message): message is string => typeof message === 'string');
  return details.length ? `${body.message}: ${details.join(' ')}` : body.message;
}

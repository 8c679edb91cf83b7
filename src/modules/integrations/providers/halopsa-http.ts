import { CrmAuthRefused, CrmUnavailable } from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { jsonOf, ProviderRequest, ProviderResponse } from './provider-http';
import { AccessToken, ProviderSession, SessionCall, SessionRules } from './provider-session';
import { sharedWindow } from './rolling-window';
import { cleanReason } from './verification-outcomes';

/**
 * HaloPSA's limit: requests per rolling five minutes for the whole tenant (a hosted instance
 * answers 429 "Rate Limit Reached - 300 Requests per rolling 5 minute window"). The client keeps
 * under it from its own side; a self-hosted instance set higher can be given its own figure.
 */
export const DEFAULT_REQUESTS_PER_5_MINUTES = 300;
const FIVE_MINUTES = 5 * 60_000;

/**
 * How HaloPSA's calls are retried: 5xx (a 1xx or 3xx alike) and no answer to a repeatable call
 * twice more, after 250 ms and 1 s; a 429 waited out three times, for its Retry-After, else 10 s
 * (the window is rolling, so a short pause frees a slot). The host is set per instance (see the
 * constructor).
 */
const HALOPSA_RULES: Omit<SessionRules, 'host'> = {
  failures: { backoffMs: [250, 1_000], statuses: 'unexpected' },
  throttle: { retries: 3, defaultWaitMs: 10_000 },
};

/** A page of 100 clients or tickets is far longer than provider-http's default. */
const MAX_ANSWER_CHARS = 8 * 1024 * 1024;
/** A token is renewed this long before HaloPSA says it expires, so no call goes out with one about to lapse. */
const TOKEN_MARGIN_MS = 60_000;

/** HaloPSA's errors: {error, error_description} from the token endpoint; a JSON string, {message} or plain text from the API. */
export function halopsaReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { error?: unknown; error_description?: unknown; message?: unknown; ClassName?: unknown } | string | undefined;
  if (typeof body === 'string') return body;
  if (typeof body?.error === 'string') return typeof body.error_description === 'string' ? `${body.error}: ${body.error_description}` : body.error;
  if (typeof body?.message === 'string') return body.message;
  if (body === undefined && response.text.trim() !== '' && !response.text.trimStart().startsWith('<')) return response.text;
  return `answered ${response.status}`;
}

export interface HaloPsaHttpOptions {
  maxWaitMs: number;
  requestsPer5Minutes: number;
}

/**
 * One authenticated conversation with a HaloPSA instance (halopsa.com/apidoc): the
 * client-credentials grant at `{instance}/auth/token` (scope `all`, as connect verified it), then
 * every call under `{instance}/api` with the bearer token, through one ProviderSession (HALOPSA_RULES).
 * - The instance is the customer's host (HALOPSA_INSTANCE_URL instead, outside production), so it
 *   passes the address guard unless private addresses are allowed.
 * - 401 on a call: one new grant, then the call once more (the token lapsed); a refused grant
 *   (400/401 invalid_client…) or a second 401, and any 403, is CrmAuthRefused.
 * - Paced under the tenant's requests per rolling five minutes; 429 waited out for Retry-After
 *   (10 s without one) up to 3 times and never longer than maxWaitMs at once; 5xx and no answer
 *   asked again twice. Then CrmUnavailable.
 * What comes back is a 2xx or a 4xx the caller reads (400 validation, 404). Nothing here logs, and
 * no message carries the client secret or the token.
 */
export class HaloPsaHttp {
  private readonly instance: string;
  private readonly session: ProviderSession<SessionCall & { path: string }>;

  constructor(
    private readonly credentials: Record<string, string>,
    settings: ProviderSettings,
    options: HaloPsaHttpOptions,
  ) {
    this.instance = settings.halopsaInstanceUrl ?? (credentials.instance_url ?? '').replace(/\/+$/, '');
    // The limit is the tenant's, not one client's: every client of one application in this process shares one window (a sync run makes a new client).
    const window = sharedWindow(['halopsa', this.instance, credentials.client_id ?? ''], options.requestsPer5Minutes, FIVE_MINUTES);
    window.limit = options.requestsPer5Minutes;
    this.session = new ProviderSession(settings, {
      ...HALOPSA_RULES,
      host: settings.halopsaInstanceUrl ? 'configured' : 'named',
      maxWaitMs: options.maxWaitMs,
      pacing: { window },
      token: { grant: () => this.tokenGrant(), renewOn: [401] },
      refusal: (response, call) =>
        response.status === 401 || response.status === 403
          ? new CrmAuthRefused(`HaloPSA refused the call to ${call.path.split('?')[0]}: ${this.clean(halopsaReason(response))}`)
          : undefined,
      throttled: (response, waitMs) => new CrmUnavailable(`HaloPSA is rate limiting this application (${this.clean(halopsaReason(response))})`, waitMs),
      failed: (failure) =>
        new CrmUnavailable(
          failure.kind === 'unreachable'
            ? `HaloPSA could not be reached (${this.clean(failure.message)})`
            : `HaloPSA answered ${failure.response.status} (${this.clean(halopsaReason(failure.response))})`,
        ),
    });
  }

  /** The provider's words with every credential and the access token taken out, short. */
  clean(reason: string): string {
    const accessToken = this.session.accessToken;
    return cleanReason(reason, accessToken ? { ...this.credentials, access_token: accessToken } : this.credentials);
  }

  /** The client-credentials grant, whatever token is held. */
  async authenticate(): Promise<void> {
    await this.session.renewToken();
  }

  /**
   * A call under /api (`path` starts with /api/), answered 2xx or a 4xx for the caller; the body is
   * sent as JSON. A write (HaloPSA's POST creates and updates) that failed with a 5xx or no answer
   * may have been carried out: it is not sent again here; the run fails and the next push looks for
   * the record first (third_party_id_string, a contract's ref).
   */
  api(method: ProviderRequest['method'], path: string, body?: unknown): Promise<ProviderResponse> {
    return this.session.send(
      (accessToken) => ({
        method,
        url: `${this.instance}${path}`,
        headers: { authorization: `Bearer ${accessToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        maxAnswerChars: MAX_ANSWER_CHARS,
      }),
      { repeatable: method === 'GET' || method === 'DELETE', path },
    );
  }

  /** GET and read the JSON answer (a 4xx comes back as undefined with its status). */
  async get<Answer>(path: string): Promise<{ status: number; body: Answer | undefined; reason: string }> {
    return this.read<Answer>(await this.api('GET', path), path);
  }

  /** POST a JSON body and read the JSON answer; a 4xx is returned with HaloPSA's reason for the caller to report. */
  async post<Answer>(path: string, body: unknown): Promise<{ status: number; body: Answer | undefined; reason: string }> {
    return this.read<Answer>(await this.api('POST', path, body), path);
  }

  private read<Answer>(response: ProviderResponse, path: string): { status: number; body: Answer | undefined; reason: string } {
    const ok = response.status >= 200 && response.status < 300;
    if (ok && response.text !== '' && jsonOf(response) === undefined) throw new CrmUnavailable(`HaloPSA's answer to ${path.split('?')[0]} was not JSON`);
    return { status: response.status, body: ok ? (jsonOf(response) as Answer | undefined) : undefined, reason: ok ? '' : this.clean(halopsaReason(response)) };
  }

  /** The client-credentials grant at {instance}/auth/token; its token is used until shortly before it expires. */
  private async tokenGrant(): Promise<AccessToken> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: this.credentials.client_id ?? '',
      client_secret: this.credentials.client_secret ?? '',
      scope: 'all',
    });
    // A token grant changes nothing at HaloPSA: asked again like a read.
    const response = await this.session.send(
      { method: 'POST', url: `${this.instance}/auth/token`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() },
      { grant: true, path: '/auth/token' },
    );
    if (response.status === 400 || response.status === 401 || response.status === 403) {
      throw new CrmAuthRefused(`HaloPSA refused the credentials: ${this.clean(halopsaReason(response))}`);
    }
    const grant = jsonOf(response) as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (response.status !== 200 || typeof grant?.access_token !== 'string' || grant.access_token === '') {
      throw new CrmUnavailable(`HaloPSA's token endpoint answered ${response.status} without an access token`);
    }
    const lifetimeS = typeof grant.expires_in === 'number' && grant.expires_in > 0 ? grant.expires_in : 3600;
    return { value: grant.access_token, expiresAt: Date.now() + lifetimeS * 1000 - TOKEN_MARGIN_MS };
  }
}

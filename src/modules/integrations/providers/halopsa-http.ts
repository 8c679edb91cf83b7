import { createHash } from 'node:crypto';
import { CrmAuthRefused, CrmUnavailable } from './crm-client';
import type { ProviderSettings } from './crm-verification';
import { RollingWindow } from './hubspot-http';
import { jsonOf, providerRequest, ProviderRequest, ProviderResponse, ProviderUnreachable, retryAfterOf } from './provider-http';
import { callOptions, cleanReason } from './verification-outcomes';

/**
 * HaloPSA's limit: requests per rolling five minutes for the whole tenant (a hosted instance
 * answers 429 "Rate Limit Reached - 300 Requests per rolling 5 minute window"). The client keeps
 * under it from its own side; a self-hosted instance set higher can be given its own figure.
 */
export const DEFAULT_REQUESTS_PER_5_MINUTES = 300;
const FIVE_MINUTES = 5 * 60_000;
/** 429 without Retry-After: HaloPSA's window is rolling, so a short pause frees a slot; waited this long. */
const DEFAULT_RETRY_AFTER_MS = 10_000;
const RATE_LIMIT_RETRIES = 3;
/** 5xx and no answer are tried this many more times, after these pauses. */
const FAILURE_BACKOFF_MS = [250, 1_000];
/** A page of 100 clients or tickets is far longer than provider-http's default. */
const MAX_ANSWER_CHARS = 8 * 1024 * 1024;
/** A token is renewed this long before HaloPSA says it expires, so no call goes out with one about to lapse. */
const TOKEN_MARGIN_MS = 60_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The limit is the tenant's, not one client's: every client of one application in this process shares one window (a sync run makes a new client). */
const windows = new Map<string, RollingWindow>();

function windowFor(instance: string, clientId: string, limit: number): RollingWindow {
  const key = createHash('sha256').update(`${instance}\n${clientId}`).digest('hex');
  let window = windows.get(key);
  if (!window) {
    window = new RollingWindow(limit, FIVE_MINUTES);
    windows.set(key, window);
  }
  window.limit = limit;
  return window;
}

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
 * every call under `{instance}/api` with the bearer token, through provider-http (address guard,
 * a deadline of settings.timeoutMs per exchange, no redirects, a bounded answer).
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
  private readonly window: RollingWindow;
  private accessToken?: string;
  private expiresAt = 0;

  constructor(
    private readonly credentials: Record<string, string>,
    private readonly settings: ProviderSettings,
    private readonly options: HaloPsaHttpOptions,
  ) {
    this.instance = settings.halopsaInstanceUrl ?? (credentials.instance_url ?? '').replace(/\/+$/, '');
    this.window = windowFor(this.instance, credentials.client_id ?? '', options.requestsPer5Minutes);
  }

  /** The provider's words with every credential and the access token taken out, short. */
  clean(reason: string): string {
    return cleanReason(reason, this.accessToken ? { ...this.credentials, access_token: this.accessToken } : this.credentials);
  }

  /** The client-credentials grant; keeps the access token until shortly before it expires. */
  async authenticate(): Promise<void> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: this.credentials.client_id ?? '',
      client_secret: this.credentials.client_secret ?? '',
      scope: 'all',
    });
    // A token grant changes nothing at HaloPSA: asked again like a read.
    const response = await this.exchange(
      {
        method: 'POST',
        url: `${this.instance}/auth/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      },
      true,
    );
    if (response.status === 400 || response.status === 401 || response.status === 403) {
      throw new CrmAuthRefused(`HaloPSA refused the credentials: ${this.clean(halopsaReason(response))}`);
    }
    const grant = jsonOf(response) as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (response.status !== 200 || typeof grant?.access_token !== 'string' || grant.access_token === '') {
      throw new CrmUnavailable(`HaloPSA's token endpoint answered ${response.status} without an access token`);
    }
    this.accessToken = grant.access_token;
    const lifetimeS = typeof grant.expires_in === 'number' && grant.expires_in > 0 ? grant.expires_in : 3600;
    this.expiresAt = Date.now() + lifetimeS * 1000 - TOKEN_MARGIN_MS;
  }

  /** A call under /api (`path` starts with /api/), answered 2xx or a 4xx for the caller; the body is sent as JSON. */
  async api(method: ProviderRequest['method'], path: string, body?: unknown): Promise<ProviderResponse> {
    if (!this.accessToken || Date.now() >= this.expiresAt) await this.authenticate();
    let renewed = false;
    for (;;) {
      const headers: Record<string, string> = { authorization: `Bearer ${this.accessToken}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await this.exchange(
        {
          method,
          url: `${this.instance}${path}`,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          maxAnswerChars: MAX_ANSWER_CHARS,
        },
        method === 'GET' || method === 'DELETE',
      );
      if (response.status === 401 && !renewed) {
        renewed = true;
        await this.authenticate();
        continue;
      }
      if (response.status === 401 || response.status === 403) {
        throw new CrmAuthRefused(`HaloPSA refused the call to ${path.split('?')[0]}: ${this.clean(halopsaReason(response))}`);
      }
      return response;
    }
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

  /**
   * One exchange, paced, asked again after 429 (refused, so nothing was done) and, when `repeatable`
   * (reads, deletes, the token grant), after a 5xx or no answer, with a fresh deadline each time. A
   * write (HaloPSA's POST creates and updates) that failed that way may have been carried out: it is
   * not sent again here; the run fails and the next push looks for the record first
   * (third_party_id_string, a contract's ref).
   */
  private async exchange(request: ProviderRequest, repeatable: boolean): Promise<ProviderResponse> {
    let waits = 0;
    let failures = repeatable ? 0 : FAILURE_BACKOFF_MS.length;
    for (;;) {
      const release = await this.window.take();
      let response: ProviderResponse;
      try {
        const host = this.settings.halopsaInstanceUrl ? 'configured' : 'named';
        response = await providerRequest(request, callOptions(this.settings, Date.now() + this.settings.timeoutMs, host));
      } catch (error) {
        if (!(error instanceof ProviderUnreachable)) throw error;
        if (failures >= FAILURE_BACKOFF_MS.length) throw new CrmUnavailable(`HaloPSA could not be reached (${this.clean(error.message)})`);
        await pause(FAILURE_BACKOFF_MS[failures++]);
        continue;
      } finally {
        release();
      }
      const { status } = response;
      if (status === 429) {
        const retryAfterS = retryAfterOf(response);
        const waitMs = retryAfterS !== undefined ? retryAfterS * 1000 : DEFAULT_RETRY_AFTER_MS;
        if (waits >= RATE_LIMIT_RETRIES || waitMs > this.options.maxWaitMs) {
          throw new CrmUnavailable(`HaloPSA is rate limiting this application (${this.clean(halopsaReason(response))})`, waitMs);
        }
        waits++;
        this.window.pause(waitMs);
        continue;
      }
      if (status >= 500 || status < 200 || (status >= 300 && status < 400)) {
        if (failures >= FAILURE_BACKOFF_MS.length) throw new CrmUnavailable(`HaloPSA answered ${status} (${this.clean(halopsaReason(response))})`);
        await pause(FAILURE_BACKOFF_MS[failures++]);
        continue;
      }
      return response;
    }
  }
}

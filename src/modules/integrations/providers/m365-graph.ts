import { createHash } from 'node:crypto';
import { CrmAuthRefused, CrmUnavailable } from './crm-client';
import { cleanReason, ProviderSettings } from './crm-verification';
import { entraReason, graphReason, microsoftTokenRequest } from './m365-verification';
import { jsonOf, providerRequest, ProviderRequest, ProviderResponse, ProviderUnreachable, retryAfterOf } from './provider-http';

/** 429 (and a GET's 503/504): how many times the session waits and asks again. */
const RATE_LIMIT_RETRIES = 3;
/** A GET's 5xx without Retry-After, or no answer: asked again after these pauses. */
const FAILURE_BACKOFF_MS = [250, 1_000];
/** A 429 without Retry-After (Graph sends one; its guidance says to wait before retrying). */
const DEFAULT_RETRY_AFTER_MS = 2_000;
const DEFAULT_MAX_WAIT_MS = 30_000;
/** A token is used until this long before it expires (Entra issues them for about an hour). */
const EXPIRY_MARGIN_MS = 5 * 60_000;
const MAX_ANSWER_CHARS = 1024 * 1024;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A write whose outcome is unknown: no answer, or a 5xx, after the request was sent. Graph may have
 * carried it out, so it is not sent again blindly: the caller looks for the item first.
 */
export class GraphOutcomeUnknown extends CrmUnavailable {}

/**
 * Graph refused one item (400: a body it cannot take): that item fails, the run goes on.
 * Never a refusal of the credentials (401/403) or a throttle, which stop the run.
 */
export class GraphItemRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Tokens by app (login host, tenant, client id, secret): a run makes a new session, and one token serves them all until near its expiry. */
const tokens = new Map<string, { accessToken: string; expiresAt: number }>();

export interface GraphCall {
  method: 'GET' | 'POST';
  /** Below the Graph host, with its query: `/v1.0/users/…`. */
  path: string;
  body?: unknown;
}

/**
 * One app's conversation with Microsoft Graph, app-only: the client-credentials grant at the
 * tenant's token endpoint (MICROSOFT_LOGIN_URL), its token cached until five minutes before it
 * expires, and calls to MICROSOFT_GRAPH_URL through provider-http (the address guard in
 * production, one deadline per exchange, no redirects, a bounded answer, nothing logged).
 * - 401, or 403, with a cached token: the token is dropped and a new one granted, once (an admin's
 *   new consent only shows in a new token); then CrmAuthRefused, and the integration goes to error.
 * - 429: its Retry-After waited out up to three times, never longer than maxWaitMs at once; then
 *   CrmUnavailable with the wait, so the run fails and the next one waits that long.
 * - A GET's 5xx or no answer: asked again (Retry-After when given, else 250 ms, 1 s). A POST's is
 *   GraphOutcomeUnknown: its caller looks for what it wrote before writing again.
 * What comes back is a 2xx or a 4xx the caller reads (400, 404). No message carries the secret or a token.
 */
export class GraphSession {
  private readonly key: string;
  private readonly maxWaitMs: number;
  private accessToken?: string;

  constructor(
    private readonly credentials: Record<string, string>,
    private readonly settings: ProviderSettings,
    options: { maxWaitMs?: number } = {},
  ) {
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.key = createHash('sha256')
      .update([settings.microsoftLoginUrl, credentials.tenant_id, credentials.client_id, credentials.client_secret].join('\n'))
      .digest('hex');
  }

  /** Microsoft's words without the secret or the token. */
  clean(reason: string): string {
    return cleanReason(reason, { client_secret: this.credentials.client_secret, ...(this.accessToken ? { access_token: this.accessToken } : {}) });
  }

  /** A token for Graph: the cached one while it is fresh, else a new grant (refused: CrmAuthRefused). */
  async token(): Promise<string> {
    const cached = tokens.get(this.key);
    if (cached && cached.expiresAt > Date.now()) return (this.accessToken = cached.accessToken);
    const response = await this.exchange('Microsoft 365', microsoftTokenRequest(this.credentials, this.settings.microsoftLoginUrl), true);
    if (response.status === 400 || response.status === 401)
      throw new CrmAuthRefused(`Microsoft 365 refused the credentials: ${this.clean(entraReason(response))}`);
    if (response.status !== 200) throw new CrmUnavailable(`Microsoft 365's token endpoint answered ${response.status}`);
    const grant = jsonOf(response) as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (typeof grant?.access_token !== 'string' || grant.access_token === '') throw new CrmUnavailable("Microsoft 365's token answer had no access_token");
    const lifetimeMs = (typeof grant.expires_in === 'number' && grant.expires_in > 0 ? grant.expires_in : 3599) * 1000;
    tokens.set(this.key, { accessToken: grant.access_token, expiresAt: Date.now() + Math.max(0, lifetimeMs - EXPIRY_MARGIN_MS) });
    return (this.accessToken = grant.access_token);
  }

  /** One Graph call, answered 2xx or with a 4xx for the caller (400, 404); refusals and unusable answers are thrown. */
  async call(call: GraphCall): Promise<ProviderResponse> {
    let fresh = false;
    for (;;) {
      const token = await this.token();
      const response = await this.exchange(
        'Microsoft Graph',
        {
          method: call.method,
          url: `${this.settings.microsoftGraphUrl}${call.path}`,
          headers: { authorization: `Bearer ${token}`, ...(call.body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: call.body === undefined ? undefined : JSON.stringify(call.body),
          maxAnswerChars: MAX_ANSWER_CHARS,
        },
        call.method === 'GET',
      );
      if (response.status === 401 || response.status === 403) {
        if (!fresh) {
          // Expired or revoked early, or issued before an admin granted what is missing: one new grant.
          tokens.delete(this.key);
          fresh = true;
          continue;
        }
        const verb = response.status === 401 ? 'refused the token' : 'denied the call';
        throw new CrmAuthRefused(`Microsoft Graph ${verb}: ${this.clean(graphReason(response))}`);
      }
      return response;
    }
  }

  /**
   * One exchange, asked again after 429 (any request: throttled requests are not carried out) and,
   * for a repeatable one, after a 5xx or no answer; a POST's 5xx or lost answer is GraphOutcomeUnknown.
   */
  private async exchange(host: string, request: ProviderRequest, repeatable: boolean): Promise<ProviderResponse> {
    const guard = this.settings.guardConfiguredUrls && !this.settings.allowPrivateUrls;
    let waits = 0;
    let failures = 0;
    for (;;) {
      let response: ProviderResponse;
      try {
        response = await providerRequest(request, { deadline: Date.now() + this.settings.timeoutMs, guard, resolve: this.settings.resolve });
      } catch (error) {
        if (!(error instanceof ProviderUnreachable)) throw error;
        const reason = `${host} could not be reached (${this.clean(error.message)})`;
        if (!repeatable) throw new GraphOutcomeUnknown(reason);
        if (failures >= FAILURE_BACKOFF_MS.length) throw new CrmUnavailable(reason);
        await sleep(FAILURE_BACKOFF_MS[failures++]);
        continue;
      }
      const retryAfterS = retryAfterOf(response);
      if (response.status === 429) {
        const waitMs = retryAfterS !== undefined ? retryAfterS * 1000 : DEFAULT_RETRY_AFTER_MS;
        if (waits >= RATE_LIMIT_RETRIES || waitMs > this.maxWaitMs) {
          throw new CrmUnavailable(`${host} is throttling this app (429, asked to wait ${Math.ceil(waitMs / 1000)} s)`, waitMs);
        }
        waits++;
        await sleep(waitMs);
        continue;
      }
      if (response.status >= 500) {
        const reason = `${host} answered ${response.status} (${this.clean(graphReason(response))})`;
        const waitMs = retryAfterS !== undefined ? retryAfterS * 1000 : undefined;
        if (!repeatable) throw new GraphOutcomeUnknown(reason, waitMs);
        const pause = waitMs ?? FAILURE_BACKOFF_MS[failures];
        if (failures >= FAILURE_BACKOFF_MS.length || pause > this.maxWaitMs) throw new CrmUnavailable(reason, waitMs);
        failures++;
        await sleep(pause);
        continue;
      }
      return response;
    }
  }
}

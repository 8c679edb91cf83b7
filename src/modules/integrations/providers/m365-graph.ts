import { CrmAuthRefused, CrmUnavailable } from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { cleanReason } from './crm-verification';
import { entraReason, graphReason, microsoftTokenRequest } from './m365-verification';
import { jsonOf, ProviderResponse, retryAfterOf } from './provider-http';
import { AccessToken, ProviderSession, SessionCall, SessionRules, sharedTokens } from './provider-session';

/**
 * How Graph's calls are retried: a GET's 5xx and no answer twice more, after its Retry-After when
 * given, else 250 ms and 1 s; a 429 (any method: throttled requests are not carried out) waited out
 * three times, for its Retry-After, else 2 s (Graph sends one; its guidance says to wait before
 * retrying). Another answer (a 3xx included) is the caller's.
 */
const GRAPH_RULES: SessionRules = {
  host: 'configured',
  failures: { backoffMs: [250, 1_000], statuses: 'server-errors', pauseForRetryAfter: true },
  throttle: { retries: 3, defaultWaitMs: 2_000 },
};

const DEFAULT_MAX_WAIT_MS = 30_000;
/** A token is used until this long before it expires (Entra issues them for about an hour). */
const EXPIRY_MARGIN_MS = 5 * 60_000;
const MAX_ANSWER_CHARS = 1024 * 1024;

/** Which host a message names: the login endpoint or Graph. */
type MicrosoftCall = SessionCall & { name: 'Microsoft 365' | 'Microsoft Graph' };

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

export interface GraphCall {
  method: 'GET' | 'POST';
  /** Below the Graph host, with its query: `/v1.0/users/…`. */
  path: string;
  body?: unknown;
}

/**
 * One app's conversation with Microsoft Graph, app-only: the client-credentials grant at the
 * tenant's token endpoint (MICROSOFT_LOGIN_URL), its token cached until five minutes before it
 * expires, and calls to MICROSOFT_GRAPH_URL, all through one ProviderSession (GRAPH_RULES).
 * - 401, or 403, with a cached token: the token is dropped and a new one granted, once (an admin's
 *   new consent only shows in a new token); then CrmAuthRefused, and the integration goes to error.
 * - 429: its Retry-After waited out up to three times, never longer than maxWaitMs at once; then
 *   CrmUnavailable with the wait, so the run fails and the next one waits that long.
 * - A GET's 5xx or no answer: asked again (Retry-After when given, else 250 ms, 1 s). A POST's is
 *   GraphOutcomeUnknown: its caller looks for what it wrote before writing again, after backOff().
 * What comes back is a 2xx or a 4xx the caller reads (400, 404). No message carries the secret or a token.
 */
export class GraphSession {
  private readonly session: ProviderSession<MicrosoftCall>;

  constructor(
    private readonly credentials: Record<string, string>,
    private readonly settings: ProviderSettings,
    options: { maxWaitMs?: number } = {},
  ) {
    this.session = new ProviderSession<MicrosoftCall>(settings, {
      ...GRAPH_RULES,
      maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
      token: {
        grant: () => this.tokenGrant(),
        // By app (login host, tenant, client id, secret): a run makes a new session, and one token serves them all until near its expiry.
        store: sharedTokens([settings.microsoftLoginUrl, credentials.tenant_id, credentials.client_id, credentials.client_secret]),
        // Expired or revoked early, or issued before an admin granted what is missing (a new consent only shows in a new token).
        renewOn: [401, 403],
      },
      refusal: (response) => {
        if (response.status !== 401 && response.status !== 403) return undefined;
        const verb = response.status === 401 ? 'refused the token' : 'denied the call';
        return new CrmAuthRefused(`Microsoft Graph ${verb}: ${this.clean(graphReason(response))}`);
      },
      throttled: (_response, waitMs, call) =>
        new CrmUnavailable(`${call.name} is throttling this app (429, asked to wait ${Math.ceil(waitMs / 1000)} s)`, waitMs),
      failed: (failure, call) => {
        if (failure.kind === 'unreachable') {
          const reason = `${call.name} could not be reached (${this.clean(failure.message)})`;
          return failure.outcomeUnknown ? new GraphOutcomeUnknown(reason) : new CrmUnavailable(reason);
        }
        const { response } = failure;
        const reason = `${call.name} answered ${response.status} (${this.clean(graphReason(response))})`;
        const retryAfterS = retryAfterOf(response);
        const waitMs = retryAfterS !== undefined ? retryAfterS * 1000 : undefined;
        return failure.outcomeUnknown ? new GraphOutcomeUnknown(reason, waitMs) : new CrmUnavailable(reason, waitMs);
      },
    });
  }

  /** Microsoft's words without the secret or the token. */
  clean(reason: string): string {
    const accessToken = this.session.accessToken;
    return cleanReason(reason, { client_secret: this.credentials.client_secret, ...(accessToken ? { access_token: accessToken } : {}) });
  }

  /** A token for Graph: the cached one while it is fresh, else a new grant (refused: CrmAuthRefused). */
  token(): Promise<string> {
    return this.session.token();
  }

  /**
   * Before a write is tried again by its caller (after the `failures`-th GraphOutcomeUnknown, 0 for
   * the first): waits its Retry-After, else GRAPH_RULES' pause, and says true; false when those are
   * spent or the wait is beyond maxWaitMs.
   */
  backOff(failures: number, retryAfterMs?: number): Promise<boolean> {
    return this.session.backOff(failures, retryAfterMs);
  }

  /** One Graph call, answered 2xx or with a 4xx for the caller (400, 404); refusals and unusable answers are thrown. */
  call(call: GraphCall): Promise<ProviderResponse> {
    return this.session.send(
      (accessToken) => ({
        method: call.method,
        url: `${this.settings.microsoftGraphUrl}${call.path}`,
        headers: { authorization: `Bearer ${accessToken}`, ...(call.body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        maxAnswerChars: MAX_ANSWER_CHARS,
      }),
      { name: 'Microsoft Graph', repeatable: call.method === 'GET' },
    );
  }

  /** The client-credentials grant at the tenant's token endpoint (MICROSOFT_LOGIN_URL). */
  private async tokenGrant(): Promise<AccessToken> {
    const response = await this.session.send(microsoftTokenRequest(this.credentials, this.settings.microsoftLoginUrl), { name: 'Microsoft 365', grant: true });
    if (response.status === 400 || response.status === 401)
      throw new CrmAuthRefused(`Microsoft 365 refused the credentials: ${this.clean(entraReason(response))}`);
    if (response.status !== 200) throw new CrmUnavailable(`Microsoft 365's token endpoint answered ${response.status}`);
    const grant = jsonOf(response) as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (typeof grant?.access_token !== 'string' || grant.access_token === '') throw new CrmUnavailable("Microsoft 365's token answer had no access_token");
    const lifetimeMs = (typeof grant.expires_in === 'number' && grant.expires_in > 0 ? grant.expires_in : 3599) * 1000;
    return { value: grant.access_token, expiresAt: Date.now() + Math.max(0, lifetimeMs - EXPIRY_MARGIN_MS) };
  }
}

import { CrmAuthRefused, CrmClientOptions, CrmLimitReached, CrmUnavailable } from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { cleanReason } from './crm-verification';
import { ProviderRequest, ProviderResponse, retryAfterOf } from './provider-http';
import { ProviderSession, SessionRules } from './provider-session';
import { readSalesforceGrant, SALESFORCE_API_VERSION, salesforceReason, salesforceTokenRequest } from './salesforce-auth';

/**
 * How Salesforce's calls are retried: 429, or 503 with Retry-After, waited out three times (2 s
 * without Retry-After); other 5xx and no answer asked again twice, after 250 and 750 ms. Another
 * answer (a 3xx included) is the caller's.
 */
const SALESFORCE_RULES: SessionRules = {
  host: 'named',
  failures: { backoffMs: [250, 750], statuses: 'server-errors' },
  throttle: { retries: 3, withRetryAfter: [503], defaultWaitMs: 2_000 },
};

/** Answers a data read may be (a describe of Lead is several hundred kilobytes in a real org). */
const MAX_DATA_ANSWER_CHARS = 16 * 1024 * 1024;
const DEFAULT_MAX_WAIT_MS = 30_000;
const DEFAULT_RESERVE = 0.1;

/** The org's daily API requests as the last answer's Sforce-Limit-Info reported them ("Limit Info Header", REST API Developer Guide). */
export interface ApiUsage {
  used: number;
  max: number;
}

/** `api-usage=used/max` out of Sforce-Limit-Info (which may carry `per-app-api-usage=…` beside it). */
export function apiUsageOf(response: ProviderResponse): ApiUsage | undefined {
  const header = response.headers['sforce-limit-info'];
  const match = /(?:^|[\s,;])api-usage=(\d+)\/(\d+)/.exec(typeof header === 'string' ? header : '');
  return match ? { used: Number(match[1]), max: Number(match[2]) } : undefined;
}

/**
 * One authenticated conversation with an org's REST API, through one ProviderSession: the
 * refresh-token grant and the access token it yields, the instance_url every call goes to, and how
 * calls are paced and retried (SALESFORCE_RULES).
 * - 401 (INVALID_SESSION_ID: the access token expired or was revoked): one new grant, then the
 *   call once more; a refused grant is CrmAuthRefused.
 * - Sforce-Limit-Info on every answer; a call that would go into the reserve left to the org's
 *   other tools is not made (CrmLimitReached), nor is any after 403 REQUEST_LIMIT_EXCEEDED.
 * - Throttles never waited longer than maxWaitMs at once; then CrmUnavailable.
 * Repeating a call is safe: updates name the record's Id, upserts match on our External ID field,
 * and deleting what is gone counts as done. Nothing here logs, and no message carries a token or a secret.
 */
export class SalesforceSession {
  private instanceUrl?: string;
  private usage?: ApiUsage;
  private readonly reserve: number;
  private readonly session: ProviderSession;

  constructor(
    private readonly credentials: Record<string, string>,
    private readonly settings: ProviderSettings,
    options: CrmClientOptions = {},
  ) {
    this.reserve = options.salesforceReserve ?? DEFAULT_RESERVE;
    this.session = new ProviderSession(settings, {
      ...SALESFORCE_RULES,
      maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
      token: { grant: () => this.tokenGrant(), renewOn: [401] },
      budget: { beforeTry: () => this.checkBudget(), afterAnswer: (response) => (this.usage = apiUsageOf(response) ?? this.usage) },
      refusal: (response) => {
        if (response.status === 401) return new CrmAuthRefused(`Salesforce refused the access token: ${this.clean(salesforceReason(response))}`);
        if (response.status !== 403) return undefined;
        const reason = this.clean(salesforceReason(response));
        if (reason.startsWith('REQUEST_LIMIT_EXCEEDED')) return new CrmLimitReached(`Salesforce's API request limit is used up: ${reason}`);
        return new CrmAuthRefused(`Salesforce refused the call: ${reason}`);
      },
      throttled: (response, waitMs) => new CrmUnavailable(`Salesforce answered ${response.status} and asked to wait ${Math.ceil(waitMs / 1000)} s`, waitMs),
      failed: (failure) => {
        if (failure.kind === 'unreachable') return new CrmUnavailable(`Salesforce could not be reached (${this.clean(failure.message)})`);
        const { response } = failure;
        const retryAfterS = retryAfterOf(response);
        return new CrmUnavailable(`Salesforce answered ${response.status} (${this.clean(salesforceReason(response))})`, retryAfterS && retryAfterS * 1000);
      },
    });
  }

  /** The provider's words with every credential and the access token taken out. */
  clean(reason: string): string {
    const accessToken = this.session.accessToken;
    return cleanReason(reason, accessToken ? { ...this.credentials, access_token: accessToken } : this.credentials);
  }

  /** The refresh-token grant, whatever token is held. */
  async grant(): Promise<void> {
    await this.session.renewToken();
  }

  /**
   * A REST call: `path` below /services/data/vXX.X (or a nextRecordsUrl, which starts with
   * /services/), answered with any status the caller interprets (2xx, 400, 404); 401, 403, 429 and
   * 5xx are dealt with here.
   */
  async rest(method: ProviderRequest['method'], path: string, body?: unknown): Promise<ProviderResponse> {
    const url = path.startsWith('/services/') ? path : `/services/data/${SALESFORCE_API_VERSION}${path}`;
    // The instance_url is the provider's word, so it passes the address guard unless private addresses are allowed.
    return this.session.send(
      (accessToken) => ({
        method,
        url: `${this.instanceUrl}${url}`,
        headers: { authorization: `Bearer ${accessToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        maxAnswerChars: MAX_DATA_ANSWER_CHARS,
      }),
      {},
    );
  }

  /** The refresh-token grant on the login host (configured: guarded in production only); keeps instance_url, and the token lasts until refused. */
  private async tokenGrant(): Promise<{ value: string; expiresAt: number }> {
    const response = await this.session.send(salesforceTokenRequest(this.credentials, this.settings.salesforceLoginUrl), { host: 'configured', grant: true });
    const grant = readSalesforceGrant(response);
    if (grant.kind === 'refused') throw new CrmAuthRefused(`Salesforce refused the credentials: ${this.clean(grant.reason)}`);
    if (grant.kind === 'unusable') throw new CrmUnavailable(`Salesforce's token endpoint ${this.clean(grant.reason)}`);
    this.instanceUrl = grant.instanceUrl;
    return { value: grant.accessToken, expiresAt: Infinity };
  }

  /** Stops before a call that would take the org's daily API requests into the reserve. */
  private checkBudget(): void {
    if (!this.usage) return;
    const { used, max } = this.usage;
    if (used >= max * (1 - this.reserve)) {
      const figure = (value: number) => value.toLocaleString('en-US');
      throw new CrmLimitReached(
        `Salesforce daily API requests at ${figure(used)} of ${figure(max)}; the last ${Math.round(this.reserve * 100)} % is left to the org's other tools`,
      );
    }
  }
}

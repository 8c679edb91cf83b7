import { CrmAuthRefused, CrmClientOptions, CrmLimitReached, CrmUnavailable } from './crm-client';
import { cleanReason, ProviderSettings } from './crm-verification';
import { providerRequest, ProviderRequest, ProviderResponse, ProviderUnreachable, retryAfterOf } from './provider-http';
import { readSalesforceGrant, SALESFORCE_API_VERSION, salesforceReason, salesforceTokenRequest } from './salesforce-auth';

/** Answers a data read may be (a describe of Lead is several hundred kilobytes in a real org). */
const MAX_DATA_ANSWER_CHARS = 16 * 1024 * 1024;
/** 429, or 503 with Retry-After: how many times the client waits and asks again. */
const RATE_LIMIT_RETRIES = 3;
/** 5xx without Retry-After and no answer at all: how many times the client asks again, after these pauses. */
const FAILURE_BACKOFF_MS = [250, 750];
/** A 429 without Retry-After is waited out this long. */
const DEFAULT_RETRY_AFTER_MS = 2_000;
const DEFAULT_MAX_WAIT_MS = 30_000;
const DEFAULT_RESERVE = 0.1;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
 * One authenticated conversation with an org's REST API: the refresh-token grant and the access
 * token it yields, the instance_url every call goes to, and how calls are paced and retried.
 * - 401 INVALID_SESSION_ID (the access token expired or was revoked): one new grant, then the
 *   call once more; a refused grant is CrmAuthRefused.
 * - Sforce-Limit-Info on every answer; a call that would go into the reserve left to the org's
 *   other tools is not made (CrmLimitReached), nor is any after 403 REQUEST_LIMIT_EXCEEDED.
 * - 429, or 503 with Retry-After: waited out up to RATE_LIMIT_RETRIES times, never longer than
 *   maxWaitMs at once; other 5xx and no answer: asked again twice. Then CrmUnavailable.
 * Repeating a call is safe: updates name the record's Id, upserts match on our External ID field,
 * and deleting what is gone counts as done. Nothing here logs, and no message carries a token or a secret.
 */
export class SalesforceSession {
  private accessToken?: string;
  private instanceUrl?: string;
  private usage?: ApiUsage;
  private readonly maxWaitMs: number;
  private readonly reserve: number;

  constructor(
    private readonly credentials: Record<string, string>,
    private readonly settings: ProviderSettings,
    options: CrmClientOptions = {},
  ) {
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.reserve = options.salesforceReserve ?? DEFAULT_RESERVE;
  }

  /** The provider's words with every credential and the access token taken out. */
  clean(reason: string): string {
    return cleanReason(reason, this.accessToken ? { ...this.credentials, access_token: this.accessToken } : this.credentials);
  }

  /** The refresh-token grant on the login host (configured: guarded in production only); keeps the access token and instance_url. */
  async grant(): Promise<void> {
    const guard = this.settings.guardConfiguredUrls && !this.settings.allowPrivateUrls;
    const response = await this.send(salesforceTokenRequest(this.credentials, this.settings.salesforceLoginUrl), guard);
    const grant = readSalesforceGrant(response);
    if (grant.kind === 'refused') throw new CrmAuthRefused(`Salesforce refused the credentials: ${this.clean(grant.reason)}`);
    if (grant.kind === 'unusable') throw new CrmUnavailable(`Salesforce's token endpoint ${this.clean(grant.reason)}`);
    this.accessToken = grant.accessToken;
    this.instanceUrl = grant.instanceUrl;
  }

  /**
   * A REST call: `path` below /services/data/vXX.X (or a nextRecordsUrl, which starts with
   * /services/), answered with any status the caller interprets (2xx, 400, 404); 401, 403, 429 and
   * 5xx are dealt with here.
   */
  async rest(method: ProviderRequest['method'], path: string, body?: unknown): Promise<ProviderResponse> {
    if (!this.accessToken || !this.instanceUrl) await this.grant();
    const url = path.startsWith('/services/') ? path : `/services/data/${SALESFORCE_API_VERSION}${path}`;
    let refreshed = false;
    for (;;) {
      const headers: Record<string, string> = { authorization: `Bearer ${this.accessToken}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const request: ProviderRequest = {
        method,
        url: `${this.instanceUrl}${url}`,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        maxAnswerChars: MAX_DATA_ANSWER_CHARS,
      };
      // The instance_url is the provider's word, so it passes the address guard unless private addresses are allowed.
      const response = await this.send(request, !this.settings.allowPrivateUrls, true);
      if (response.status === 401 && !refreshed) {
        refreshed = true;
        await this.grant();
        continue;
      }
      if (response.status === 401) throw new CrmAuthRefused(`Salesforce refused the access token: ${this.clean(salesforceReason(response))}`);
      if (response.status === 403) {
        const reason = this.clean(salesforceReason(response));
        if (reason.startsWith('REQUEST_LIMIT_EXCEEDED')) throw new CrmLimitReached(`Salesforce's API request limit is used up: ${reason}`);
        throw new CrmAuthRefused(`Salesforce refused the call: ${reason}`);
      }
      return response;
    }
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

  /** One exchange, asked again after 429/503 Retry-After, other 5xx and no answer, with a fresh deadline each time. */
  private async send(request: ProviderRequest, guard: boolean, counted = false): Promise<ProviderResponse> {
    let waits = 0;
    let failures = 0;
    for (;;) {
      if (counted) this.checkBudget();
      let response: ProviderResponse;
      try {
        response = await providerRequest(request, { deadline: Date.now() + this.settings.timeoutMs, guard, resolve: this.settings.resolve });
      } catch (error) {
        if (!(error instanceof ProviderUnreachable)) throw error;
        if (failures < FAILURE_BACKOFF_MS.length) {
          await sleep(FAILURE_BACKOFF_MS[failures++]);
          continue;
        }
        throw new CrmUnavailable(`Salesforce could not be reached (${this.clean(error.message)})`);
      }
      if (counted) this.usage = apiUsageOf(response) ?? this.usage;
      const retryAfterS = retryAfterOf(response);
      if (response.status === 429 || (response.status === 503 && retryAfterS !== undefined)) {
        const waitMs = retryAfterS !== undefined ? retryAfterS * 1000 : DEFAULT_RETRY_AFTER_MS;
        if (waits >= RATE_LIMIT_RETRIES || waitMs > this.maxWaitMs) {
          throw new CrmUnavailable(`Salesforce answered ${response.status} and asked to wait ${Math.ceil(waitMs / 1000)} s`, waitMs);
        }
        waits++;
        await sleep(waitMs);
        continue;
      }
      if (response.status >= 500) {
        if (failures < FAILURE_BACKOFF_MS.length) {
          await sleep(FAILURE_BACKOFF_MS[failures++]);
          continue;
        }
        throw new CrmUnavailable(`Salesforce answered ${response.status} (${this.clean(salesforceReason(response))})`, retryAfterS && retryAfterS * 1000);
      }
      return response;
    }
  }
}

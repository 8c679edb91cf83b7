import { CrmAuthRefused, CrmLimitReached, CrmUnavailable } from './crm-client';
import type { ProviderSettings } from './crm-verification';
import { jsonOf, providerRequest, ProviderRequest, ProviderResponse, ProviderUnreachable, retryAfterOf } from './provider-http';
import { cleanReason } from './verification-outcomes';

/** 5xx and no answer: how many more times a call is made, after these pauses. */
const FAILURE_BACKOFF_MS = [250, 1_000];
const MAX_RATE_LIMITED_RETRIES = 3;
/** Autotask's 429 (its hourly threshold) carries no Retry-After; a minute is long enough for the rolling hour to let a few calls through. */
const DEFAULT_RETRY_AFTER_MS = 60_000;
/** A query answers one page of at most 500 records. */
const MAX_ANSWER_CHARS = 8 * 1024 * 1024;
/** ThresholdInformation is read again at most this often once the budget it gave is spent. */
const THRESHOLD_REFRESH_MS = 60_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A filter expression of the REST API ("Making basic query calls to the REST API"). */
export type AutotaskFilter = { op: 'and' | 'or'; items: AutotaskFilter[] } | { op: string; field: string; value?: unknown };

/** What a create came to: the record's id, or Autotask's reason for refusing it. */
export type Made = { id: number } | { error: string };
/** What an update came to: a create's outcomes, or no such record (404). */
export type Written = Made | { missing: true };

export interface AutotaskHttpOptions {
  maxWaitMs: number;
  /** The share of the database's hourly requests left to its other integrations. */
  reserve: number;
}

interface Threshold {
  /** How many more calls this client may make before reading ThresholdInformation again. */
  left: number;
  readAt: number;
  used: number;
  limit: number;
}

/** The call could not be confirmed: no answer, or a 5xx. A create is then looked for before it is made again. */
class Unconfirmed extends Error {
  constructor(
    message: string,
    /** Autotask's own refusal (a 500 with its {errors} body), when it answered one. */
    readonly refusal?: string,
  ) {
    super(message);
  }
}

/** Autotask's error body ({errors: [..]}, or ASP.NET's {Message}): the errors joined, else undefined. */
function errorsOf(response: ProviderResponse): string | undefined {
  const body = jsonOf(response) as { errors?: unknown; Message?: unknown; message?: unknown } | undefined;
  const errors = Array.isArray(body?.errors) ? body.errors.filter((error): error is string => typeof error === 'string') : [];
  if (errors.length) return errors.join('; ');
  const message = body?.message ?? body?.Message;
  return typeof message === 'string' ? message : undefined;
}

/**
 * One API user's conversation with its Autotask zone: the zone lookup, the ApiIntegrationCode,
 * UserName and Secret headers, and Autotask's limits ("REST API rate limiting", "Thread
 * limiting"):
 * - the database's external requests an hour (10,000 unless raised), shared by all its
 *   integrations: ThresholdInformation is read on connect, and the client stops
 *   (CrmLimitReached) before using the last `reserve` of it; a 429 is waited out (Retry-After,
 *   else a minute) three times at most, never longer than maxWaitMs at once, then CrmUnavailable;
 * - at most three requests at once per endpoint and integration: a client makes one at a time;
 * - 401 and 403 are CrmAuthRefused; 5xx and no answer are asked again twice, then CrmUnavailable.
 * Autotask answers a write it refuses on business grounds ("Value for required field … is
 * missing") with 500 and its {errors} body: a write still refused that way after the retries is
 * returned as that record's refusal, so one bad record does not stop the run; a read never is.
 * A create is never simply sent again: before each new try it is looked for (the first may have
 * been made and only its answer lost). Nothing here logs; no message carries a credential.
 */
export class AutotaskHttp {
  private zone?: string;
  private threshold?: Threshold;
  private readingThreshold = false;

  constructor(
    private readonly credentials: Record<string, string>,
    private readonly settings: ProviderSettings,
    private readonly options: AutotaskHttpOptions,
  ) {}

  /** The zone lookup (no authentication), then ThresholdInformation, which proves the credentials and gives the hour's budget. */
  async connect(): Promise<void> {
    const url = `${this.settings.autotaskZoneUrl}/atservicesrest/v1.0/zoneInformation?user=${encodeURIComponent(this.credentials.username ?? '')}`;
    // The lookup host is configured: guarded in production only.
    const lookup = await this.call({ method: 'GET', url }, this.settings.guardConfiguredUrls && !this.settings.allowPrivateUrls, true, false);
    if (lookup.status >= 400) throw new CrmAuthRefused(`Autotask refused the credentials: ${this.reasonOf(lookup)}`);
    const zone = (jsonOf(lookup) as { url?: unknown } | undefined)?.url;
    if (lookup.status !== 200 || typeof zone !== 'string' || !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/i.test(zone)) {
      throw new CrmUnavailable('Autotask’s zone lookup named no usable zone');
    }
    this.zone = `${zone.replace(/\/+$/, '')}/`;
    await this.readThreshold();
  }

  /** A GET whose answer is read; anything but 200 is CrmUnavailable. */
  async get<Answer>(path: string): Promise<Answer> {
    const response = await this.send('GET', path, undefined, { retry: true, write: false });
    const body = jsonOf(response) as Answer | undefined;
    if (response.status !== 200 || body === undefined)
      throw new CrmUnavailable(`Autotask answered GET ${path} with ${response.status}: ${this.reasonOf(response)}`);
    return body;
  }

  /** POST {entity}/query: the records the filter selects (the first page, up to 500: more than any query here needs). */
  async query<Item>(entity: string, filter: AutotaskFilter[], max = 500): Promise<Item[]> {
    const response = await this.send('POST', `${entity}/query`, { MaxRecords: max, filter }, { retry: true, write: false });
    const items = (jsonOf(response) as { items?: unknown } | undefined)?.items;
    if (response.status !== 200 || !Array.isArray(items)) {
      throw new CrmUnavailable(`Autotask answered a query of ${entity} with ${response.status}: ${this.reasonOf(response)}`);
    }
    return items as Item[];
  }

  /**
   * POST a new record. When the answer is lost or a 5xx, `findExisting` says whether the record was
   * made after all before the create is tried again, so a retry never makes it twice.
   */
  async create(path: string, body: Record<string, unknown>, findExisting: () => Promise<number | undefined>): Promise<Made> {
    for (let failures = 0; ; failures++) {
      try {
        return this.writtenOf(await this.send('POST', path, body, { retry: false, write: true }));
      } catch (error) {
        if (!(error instanceof Unconfirmed)) throw error;
        if (failures >= FAILURE_BACKOFF_MS.length) {
          if (error.refusal !== undefined) return { error: error.refusal };
          throw new CrmUnavailable(error.message);
        }
        await pause(FAILURE_BACKOFF_MS[failures]);
        const made = await findExisting();
        if (made !== undefined) return { id: made };
      }
    }
  }

  /** PATCH the fields sent of the record `body.id` names (sending it again is harmless). */
  async update(entity: string, body: Record<string, unknown> & { id: number }): Promise<Written> {
    try {
      const response = await this.send('PATCH', entity, body, { retry: true, write: true });
      return response.status === 404 ? { missing: true } : this.writtenOf(response);
    } catch (error) {
      if (error instanceof Unconfirmed && error.refusal !== undefined) return { error: error.refusal };
      throw error;
    }
  }

  /** Autotask's words, short and without any credential, in case an answer echoes one. */
  clean(reason: string): string {
    return cleanReason(reason, this.credentials);
  }

  private writtenOf(response: ProviderResponse): Made {
    const itemId = (jsonOf(response) as { itemId?: unknown } | undefined)?.itemId;
    if (response.status === 200 && typeof itemId === 'number') return { id: itemId };
    return { error: this.reasonOf(response) };
  }

  private reasonOf(response: ProviderResponse): string {
    return this.clean(errorsOf(response) ?? `answered ${response.status}`);
  }

  /** One call to the zone, with the API user's headers. */
  private send(method: ProviderRequest['method'], path: string, body: unknown, how: { retry: boolean; write: boolean }): Promise<ProviderResponse> {
    if (!this.zone) throw new Error('AutotaskHttp.connect() must be called first');
    const request: ProviderRequest = {
      method,
      url: `${this.zone}v1.0/${path}`,
      headers: {
        ApiIntegrationCode: this.credentials.integration_code ?? '',
        UserName: this.credentials.username ?? '',
        Secret: this.credentials.secret ?? '',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      maxAnswerChars: MAX_ANSWER_CHARS,
    };
    // The zone is named by Autotask, so it passes the address guard unless private addresses are allowed.
    return this.call(request, !this.settings.allowPrivateUrls, how.retry, how.write);
  }

  /**
   * One exchange, with a fresh deadline each try, asked again after a 429 and (`retry`) after a 5xx
   * or no answer; without `retry` those throw Unconfirmed for the caller to look first. A 2xx or
   * 4xx is returned. A write's 500 refusal that outlasts the retries throws Unconfirmed with it.
   */
  private async call(request: ProviderRequest, guard: boolean, retry: boolean, write: boolean): Promise<ProviderResponse> {
    let rateLimited = 0;
    let failures = 0;
    for (;;) {
      await this.spend();
      let failure: Unconfirmed;
      try {
        const response = await providerRequest(request, { deadline: Date.now() + this.settings.timeoutMs, guard, resolve: this.settings.resolve });
        const { status } = response;
        if (status === 401 || status === 403) throw new CrmAuthRefused(`Autotask refused the credentials: ${this.reasonOf(response)}`);
        if (status === 429) {
          const retryAfterS = retryAfterOf(response);
          const waitMs = retryAfterS !== undefined ? retryAfterS * 1000 : DEFAULT_RETRY_AFTER_MS;
          if (rateLimited >= MAX_RATE_LIMITED_RETRIES || waitMs > this.options.maxWaitMs) {
            throw new CrmUnavailable(`Autotask is rate limiting this database (${this.reasonOf(response)})`, waitMs);
          }
          rateLimited++;
          await pause(waitMs);
          continue;
        }
        if (status >= 200 && status < 300) return response;
        if (status >= 400 && status < 500) return response;
        const refusal = status === 500 && write ? errorsOf(response) : undefined;
        failure = new Unconfirmed(`Autotask answered ${status} (${this.reasonOf(response)})`, refusal === undefined ? undefined : this.clean(refusal));
      } catch (error) {
        if (!(error instanceof ProviderUnreachable)) throw error;
        failure = new Unconfirmed(`Autotask could not be reached (${this.clean(error.message)})`);
      }
      if (!retry) throw failure;
      if (failures >= FAILURE_BACKOFF_MS.length) {
        if (failure.refusal !== undefined) throw failure;
        throw new CrmUnavailable(failure.message);
      }
      await pause(FAILURE_BACKOFF_MS[failures++]);
    }
  }

  /** Takes one call from the hour's budget; once it is spent, ThresholdInformation is read again, and an hour still too full stops the run. */
  private async spend(): Promise<void> {
    if (!this.threshold || this.readingThreshold) return;
    if (this.threshold.left <= 0 && Date.now() - this.threshold.readAt >= THRESHOLD_REFRESH_MS) await this.readThreshold();
    const { left, used, limit } = this.threshold;
    if (left <= 0) {
      const figure = (value: number) => value.toLocaleString('en-US');
      throw new CrmLimitReached(
        `Autotask's requests this hour are at ${figure(used)} of ${figure(limit)}; the last ${Math.round(this.options.reserve * 100)} % is left to the database's other integrations`,
      );
    }
    this.threshold.left--;
  }

  /** GET ThresholdInformation: {externalRequestThreshold, requestThresholdTimeframe, currentTimeframeRequestCount}. */
  private async readThreshold(): Promise<void> {
    this.readingThreshold = true;
    try {
      const answer = await this.get<{ externalRequestThreshold?: unknown; currentTimeframeRequestCount?: unknown }>('ThresholdInformation');
      const limit = Number(answer.externalRequestThreshold);
      const used = Number(answer.currentTimeframeRequestCount);
      if (!Number.isFinite(limit) || !Number.isFinite(used)) throw new CrmUnavailable('Autotask’s ThresholdInformation answer had no counts');
      this.threshold = { limit, used, readAt: Date.now(), left: Math.floor(limit * (1 - this.options.reserve)) - used };
    } finally {
      this.readingThreshold = false;
    }
  }
}

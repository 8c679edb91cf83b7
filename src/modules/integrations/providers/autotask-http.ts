import { CrmAuthRefused, CrmLimitReached, CrmUnavailable } from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { jsonOf, ProviderRequest, ProviderResponse } from './provider-http';
import { ProviderSession, SessionCall, SessionRules } from './provider-session';
import { cleanReason } from './verification-outcomes';

/**
 * How Autotask's calls are retried: 5xx (a 1xx or 3xx alike) and no answer twice more, after 250 ms
 * and 1 s, unless the call is a create; a 429 waited out three times, for its Retry-After, else a
 * minute: Autotask's 429 (its hourly threshold) carries none, and a minute is long enough for the
 * rolling hour to let a few calls through. The zone is named by Autotask, so it passes the address
 * guard unless private addresses are allowed.
 */
const AUTOTASK_RULES: SessionRules = {
  host: 'named',
  failures: { backoffMs: [250, 1_000], statuses: 'unexpected' },
  throttle: { retries: 3, defaultWaitMs: 60_000 },
};

/** A query answers one page of at most 500 records. */
const MAX_ANSWER_CHARS = 8 * 1024 * 1024;
/** ThresholdInformation is read again at most this often once the budget it gave is spent. */
const THRESHOLD_REFRESH_MS = 60_000;

/** A write's 500 is Autotask's refusal of the record when its body names errors; a read's never is. */
interface AutotaskCall extends SessionCall {
  write: boolean;
}

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
  private readonly session: ProviderSession<AutotaskCall>;

  constructor(
    private readonly credentials: Record<string, string>,
    private readonly settings: ProviderSettings,
    private readonly options: AutotaskHttpOptions,
  ) {
    this.session = new ProviderSession<AutotaskCall>(settings, {
      ...AUTOTASK_RULES,
      maxWaitMs: options.maxWaitMs,
      budget: { beforeTry: () => this.spend() },
      refusal: (response) =>
        response.status === 401 || response.status === 403 ? new CrmAuthRefused(`Autotask refused the credentials: ${this.reasonOf(response)}`) : undefined,
      throttled: (response, waitMs) => new CrmUnavailable(`Autotask is rate limiting this database (${this.reasonOf(response)})`, waitMs),
      failed: (failure, call) => {
        if (failure.kind === 'unreachable') {
          const message = `Autotask could not be reached (${this.clean(failure.message)})`;
          return failure.outcomeUnknown ? new Unconfirmed(message) : new CrmUnavailable(message);
        }
        const { response } = failure;
        const message = `Autotask answered ${response.status} (${this.reasonOf(response)})`;
        const refusal = response.status === 500 && call.write ? errorsOf(response) : undefined;
        if (refusal === undefined && !failure.outcomeUnknown) return new CrmUnavailable(message);
        return new Unconfirmed(message, refusal === undefined ? undefined : this.clean(refusal));
      },
    });
  }

  /** The zone lookup (no authentication), then ThresholdInformation, which proves the credentials and gives the hour's budget. */
  async connect(): Promise<void> {
    const url = `${this.settings.autotaskZoneUrl}/atservicesrest/v1.0/zoneInformation?user=${encodeURIComponent(this.credentials.username ?? '')}`;
    // The lookup host is configured: guarded in production only.
    const lookup = await this.session.send({ method: 'GET', url }, { host: 'configured', write: false });
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
    const response = await this.send('GET', path, undefined, { write: false });
    const body = jsonOf(response) as Answer | undefined;
    if (response.status !== 200 || body === undefined)
      throw new CrmUnavailable(`Autotask answered GET ${path} with ${response.status}: ${this.reasonOf(response)}`);
    return body;
  }

  /** POST {entity}/query: the records the filter selects (the first page, up to 500: more than any query here needs). */
  async query<Item>(entity: string, filter: AutotaskFilter[], max = 500): Promise<Item[]> {
    const response = await this.send('POST', `${entity}/query`, { MaxRecords: max, filter }, { write: false });
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
        return this.writtenOf(await this.send('POST', path, body, { repeatable: false, write: true }));
      } catch (error) {
        if (!(error instanceof Unconfirmed)) throw error;
        if (!(await this.session.backOff(failures))) {
          if (error.refusal !== undefined) return { error: error.refusal };
          throw new CrmUnavailable(error.message);
        }
        const made = await findExisting();
        if (made !== undefined) return { id: made };
      }
    }
  }

  /** PATCH the fields sent of the record `body.id` names (sending it again is harmless). */
  async update(entity: string, body: Record<string, unknown> & { id: number }): Promise<Written> {
    try {
      const response = await this.send('PATCH', entity, body, { write: true });
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
  private send(method: ProviderRequest['method'], path: string, body: unknown, call: AutotaskCall): Promise<ProviderResponse> {
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
    return this.session.send(request, call);
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

import { AutotaskEntity, AutotaskRecord, FakeAutotaskRefusal, FakeAutotaskStore } from './fake-autotask-store';
import { FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';

export type { AutotaskRecord } from './fake-autotask-store';

/** An API-only user's name and secret, and the integration's tracking identifier. */
export interface AutotaskUser {
  username: string;
  secret: string;
  integration_code: string;
}

const PREFIX = '/atservicesrest/v1.0/';
const HOUR_MS = 3_600_000;
/** The entities the fake serves, by their path segment (Autotask's routes ignore case); each one's page: https://ww1.autotask.net/help/DeveloperHelp/Content/APIs/REST/Entities/{Entity}Entity.htm */
const ENTITIES = new Map<string, AutotaskEntity>(
  (['Companies', 'Opportunities', 'Contracts', 'ContractCharges', 'Projects', 'ProjectCharges', 'Resources', 'Countries'] as const).map((name) => [
    name.toLowerCase(),
    name,
  ]),
);
/** Child entities written through their parent's URL (`Contracts/{parentId}/Charges`), and the field naming the parent. */
const CHILDREN: Record<string, { entity: AutotaskEntity; parentField: string }> = {
  'contracts/charges': { entity: 'ContractCharges', parentField: 'contractID' },
  'projects/charges': { entity: 'ProjectCharges', parentField: 'projectID' },
};

/**
 * Autotask PSA's REST API (webservices*.autotask.net/atservicesrest, the Autotask REST API
 * documents and OpenAPI), playing both the zone lookup host and the zone itself:
 * - GET /atservicesrest/v1.0/zoneInformation?user={username} (no authentication): the zone of the
 *   user's database, {zoneName, url, webUrl, ci}; `url` names this server's /atservicesrest/
 *   unless `zoneUrl` is set. A user no zone knows is 404 {errors: [..]}.
 * - every other call under /atservicesrest/v1.0 needs the `ApiIntegrationCode`, `UserName` and
 *   `Secret` headers of an API user it knows (401 {errors: [..]} otherwise, revoked users too).
 * - GET ThresholdInformation: {externalRequestThreshold, requestThresholdTimeframe,
 *   currentTimeframeRequestCount}, the database's requests of the last hour; past the threshold
 *   every call is 429 {errors: [..]} until the hour's count falls back under it.
 * - POST (or GET ?search=) {Entity}/query with {filter, MaxRecords}: {items, pageDetails}, the
 *   first page (at most 500 records; the client's queries are narrow and never page);
 * - POST {Entity} creates, PATCH {Entity} updates the fields sent of the record `id` names: both
 *   answer {itemId}; child entities are written through the parent (POST
 *   Contracts/{parentId}/Charges, Projects/{parentId}/Charges). An invalid record is refused the
 *   way Autotask refuses it, 500 {errors: [..]}; PATCH of an id no record has is 404.
 * - GET {Entity}/entityInformation/fields: the fields, with picklist values (Opportunities' stage
 *   and status).
 * Entities: Companies, Opportunities (no delete: the API cannot delete them), Contracts and
 * ContractCharges, Projects and ProjectCharges, Resources and Countries (read only).
 *
 * Keeps state: the API users it accepts (any not revoked when `acceptAny`), each with its resource
 * (an API user is a resource), revoked user names, the records (fake-autotask-store.ts), and the
 * times of the last hour's authenticated calls.
 */
export class FakeAutotask extends FakeProvider {
  private readonly users = new Map<string, AutotaskUser>();
  private readonly revoked = new Set<string>();
  private readonly callTimes: number[] = [];
  private readonly lost: Array<{ left: number; match: (request: SeenRequest) => boolean }> = [];
  readonly store = new FakeAutotaskStore();
  /** What the zone answer names as url; this server's /atservicesrest/ unless set. */
  zoneUrl?: string;
  /** The database's external requests an hour (Autotask's default is 10,000). */
  requestThreshold = 10_000;

  constructor(private readonly options: { acceptAny?: boolean } = {}) {
    super();
  }

  /** An API user that now works. */
  accept(user: AutotaskUser): void {
    this.users.set(user.username.toLowerCase(), user);
    this.revoked.delete(user.username.toLowerCase());
    this.resourceOf(user.username);
  }

  /** The API user is made inactive (or its secret changed): its calls are 401. */
  revoke(username: string): void {
    this.users.delete(username.toLowerCase());
    this.revoked.add(username.toLowerCase());
  }

  /** The next `count` requests `match` selects are carried out, but answered 503 as if the connection had failed after the work was done. */
  loseAnswers(count: number, match: (request: SeenRequest) => boolean): void {
    this.lost.push({ left: count, match });
  }

  /** A company someone made in Autotask. */
  addCompany(fields: Record<string, unknown>): AutotaskRecord {
    return this.store.insert('Companies', { companyType: 1, phone: '555-0100', isActive: true, ...fields });
  }

  companies = (): AutotaskRecord[] => this.store.all('Companies');
  opportunities = (): AutotaskRecord[] => this.store.all('Opportunities');
  contracts = (): AutotaskRecord[] => this.store.all('Contracts');
  projects = (): AutotaskRecord[] => this.store.all('Projects');

  /** The charges (lines) of a contract or a project. */
  charges(kind: 'contract' | 'project', parentId: number): AutotaskRecord[] {
    return kind === 'contract'
      ? this.store.all('ContractCharges').filter((charge) => charge.contractID === parentId)
      : this.store.all('ProjectCharges').filter((charge) => charge.projectID === parentId);
  }

  /** The resource of an API user, made with the user (an API-only user is a resource in Autotask). */
  resourceOf(username: string): AutotaskRecord {
    const existing = this.store.all('Resources').find((resource) => String(resource.userName).toLowerCase() === username.toLowerCase());
    return existing ?? this.store.insert('Resources', { userName: username, email: username, firstName: 'API', lastName: 'User', isActive: true });
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const [rawPath, search] = request.path.split('?');
    const path = rawPath.toLowerCase();
    // No REST help page found; https://github.com/AutotaskDevelopment/REST-Postman (Datto's Postman collection), "ZoneInformation (non-authenticated)"
    if (request.method === 'GET' && path === `${PREFIX}zoneinformation`) return this.zone(new URLSearchParams(search ?? '').get('user') ?? '');
    if (!path.startsWith(PREFIX)) return notFound();
    const refusal = this.authenticate(request);
    if (refusal) return refusal;
    const now = Date.now();
    while (this.callTimes.length && this.callTimes[0] <= now - HOUR_MS) this.callTimes.shift();
    this.callTimes.push(now);
    if (this.callTimes.length > this.requestThreshold) {
      return { status: 429, body: { errors: [`The request threshold of ${this.requestThreshold} requests an hour has been exceeded.`] } };
    }
    // The same collection, "API Call Limits - ThresholdInformation"; the threshold: https://ww1.autotask.net/help/DeveloperHelp/Content/APIs/REST/General_Topics/REST_Thresholds_Limits.htm
    if (request.method === 'GET' && path === `${PREFIX}thresholdinformation`) {
      return {
        status: 200,
        body: { externalRequestThreshold: this.requestThreshold, requestThresholdTimeframe: 60, currentTimeframeRequestCount: this.callTimes.length },
      };
    }
    const answer = this.route(request, rawPath.slice(PREFIX.length).split('/'), new URLSearchParams(search ?? ''));
    const lost = this.lost.find((entry) => entry.left > 0 && entry.match(request));
    if (lost && answer.status < 300) {
      lost.left--;
      return this.failureAnswer(503);
    }
    return answer;
  }

  private route(request: SeenRequest, segments: string[], search: URLSearchParams): FakeAnswer {
    const [first, second, third] = segments.map((segment) => segment.toLowerCase());
    const entity = ENTITIES.get(first);
    if (!entity) return notFound();
    try {
      // https://ww1.autotask.net/help/DeveloperHelp/Content/APIs/REST/API_Calls/REST_Basic_Query_Calls.htm, "Querying with POST"
      if (second === 'query' && segments.length === 2 && (request.method === 'POST' || request.method === 'GET')) {
        const body = request.method === 'POST' ? parse(request.body) : parse(search.get('search') ?? '');
        const max = Number(body.MaxRecords ?? body.maxRecords ?? 500);
        const items = this.store.query(entity, body, Number.isInteger(max) && max > 0 ? Math.min(max, 500) : 500);
        return { status: 200, body: { items, pageDetails: { count: items.length, requestCount: 500, prevPageUrl: null, nextPageUrl: null } } };
      }
      // https://ww1.autotask.net/help/DeveloperHelp/Content/APIs/REST/API_Calls/REST_EntityInformationCall.htm, "entityInformation/fields"
      if (second === 'entityinformation' && third === 'fields' && segments.length === 3 && request.method === 'GET') {
        return { status: 200, body: { fields: this.store.fieldsOf(entity) } };
      }
      // https://ww1.autotask.net/help/DeveloperHelp/Content/APIs/REST/API_Calls/REST_Creating_Resources_POST.htm, "Creating resources via POST request in the REST API"
      if (segments.length === 1 && request.method === 'POST') return { status: 200, body: { itemId: this.store.create(entity, parse(request.body)).id } };
      // https://autotask.net/help/developerhelp/content/apis/REST/API_Calls/REST_Updating_Data_PATCH.htm, "Updating data via PATCH request"
      if (segments.length === 1 && request.method === 'PATCH') return { status: 200, body: { itemId: this.store.update(entity, parse(request.body)).id } };
      // https://www.autotask.net/help/developerhelp/Content/APIs/REST/API_Calls/REST_Resource_Child_Access_URLs.htm, "Child collection access URLs"
      const child = CHILDREN[`${first}/${third}`];
      if (child && segments.length === 3 && request.method === 'POST' && /^\d+$/.test(second)) {
        const body = { ...parse(request.body), [child.parentField]: Number(second) };
        return { status: 200, body: { itemId: this.store.create(child.entity, body).id } };
      }
      if (segments.length === 1) return { status: 405, body: { Message: `The requested resource does not support http method '${request.method}'.` } };
      return notFound();
    } catch (error) {
      if (error instanceof FakeAutotaskRefusal) return { status: error.status, body: { errors: error.errors } };
      throw error;
    }
  }

  private zone(user: string): FakeAnswer {
    const known = this.users.has(user.toLowerCase()) || (this.options.acceptAny && !this.revoked.has(user.toLowerCase()));
    if (!user || !known) return { status: 404, body: { errors: ['Zone information could not be determined for this user.'] } };
    return { status: 200, body: { zoneName: 'Fake Zone', url: this.zoneUrl ?? `${this.url}/atservicesrest/`, webUrl: `${this.url}/`, ci: 1 } };
  }

  private authenticate(request: SeenRequest): FakeAnswer | undefined {
    const header = (name: string) => (typeof request.headers[name] === 'string' ? (request.headers[name] as string) : '');
    const username = header('username').toLowerCase();
    const unauthorized = (error: string): FakeAnswer => ({ status: 401, body: { errors: [error] } });
    if (!username || !header('secret') || !header('apiintegrationcode')) return unauthorized('UserName, Secret and ApiIntegrationCode headers are required.');
    if (this.revoked.has(username)) return unauthorized('The user is inactive or its secret has changed.');
    const user = this.users.get(username);
    if (!user) {
      if (!this.options.acceptAny) return unauthorized('The user name or secret is incorrect.');
      this.resourceOf(username);
      return undefined;
    }
    if (user.secret !== header('secret')) return unauthorized('The user name or secret is incorrect.');
    if (user.integration_code !== header('apiintegrationcode')) return unauthorized('The API tracking identifier is invalid.');
    return undefined;
  }

  protected rateLimitedAnswer(retryAfterS: number): FakeAnswer {
    return { status: 429, headers: { 'retry-after': String(retryAfterS) }, body: { errors: ['The request threshold has been exceeded.'] } };
  }

  protected failureAnswer(status: number): FakeAnswer {
    return { status, body: { errors: ['An unexpected error occurred.'] } };
  }
}

const notFound = (): FakeAnswer => ({ status: 404, body: { errors: ['The requested resource does not exist.'] } });

/** A request's JSON object; anything else is refused as Autotask refuses a body it cannot read. */
function parse(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new FakeAutotaskRefusal(['The request body could not be read as a JSON object.'], 400);
}

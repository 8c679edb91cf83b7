import { archiveBatch, BatchContext, batchTimes, inputsOf, present, readBatch, updateBatch, upsertBatch } from './fake-hubspot-batch';
import {
  DEFAULT_ASSOCIATION_TYPES,
  FakeHubSpotObject,
  FakeHubSpotStore,
  FakeValidationError,
  HubSpotObjectType,
  isObjectType,
  SEARCH_DEFAULTS,
  SearchFilter,
} from './fake-hubspot-store';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';
import { ConformanceLog, DocumentedOperation, OpenApiConformance } from './openapi-conformance';

export type { FakeHubSpotObject, HubSpotObjectType } from './fake-hubspot-store';

const TEN_SECONDS = 10_000;
const MAX_SEARCH_LIMIT = 200;
const MAX_SEARCH_RESULTS = 10_000;

type Body = Record<string, unknown>;
type Route = { limit: 'ten-secondly' | 'search' | 'none'; handle: (body: Body, url: URL) => FakeAnswer };

/** An answer of the fake that HubSpot's document refuses: the fake is wrong, and the test that saw it fails. */
export class FakeAnswerViolation extends Error {
  override readonly name = 'FakeAnswerViolation';
}

/**
 * HubSpot as its published OpenAPI documents describe it (HubSpot/HubSpot-public-api-spec-collection,
 * pinned and vendored in test/fixtures/provider-specs/hubspot: CRM Objects v3, Properties v3,
 * Associations v4). Every request is checked against the document's operation (openapi-backend,
 * openapi-conformance.ts) before it is carried out: one the document refuses is answered as HubSpot
 * answers invalid input (400 VALIDATION_ERROR, `errors` saying what), and one no document describes
 * is 404; every answer is checked against the operation's response schema, and one that violates it
 * fails the test that caused it (FakeAnswerViolation, thrown outside the exchange, which gets a 500).
 * `conformance` keeps every call and every violation.
 * - GET /crm/v3/objects/contacts (what connect verifies with): {results, paging};
 * - POST /crm/v3/properties/{objectType}: 201 Property, 409 OBJECT_ALREADY_EXISTS; GET …/{name}: 200, 404;
 * - POST /crm/v3/objects/{objectType}/batch/{upsert,update,read,archive} (fake-hubspot-batch.ts);
 * - POST …/search: PublicObjectSearchRequest → {total, results, paging.next.after};
 * - POST /crm/v4/associations/{from}/{to}/batch/associate/default: BatchResponsePublicDefaultAssociation.
 * Every error is HubSpot's `Error` body ({status: "error", message, correlationId, category}); 401
 * for a missing, unknown or revoked token. Limits: `limitPer10s` requests per rolling 10 seconds
 * (TEN_SECONDLY_ROLLING 429 with Retry-After and X-HubSpot-RateLimit-*; answers carry the headers
 * while a limit is set) and `searchLimitPerSecond` searches a second; as the documents'
 * `x-hubspot-rate-limit-exemptions` say, search and associate-default do not count toward the
 * first. Both limits are off (Infinity) unless a test sets them. A 429's body is the one HubSpot's
 * usage guidelines show ({status, message, errorType: RATE_LIMIT, correlationId, policyName}),
 * which lacks the `category` the documents' Error schema requires: 429s are not checked.
 *
 * Keeps state: the tokens it accepts (any token not revoked when `acceptAny`), revoked tokens,
 * the records (fake-hubspot-store.ts) and the times of the requests the 10-second limit counts.
 */
export class FakeHubSpot extends FakeProvider {
  private readonly tokens = new Set<string>();
  private readonly revoked = new Set<string>();
  private readonly store = new FakeHubSpotStore();
  /** Arrival times of requests the ten-secondly limit counts, and whether each was let through. */
  private readonly counted: Array<{ at: number; accepted: boolean }> = [];
  private readonly searches: number[] = [];
  /** Requests per rolling 10 seconds before 429 (HubSpot: 100 for a Free/Starter private app); off unless set. */
  limitPer10s = Infinity;
  /** Searches per second before 429 (HubSpot: 5); off unless set. */
  searchLimitPerSecond = Infinity;
  /**
   * Batch write results carry every property written (what HubSpot is commonly seen doing) rather
   * than the default ones, which is all the document allows a client to expect.
   */
  upsertEchoesProperties = false;
  /** Every request by the documented operation it was for, and what the documents refused (fake-provider's `requests` has the raw requests). */
  override readonly conformance: ConformanceLog = { calls: [], violations: [] };
  private documents?: OpenApiConformance;

  constructor(private readonly options: { acceptAny?: boolean } = {}) {
    super();
  }

  override async start(): Promise<this> {
    this.documents = await OpenApiConformance.load('hubspot');
    return super.start();
  }

  /** A private app's access token that now works. */
  accept(token: string): void {
    this.tokens.add(token);
    this.revoked.delete(token);
  }

  /** The token no longer works (the app was uninstalled or its token rotated). */
  revoke(token: string): void {
    this.tokens.delete(token);
    this.revoked.add(token);
  }

  // The test API: what a person sees and does in HubSpot.

  /** The live (not archived) records of a type. */
  objects(type: HubSpotObjectType): FakeHubSpotObject[] {
    return this.store.live(type);
  }

  /** Every record of a type, archived ones included. */
  allObjects(type: HubSpotObjectType): FakeHubSpotObject[] {
    return this.store.all(type);
  }

  /** Contacts, archived included (what connect verification's GET reads). */
  get contacts(): FakeHubSpotObject[] {
    return this.store.all('contacts');
  }

  /** The live record whose property has the value, else the last archived one that had it, else undefined. */
  find(type: HubSpotObjectType, property: string, value: string): FakeHubSpotObject | undefined {
    return this.store.find(type, property, value);
  }

  /** The ids of the records of `toType` the record is associated with. */
  associations(fromType: HubSpotObjectType, fromId: string, toType: HubSpotObjectType): string[] {
    return this.store.associations(fromType, fromId, toType);
  }

  /** Someone edits a record in HubSpot: the properties change and its modified time moves forward. */
  userEdit(type: HubSpotObjectType, id: string, properties: Record<string, string | null>): FakeHubSpotObject {
    const object = this.store.get(type, id);
    if (!object || object.archived) throw new Error(`no live ${type} record ${id}`);
    return this.store.update(object, properties);
  }

  /** Someone makes a property in HubSpot by hand (Settings › Properties): a text property, without unique values unless told. */
  userCreateProperty(type: HubSpotObjectType, property: { name: string; hasUniqueValue?: boolean }): void {
    this.store.defineProperty(type, property.name, { hasUniqueValue: property.hasUniqueValue === true });
  }

  /** Someone deletes a property in HubSpot (Settings › Properties): its definition and its values go. */
  userDeleteProperty(type: HubSpotObjectType, name: string): void {
    this.store.dropProperty(type, name);
  }

  /** Someone archives a record in HubSpot (its id no longer finds it; restoring is not played). */
  userArchive(type: HubSpotObjectType, id: string): void {
    const object = this.store.get(type, id);
    if (!object || object.archived) throw new Error(`no live ${type} record ${id}`);
    this.store.archive(object);
  }

  /** Someone creates a record in HubSpot (without a sales_pipeline_id unless given one). */
  userCreate(type: HubSpotObjectType, properties: Record<string, string | null>): FakeHubSpotObject {
    return this.store.create(type, properties);
  }

  /** The most requests the ten-secondly limit counts that arrived within any 10 seconds (429s included). */
  maxRequestsIn10s(): number {
    let most = 0;
    let start = 0;
    for (let end = 0; end < this.counted.length; end++) {
      while (this.counted[start].at <= this.counted[end].at - TEN_SECONDS) start++;
      most = Math.max(most, end - start + 1);
    }
    return most;
  }

  /** Until called with null, every write gets this one time (a bulk import: many records modified in one millisecond). */
  freezeClock(at: Date | null): void {
    this.store.freeze(at);
  }

  /** The deal stages the default pipeline accepts (add a test's own stages here). */
  get dealStages(): Set<string> {
    return this.store.dealStages;
  }

  private authorized(request: SeenRequest): boolean {
    const token = bearerOf(request);
    if (token === null || this.revoked.has(token)) return false;
    return this.tokens.has(token) || this.options.acceptAny === true;
  }

  private error(status: number, category: string, message: string, extra: Body = {}): FakeAnswer {
    return { status, body: { status: 'error', message, correlationId: this.correlationId(), category, ...extra } };
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const url = new URL(request.path, 'http://fake');
    const documented = this.documents!.match(request.method, request.path);
    const answer = this.answerDocumented(request, url, documented);
    this.conformance.calls.push({ method: request.method, path: url.pathname, operation: documented?.name ?? null, status: answer.status });
    if (!documented || answer.status === 429) return answer;
    const errors = this.documents!.checkAnswer(documented, answer.status, answer.body);
    if (errors.length === 0) return answer;
    this.conformance.violations.push({ side: 'answer', method: request.method, path: url.pathname, operation: documented.name, status: answer.status, errors });
    const violation = new FakeAnswerViolation(`the fake HubSpot's ${answer.status} to ${documented.name} violates the document: ${errors.join('; ')}`);
    // Thrown outside the exchange, so the test fails on it (jest's uncaught-error handling) while the client gets an answer.
    setImmediate(() => {
      throw violation;
    });
    return this.error(500, 'INTERNAL_ERROR', violation.message);
  }

  private answerDocumented(request: SeenRequest, url: URL, documented: DocumentedOperation | undefined): FakeAnswer {
    const path = url.pathname;
    const route = this.route(request.method, path);
    if (!route || !documented) {
      if (!documented) {
        const errors = ['no vendored HubSpot document describes this operation'];
        this.conformance.violations.push({ side: 'request', method: request.method, path, operation: null, errors });
      }
      return this.error(404, 'OBJECT_NOT_FOUND', `No route for ${request.method} ${path}`);
    }
    if (!this.authorized(request)) {
      return this.error(
        401,
        'INVALID_AUTHENTICATION',
        'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
      );
    }
    const limited = route.limit === 'ten-secondly' ? this.countTenSecondly() : route.limit === 'search' ? this.countSearch() : undefined;
    if (limited) return limited;
    let body: Body | undefined;
    if (request.method === 'POST') {
      try {
        body = JSON.parse(request.body || '{}') as Body;
      } catch {
        return this.error(400, 'VALIDATION_ERROR', 'Invalid input JSON on line 1');
      }
    }
    const refused = this.documents!.checkRequest(documented, { method: request.method, path: request.path, headers: request.headers, body });
    if (refused.length > 0) {
      this.conformance.violations.push({ side: 'request', method: request.method, path, operation: documented.name, errors: refused });
      return this.error(400, 'VALIDATION_ERROR', `Invalid input: ${refused.join('; ')}`, {
        errors: refused.map((message) => ({ message, in: 'body' })),
      });
    }
    let answer: FakeAnswer;
    try {
      answer = route.handle(body ?? {}, url);
    } catch (error) {
      if (!(error instanceof FakeValidationError)) throw error;
      answer = this.error(400, 'VALIDATION_ERROR', error.message);
    }
    if (route.limit === 'ten-secondly' && Number.isFinite(this.limitPer10s)) answer.headers = { ...this.limitHeaders(), ...answer.headers };
    return answer;
  }

  private route(method: string, path: string): Route | undefined {
    let match: RegExpExecArray | null;
    if (method === 'GET' && path === '/crm/v3/objects/contacts') return { limit: 'ten-secondly', handle: (_, url) => this.listContacts(url) };
    if ((match = /^\/crm\/v3\/properties\/(\w+)$/.exec(path)) && method === 'POST' && isObjectType(match[1])) {
      const type = match[1];
      return { limit: 'ten-secondly', handle: (body) => this.createProperty(type, body) };
    }
    if ((match = /^\/crm\/v3\/properties\/(\w+)\/(\w+)$/.exec(path)) && method === 'GET' && isObjectType(match[1])) {
      const [type, name] = [match[1], match[2]];
      return { limit: 'ten-secondly', handle: () => this.readProperty(type, name) };
    }
    match = /^\/crm\/v3\/objects\/(\w+)\/(batch\/upsert|batch\/update|batch\/read|batch\/archive|search)$/.exec(path);
    if (match && method === 'POST' && isObjectType(match[1])) {
      const [type, action] = [match[1], match[2]];
      if (action === 'search') return { limit: 'search', handle: (body) => this.search(type, body) };
      const batch = { 'batch/upsert': upsertBatch, 'batch/update': updateBatch, 'batch/read': readBatch, 'batch/archive': archiveBatch }[action]!;
      return { limit: 'ten-secondly', handle: (body) => batch(this.batchContext(), type, body) };
    }
    match = /^\/crm\/v4\/associations\/(\w+)\/(\w+)\/batch\/associate\/default$/.exec(path);
    if (match && method === 'POST' && isObjectType(match[1]) && isObjectType(match[2])) {
      const [from, to] = [match[1], match[2]];
      return { limit: 'none', handle: (body) => this.associateDefault(from, to, body) };
    }
    return undefined;
  }

  private batchContext(): BatchContext {
    return { store: this.store, error: (status, category, message) => this.error(status, category, message), echoProperties: this.upsertEchoesProperties };
  }

  private countTenSecondly(): FakeAnswer | undefined {
    const now = Date.now();
    const inWindow = this.counted.filter((request) => request.accepted && request.at > now - TEN_SECONDS);
    const accepted = inWindow.length < this.limitPer10s;
    this.counted.push({ at: now, accepted });
    if (accepted) return undefined;
    const retryAfterS = Math.max(1, Math.ceil((inWindow[0].at + TEN_SECONDS - now) / 1000));
    const answer = this.rateLimitedAnswer(retryAfterS);
    answer.headers = { ...answer.headers, ...this.limitHeaders() };
    return answer;
  }

  private countSearch(): FakeAnswer | undefined {
    const now = Date.now();
    const recent = this.searches.filter((at) => at > now - 1000);
    if (recent.length < this.searchLimitPerSecond) {
      this.searches.push(now);
      return undefined;
    }
    return {
      status: 429,
      body: {
        status: 'error',
        message: 'You have reached your secondly limit.',
        errorType: 'RATE_LIMIT',
        correlationId: this.correlationId(),
        policyName: 'SECONDLY',
      },
    };
  }

  private limitHeaders(): Record<string, string> {
    const now = Date.now();
    const used = this.counted.filter((request) => request.accepted && request.at > now - TEN_SECONDS).length;
    return {
      'x-hubspot-ratelimit-interval-milliseconds': String(TEN_SECONDS),
      'x-hubspot-ratelimit-max': String(this.limitPer10s),
      'x-hubspot-ratelimit-remaining': String(Math.max(0, this.limitPer10s - used)),
    };
  }

  private listContacts(url: URL): FakeAnswer {
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 10) || 10, 100);
    const live = this.store.live('contacts');
    const results = live.slice(0, limit).map((object) => present('contacts', object));
    return { status: 200, body: { results, ...(live.length > limit ? { paging: { next: { after: String(limit) } } } : {}) } };
  }

  private createProperty(type: HubSpotObjectType, body: Body): FakeAnswer {
    for (const field of ['name', 'label', 'type', 'fieldType', 'groupName']) {
      if (typeof body[field] !== 'string' || body[field] === '') return this.error(400, 'VALIDATION_ERROR', `Invalid input: ${field} is required`);
    }
    const name = body.name as string;
    if (this.store.definitions[type].has(name)) return this.error(409, 'OBJECT_ALREADY_EXISTS', `Property named '${name}' already exists.`);
    const time = new Date().toISOString();
    const property = {
      name,
      label: body.label as string,
      type: body.type as string,
      fieldType: body.fieldType as string,
      groupName: body.groupName as string,
      description: typeof body.description === 'string' ? body.description : '',
      hasUniqueValue: body.hasUniqueValue === true,
      hubspotDefined: false,
      formField: body.formField === true,
      hidden: body.hidden === true,
      options: [],
      displayOrder: -1,
      calculated: false,
      externalOptions: false,
      createdAt: time,
      updatedAt: time,
      modificationMetadata: { archivable: true, readOnlyDefinition: false, readOnlyValue: false },
    };
    this.store.definitions[type].set(name, property);
    return { status: 201, headers: { location: `${this.url}/crm/v3/properties/${type}/${name}` }, body: property };
  }

  private readProperty(type: HubSpotObjectType, name: string): FakeAnswer {
    const property = this.store.definitions[type].get(name);
    return property ? { status: 200, body: property } : this.error(404, 'OBJECT_NOT_FOUND', `Unable to find property ${name} on ${type}`);
  }

  private search(type: HubSpotObjectType, body: Body): FakeAnswer {
    const limit = body.limit === undefined ? 10 : Number(body.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw new FakeValidationError(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`);
    const offset = body.after === undefined ? 0 : Number(body.after);
    if (!Number.isInteger(offset) || offset < 0) throw new FakeValidationError(`after is not a valid paging token: ${String(body.after)}`);
    if (offset >= MAX_SEARCH_RESULTS) throw new FakeValidationError(`Paging past ${MAX_SEARCH_RESULTS} results is not supported; narrow the search`);
    const filterGroups = (Array.isArray(body.filterGroups) ? body.filterGroups : []) as Array<{ filters?: SearchFilter[] }>;
    const sorts = Array.isArray(body.sorts) ? (body.sorts as string[]) : [];
    const properties = Array.isArray(body.properties) && body.properties.length > 0 ? (body.properties as string[]) : SEARCH_DEFAULTS[type];
    const found = this.store.search(type, filterGroups, sorts);
    const page = found.slice(offset, offset + limit);
    const next = offset + limit < Math.min(found.length, MAX_SEARCH_RESULTS) ? String(offset + limit) : undefined;
    return {
      status: 200,
      body: {
        total: found.length,
        results: page.map((object) => present(type, object, properties)),
        ...(next ? { paging: { next: { after: next, link: `?after=${next}` } } } : {}),
      },
    };
  }

  private associateDefault(fromType: HubSpotObjectType, toType: HubSpotObjectType, body: Body): FakeAnswer {
    const typeId = DEFAULT_ASSOCIATION_TYPES[`${fromType}>${toType}`];
    if (typeId === undefined) return this.error(400, 'VALIDATION_ERROR', `No default association from ${fromType} to ${toType}`);
    const results: unknown[] = [];
    const errors: unknown[] = [];
    for (const input of inputsOf(body) as Array<{ from?: { id?: unknown }; to?: { id?: unknown } }>) {
      const [fromId, toId] = [String(input.from?.id), String(input.to?.id)];
      const from = this.store.get(fromType, fromId);
      const to = this.store.get(toType, toId);
      if (!from || from.archived || !to || to.archived) {
        const missing = !from || from.archived ? `${fromType} ${fromId}` : `${toType} ${toId}`;
        errors.push({
          status: 'error',
          category: 'OBJECT_NOT_FOUND',
          message: `No ${missing} was found`,
          context: { fromObjectId: [fromId], toObjectId: [toId] },
          errors: [],
          links: {},
        });
        continue;
      }
      this.store.associate(fromType, fromId, toType, toId);
      results.push({ from: { id: fromId }, to: { id: toId }, associationSpec: { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: typeId } });
    }
    return { status: 200, body: { ...batchTimes(), results, ...(errors.length > 0 ? { errors, numErrors: errors.length } : {}) } };
  }

  protected rateLimitedAnswer(retryAfterS: number): FakeAnswer {
    return {
      status: 429,
      headers: {
        'retry-after': String(retryAfterS),
        'x-hubspot-ratelimit-interval-milliseconds': '10000',
        'x-hubspot-ratelimit-max': '100',
        'x-hubspot-ratelimit-remaining': '0',
        'x-hubspot-ratelimit-daily': '250000',
        'x-hubspot-ratelimit-daily-remaining': '249000',
      },
      body: {
        status: 'error',
        message: 'You have reached your ten_secondly_rolling limit.',
        errorType: 'RATE_LIMIT',
        correlationId: this.correlationId(),
        policyName: 'TEN_SECONDLY_ROLLING',
      },
    };
  }

  protected failureAnswer(status: number): FakeAnswer {
    return this.error(status, 'INTERNAL_ERROR', 'internal error');
  }
}

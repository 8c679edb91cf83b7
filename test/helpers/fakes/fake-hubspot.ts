import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';
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

export type { FakeHubSpotObject, HubSpotObjectType } from './fake-hubspot-store';

const TEN_SECONDS = 10_000;
const MAX_BATCH = 100;
const MAX_SEARCH_LIMIT = 200;
const MAX_SEARCH_RESULTS = 10_000;

type Body = Record<string, unknown>;
interface UpsertInput {
  id?: unknown;
  idProperty?: unknown;
  properties?: Record<string, unknown>;
}

/**
 * HubSpot as its published OpenAPI documents describe it (HubSpot/HubSpot-public-api-spec-collection,
 * PublicApiSpecs/CRM: Contacts, Companies and Deals v3, Properties v3, Associations v4):
 * - GET /crm/v3/objects/contacts (what connect verifies with): {results, paging};
 * - POST /crm/v3/properties/{objectType}: 201 Property, 409 OBJECT_ALREADY_EXISTS; GET …/{name};
 * - POST /crm/v3/objects/{objectType}/batch/upsert by a unique-value `idProperty`: 200
 *   BatchResponseSimplePublicUpsertObject (`new` on each result), 207 with `errors` (StandardError,
 *   context.ids naming the inputs) when some inputs are refused, 400 for the batch itself (more than
 *   100 inputs, one id twice, an idProperty that is not unique-value);
 * - POST …/batch/update (BatchInputSimplePublicObjectBatchInput: `id` the record id, or the value of
 *   a unique-value `idProperty`; `properties`): 200 BatchResponseSimplePublicObject, 207
 *   BatchResponseSimplePublicObjectWithErrors when some inputs are refused (the values validated as
 *   upsert does, unique values included) or name no live record (OBJECT_NOT_FOUND, context.ids),
 *   400 for the batch itself; the records' modified times move forward;
 * - POST …/batch/archive: 204, ids already archived or unknown included;
 * - POST …/search: PublicObjectSearchRequest → {total, results, paging.next.after};
 * - POST /crm/v4/associations/{from}/{to}/batch/associate/default: BatchResponsePublicDefaultAssociation.
 * Every error is HubSpot's `Error` body ({status: "error", message, correlationId, category}); 401
 * for a missing, unknown or revoked token. Limits: `limitPer10s` requests per rolling 10 seconds
 * (TEN_SECONDLY_ROLLING 429 with Retry-After and X-HubSpot-RateLimit-*; answers carry the headers
 * while a limit is set) and `searchLimitPerSecond` searches a second; as the documents'
 * `x-hubspot-rate-limit-exemptions` say, search and associate-default do not count toward the
 * first. Both limits are off (Infinity) unless a test sets them.
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

  constructor(private readonly options: { acceptAny?: boolean } = {}) {
    super();
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
    const path = url.pathname;
    const route = this.route(request.method, path);
    if (!route) return this.error(404, 'OBJECT_NOT_FOUND', `No route for ${request.method} ${path}`);
    if (!this.authorized(request)) {
      return this.error(
        401,
        'INVALID_AUTHENTICATION',
        'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
      );
    }
    const limited = route.limit === 'ten-secondly' ? this.countTenSecondly() : route.limit === 'search' ? this.countSearch() : undefined;
    if (limited) return limited;
    let body: Body = {};
    if (request.method === 'POST') {
      try {
        body = JSON.parse(request.body || '{}') as Body;
      } catch {
        return this.error(400, 'VALIDATION_ERROR', 'Invalid input JSON on line 1');
      }
    }
    let answer: FakeAnswer;
    try {
      answer = route.handle(body, url);
    } catch (error) {
      if (!(error instanceof FakeValidationError)) throw error;
      answer = this.error(400, 'VALIDATION_ERROR', error.message);
    }
    if (route.limit === 'ten-secondly' && Number.isFinite(this.limitPer10s)) answer.headers = { ...this.limitHeaders(), ...answer.headers };
    return answer;
  }

  private route(method: string, path: string): { limit: 'ten-secondly' | 'search' | 'none'; handle: (body: Body, url: URL) => FakeAnswer } | undefined {
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
    match = /^\/crm\/v3\/objects\/(\w+)\/(batch\/upsert|batch\/update|batch\/archive|search)$/.exec(path);
    if (match && method === 'POST' && isObjectType(match[1])) {
      const [type, action] = [match[1], match[2]];
      if (action === 'search') return { limit: 'search', handle: (body) => this.search(type, body) };
      const write = (body: Body) =>
        action === 'batch/upsert' ? this.upsert(type, body) : action === 'batch/update' ? this.update(type, body) : this.archive(type, body);
      return { limit: 'ten-secondly', handle: write };
    }
    match = /^\/crm\/v4\/associations\/(\w+)\/(\w+)\/batch\/associate\/default$/.exec(path);
    if (match && method === 'POST' && isObjectType(match[1]) && isObjectType(match[2])) {
      const [from, to] = [match[1], match[2]];
      return { limit: 'none', handle: (body) => this.associateDefault(from, to, body) };
    }
    return undefined;
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
    const results = live.slice(0, limit);
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

  private batchTimes() {
    const time = new Date().toISOString();
    return { status: 'COMPLETE', requestedAt: time, startedAt: time, completedAt: time };
  }

  private inputsOf(body: Body): unknown[] {
    if (!Array.isArray(body.inputs)) throw new FakeValidationError('Invalid input JSON: inputs is required');
    if (body.inputs.length > MAX_BATCH)
      throw new FakeValidationError(`Batch input limit exceeded: ${body.inputs.length} inputs were given, at most ${MAX_BATCH} are allowed`);
    return body.inputs;
  }

  /** HubSpot refuses a batch that names one id twice (upsert and update alike). */
  private duplicateIds(inputs: UpsertInput[]): FakeAnswer | undefined {
    const ids = inputs.map((input) => String(input.id ?? ''));
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (twice.length === 0) return undefined;
    return this.error(400, 'VALIDATION_ERROR', `Duplicate IDs found in batch input: [${[...new Set(twice)].join(', ')}]. IDs must be unique`);
  }

  private upsert(type: HubSpotObjectType, body: Body): FakeAnswer {
    const inputs = this.inputsOf(body) as UpsertInput[];
    const duplicates = this.duplicateIds(inputs);
    if (duplicates) return duplicates;
    for (const input of inputs) {
      const idProperty = typeof input.idProperty === 'string' ? input.idProperty : '';
      const property = this.store.definitions[type].get(idProperty);
      if (!property)
        return this.error(400, 'VALIDATION_ERROR', `Unable to find property ${idProperty || '(none given)'} on ${type}; upsert needs an idProperty`);
      if (!property.hasUniqueValue && !(type === 'contacts' && idProperty === 'email')) {
        return this.error(400, 'VALIDATION_ERROR', `${idProperty} is not a unique identifier property and cannot be used as idProperty`);
      }
      if (typeof input.id !== 'string' || input.id === '') return this.error(400, 'VALIDATION_ERROR', 'Every input needs an id');
    }
    const results: unknown[] = [];
    const errors: unknown[] = [];
    for (const input of inputs) {
      const id = input.id as string;
      const idProperty = input.idProperty as string;
      const existing = this.store.holder(type, idProperty, id);
      const properties = { ...(input.properties ?? {}), [idProperty]: id };
      const refused = this.store.invalid(type, properties, existing);
      if (refused) {
        errors.push({ status: 'error', category: 'VALIDATION_ERROR', message: refused, context: { ids: [id] }, errors: [{ message: refused }], links: {} });
        continue;
      }
      const written = existing
        ? this.store.update(existing, properties as Record<string, string | null>)
        : this.store.create(type, properties as Record<string, string | null>);
      results.push({ ...this.present(written), new: !existing });
    }
    if (errors.length === 0) return { status: 200, body: { ...this.batchTimes(), results } };
    return { status: 207, body: { ...this.batchTimes(), results, errors, numErrors: errors.length } };
  }

  private update(type: HubSpotObjectType, body: Body): FakeAnswer {
    const inputs = this.inputsOf(body) as UpsertInput[];
    const duplicates = this.duplicateIds(inputs);
    if (duplicates) return duplicates;
    for (const input of inputs) {
      if (typeof input.id !== 'string' || input.id === '') return this.error(400, 'VALIDATION_ERROR', 'Every input needs an id');
      if (typeof input.properties !== 'object' || input.properties === null) return this.error(400, 'VALIDATION_ERROR', 'Every input needs properties');
      if (input.idProperty === undefined) continue;
      const property = this.store.definitions[type].get(String(input.idProperty));
      if (!property?.hasUniqueValue && !(type === 'contacts' && input.idProperty === 'email')) {
        return this.error(400, 'VALIDATION_ERROR', `Unable to perform update/upsert by non-unique ${type} property ${String(input.idProperty)}`);
      }
    }
    const results: unknown[] = [];
    const errors: unknown[] = [];
    const refuse = (id: string, category: string, message: string) =>
      errors.push({ status: 'error', category, message, context: { ids: [id] }, errors: [{ message }], links: {} });
    for (const input of inputs) {
      const id = input.id as string;
      const object = input.idProperty === undefined ? this.store.get(type, id) : this.store.holder(type, input.idProperty as string, id);
      if (!object || object.archived) {
        refuse(id, 'OBJECT_NOT_FOUND', `No ${type} record was found for id ${id}; it may be archived or deleted`);
        continue;
      }
      const properties = input.properties ?? {};
      const refused = this.store.invalid(type, properties, object);
      if (refused) {
        refuse(id, 'VALIDATION_ERROR', refused);
        continue;
      }
      results.push(this.present(this.store.update(object, properties as Record<string, string | null>)));
    }
    if (errors.length === 0) return { status: 200, body: { ...this.batchTimes(), results } };
    return { status: 207, body: { ...this.batchTimes(), results, errors, numErrors: errors.length } };
  }

  private archive(type: HubSpotObjectType, body: Body): FakeAnswer {
    for (const input of this.inputsOf(body) as Array<{ id?: unknown }>) {
      const object = this.store.get(type, String(input.id));
      if (object) this.store.archive(object);
    }
    return { status: 204 };
  }

  private search(type: HubSpotObjectType, body: Body): FakeAnswer {
    const limit = body.limit === undefined ? 10 : Number(body.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw new FakeValidationError(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`);
    const offset = body.after === undefined ? 0 : Number(body.after);
    if (!Number.isInteger(offset) || offset < 0) throw new FakeValidationError(`after is not a valid paging token: ${String(body.after)}`);
    if (offset >= MAX_SEARCH_RESULTS) throw new FakeValidationError(`Paging past ${MAX_SEARCH_RESULTS} results is not supported; narrow the search`);
    const filterGroups = (Array.isArray(body.filterGroups) ? body.filterGroups : []) as Array<{ filters?: SearchFilter[] }>;
    const sorts = Array.isArray(body.sorts) ? (body.sorts as unknown[]) : [];
    const properties = Array.isArray(body.properties) && body.properties.length > 0 ? (body.properties as string[]) : SEARCH_DEFAULTS[type];
    const found = this.store.search(type, filterGroups, sorts);
    const page = found.slice(offset, offset + limit);
    const next = offset + limit < Math.min(found.length, MAX_SEARCH_RESULTS) ? String(offset + limit) : undefined;
    const always = ['hs_object_id', 'createdate', type === 'contacts' ? 'lastmodifieddate' : 'hs_lastmodifieddate'];
    return {
      status: 200,
      body: {
        total: found.length,
        results: page.map((object) => this.present(object, [...new Set([...properties, ...always])])),
        ...(next ? { paging: { next: { after: next, link: `?after=${next}` } } } : {}),
      },
    };
  }

  private associateDefault(fromType: HubSpotObjectType, toType: HubSpotObjectType, body: Body): FakeAnswer {
    const typeId = DEFAULT_ASSOCIATION_TYPES[`${fromType}>${toType}`];
    if (typeId === undefined) return this.error(400, 'VALIDATION_ERROR', `No default association from ${fromType} to ${toType}`);
    const results: unknown[] = [];
    const errors: unknown[] = [];
    for (const input of this.inputsOf(body) as Array<{ from?: { id?: unknown }; to?: { id?: unknown } }>) {
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
    return { status: 200, body: { ...this.batchTimes(), results, ...(errors.length > 0 ? { errors, numErrors: errors.length } : {}) } };
  }

  /** A record as the API answers it: its properties (only those asked for, when given) as strings. */
  private present(object: FakeHubSpotObject, only?: string[]) {
    const names = only ?? Object.keys(object.properties);
    const properties = Object.fromEntries(names.map((name) => [name, object.properties[name] ?? null]));
    return { id: object.id, properties, createdAt: object.createdAt, updatedAt: object.updatedAt, archived: object.archived };
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

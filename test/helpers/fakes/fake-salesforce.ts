import { randomBytes } from 'node:crypto';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';
import { deleteRecords, updateRecords, upsertRecords } from './fake-salesforce-collections';
import { EXTERNAL_ID_FIELD, FakeSalesforceOrg, FakeSalesforceRecord, FakeSObject, isSObject } from './fake-salesforce-org';

export type { FakeSalesforceRecord, FakeSObject } from './fake-salesforce-org';

/** The REST API below /services/data/vXX.X (whatever version is asked; ours is SALESFORCE_API_VERSION). */
const REST_PATH = /^\/services\/data\/(v\d+\.\d+)(\/.*)$/;

/**
 * Salesforce as its OAuth 2.0 and REST API documents describe it, playing both the login host
 * and the org's instance:
 * - POST /services/oauth2/token (application/x-www-form-urlencoded, grant_type=refresh_token,
 *   client_id, client_secret, refresh_token) answers {access_token, signature, scope,
 *   instance_url, id, token_type, issued_at}; refusals are 400 {error, error_description}:
 *   invalid_client_id, invalid_client, invalid_grant "expired access/refresh token",
 *   unsupported_grant_type ("OAuth 2.0 Refresh Token Flow for Renewed Sessions").
 * - Every call under /services/data/vXX.X needs a Bearer access token it issued, else 401
 *   [{message: "Session expired or invalid", errorCode: "INVALID_SESSION_ID"}]; each counts
 *   against the org's daily API requests, reported on the answer as `Sforce-Limit-Info:
 *   api-usage=used/max` ("Limit Info Header"); once they are used up, 403 [{message:
 *   "TotalRequests Limit exceeded.", errorCode: "REQUEST_LIMIT_EXCEEDED"}] ("Status Codes and
 *   Error Responses").
 * - GET /limits: the org's limits ("Limits").
 * - GET /sobjects/{Lead|Opportunity}/describe: {name, label, custom, fields: [{name, type, label,
 *   length, externalId, unique, nillable, createable, updateable}]} ("sObject Describe").
 * - PATCH /composite/sobjects/{SObject}/{ExternalIdField} {allOrNone, records: [{attributes:
 *   {type}, …}]}: up to 200 records created or updated in order, answered with an UpsertResult
 *   per record {id, success, errors: [{statusCode, message, fields}], created}; an unknown
 *   external id field is 404 NOT_FOUND ("Upsert Records Using sObject Collections"; "Insert or
 *   Update (Upsert) a Record Using an External ID").
 * - PATCH /composite/sobjects {allOrNone, records: [{attributes: {type}, id, …}]}: up to 200
 *   records updated by Id in order, a SaveResult each {id, success, errors}; an Id missing, of
 *   another object, deleted (ENTITY_IS_DELETED) or unknown (INVALID_CROSS_REFERENCE_KEY) is that
 *   record's error ("Update Records Using sObject Collections").
 * - DELETE /composite/sobjects?ids=…&allOrNone=: up to 200 ids to the recycle bin (IsDeleted),
 *   a DeleteResult each, ENTITY_IS_DELETED for one already there ("Delete Records Using sObject
 *   Collections").
 * - GET /query?q=SOQL (the subset of fake-salesforce-soql.ts), answered {totalSize, done,
 *   records: [{attributes: {type, url}, …}], nextRecordsUrl} in batches of `queryBatchSize`
 *   (2,000 as Salesforce's default), continued at GET /query/{locator}; deleted records are not
 *   returned ("Execute a SOQL Query").
 *
 * The writes and their checks are in fake-salesforce-collections.ts.
 *
 * Keeps state: connected apps (client id and secret), refresh tokens it accepts (anything not
 * revoked when `acceptAny`), revoked ones, the access tokens it issued, and the org's Leads and
 * Opportunities. Every write (one call, or one person's edit) happens at its own SystemModstamp,
 * later than every one before; the records of one call share it, as one Salesforce transaction's do.
 */
export class FakeSalesforce extends FakeProvider {
  private readonly clients = new Map<string, string>();
  private readonly refreshTokens = new Set<string>();
  private readonly revoked = new Set<string>();
  private readonly accessTokens = new Set<string>();
  private readonly org = new FakeSalesforceOrg();
  /** What the token answer names as instance_url; this server itself unless set. */
  instanceUrl?: string;
  /** The org's daily API requests: every authenticated REST call counts one. */
  readonly dailyLimit = { max: 15_000, used: 0 };
  /** How many records one query answer holds before nextRecordsUrl. */
  queryBatchSize = 2_000;

  constructor(private readonly options: { acceptAny?: boolean } = {}) {
    super();
  }

  /** A connected app and one of its users' refresh tokens. */
  accept(clientId: string, clientSecret: string, refreshToken: string): void {
    this.clients.set(clientId, clientSecret);
    this.refreshTokens.add(refreshToken);
    this.revoked.delete(refreshToken);
  }

  /** The refresh token no longer works (revoked by the user or an admin); access tokens issued from it die with it. */
  revoke(refreshToken: string): void {
    this.refreshTokens.delete(refreshToken);
    this.revoked.add(refreshToken);
    this.accessTokens.clear();
  }

  /** Every access token issued so far expires (the session timeout): REST calls answer 401 INVALID_SESSION_ID until a new grant. */
  expireAccessTokens(): void {
    this.accessTokens.clear();
  }

  /** The org's live (not deleted) records of an object, as copies. */
  records(sobject: FakeSObject): FakeSalesforceRecord[] {
    return this.org.live(sobject).map((record) => ({ ...record }));
  }

  /** The live record whose field has this value. */
  find(sobject: FakeSObject, field: string, value: unknown): FakeSalesforceRecord | undefined {
    const record = this.org.live(sobject).find((candidate) => candidate[field] === value);
    return record && { ...record };
  }

  /** A person edits a record in Salesforce: its fields change and its SystemModstamp moves on. */
  userEdit(sobject: FakeSObject, id: string, fields: Record<string, unknown>): FakeSalesforceRecord {
    return { ...this.org.edit(sobject, id, fields) };
  }

  /** A person creates a record in Salesforce (so without our Sales_Pipeline_Id__c, unless given). */
  userCreate(sobject: FakeSObject, fields: Record<string, unknown>): FakeSalesforceRecord {
    return { ...this.org.create(sobject, fields, this.org.tick()) };
  }

  /** A person deletes a record in Salesforce: it goes to the recycle bin (IsDeleted) and its SystemModstamp moves on. */
  userDelete(sobject: FakeSObject, id: string): void {
    this.org.edit(sobject, id, { IsDeleted: true });
  }

  /** An admin deletes the External ID field (or hides it from the integration user): describe leaves it out, upserts on it are 404. */
  removeExternalIdField(sobject: FakeSObject): void {
    this.org.removeField(sobject, EXTERNAL_ID_FIELD);
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const path = request.path.split('?')[0];
    // https://help.salesforce.com/apex/HTViewHelpDoc?id=xcloud.remoteaccess_oauth_refresh_token_flow_ca.htm, "Request an Updated Access Token"
    if (request.method === 'POST' && path === '/services/oauth2/token') return this.token(request);
    const rest = REST_PATH.exec(path);
    if (rest) return this.rest(request, rest[1], rest[2]);
    return { status: 404, body: [{ message: 'The requested resource does not exist', errorCode: 'NOT_FOUND' }] };
  }

  /** Authentication and the daily limit for every REST call, then the resource; the answer carries Sforce-Limit-Info. */
  private rest(request: SeenRequest, version: string, resource: string): FakeAnswer {
    const token = bearerOf(request);
    if (token === null || !this.accessTokens.has(token)) {
      return { status: 401, body: [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }] };
    }
    let answer: FakeAnswer;
    if (this.dailyLimit.used >= this.dailyLimit.max) {
      answer = { status: 403, body: [{ message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' }] };
    } else {
      this.dailyLimit.used++;
      answer = this.resource(request, version, resource);
    }
    return { ...answer, headers: { ...answer.headers, 'sforce-limit-info': `api-usage=${this.dailyLimit.used}/${this.dailyLimit.max}` } };
  }

  private resource(request: SeenRequest, version: string, resource: string): FakeAnswer {
    const query = new URLSearchParams(request.path.split('?')[1] ?? '');
    const notFound: FakeAnswer = { status: 404, body: [{ message: 'The requested resource does not exist', errorCode: 'NOT_FOUND' }] };
    // https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_limits.htm, "Limits"
    if (request.method === 'GET' && resource === '/limits') return this.limits();
    // https://developer.salesforce.com/docs/platform/api-rest/guide/dome-sobject-describe, "Get Field and Other Metadata for an Object"
    const describe = /^\/sobjects\/(\w+)\/describe\/?$/.exec(resource);
    if (request.method === 'GET' && describe) return isSObject(describe[1]) ? { status: 200, body: this.org.describe(describe[1]) } : notFound;
    // https://developer.salesforce.com/docs/platform/api-rest/guide/resources-composite-sobjects-collections-upsert.html, "Upsert Records Using sObject Collections"
    const upsert = /^\/composite\/sobjects\/(\w+)\/(\w+)$/.exec(resource);
    if (request.method === 'PATCH' && upsert) return isSObject(upsert[1]) ? upsertRecords(this.org, upsert[1], upsert[2], request.body) : notFound;
    const collection = /^\/composite\/sobjects\/?$/.test(resource);
    // https://developer.salesforce.com/docs/platform/api-rest/guide/resources-composite-sobjects-collections-update.html, "Update Records Using sObject Collections"
    if (request.method === 'PATCH' && collection) return updateRecords(this.org, request.body);
    // https://developer.salesforce.com/docs/platform/api-rest/guide/resources-composite-sobjects-collections-delete.html, "Delete Records Using sObject Collections"
    if (request.method === 'DELETE' && collection) return deleteRecords(this.org, query.get('ids'), query.get('allOrNone') === 'true');
    // https://developer.salesforce.com/docs/platform/api-rest/guide/dome-query.html, "Execute a SOQL Query"
    if (request.method === 'GET' && resource === '/query') return this.org.query(query.get('q') ?? '', version, this.queryBatchSize);
    // https://developer.salesforce.com/docs/platform/api-rest/guide/dome-query.html, "Retrieving the Remaining SOQL Query Results" (nextRecordsUrl)
    const more = /^\/query\/([\w-]+)$/.exec(resource);
    if (request.method === 'GET' && more) return this.org.queryMore(more[1], version, this.queryBatchSize);
    return notFound;
  }

  private token(request: SeenRequest): FakeAnswer {
    const refuse = (error: string, description: string): FakeAnswer => ({ status: 400, body: { error, error_description: description } });
    if (!/^application\/x-www-form-urlencoded/.test(request.headers['content-type'] ?? ''))
      return refuse('invalid_request', 'must use application/x-www-form-urlencoded');
    const form = new URLSearchParams(request.body);
    if (form.get('grant_type') !== 'refresh_token') return refuse('unsupported_grant_type', 'grant type not supported');
    const clientId = form.get('client_id') ?? '';
    const clientSecret = form.get('client_secret') ?? '';
    const refreshToken = form.get('refresh_token') ?? '';
    const permissive = this.options.acceptAny === true;
    if (!this.clients.has(clientId) && !permissive) return refuse('invalid_client_id', 'client identifier invalid');
    if (this.clients.has(clientId) && this.clients.get(clientId) !== clientSecret) return refuse('invalid_client', 'invalid client credentials');
    if (this.revoked.has(refreshToken) || (!this.refreshTokens.has(refreshToken) && !permissive)) {
      return refuse('invalid_grant', 'expired access/refresh token');
    }
    const accessToken = `00D5g000004ABCD!${randomBytes(24).toString('base64url')}`;
    this.accessTokens.add(accessToken);
    return {
      status: 200,
      body: {
        access_token: accessToken,
        signature: randomBytes(32).toString('base64'),
        scope: 'refresh_token api',
        instance_url: this.instanceUrl ?? this.url,
        id: `${this.url}/id/00D5g000004ABCDEAA/0055g00000ABCDEAA4`,
        token_type: 'Bearer',
        issued_at: String(Date.now()),
      },
    };
  }

  private limits(): FakeAnswer {
    const { max, used } = this.dailyLimit;
    return {
      status: 200,
      body: { DailyApiRequests: { Max: max, Remaining: max - used }, DailyBulkApiBatches: { Max: 15000, Remaining: 15000 } },
    };
  }

  protected rateLimitedAnswer(retryAfterS: number): FakeAnswer {
    return {
      status: 429,
      headers: { 'retry-after': String(retryAfterS) },
      body: [{ message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' }],
    };
  }

  protected failureAnswer(status: number): FakeAnswer {
    return { status, body: [{ message: 'An unexpected error occurred. Please include this ErrorId if you contact support.', errorCode: 'UNKNOWN_EXCEPTION' }] };
  }
}

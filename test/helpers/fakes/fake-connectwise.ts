import { FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';
import { deliveryRoute } from './fake-connectwise-delivery';
import { jsonBody } from './fake-connectwise-records';
import { salesRoute } from './fake-connectwise-sales';
import { ConnectWiseSite, CwCompany } from './fake-connectwise-site';

/** An API member's key pair, the company it belongs to, and the clientId of the integration that calls. */
export interface ConnectWiseKeys {
  company_id: string;
  public_key: string;
  private_key: string;
  client_id: string;
}

const API = '/v4_6_release/apis/3.0';

/**
 * ConnectWise PSA (Manage REST API, developer.connectwise.com) as one site plays it:
 * - every call under /v4_6_release/apis/3.0 needs `Authorization: Basic
 *   base64("{companyId}+{publicKey}:{privateKey}")` and a `clientId` header; without a clientId
 *   the answer is 401, as it is for a company, key pair or clientId the site does not know, or a
 *   revoked key pair. Errors are ConnectWise's {code, message} body.
 * - GET /system/info: {version, isCloud, serverTimeZone, cloudRegion} (what connect verifies with).
 * - the company, contact, opportunity and forecast endpoints of fake-connectwise-sales.ts and the
 *   project and agreement endpoints of fake-connectwise-delivery.ts, over the records of one site
 *   (fake-connectwise-site.ts), with ConnectWise's conditions, paging and PATCH operations
 *   (fake-connectwise-records.ts).
 * - 429 (the site over its capacity) carries Retry-After; 5xx are {code, message} too.
 *
 * Keeps state: the member key pairs it accepts (any not revoked when `acceptAny`, with any
 * clientId), revoked public keys and the clientIds it knows, and the site's records (`site`).
 */
export class FakeConnectWise extends FakeProvider {
  private readonly members = new Map<string, { company: string; privateKey: string }>();
  private readonly clientIds = new Set<string>();
  private readonly revoked = new Set<string>();
  /** Everything the site holds, for tests to read and to seed (a company made there, a member, a catalog item). */
  readonly site = new ConnectWiseSite();
  /** Paths (below the API root) whose next create is made and then answered with a 500, as if the answer were lost after the commit. */
  private readonly lostAnswers: RegExp[] = [];

  constructor(private readonly options: { acceptAny?: boolean } = {}) {
    super();
  }

  /** An API member's keys (and the integration's clientId) that now work. */
  accept(keys: ConnectWiseKeys): void {
    this.members.set(keys.public_key, { company: keys.company_id.toLowerCase(), privateKey: keys.private_key });
    this.clientIds.add(keys.client_id);
    this.revoked.delete(keys.public_key);
  }

  /** The member's key pair no longer works (deleted from the member's API Keys tab). */
  revoke(publicKey: string): void {
    this.members.delete(publicKey);
    this.revoked.add(publicKey);
  }

  /** A company made at the site by its staff (to be matched by name or website). */
  addCompany(fields: { name: string; website?: string | null; identifier?: string }): CwCompany {
    const identifier = fields.identifier ?? fields.name.replace(/[^A-Za-z0-9]/g, '').slice(0, 25);
    return this.site.companies.add({ identifier, name: fields.name, website: fields.website ?? null, country: null, deletedFlag: false });
  }

  /** The next POST to a path like this (below the API root) is carried out, then answered 500: the record exists, the caller never learns it. */
  loseAnswerToNextCreate(path: string | RegExp): void {
    this.lostAnswers.push(typeof path === 'string' ? new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : path);
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const url = new URL(request.path, 'http://site');
    const path = url.pathname;
    if (!path.startsWith(`${API}/`)) return { status: 404, body: { code: 'NotFound', message: 'The requested resource was not found.' } };
    const refusal = this.authenticate(request);
    if (refusal) return refusal;
    // https://developer.connectwise.com/Products/Manage/REST (needs a developer account), tag Info
    if (request.method === 'GET' && path === `${API}/system/info`) {
      return { status: 200, body: { version: 'v2024.1.106530', isCloud: true, serverTimeZone: 'Eastern Standard Time', cloudRegion: 'NA' } };
    }
    const route = path.slice(API.length);
    const body = request.body === '' ? undefined : jsonBody(request.body);
    if (request.body !== '' && body === undefined) return { status: 400, body: { code: 'InvalidObject', message: 'The request body is not valid JSON.' } };
    const answer =
      salesRoute(this.site, request.method, route, url.searchParams, body) ?? deliveryRoute(this.site, request.method, route, url.searchParams, body);
    if (!answer) return { status: 404, body: { code: 'NotFound', message: 'The requested resource was not found.' } };
    const lost = request.method === 'POST' && answer.status === 201 ? this.lostAnswers.findIndex((pattern) => pattern.test(route)) : -1;
    if (lost >= 0) {
      this.lostAnswers.splice(lost, 1);
      return this.failureAnswer(500);
    }
    return answer;
  }

  private authenticate(request: SeenRequest): FakeAnswer | undefined {
    const unauthorized = (message: string): FakeAnswer => ({ status: 401, body: { code: 'Unauthorized', message } });
    const clientId = request.headers.clientid;
    if (typeof clientId !== 'string' || clientId === '') return unauthorized('clientId must be provided');
    if (!this.options.acceptAny && !this.clientIds.has(clientId)) return unauthorized('clientId is invalid');
    const match = /^Basic (.+)$/.exec(request.headers.authorization ?? '');
    const decoded = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
    const login = /^([^+:]+)\+([^:]+):(.+)$/.exec(decoded);
    if (!login) return unauthorized('Authorization header is missing or malformed');
    const [, company, publicKey, privateKey] = login;
    if (this.revoked.has(publicKey)) return unauthorized('Incorrect public/private key');
    const member = this.members.get(publicKey);
    if (!member) return this.options.acceptAny ? undefined : unauthorized('Incorrect public/private key');
    if (member.privateKey !== privateKey) return unauthorized('Incorrect public/private key');
    if (member.company !== company.toLowerCase()) return unauthorized(`Company ${company} was not found`);
    return undefined;
  }

  protected rateLimitedAnswer(retryAfterS: number): FakeAnswer {
    return { status: 429, headers: { 'retry-after': String(retryAfterS) }, body: { code: 'TooManyRequests', message: 'Too many requests' } };
  }

  protected failureAnswer(status: number): FakeAnswer {
    return { status, body: { code: 'UnexpectedError', message: 'An unexpected error has occurred.' } };
  }
}

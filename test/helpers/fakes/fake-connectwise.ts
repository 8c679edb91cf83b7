import { FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';

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
 * - 429 (ConnectWise's per-member limit) carries Retry-After; 5xx are {code, message} too.
 *
 * Keeps state: the member key pairs it accepts (any not revoked when `acceptAny`, with any
 * clientId), revoked public keys and the clientIds it knows.
 */
export class FakeConnectWise extends FakeProvider {
  private readonly members = new Map<string, { company: string; privateKey: string }>();
  private readonly clientIds = new Set<string>();
  private readonly revoked = new Set<string>();

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

  protected answer(request: SeenRequest): FakeAnswer {
    const path = request.path.split('?')[0];
    if (!path.startsWith(`${API}/`)) return { status: 404, body: { code: 'NotFound', message: 'The requested resource was not found.' } };
    const refusal = this.authenticate(request);
    if (refusal) return refusal;
    if (request.method === 'GET' && path === `${API}/system/info`) {
      return { status: 200, body: { version: 'v2024.1.106530', isCloud: true, serverTimeZone: 'Eastern Standard Time', cloudRegion: 'NA' } };
    }
    return { status: 404, body: { code: 'NotFound', message: 'The requested resource was not found.' } };
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

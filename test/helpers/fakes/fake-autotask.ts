import { FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';

/** An API-only user's name and secret, and the integration's tracking identifier. */
export interface AutotaskUser {
  username: string;
  secret: string;
  integration_code: string;
}

/**
 * Autotask PSA's REST API (webservices*.autotask.net/atservicesrest, the Autotask REST API
 * documents and OpenAPI), playing both the zone lookup host and the zone itself:
 * - GET /atservicesrest/v1.0/zoneInformation?user={username} (no authentication): the zone of the
 *   user's database, {zoneName, url, webUrl, ci}; `url` names this server's /atservicesrest/
 *   unless `zoneUrl` is set. A user no zone knows is 404 {errors: [..]}.
 * - every other call under /atservicesrest/v1.0 needs the `ApiIntegrationCode`, `UserName` and
 *   `Secret` headers of an API user it knows (401 {errors: [..]} otherwise, revoked users too).
 * - GET /atservicesrest/v1.0/ThresholdInformation: {externalRequestThreshold,
 *   requestThresholdTimeframe, currentTimeframeRequestCount} (what connect verifies with).
 * Errors are Autotask's {errors: [..]} body.
 *
 * Keeps state: the API users it accepts (any not revoked when `acceptAny`), revoked user names,
 * and the authenticated calls of the current hour.
 */
export class FakeAutotask extends FakeProvider {
  private readonly users = new Map<string, AutotaskUser>();
  private readonly revoked = new Set<string>();
  private calls = 0;
  /** What the zone answer names as url; this server's /atservicesrest/ unless set. */
  zoneUrl?: string;

  constructor(private readonly options: { acceptAny?: boolean } = {}) {
    super();
  }

  /** An API user that now works. */
  accept(user: AutotaskUser): void {
    this.users.set(user.username.toLowerCase(), user);
    this.revoked.delete(user.username.toLowerCase());
  }

  /** The API user is made inactive (or its secret changed): its calls are 401. */
  revoke(username: string): void {
    this.users.delete(username.toLowerCase());
    this.revoked.add(username.toLowerCase());
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const [rawPath, search] = request.path.split('?');
    const path = rawPath.toLowerCase();
    const notFound: FakeAnswer = { status: 404, body: { errors: ['The requested resource does not exist.'] } };
    if (request.method === 'GET' && path === '/atservicesrest/v1.0/zoneinformation') return this.zone(new URLSearchParams(search ?? '').get('user') ?? '');
    if (!path.startsWith('/atservicesrest/v1.0/')) return notFound;
    const refusal = this.authenticate(request);
    if (refusal) return refusal;
    this.calls++;
    if (request.method === 'GET' && path === '/atservicesrest/v1.0/thresholdinformation') {
      return { status: 200, body: { externalRequestThreshold: 10000, requestThresholdTimeframe: 60, currentTimeframeRequestCount: this.calls } };
    }
    return notFound;
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
    if (!user) return this.options.acceptAny ? undefined : unauthorized('The user name or secret is incorrect.');
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

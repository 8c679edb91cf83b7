import { randomBytes } from 'node:crypto';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';

/** The REST API version our service calls (src/modules/integrations/providers/crm-verification.ts). */
const LIMITS_PATH = /^\/services\/data\/v\d+\.\d+\/limits\/?$/;

/**
 * Salesforce as its OAuth 2.0 and REST API documents describe it, playing both the login host
 * and the org's instance:
 * - POST /services/oauth2/token (application/x-www-form-urlencoded, grant_type=refresh_token,
 *   client_id, client_secret, refresh_token) answers {access_token, signature, scope,
 *   instance_url, id, token_type, issued_at}; refusals are 400 {error, error_description}:
 *   invalid_client_id, invalid_client, invalid_grant "expired access/refresh token",
 *   unsupported_grant_type.
 * - GET /services/data/vXX.X/limits with a Bearer access token answers the org's limits; a bad
 *   token is 401 [{message: "Session expired or invalid", errorCode: "INVALID_SESSION_ID"}].
 *
 * Keeps state: connected apps (client id and secret), refresh tokens it accepts (anything not
 * revoked when `acceptAny`), revoked ones, and the access tokens it issued.
 */
export class FakeSalesforce extends FakeProvider {
  private readonly clients = new Map<string, string>();
  private readonly refreshTokens = new Set<string>();
  private readonly revoked = new Set<string>();
  private readonly accessTokens = new Set<string>();
  /** What the token answer names as instance_url; this server itself unless set. */
  instanceUrl?: string;

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

  protected answer(request: SeenRequest): FakeAnswer {
    const path = request.path.split('?')[0];
    if (request.method === 'POST' && path === '/services/oauth2/token') return this.token(request);
    if (request.method === 'GET' && LIMITS_PATH.test(path)) return this.limits(request);
    return { status: 404, body: [{ message: 'The requested resource does not exist', errorCode: 'NOT_FOUND' }] };
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

  private limits(request: SeenRequest): FakeAnswer {
    const token = bearerOf(request);
    if (token === null || !this.accessTokens.has(token)) {
      return { status: 401, body: [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }] };
    }
    return {
      status: 200,
      body: { DailyApiRequests: { Max: 15000, Remaining: 14998 }, DailyBulkApiBatches: { Max: 15000, Remaining: 15000 } },
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

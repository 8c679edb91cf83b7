import { randomBytes } from 'node:crypto';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';

/**
 * A HaloPSA instance (halopsa.com/apidoc: Authorisation, Agent):
 * - POST /auth/token (application/x-www-form-urlencoded: grant_type=client_credentials, client_id,
 *   client_secret, scope): {access_token, token_type: "Bearer", expires_in, scope}; refusals are
 *   400 {error, error_description}: invalid_request, unsupported_grant_type, invalid_client (an
 *   unknown or deactivated application, or a wrong secret), invalid_scope.
 * - every call under /api needs a Bearer access token it issued, else 401 {error, error_description}.
 * - GET /api/Agent/me: the agent the application acts as (what connect verifies with).
 *
 * Keeps state: the applications it accepts (client id and secret; any not revoked when
 * `acceptAny`), revoked client ids, and the access tokens it issued.
 */
export class FakeHaloPsa extends FakeProvider {
  private readonly clients = new Map<string, string>();
  private readonly revoked = new Set<string>();
  private readonly accessTokens = new Set<string>();

  constructor(private readonly options: { acceptAny?: boolean } = {}) {
    super();
  }

  /** A client-credentials application that now works. */
  accept(clientId: string, clientSecret: string): void {
    this.clients.set(clientId, clientSecret);
    this.revoked.delete(clientId);
  }

  /** The application is deactivated (or deleted): no more tokens, and the ones it had stop working. */
  revoke(clientId: string): void {
    this.clients.delete(clientId);
    this.revoked.add(clientId);
    this.accessTokens.clear();
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const path = request.path.split('?')[0].toLowerCase();
    if (request.method === 'POST' && path === '/auth/token') return this.token(request);
    if (!path.startsWith('/api/')) return { status: 404, body: { message: 'Not found' } };
    const token = bearerOf(request);
    if (token === null || !this.accessTokens.has(token)) {
      return { status: 401, body: { error: 'invalid_token', error_description: 'The access token is missing, expired or invalid' } };
    }
    if (request.method === 'GET' && path === '/api/agent/me') {
      return { status: 200, body: { id: 7, name: 'API Agent', email: 'api-agent@acme-msp.example.com', isdisabled: false } };
    }
    return { status: 404, body: { message: 'Not found' } };
  }

  private token(request: SeenRequest): FakeAnswer {
    const refuse = (error: string, description: string): FakeAnswer => ({ status: 400, body: { error, error_description: description } });
    if (!/^application\/x-www-form-urlencoded/.test(request.headers['content-type'] ?? '')) return refuse('invalid_request', 'form content expected');
    const form = new URLSearchParams(request.body);
    if (form.get('grant_type') !== 'client_credentials') return refuse('unsupported_grant_type', 'grant type not supported');
    const clientId = form.get('client_id') ?? '';
    const known = this.clients.get(clientId);
    if (this.revoked.has(clientId) || (known === undefined && !this.options.acceptAny))
      return refuse('invalid_client', 'the application is unknown or inactive');
    if (known !== undefined && known !== form.get('client_secret')) return refuse('invalid_client', 'the client secret is incorrect');
    if (!form.get('scope')) return refuse('invalid_scope', 'a scope is required');
    const accessToken = randomBytes(32).toString('base64url');
    this.accessTokens.add(accessToken);
    return { status: 200, body: { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope: form.get('scope') } };
  }

  protected rateLimitedAnswer(retryAfterS: number): FakeAnswer {
    return { status: 429, headers: { 'retry-after': String(retryAfterS) }, body: { message: 'Too many requests' } };
  }

  protected failureAnswer(status: number): FakeAnswer {
    return { status, body: { message: 'An error has occurred.' } };
  }
}

import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';

/**
 * HubSpot as its published OpenAPI documents describe it (HubSpot/HubSpot-public-api-spec-collection,
 * PublicApiSpecs/CRM/Contacts/…/v3/contacts.json): GET /crm/v3/objects/contacts answers
 * CollectionResponseSimplePublicObjectWithAssociations ({results, paging}); every error is the
 * `Error` schema ({message, correlationId, category}, HubSpot adding `status: "error"`), 401 for
 * a missing, unknown or revoked token, 429 with Retry-After and the X-HubSpot-RateLimit-* headers.
 *
 * Keeps state: the private-app tokens it accepts (any token not revoked when `acceptAny`, as the
 * test apps' default fake does), revoked tokens, and its contacts.
 */
export class FakeHubSpot extends FakeProvider {
  private readonly tokens = new Set<string>();
  private readonly revoked = new Set<string>();
  readonly contacts: Array<{ id: string; properties: Record<string, string | null>; createdAt: string; updatedAt: string; archived: boolean }> = [];

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

  private authorized(request: SeenRequest): boolean {
    const token = bearerOf(request);
    if (token === null || this.revoked.has(token)) return false;
    return this.tokens.has(token) || this.options.acceptAny === true;
  }

  private error(status: number, category: string, message: string): FakeAnswer {
    return { status, body: { status: 'error', message, correlationId: this.correlationId(), category } };
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const url = new URL(request.path, 'http://fake');
    if (request.method !== 'GET' || url.pathname !== '/crm/v3/objects/contacts') {
      return this.error(404, 'OBJECT_NOT_FOUND', `No route for ${request.method} ${url.pathname}`);
    }
    if (!this.authorized(request)) {
      return this.error(
        401,
        'INVALID_AUTHENTICATION',
        'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
      );
    }
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 10) || 10, 100);
    const results = this.contacts.filter((contact) => !contact.archived).slice(0, limit);
    return { status: 200, body: { results, ...(this.contacts.length > limit ? { paging: { next: { after: String(limit) } } } : {}) } };
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

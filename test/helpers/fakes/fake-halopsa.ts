import { randomBytes } from 'node:crypto';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';
import { FakeHaloClient, FakeHaloContract, FakeHaloStore, FakeHaloTicket, HaloRefusal, page } from './fake-halopsa-store';

/**
 * A HaloPSA instance (halopsa.com/apidoc, the "Halo API" v2 OpenAPI document):
 * - POST /auth/token (application/x-www-form-urlencoded: grant_type=client_credentials, client_id,
 *   client_secret, scope): {access_token, token_type: "Bearer", expires_in, scope}; refusals are
 *   400 {error, error_description}: invalid_request, unsupported_grant_type, invalid_client (an
 *   unknown or deactivated application, or a wrong secret), invalid_scope.
 * - every call under /api needs a Bearer access token it issued, else 401 {error, error_description}.
 * - GET /api/Agent/me: the agent the application acts as (what connect verifies with).
 * - GET /api/Status: the instance's statuses, [{id, name}].
 * - GET /api/Client (`search`: customers "like" the string, here a case-insensitive substring of
 *   the name or the website; `includeinactive`; paging): {record_count, clients}. POST /api/Client
 *   with an array of clients: made, or updated when an item has an id; 201 with the record.
 * - GET /api/Opportunities and /api/Tickets (`third_party_id_string`, `client_id`, paging):
 *   {record_count, tickets}; /api/Tickets lists opportunities too, as HaloPSA's tickets include
 *   them. POST (an array): made or updated by id; DELETE /api/Opportunities/{id}.
 * - GET /api/ClientContract (`client_id`, paging): {record_count, contracts}; POST an array.
 * - Writes refused for their content are 400 with HaloPSA's message as a JSON string; an id it
 *   does not hold is 404. Paging: `pageinate=true`, `page_size` (at most 100), `page_no` from 1.
 *
 * Keeps state: the applications it accepts (client id and secret; any not revoked when
 * `acceptAny`), revoked client ids, the access tokens it issued, and the records (FakeHaloStore).
 */
export class FakeHaloPsa extends FakeProvider {
  private readonly applications = new Map<string, string>();
  private readonly revoked = new Set<string>();
  private readonly accessTokens = new Set<string>();
  readonly store = new FakeHaloStore();
  /** POSTs to these paths (lower case) are carried out, then answered 500 once each: the record exists, the caller never learns it. */
  private readonly lostAnswers: string[] = [];

  constructor(private readonly options: { acceptAny?: boolean } = {}) {
    super();
  }

  /** A client-credentials application that now works. */
  accept(clientId: string, clientSecret: string): void {
    this.applications.set(clientId, clientSecret);
    this.revoked.delete(clientId);
  }

  /** The application is deactivated (or deleted): no more tokens, and the ones it had stop working. */
  revoke(clientId: string): void {
    this.applications.delete(clientId);
    this.revoked.add(clientId);
    this.accessTokens.clear();
  }

  /** Every access token issued so far lapses (as after its expires_in); the applications still get new ones. */
  expireTokens(): void {
    this.accessTokens.clear();
  }

  /** The next POST to `path` (e.g. /api/opportunities) is carried out, then answered 500. */
  loseAnswerToNextPost(path: string): void {
    this.lostAnswers.push(path.toLowerCase());
  }

  /** A client made at HaloPSA by someone (what a lead's company is matched to). */
  addClient(client: { name: string; website?: string | null; inactive?: boolean }): FakeHaloClient {
    return this.store.writeClient({ ...client });
  }

  clients(): FakeHaloClient[] {
    return [...this.store.clients.values()];
  }

  opportunities(): FakeHaloTicket[] {
    return [...this.store.tickets.values()].filter((ticket) => ticket.is_opportunity);
  }

  /** Tickets that are not opportunities (delivery tickets). */
  tickets(): FakeHaloTicket[] {
    return [...this.store.tickets.values()].filter((ticket) => !ticket.is_opportunity);
  }

  contracts(): FakeHaloContract[] {
    return [...this.store.contracts.values()];
  }

  statusName(id: number): string | undefined {
    return this.store.statuses.find((status) => status.id === id)?.name;
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const path = request.path.split('?')[0].toLowerCase();
    // https://halopsa.com/apidoc, "Getting started" (Authorisation Endpoint), client credentials
    if (request.method === 'POST' && path === '/auth/token') return this.token(request);
    if (!path.startsWith('/api/')) return { status: 404, body: { message: 'Not found' } };
    const token = bearerOf(request);
    if (token === null || !this.accessTokens.has(token)) {
      return { status: 401, body: { error: 'invalid_token', error_description: 'The access token is missing, expired or invalid' } };
    }
    // https://halopsa.com/apidoc, Agent
    if (request.method === 'GET' && path === '/api/agent/me') {
      return { status: 200, body: { id: 7, name: 'API Agent', email: 'api-agent@acme-msp.example.com', isdisabled: false } };
    }
    try {
      const answer = this.records(request, path, new URLSearchParams(request.path.split('?')[1] ?? ''));
      const lost = request.method === 'POST' && answer.status < 300 ? this.lostAnswers.indexOf(path) : -1;
      if (lost < 0) return answer;
      this.lostAnswers.splice(lost, 1);
      return this.failureAnswer(500);
    } catch (error) {
      if (error instanceof HaloRefusal) return { status: error.status, body: error.message };
      throw error;
    }
  }

  private records(request: SeenRequest, path: string, query: URLSearchParams): FakeAnswer {
    const { method } = request;
    // https://halopsa.com/apidoc, Status
    if (method === 'GET' && path === '/api/status') return { status: 200, body: this.store.statuses.map(({ id, name }) => ({ id, name })) };
    // https://halopsa.com/apidoc, Client
    if (path === '/api/client') {
      if (method === 'POST') return this.write(request, (item) => this.store.writeClient(item));
      if (method !== 'GET') return notFound();
      const search = query.get('search')?.toLowerCase();
      const rows = this.clients().filter(
        (client) =>
          (query.get('includeinactive') === 'true' || !client.inactive) &&
          (!search || client.name.toLowerCase().includes(search) || (client.website ?? '').toLowerCase().includes(search)),
      );
      const listed = page(rows, query);
      return { status: 200, body: { ...listed.paging, clients: listed.rows } };
    }
    // https://halopsa.com/apidoc, Opportunities and Tickets
    if (path === '/api/opportunities' || path === '/api/tickets') {
      const opportunity = path === '/api/opportunities';
      if (method === 'POST') return this.write(request, (item) => this.store.writeTicket(item, opportunity));
      if (method !== 'GET') return notFound();
      const rows = [...this.store.tickets.values()].filter(
        (ticket) =>
          (!opportunity || ticket.is_opportunity) &&
          (!query.has('third_party_id_string') || ticket.third_party_id_string === query.get('third_party_id_string')) &&
          (!query.has('client_id') || ticket.client_id === Number(query.get('client_id'))),
      );
      const listed = page(rows, query);
      return { status: 200, body: { ...listed.paging, tickets: listed.rows } };
    }
    // https://halopsa.com/apidoc, Opportunities
    const deleting = /^\/api\/opportunities\/(\d+)$/.exec(path);
    if (method === 'DELETE' && deleting) {
      const ticket = this.store.tickets.get(Number(deleting[1]));
      if (!ticket?.is_opportunity) return notFound();
      this.store.tickets.delete(ticket.id);
      return { status: 200 };
    }
    // https://halopsa.com/apidoc, ClientContract
    if (path === '/api/clientcontract') {
      if (method === 'POST') return this.write(request, (item) => this.store.writeContract(item));
      if (method !== 'GET') return notFound();
      const rows = this.contracts().filter((contract) => !query.has('client_id') || contract.client_id === Number(query.get('client_id')));
      const listed = page(rows, query);
      return { status: 200, body: { ...listed.paging, contracts: listed.rows } };
    }
    return notFound();
  }

  /** A POST of an array of records: each written in turn; 201 with the record (an array when several were sent). */
  private write(request: SeenRequest, writeOne: (item: Record<string, unknown>) => unknown): FakeAnswer {
    let items: unknown;
    try {
      items = JSON.parse(request.body);
    } catch {
      return { status: 400, body: 'The request body is not valid JSON' };
    }
    if (!Array.isArray(items) || items.length === 0 || items.some((item) => typeof item !== 'object' || item === null)) {
      return { status: 400, body: 'An array of records is expected' };
    }
    const written = (items as Array<Record<string, unknown>>).map(writeOne);
    return { status: 201, body: written.length === 1 ? written[0] : written };
  }

  private token(request: SeenRequest): FakeAnswer {
    const refuse = (error: string, description: string): FakeAnswer => ({ status: 400, body: { error, error_description: description } });
    if (!/^application\/x-www-form-urlencoded/.test(request.headers['content-type'] ?? '')) return refuse('invalid_request', 'form content expected');
    const form = new URLSearchParams(request.body);
    if (form.get('grant_type') !== 'client_credentials') return refuse('unsupported_grant_type', 'grant type not supported');
    const clientId = form.get('client_id') ?? '';
    const known = this.applications.get(clientId);
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

const notFound = (): FakeAnswer => ({ status: 404, body: { message: 'Not found' } });

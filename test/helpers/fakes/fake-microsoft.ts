import { randomBytes, randomUUID } from 'node:crypto';
import { FakeGraphMailboxes, FakeGraphMessage, FakeGraphTask, graphError, MailboxAccess } from './fake-microsoft-mailbox';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';
import { ConformanceLog, DocumentedOperation, OpenApiConformance } from './openapi-conformance';

/** An Entra ID app registration: its tenant, client id, one client secret, and the Graph application permissions an admin consented to. */
export interface FakeMicrosoftApp {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  permissions: string[];
  secretExpired: boolean;
}

/** A user with a mailbox, as Graph's user resource shows it (the default properties of "Get user"). */
export interface FakeMicrosoftUser {
  id: string;
  userPrincipalName: string;
  displayName: string;
  givenName: string | null;
  surname: string | null;
  mail: string | null;
  jobTitle: string | null;
  mobilePhone: string | null;
  officeLocation: string | null;
  preferredLanguage: string | null;
  businessPhones: string[];
}

/** What an app is granted unless told otherwise: reading users, sending and writing their mail, and writing their To Do tasks. */
export const DEFAULT_PERMISSIONS = ['User.Read.All', 'Mail.Send', 'Mail.ReadWrite', 'Tasks.ReadWrite.All'];
/** Application permissions any of which lets an app read /users/{id | userPrincipalName} ("Get user", Permissions). */
const READ_USERS = ['User.ReadBasic.All', 'User.Read.All', 'User.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'];
const TOKEN_PATH = /^\/([^/]+)\/oauth2\/v2\.0\/token$/;
const USER_PATH = /^\/v1\.0\/users\/([^/]+)$/;
const GRAPH_SCOPE = 'https://graph.microsoft.com/.default';
/** Partner Center's API: its delegated scope, and the audience of the tokens issued for it. */
export const PARTNER_CENTER_AUDIENCE = 'https://api.partner.microsoft.com';
const PARTNER_CENTER_SCOPES = [`${PARTNER_CENTER_AUDIENCE}/user_impersonation`, `${PARTNER_CENTER_AUDIENCE}/.default`];

/** An answer of the fake that Graph's metadata refuses: the fake is wrong, and the test that saw it fails. */
export class GraphAnswerViolation extends Error {
  override readonly name = 'GraphAnswerViolation';
}

/** A user's delegated grant to an app: what a refresh token stands for. */
interface RefreshGrant {
  tenantId: string;
  clientId: string;
  userPrincipalName: string;
}

/** An access token issued for Partner Center's API on a user's behalf (the Partner Center fake asks who it stands for). */
export interface DelegatedToken extends RefreshGrant {
  audience: string;
}

/**
 * Microsoft 365 as Microsoft's documents describe it, playing both hosts (MICROSOFT_LOGIN_URL and
 * MICROSOFT_GRAPH_URL point at the same fake):
 * - The Microsoft identity platform's token endpoint, POST /{tenant}/oauth2/v2.0/token
 *   (application/x-www-form-urlencoded: client_id, client_secret, scope, grant_type=client_credentials),
 *   answering {token_type: "Bearer", expires_in, ext_expires_in, access_token}; refusals are
 *   400/401 {error, error_description, error_codes, timestamp, trace_id, correlation_id, error_uri}
 *   with the AADSTS code first in the description and trace lines after it: AADSTS90002 (400
 *   invalid_request, no such tenant), AADSTS700016 (400 unauthorized_client, no such application in
 *   the tenant), AADSTS7000215 (401 invalid_client, wrong secret), AADSTS7000222 (401
 *   invalid_client, expired secret), AADSTS1002012 (400 invalid_scope, a scope without /.default),
 *   AADSTS70003 (400 unsupported_grant_type) ("Microsoft identity platform and the OAuth 2.0
 *   client credentials flow"; "Microsoft Entra authentication and authorization error codes").
 * - Microsoft Graph, GET /v1.0/users/{id | userPrincipalName} with a Bearer token it issued
 *   ("Get user"): the user, or 404 Request_ResourceNotFound; without User.Read.All (or another
 *   permission that reads users) 403 Authorization_RequestDenied; a token it did not issue, or
 *   revoked, 401 InvalidAuthenticationToken. Errors are {error: {code, message, innerError:
 *   {date, request-id, client-request-id}}} ("Microsoft Graph error responses and resource types");
 *   throttling is 429 TooManyRequests with Retry-After ("Microsoft Graph throttling guidance").
 * - The mailbox's Outlook drafts and To Do tasks (fake-microsoft-mailbox.ts), with the same tokens,
 *   permissions and errors; `drafts()` and `tasks()` read what a mailbox holds.
 * - Every Graph request is checked against Graph's v1.0 metadata as vendored in
 *   test/fixtures/provider-specs/microsoft-graph (openapi-conformance.ts) once its token is known:
 *   one the document refuses is answered 400 BadRequest with what it refused, one no document
 *   describes 400 BadRequest as Graph answers an unknown segment; every answer is checked against
 *   the operation's response schema, and one that violates it fails the test that caused it
 *   (GraphAnswerViolation, thrown outside the exchange, which gets a 500). `conformance` keeps
 *   every call and every violation.
 * - The refresh-token grant of a user's delegated consent (grant_type=refresh_token, client_id,
 *   client_secret, refresh_token, scope), as Partner Center's app+user authentication uses it
 *   ("Microsoft identity platform and OAuth 2.0 authorization code flow", Refresh the access
 *   token): {token_type, scope, expires_in, ext_expires_in, access_token, refresh_token}, a new
 *   refresh token with every grant. This fake spends the one redeemed (Entra ID may accept it a
 *   while longer), so a client that does not keep the newest fails here rather than in
 *   production. Refusals are 400 invalid_grant: AADSTS50173 (revoked, or already redeemed),
 *   AADSTS70008 (expired), AADSTS9002313 (not a refresh token of this tenant and app); a scope
 *   without Partner Center's API is 400 invalid_scope (AADSTS70011).
 *
 * Keeps state: tenants and their app registrations, their users, and the tokens it issued (each
 * knows its tenant and app). With `acceptAny`, any tenant, app and mailbox it does not know is
 * accepted (an app it knows still needs its own secret).
 */
export class FakeMicrosoft extends FakeProvider {
  private readonly apps = new Map<string, FakeMicrosoftApp>();
  private readonly tenants = new Set<string>();
  private readonly users = new Map<string, Map<string, FakeMicrosoftUser>>();
  private readonly tokens = new Map<string, { tenantId: string; clientId: string; permissions: string[] }>();
  private readonly mailboxes = new FakeGraphMailboxes(
    (request, user, permissions) => this.mailboxAccess(request, user, permissions),
    () => this.url,
  );
  /** Every Graph request by the documented operation it was for, and what the metadata refused (`requests` has the raw requests). */
  override readonly conformance: ConformanceLog = { calls: [], violations: [] };
  private documents?: OpenApiConformance;
  /** Graph requests (not token grants) still to be answered 429, or a 5xx, before normal answers resume. */
  private scripted: Array<{ count: number; method?: string; answer: () => FakeAnswer }> = [];
  private readonly refreshGrants = new Map<string, RefreshGrant>();
  /** Refresh tokens no longer redeemable, and why: AADSTS50173 (revoked, spent) or AADSTS70008 (expired). */
  private readonly deadRefreshTokens = new Map<string, 50173 | 70008>();
  private readonly delegatedTokens = new Map<string, DelegatedToken>();

  constructor(private readonly options: { acceptAny?: boolean } = {}) {
    super();
  }

  override async start(): Promise<this> {
    this.documents = await OpenApiConformance.load('microsoft-graph');
    return super.start();
  }

  /** An app registration in a tenant (which then exists), with admin-consented permissions (DEFAULT_PERMISSIONS unless given). */
  registerApp(app: { tenantId: string; clientId: string; clientSecret: string; permissions?: string[] }): void {
    this.tenants.add(app.tenantId.toLowerCase());
    this.apps.set(appKey(app.tenantId, app.clientId), { ...app, permissions: app.permissions ?? DEFAULT_PERMISSIONS, secretExpired: false });
  }

  /** A licensed user with a mailbox in a tenant (which then exists). */
  addMailbox(tenantId: string, userPrincipalName: string, fields: Partial<FakeMicrosoftUser> = {}): FakeMicrosoftUser {
    this.tenants.add(tenantId.toLowerCase());
    const [local] = userPrincipalName.split('@');
    const user: FakeMicrosoftUser = {
      id: randomUUID(),
      userPrincipalName,
      displayName: local,
      givenName: null,
      surname: null,
      mail: userPrincipalName,
      jobTitle: null,
      mobilePhone: null,
      officeLocation: null,
      preferredLanguage: 'en-US',
      businessPhones: [],
      ...fields,
    };
    const tenant = this.users.get(tenantId.toLowerCase()) ?? new Map<string, FakeMicrosoftUser>();
    tenant.set(userPrincipalName.toLowerCase(), user);
    this.users.set(tenantId.toLowerCase(), tenant);
    return { ...user };
  }

  /** An admin changes the app's consented permissions; tokens issued before keep the roles they were issued with, as real tokens do. */
  setPermissions(tenantId: string, clientId: string, permissions: string[]): void {
    this.app(tenantId, clientId).permissions = permissions;
  }

  /** The app's client secret expires (AADSTS7000222), and the tokens issued to it are revoked with it. */
  expireSecret(tenantId: string, clientId: string): void {
    this.app(tenantId, clientId).secretExpired = true;
    for (const [token, issued] of this.tokens) if (appKey(issued.tenantId, issued.clientId) === appKey(tenantId, clientId)) this.tokens.delete(token);
  }

  /** Every token issued so far stops working (Graph answers 401 InvalidAuthenticationToken until a new grant). */
  revokeTokens(): void {
    this.tokens.clear();
    this.delegatedTokens.clear();
  }

  /** A user of the tenant consents to the app once (interactively, with MFA): the refresh token the app redeems from then on. */
  grantRefreshToken(grant: RefreshGrant): string {
    const token = refreshToken();
    this.refreshGrants.set(token, { ...grant });
    return token;
  }

  /** The user's refresh tokens and the access tokens issued on them stop working (Revoke-MgUserSignInSession): AADSTS50173 until the user consents again. */
  revokeUserGrants(userPrincipalName: string): void {
    const user = userPrincipalName.toLowerCase();
    for (const [token, grant] of this.refreshGrants) {
      if (grant.userPrincipalName.toLowerCase() !== user) continue;
      this.refreshGrants.delete(token);
      this.deadRefreshTokens.set(token, 50173);
    }
    for (const [token, issued] of this.delegatedTokens) if (issued.userPrincipalName.toLowerCase() === user) this.delegatedTokens.delete(token);
  }

  /** The refresh tokens of the user that can be redeemed now (after rotation, only the newest). */
  liveRefreshTokens(userPrincipalName: string): string[] {
    return [...this.refreshGrants].filter(([, grant]) => grant.userPrincipalName.toLowerCase() === userPrincipalName.toLowerCase()).map(([token]) => token);
  }

  /** Who an access token for Partner Center stands for, or undefined when this fake did not issue it (or it was revoked). */
  delegatedToken(accessToken: string): DelegatedToken | undefined {
    return this.delegatedTokens.get(accessToken);
  }

  /** The next `count` Graph requests (token grants excepted; of `method` only, when given) are throttled: 429 TooManyRequests with this Retry-After. */
  throttleNext(count: number, retryAfterS: number, method?: 'GET' | 'POST'): void {
    this.scripted.push({ count, method, answer: () => this.rateLimitedAnswer(retryAfterS) });
  }

  /** The next `count` Graph requests (token grants excepted; of `method` only, when given) answer this 5xx without carrying anything out. */
  failNext(count: number, status = 503, method?: 'GET' | 'POST'): void {
    this.scripted.push({ count, method, answer: () => this.failureAnswer(status) });
  }

  /** The next `count` creates (a message or a task) are carried out, and then the connection breaks before the answer. */
  dropNextCreates(count = 1): void {
    this.mailboxes.dropCreates = count;
  }

  /** The drafts in a mailbox, oldest first. */
  drafts(tenantId: string, userPrincipalName: string): FakeGraphMessage[] {
    return this.mailboxes.drafts(this.mailboxKey(tenantId, userPrincipalName));
  }

  /** The tasks in a mailbox's default To Do list, oldest first. */
  tasks(tenantId: string, userPrincipalName: string): FakeGraphTask[] {
    return this.mailboxes.tasks(this.mailboxKey(tenantId, userPrincipalName));
  }

  /** Someone adds a task to the mailbox's default To Do list (with another app's open extensions, listed first, when asked). */
  userAddTask(
    tenantId: string,
    userPrincipalName: string,
    title: string,
    options: { extensions?: Array<Record<string, unknown> & { extensionName: string }>; first?: boolean } = {},
  ): FakeGraphTask {
    return this.mailboxes.addTask(this.mailboxKey(tenantId, userPrincipalName), title, options);
  }

  override recover(): void {
    super.recover();
    this.scripted = [];
    this.mailboxes.dropCreates = 0;
  }

  /** How many tokens are live now. */
  get liveTokens(): number {
    return this.tokens.size;
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const path = request.path.split('?')[0];
    const token = TOKEN_PATH.exec(path);
    if (token && request.method === 'POST') return this.token(request, decodeURIComponent(token[1]));
    if (!path.startsWith('/v1.0/')) return graphError(400, 'BadRequest', `Resource not found for the segment '${path.split('/')[1] ?? ''}'.`);
    const relative = request.path.slice('/v1.0'.length);
    const documented = this.documents!.match(request.method, relative);
    const answer = this.graphAnswer(request, relative, documented);
    this.conformance.calls.push({ method: request.method, path, operation: documented?.name ?? null, status: answer.status });
    if (!documented || answer.dropConnection) return answer;
    const errors = this.documents!.checkAnswer(documented, answer.status, answer.body);
    if (errors.length === 0) return answer;
    this.conformance.violations.push({ side: 'answer', method: request.method, path, operation: documented.name, status: answer.status, errors });
    const violation = new GraphAnswerViolation(`the fake Graph's ${answer.status} to ${documented.name} violates the metadata: ${errors.join('; ')}`);
    // Thrown outside the exchange, so the test fails on it (jest's uncaught-error handling) while the client gets an answer.
    setImmediate(() => {
      throw violation;
    });
    return graphError(500, 'generalException', violation.message);
  }

  /** A Graph request's answer: scripted throttling or failure first, then its token, what the metadata says of it, and the mailbox or user it is for. */
  private graphAnswer(request: SeenRequest, relative: string, documented: DocumentedOperation | undefined): FakeAnswer {
    const path = relative.split('?')[0];
    const script = this.scripted.find((step) => step.count > 0 && (!step.method || step.method === request.method));
    if (script) {
      script.count -= 1;
      return script.answer();
    }
    const token = bearerOf(request);
    if (token === null) return graphError(401, 'InvalidAuthenticationToken', 'Access token is empty.');
    if (!this.tokens.has(token)) return graphError(401, 'InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.');
    if (!documented) {
      this.conformance.violations.push({
        side: 'request',
        method: request.method,
        path: `/v1.0${path}`,
        operation: null,
        errors: ['no vendored Graph document describes this operation'],
      });
      return graphError(400, 'BadRequest', `Resource not found for the segment '${path.split('/')[2] ?? ''}'.`);
    }
    let body: unknown;
    if (request.method === 'POST') {
      try {
        body = JSON.parse(request.body);
      } catch {
        return graphError(400, 'RequestBodyRead', 'Invalid JSON in the request body.');
      }
    }
    const refused = this.documents!.checkRequest(documented, { method: request.method, path: relative, headers: request.headers, body });
    if (refused.length > 0) {
      this.conformance.violations.push({ side: 'request', method: request.method, path: `/v1.0${path}`, operation: documented.name, errors: refused });
      return graphError(400, 'BadRequest', `Invalid request: ${refused.join('; ')}`);
    }
    const mailbox = this.mailboxes.answer(request, `/v1.0${path}`, new URLSearchParams(relative.split('?')[1] ?? ''));
    if (mailbox) return mailbox;
    const user = USER_PATH.exec(`/v1.0${path}`);
    if (user && request.method === 'GET') return this.user(request, decodeURIComponent(user[1]));
    return graphError(400, 'BadRequest', `Resource not found for the segment '${path.split('/')[2] ?? ''}'.`);
  }

  private token(request: SeenRequest, tenantId: string): FakeAnswer {
    if (!/^application\/x-www-form-urlencoded/.test(request.headers['content-type'] ?? '')) {
      return entraError(400, 'invalid_request', 900144, "The request body must contain the following parameter: 'grant_type'.");
    }
    const form = new URLSearchParams(request.body);
    const clientId = form.get('client_id') ?? '';
    const secret = form.get('client_secret');
    const scope = form.get('scope') ?? '';
    const permissive = this.options.acceptAny === true;
    const grantType = form.get('grant_type');
    if (grantType !== 'client_credentials' && grantType !== 'refresh_token') {
      return entraError(400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
    }
    if (!this.tenants.has(tenantId.toLowerCase()) && !permissive) {
      return entraError(
        400,
        'invalid_request',
        90002,
        `Tenant '${tenantId}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
      );
    }
    const app = this.apps.get(appKey(tenantId, clientId));
    if (!app && !permissive) {
      return entraError(
        400,
        'unauthorized_client',
        700016,
        `Application with identifier '${clientId}' was not found in the directory '${tenantId}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
      );
    }
    if (!secret)
      return entraError(401, 'invalid_client', 7000218, "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.");
    if (app && app.clientSecret !== secret) {
      return entraError(
        401,
        'invalid_client',
        7000215,
        `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${clientId}'.`,
      );
    }
    if (app?.secretExpired) {
      return entraError(
        401,
        'invalid_client',
        7000222,
        `The provided client secret keys for app '${clientId}' are expired. Visit the Azure portal to create new keys for your app.`,
      );
    }
    if (grantType === 'refresh_token') return this.refreshGrant(form, tenantId, clientId);
    if (scope !== GRAPH_SCOPE) {
      return entraError(
        400,
        'invalid_scope',
        1002012,
        `The provided value for scope ${scope} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
      );
    }
    const permissions = app?.permissions ?? DEFAULT_PERMISSIONS;
    const claims = { aud: 'https://graph.microsoft.com', tid: tenantId, appid: clientId, roles: permissions };
    const accessToken = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
    this.tokens.set(accessToken, { tenantId, clientId, permissions });
    return { status: 200, body: { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: accessToken } };
  }

  /** The refresh-token grant, once the app and its secret passed: the user's delegated token for Partner Center, and the next refresh token. */
  private refreshGrant(form: URLSearchParams, tenantId: string, clientId: string): FakeAnswer {
    const redeemed = form.get('refresh_token');
    if (!redeemed) return entraError(400, 'invalid_request', 900144, "The request body must contain the following parameter: 'refresh_token'.");
    const scopes = (form.get('scope') ?? '').split(/\s+/).filter(Boolean);
    if (!scopes.some((scope) => PARTNER_CENTER_SCOPES.includes(scope))) {
      return entraError(
        400,
        'invalid_scope',
        70011,
        `The provided value for the input parameter 'scope' is not valid. The scope ${scopes.join(' ')} is not valid.`,
      );
    }
    const dead = this.deadRefreshTokens.get(redeemed);
    if (dead === 50173) {
      return entraError(
        400,
        'invalid_grant',
        50173,
        'The provided grant has expired due to it being revoked, a fresh auth token is needed. The user might have changed or reset their password.',
      );
    }
    if (dead === 70008) {
      return entraError(
        400,
        'invalid_grant',
        70008,
        'The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.',
      );
    }
    let grant = this.refreshGrants.get(redeemed);
    if (!grant && this.options.acceptAny) grant = { tenantId, clientId, userPrincipalName: `referrals-admin@${tenantId}.onmicrosoft.com` };
    if (!grant || grant.tenantId.toLowerCase() !== tenantId.toLowerCase() || grant.clientId.toLowerCase() !== clientId.toLowerCase()) {
      return entraError(400, 'invalid_grant', 9002313, 'Invalid request. Request is malformed or invalid.');
    }
    this.refreshGrants.delete(redeemed);
    this.deadRefreshTokens.set(redeemed, 50173);
    const next = refreshToken();
    this.refreshGrants.set(next, grant);
    const claims = { aud: PARTNER_CENTER_AUDIENCE, tid: tenantId, appid: clientId, upn: grant.userPrincipalName, scp: 'user_impersonation' };
    const accessToken = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
    this.delegatedTokens.set(accessToken, { ...grant, audience: PARTNER_CENTER_AUDIENCE });
    return {
      status: 200,
      body: {
        token_type: 'Bearer',
        scope: `${PARTNER_CENTER_AUDIENCE}/user_impersonation`,
        expires_in: 3599,
        ext_expires_in: 3599,
        access_token: accessToken,
        refresh_token: next,
      },
    };
  }

  /** A refresh token expires (90 days unused): AADSTS70008 from then on. */
  expireRefreshToken(token: string): void {
    this.refreshGrants.delete(token);
    this.deadRefreshTokens.set(token, 70008);
  }

  private user(request: SeenRequest, idOrPrincipalName: string): FakeAnswer {
    const token = bearerOf(request);
    if (token === null) return graphError(401, 'InvalidAuthenticationToken', 'Access token is empty.');
    const issued = this.tokens.get(token);
    if (!issued) return graphError(401, 'InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.');
    if (!issued.permissions.some((permission) => READ_USERS.includes(permission))) {
      return graphError(403, 'Authorization_RequestDenied', 'Insufficient privileges to complete the operation.');
    }
    let user = this.findUser(issued.tenantId, idOrPrincipalName);
    if (!user && this.options.acceptAny) user = this.addMailbox(issued.tenantId, idOrPrincipalName);
    if (!user) {
      return graphError(
        404,
        'Request_ResourceNotFound',
        `Resource '${idOrPrincipalName}' does not exist or one of its queried reference-property objects are not present.`,
      );
    }
    const select = new URLSearchParams(request.path.split('?')[1] ?? '').get('$select');
    const fields = select ? Object.fromEntries(select.split(',').map((name) => [name, user[name as keyof FakeMicrosoftUser] ?? null])) : user;
    return { status: 200, body: { '@odata.context': `${this.url}/v1.0/$metadata#users/$entity`, ...fields } };
  }

  /** A mail or To Do request's token (401 InvalidAuthenticationToken), application permission (403 ErrorAccessDenied) and mailbox (404 ResourceNotFound). */
  private mailboxAccess(request: SeenRequest, idOrPrincipalName: string, permissions: readonly string[]): MailboxAccess | FakeAnswer {
    const token = bearerOf(request);
    if (token === null) return graphError(401, 'InvalidAuthenticationToken', 'Access token is empty.');
    const issued = this.tokens.get(token);
    if (!issued) return graphError(401, 'InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.');
    if (!issued.permissions.some((permission) => permissions.includes(permission))) {
      return graphError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
    }
    let user = this.findUser(issued.tenantId, idOrPrincipalName);
    if (!user && this.options.acceptAny) user = this.addMailbox(issued.tenantId, idOrPrincipalName);
    if (!user) return graphError(404, 'ResourceNotFound', 'Resource could not be discovered.');
    return { key: `${issued.tenantId.toLowerCase()}/${user.id}`, permissions: issued.permissions };
  }

  private findUser(tenantId: string, idOrPrincipalName: string): FakeMicrosoftUser | undefined {
    const tenant = this.users.get(tenantId.toLowerCase());
    const wanted = idOrPrincipalName.toLowerCase();
    return tenant?.get(wanted) ?? [...(tenant?.values() ?? [])].find((candidate) => candidate.id === wanted);
  }

  private mailboxKey(tenantId: string, userPrincipalName: string): string {
    const user = this.findUser(tenantId, userPrincipalName);
    if (!user) throw new Error(`no mailbox ${userPrincipalName} in tenant ${tenantId}`);
    return `${tenantId.toLowerCase()}/${user.id}`;
  }

  private app(tenantId: string, clientId: string): FakeMicrosoftApp {
    const app = this.apps.get(appKey(tenantId, clientId));
    if (!app) throw new Error(`no app ${clientId} in tenant ${tenantId}`);
    return app;
  }

  protected rateLimitedAnswer(retryAfterS: number): FakeAnswer {
    return { ...graphError(429, 'TooManyRequests', 'Too many requests.'), headers: { 'retry-after': String(retryAfterS) } };
  }

  protected failureAnswer(status: number): FakeAnswer {
    return status === 503
      ? graphError(503, 'serviceNotAvailable', 'The service is temporarily unavailable. Please retry later.')
      : status === 504
        ? graphError(504, 'gatewayTimeout', 'The gateway did not receive a timely response from the upstream server.')
        : graphError(status, 'generalException', 'An unspecified error has occurred.');
  }
}

/** Entra ID's refresh tokens are opaque, long and URL-safe. */
const refreshToken = () => `0.AX${randomBytes(48).toString('base64url')}`;

const appKey = (tenantId: string, clientId: string) => `${tenantId.toLowerCase()}/${clientId.toLowerCase()}`;

/** The token endpoint's error body, with the trace lines Microsoft appends to every description. */
function entraError(status: number, error: string, code: number, description: string): FakeAnswer {
  const traceId = randomUUID();
  const correlationId = randomUUID();
  const timestamp = new Date()
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
  return {
    status,
    body: {
      error,
      error_description: `AADSTS${code}: ${description}\r\nTrace ID: ${traceId}\r\nCorrelation ID: ${correlationId}\r\nTimestamp: ${timestamp}`,
      error_codes: [code],
      timestamp,
      trace_id: traceId,
      correlation_id: correlationId,
      error_uri: `https://login.microsoftonline.com/error?code=${code}`,
    },
  };
}

import { randomUUID } from 'node:crypto';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';
import { FakeMicrosoft, PARTNER_CENTER_AUDIENCE } from './fake-microsoft';

/** A referral as the referrals API shows it ("Referral resources"), with the fields this fake keeps. */
export interface FakeReferral {
  id: string;
  engagementId: string;
  organizationId: string;
  name: string;
  externalReferenceId: string | null;
  createdDateTime: string;
  updatedDateTime: string;
  status: string;
  substatus: string;
  statusReason: string | null;
  type: string;
  qualification: string | null;
  customerProfile: Record<string, unknown>;
  consent: Record<string, unknown>;
  details: Record<string, unknown>;
  eTag: string;
}

/** The Referrals roles ("Referrals API authentication", Step 1): the admin creates and reads, the user reads. */
export type ReferralsRole = 'Referrals admin' | 'Referrals user';

const LIST_PATH = '/v1.0/engagements/referrals';
const ONE_PATH = /^\/v1\.0\/engagements\/referrals\/([^/]+)$/;
/** Status & Substatus transition states ("Referral resources"): the substatuses each status allows. */
const SUBSTATUSES: Record<string, string[]> = {
  New: ['Pending', 'Received'],
  Active: ['Accepted'],
  Closed: ['Won', 'Lost', 'Declined', 'Expired'],
};
const REFERRAL_TYPES = ['Shared', 'Independent'];

/**
 * Partner Center's referrals API as Microsoft's documents describe it ("Partner Center referrals
 * API": Create a referral, Get a referral by ID, Get a list of referrals; "Referral resources";
 * "Referrals API response codes"; "Partner Center REST error codes"), stateful, on loopback:
 * - `POST /v1.0/engagements/referrals` creates a referral (201, the referral with its id,
 *   engagementId, timestamps and eTag) from a body that has the required parts: name, type
 *   (Shared or Independent), customerProfile (name, address.country, a team member with
 *   firstName, lastName and email), consent, details (dealValue, currency, closingDateTime, not in
 *   the past); otherwise 400 with the error body `{code, description, data, source}`.
 * - `GET /v1.0/engagements/referrals/{id}`: the referral, or 404.
 * - `GET /v1.0/engagements/referrals` with OData `$filter` (`externalReferenceId eq '…'`, `status
 *   eq '…'`, `substatus eq '…'`, `engagementId eq '…'`, joined by `and`) and `$top`:
 *   `{"@odata.context", "@odata.count", "value": [...]}`.
 * - App+user tokens only: a bearer token Microsoft's token endpoint (FakeMicrosoft's refresh-token
 *   grant) issued for Partner Center's API on behalf of a user with a Referrals role; otherwise
 *   401 (no usable token) or 403 (no Referrals role; creating needs Referrals admin). Each
 *   partner's tenant sees only its own referrals.
 * - 429 with Retry-After (rateLimit()), 5xx (fail()), and a connection cut after a create
 *   (hangUpAfterCreates()), from the base fake and here.
 *
 * Helpers play Microsoft's sellers: `move` a referral to another status and substatus.
 * With `acceptAny`, any user a token names holds the Referrals admin role.
 */
export class FakePartnerCenter extends FakeProvider {
  private readonly referrals = new Map<string, FakeReferral & { tenantId: string }>();
  private readonly roles = new Map<string, ReferralsRole[]>();
  private hangUps = 0;

  constructor(
    private readonly microsoft: FakeMicrosoft,
    private readonly options: { acceptAny?: boolean } = {},
  ) {
    super();
  }

  /** A Partner Center user of the tenant and the Referrals roles it holds (none: a user Partner Center refuses). */
  setRoles(userPrincipalName: string, roles: ReferralsRole[]): void {
    this.roles.set(userPrincipalName.toLowerCase(), roles);
  }

  /** The next `count` creates are made, then the connection is cut before the answer (the caller never learns the id). */
  hangUpAfterCreates(count = 1): void {
    this.hangUps = count;
  }

  /** Every referral of every tenant, oldest first. */
  all(): FakeReferral[] {
    return [...this.referrals.values()].map(({ tenantId: _tenant, ...referral }) => structuredClone(referral));
  }

  /** The referrals a partner tenant holds, oldest first. */
  of(tenantId: string): FakeReferral[] {
    return this.all().filter((referral) => referral.organizationId === tenantId.toLowerCase());
  }

  get(id: string): FakeReferral | undefined {
    return this.all().find((referral) => referral.id === id);
  }

  /** Microsoft's sellers move a referral (a status and a substatus it allows, and optionally why). */
  move(id: string, status: string, substatus: string, statusReason: string | null = null): void {
    const referral = this.referrals.get(id);
    if (!referral) throw new Error(`no referral ${id}`);
    if (!SUBSTATUSES[status]?.includes(substatus)) throw new Error(`${status} does not allow the substatus ${substatus}`);
    Object.assign(referral, { status, substatus, statusReason, updatedDateTime: new Date().toISOString(), eTag: eTag() });
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const [path, query = ''] = request.path.split('?');
    const caller = this.caller(request);
    if ('status' in caller) return caller;
    const one = ONE_PATH.exec(path);
    // https://learn.microsoft.com/partner-center/developer/get-a-list-of-referrals, "Supported OData operations"
    if (path === LIST_PATH && request.method === 'GET') return this.list(caller.tenantId, new URLSearchParams(query));
    // https://learn.microsoft.com/partner-center/developer/create-a-referral, "REST Request"
    if (path === LIST_PATH && request.method === 'POST') {
      if (!caller.roles.includes('Referrals admin')) return error(403, 'Forbidden', 'Creating referrals requires the Referrals admin role.');
      return this.create(caller.tenantId, request);
    }
    // https://learn.microsoft.com/partner-center/developer/get-a-referral-by-id, "REST request"
    if (one && request.method === 'GET') {
      const referral = this.referrals.get(decodeURIComponent(one[1]));
      if (!referral || referral.tenantId !== caller.tenantId) return error(404, 'NotFound', `Referral ${decodeURIComponent(one[1])} was not found.`);
      return { status: 200, body: this.shown(referral) };
    }
    return error(404, 'NotFound', `No route ${request.method} ${path}.`);
  }

  /** Who calls, from the app+user token: the partner's tenant and the user's Referrals roles; or the refusal. */
  private caller(request: SeenRequest): { tenantId: string; roles: ReferralsRole[] } | FakeAnswer {
    const token = bearerOf(request);
    const issued = token ? this.microsoft.delegatedToken(token) : undefined;
    if (!issued || issued.audience !== PARTNER_CENTER_AUDIENCE) {
      return {
        ...error(401, 'Unauthorized', 'The access token is missing, invalid or expired.'),
        headers: { 'www-authenticate': 'Bearer realm="api.partner.microsoft.com"' },
      };
    }
    const roles = this.roles.get(issued.userPrincipalName.toLowerCase()) ?? (this.options.acceptAny ? ['Referrals admin' as const] : []);
    if (roles.length === 0) return error(403, 'Forbidden', 'The user does not have a Referrals admin or Referrals user role.');
    return { tenantId: issued.tenantId.toLowerCase(), roles };
  }

  private list(tenantId: string, query: URLSearchParams): FakeAnswer {
    let found = [...this.referrals.values()].filter((referral) => referral.tenantId === tenantId);
    const filter = query.get('$filter');
    if (filter) {
      const clauses = filter.split(/\s+and\s+/i).map((clause) => /^(\w+)\s+eq\s+'((?:[^']|'')*)'$/.exec(clause.trim()));
      if (clauses.some((clause) => !clause || !['externalReferenceId', 'status', 'substatus', 'engagementId'].includes(clause[1]))) {
        return error(400, 'BadRequest', `The $filter '${filter}' is not supported.`);
      }
      for (const clause of clauses as RegExpExecArray[]) {
        const value = clause[2].replace(/''/g, "'");
        found = found.filter((referral) => String(referral[clause[1] as keyof FakeReferral] ?? '') === value);
      }
    }
    const top = query.get('$top');
    if (top !== null) {
      if (!/^\d+$/.test(top)) return error(400, 'BadRequest', `The $top '${top}' is not a number.`);
      found = found.slice(0, Number(top));
    }
    return {
      status: 200,
      body: { '@odata.context': `${this.url}/v1.0/$metadata#Referrals`, '@odata.count': found.length, value: found.map((referral) => this.shown(referral)) },
    };
  }

  private create(tenantId: string, request: SeenRequest): FakeAnswer {
    if (!/^application\/json/.test(request.headers['content-type'] ?? ''))
      return error(415, 'UnsupportedMediaType', 'The content type must be application/json.');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(request.body) as Record<string, unknown>;
    } catch {
      return error(400, 'BadRequest', 'The request body is not valid JSON.');
    }
    const problems = referralProblems(body);
    if (problems.length) return { ...error(400, 'BadRequest', problems[0]), body: { ...errorBody('BadRequest', problems[0]), data: problems } };
    const now = new Date().toISOString();
    const status = typeof body.status === 'string' && SUBSTATUSES[body.status] ? body.status : 'New';
    const substatus = typeof body.substatus === 'string' && SUBSTATUSES[status].includes(body.substatus) ? body.substatus : SUBSTATUSES[status][0];
    const referral = {
      tenantId,
      id: randomUUID(),
      engagementId: randomUUID(),
      organizationId: tenantId,
      name: body.name as string,
      externalReferenceId: typeof body.externalReferenceId === 'string' ? body.externalReferenceId : null,
      createdDateTime: now,
      updatedDateTime: now,
      status,
      substatus,
      statusReason: typeof body.statusReason === 'string' ? body.statusReason : null,
      type: body.type as string,
      qualification: typeof body.qualification === 'string' ? body.qualification : null,
      customerProfile: structuredClone(body.customerProfile) as Record<string, unknown>,
      consent: structuredClone(body.consent) as Record<string, unknown>,
      details: structuredClone(body.details) as Record<string, unknown>,
      eTag: eTag(),
    };
    this.referrals.set(referral.id, referral);
    if (this.hangUps > 0) {
      this.hangUps -= 1;
      return { status: 201, dropConnection: true };
    }
    return { status: 201, body: this.shown(referral) };
  }

  private shown(referral: FakeReferral & { tenantId: string }): FakeReferral & { links: unknown } {
    const { tenantId: _tenant, ...shown } = structuredClone(referral);
    return {
      ...shown,
      links: {
        relatedReferrals: { uri: `${this.url}${LIST_PATH}?$filter=engagementId eq '${referral.engagementId}'`, method: 'GET' },
        self: { uri: `${this.url}${LIST_PATH}/${referral.id}`, method: 'GET' },
      },
    };
  }

  protected rateLimitedAnswer(retryAfterS: number): FakeAnswer {
    return {
      ...error(429, 'TooManyRequests', `Rate limit is exceeded. Try again in ${retryAfterS} seconds.`),
      headers: { 'retry-after': String(retryAfterS) },
    };
  }

  protected failureAnswer(status: number): FakeAnswer {
    return error(status, status === 503 ? 'ServiceUnavailable' : 'InternalServerError', 'The service encountered an error. Try again later.');
  }
}

/** What a new referral lacks, each in Partner Center's words, required fields first. */
function referralProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const text = (value: unknown) => typeof value === 'string' && value.trim() !== '';
  const object = (value: unknown): Record<string, unknown> | undefined =>
    value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  if (!text(body.name)) problems.push('The Name field is required.');
  if (!REFERRAL_TYPES.includes(body.type as string)) problems.push(`The Type field is required and must be one of ${REFERRAL_TYPES.join(', ')}.`);
  const profile = object(body.customerProfile);
  if (!profile) problems.push('The CustomerProfile field is required.');
  else {
    if (!text(profile.name)) problems.push('The CustomerProfile.Name field is required.');
    if (!text(object(profile.address)?.country)) problems.push('The CustomerProfile.Address.Country field is required.');
    const member = Array.isArray(profile.team) ? object(profile.team[0]) : undefined;
    if (!member) problems.push('The CustomerProfile.Team field requires at least one contact.');
    else {
      for (const field of ['firstName', 'lastName', 'email']) {
        if (!text(member[field])) problems.push(`The CustomerProfile.Team[0].${field[0].toUpperCase()}${field.slice(1)} field is required.`);
      }
    }
  }
  if (!object(body.consent)) problems.push('The Consent field is required.');
  const details = object(body.details);
  if (!details) problems.push('The Details field is required.');
  else {
    if (typeof details.dealValue !== 'number' || details.dealValue < 0) problems.push('The Details.DealValue field is required and must be a positive number.');
    if (!text(details.currency)) problems.push('The Details.Currency field is required.');
    const closing = Date.parse(details.closingDateTime as string);
    if (!text(details.closingDateTime) || Number.isNaN(closing)) problems.push('The Details.ClosingDateTime field is required.');
    else if (closing < Date.now() - 86_400_000) problems.push('The Details.ClosingDateTime must not be in the past.');
  }
  return problems;
}

const eTag = () => `"${randomUUID()}"`;

function errorBody(code: string, description: string) {
  return { code, description, data: [], source: 'PartnerReferrals' };
}

function error(status: number, code: string, description: string): FakeAnswer {
  return { status, body: errorBody(code, description) };
}

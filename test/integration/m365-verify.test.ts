import { randomUUID } from 'node:crypto';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { closedPort, expectRefused, SecretLedger, storedFor } from '../helpers/verification';
import { bearerOf } from '../helpers/fakes/fake-provider';

/**
 * Connecting Microsoft 365 is proven with Microsoft (issue 22): POST /v1/integrations runs the
 * client-credentials grant at the loopback login endpoint of test/helpers/fakes (FakeMicrosoft,
 * played as Microsoft's documents describe it), then reads the named mailbox on Graph with the
 * app-only token, and stores the integration only when both succeed. Refusals are 422
 * integration_auth_failed with Microsoft's reason, no usable answer 502 integration_unreachable;
 * nothing is stored and no event written in either case, and no secret or token ever reaches a
 * response or a log line.
 */

const ledger = new SecretLedger();
const secret = (prefix: string): string => ledger.secret(prefix);

let mailboxes = 0;
interface M365Credentials {
  tenant_id: string;
  client_id: string;
  client_secret: string;
  mailbox: string;
}
const m365Credentials = (): M365Credentials => ({
  tenant_id: randomUUID(),
  client_id: randomUUID(),
  client_secret: secret('m365~Q8'),
  mailbox: `partner-sales-${++mailboxes}@contoso.onmicrosoft.com`,
});
const m365Body = (credentials: Partial<M365Credentials>) => ({ type: 'm365', provider: 'microsoft365', credentials });

describe('connecting Microsoft 365 verifies the app and the mailbox with Microsoft', () => {
  let crms: FakeCrms;
  let app: TestApp;
  let account: TestAccount;
  const logStream = ledger.logStream;

  const connect = async (body: unknown, target: TestApp = app): Promise<HttpResponse> => {
    const res = await target.request('POST', '/v1/integrations', { key: account.testKey, body });
    ledger.responses.push(res.text);
    return res;
  };
  const stored = (target: TestApp = app) => storedFor(target, account.account.id);
  /** An app registration and its mailbox that Microsoft knows. */
  function registered(permissions?: string[]): M365Credentials {
    const credentials = m365Credentials();
    crms.microsoft.registerApp({ tenantId: credentials.tenant_id, clientId: credentials.client_id, clientSecret: credentials.client_secret, permissions });
    crms.microsoft.addMailbox(credentials.tenant_id, credentials.mailbox);
    return credentials;
  }
  const grantsFor = (credentials: M365Credentials) => crms.microsoft.seen(`/${credentials.tenant_id}/oauth2/v2.0/token`);

  beforeAll(async () => {
    crms = await startFakeCrms();
    app = await startTestApp({
      crms,
      env: { LOG_LEVEL: 'info' },
      logStream,
      operationLimits: { ...OPERATION_LIMITS, connectIntegration: { windowS: 60, max: 1_000_000 } },
    });
  });
  beforeEach(async () => {
    await app.reset();
    crms.microsoft.recover();
    account = await app.createAccount();
  });
  afterAll(async () => {
    await app.close();
    await crms.close();
  });

  it('connects: the client-credentials grant at the tenant, then the mailbox read on Graph with that token', async () => {
    const credentials = registered();
    const res = await connect(m365Body(credentials));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'integration',
      type: 'm365',
      provider: 'microsoft365',
      status: 'connected',
      credentials_hint: credentials.client_secret.slice(-4),
      last_error: null,
    });

    const grants = grantsFor(credentials);
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(Object.fromEntries(new URLSearchParams(grants[0].body))).toEqual({
      client_id: credentials.client_id,
      client_secret: credentials.client_secret,
      scope: 'https://graph.microsoft.com/.default',
      grant_type: 'client_credentials',
    });
    const reads = crms.microsoft.seen(`/v1.0/users/${credentials.mailbox}`);
    expect(reads).toHaveLength(1);
    expect(reads[0].method).toBe('GET');
    // The token the grant issued, as a bearer token (the fake answers only tokens it issued).
    expect(bearerOf(reads[0])).toMatch(/^eyJ0eXAiOiJKV1Qi/);
    expect(await stored()).toEqual({ integrations: 1, events: 1 });
  });

  it("refuses a wrong secret, an expired one, an unknown tenant and an unknown application with Microsoft's reason, storing nothing", async () => {
    const credentials = registered();
    const expired = registered();
    crms.microsoft.expireSecret(expired.tenant_id, expired.client_id);
    const wrongSecret = { ...credentials, client_secret: secret('wrong~Q8') };
    const unknownTenant = { ...credentials, tenant_id: randomUUID() };
    const unknownApp = { ...credentials, client_id: randomUUID() };
    const before = crms.microsoft.requests.length;
    const cases: Array<[M365Credentials, RegExp]> = [
      [wrongSecret, /^Microsoft 365 refused the credentials: invalid_client: AADSTS7000215: Invalid client secret provided\./],
      [expired, /^Microsoft 365 refused the credentials: invalid_client: AADSTS7000222: The provided client secret keys for app '[0-9a-f-]{36}' are expired/],
      [unknownTenant, new RegExp(`^Microsoft 365 refused the credentials: invalid_request: AADSTS90002: Tenant '${unknownTenant.tenant_id}' not found`)],
      [
        unknownApp,
        new RegExp(
          `^Microsoft 365 refused the credentials: unauthorized_client: AADSTS700016: Application with identifier '${unknownApp.client_id}' was not found`,
        ),
      ],
    ];
    for (const [sent, reason] of cases) {
      const message = expectRefused(await connect(m365Body(sent)), 422, 'integration_auth_failed');
      expect(message).toMatch(reason);
      // Microsoft's trace lines are for its support, not for the person connecting.
      expect(message).not.toMatch(/Trace ID|Correlation ID/);
      expect(message).not.toContain(sent.client_secret);
    }
    // A refused grant never reaches Graph.
    expect(crms.microsoft.requests.slice(before).filter((call) => call.path.startsWith('/v1.0/'))).toEqual([]);
    expect(await stored()).toEqual({ integrations: 0, events: 0 });

    const gql = await app.graphql(
      'mutation ($input: IntegrationConnectInput!) { connectIntegration(input: $input) { id } }',
      { input: m365Body(wrongSecret) },
      account.testKey,
    );
    ledger.responses.push(gql.text);
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'integration_auth_failed', param: 'credentials' });
  });

  it('refuses a mailbox the tenant does not have, naming it', async () => {
    const credentials = registered();
    const missing = { ...credentials, mailbox: 'nobody@contoso.onmicrosoft.com' };
    const message = expectRefused(await connect(m365Body(missing)), 422, 'integration_auth_failed');
    expect(message).toBe(
      'Microsoft 365 refused the credentials: the mailbox nobody@contoso.onmicrosoft.com was not found in the tenant ' +
        "(Request_ResourceNotFound: Resource 'nobody@contoso.onmicrosoft.com' does not exist or one of its queried reference-property objects are not present.)",
    );
    // The grant succeeded; only the read was refused.
    expect(grantsFor(credentials)).toHaveLength(1);
    expect(await stored()).toEqual({ integrations: 0, events: 0 });
  });

  it("refuses an app without permission to read users, in Graph's words", async () => {
    const credentials = registered(['Mail.Send']);
    const message = expectRefused(await connect(m365Body(credentials)), 422, 'integration_auth_failed');
    expect(message).toBe(
      `Microsoft 365 refused the credentials: reading the mailbox ${credentials.mailbox} was denied ` +
        '(Authorization_RequestDenied: Insufficient privileges to complete the operation.)',
    );
    expect(await stored()).toEqual({ integrations: 0, events: 0 });

    // Once an admin consents to User.Read.All, the same credentials connect.
    crms.microsoft.setPermissions(credentials.tenant_id, credentials.client_id, ['User.Read.All', 'Mail.Send']);
    expect((await connect(m365Body(credentials))).status).toBe(201);
  });

  it('answers 502 integration_unreachable for a 5xx and for a 429 (with its Retry-After), storing nothing', async () => {
    const credentials = registered();
    crms.microsoft.fail(503);
    expect(expectRefused(await connect(m365Body(credentials)), 502, 'integration_unreachable')).toBe(
      'Microsoft 365 could not be reached (answered 503); nothing was stored, try again',
    );
    crms.microsoft.rateLimit(7);
    const limited = await connect(m365Body(credentials));
    expect(expectRefused(limited, 502, 'integration_unreachable')).toMatch(/429/);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(await stored()).toEqual({ integrations: 0, events: 0 });
    crms.microsoft.recover();
    expect((await connect(m365Body(credentials))).status).toBe(201);
  });

  it('answers 502 when nothing listens at the login endpoint, or at Graph after a granted token', async () => {
    const port = await closedPort();
    const closedLogin = await startTestApp({ crms, env: { MICROSOFT_LOGIN_URL: `http://127.0.0.1:${port}` }, logStream });
    const closedGraph = await startTestApp({ crms, env: { MICROSOFT_GRAPH_URL: `http://127.0.0.1:${port}` }, logStream });
    try {
      const login = await connect(m365Body(registered()), closedLogin);
      expect(expectRefused(login, 502, 'integration_unreachable')).toMatch(/^Microsoft 365 could not be reached \(ECONNREFUSED\); nothing was stored/);
      const credentials = registered();
      expectRefused(await connect(m365Body(credentials), closedGraph), 502, 'integration_unreachable');
      expect(grantsFor(credentials)).toHaveLength(1);
      expect(await stored(closedLogin)).toEqual({ integrations: 0, events: 0 });
    } finally {
      await closedLogin.close();
      await closedGraph.close();
    }
  });

  it('answers 502 when Microsoft does not answer within INTEGRATION_TIMEOUT_MS', async () => {
    const quick = await startTestApp({ crms, env: { INTEGRATION_TIMEOUT_MS: '300' }, logStream });
    try {
      crms.microsoft.hang();
      const started = Date.now();
      expect(expectRefused(await connect(m365Body(registered()), quick), 502, 'integration_unreachable')).toMatch(/timed out/);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await stored(quick)).toEqual({ integrations: 0, events: 0 });
    } finally {
      await quick.close();
    }
  });

  it('requires the mailbox: 400 parameter_missing credentials[mailbox], before Microsoft is asked', async () => {
    const { mailbox: _mailbox, ...withoutMailbox } = registered();
    const before = crms.microsoft.requests.length;
    const res = await connect(m365Body(withoutMailbox));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_missing', param: 'credentials[mailbox]' });
    expect(res.body.error.message).toMatch(/^credentials\[mailbox\] is required for microsoft365/);
    expect(crms.microsoft.requests.length).toBe(before);
    expect(await stored()).toEqual({ integrations: 0, events: 0 });
  });

  // Last on purpose: it reads what every test above sent, received and logged.
  it('no response and no log line ever held a secret or an issued token', () => {
    for (const call of crms.microsoft.requests) {
      const token = bearerOf(call);
      if (token) ledger.secrets.add(token);
    }
    ledger.expectNothingLeaked();
  });
});

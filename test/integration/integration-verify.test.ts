import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { closedPort, expectRefused, SecretLedger, storedFor } from '../helpers/verification';

/**
 * Connecting a CRM is proven with the provider (issue 21): POST /v1/integrations calls the loopback
 * HubSpot and Salesforce of test/helpers/fakes (played as their published documents describe
 * them) through real HTTP, and stores the integration only when they accept the credentials.
 * Refused credentials are 422 integration_auth_failed with the provider's reason, no usable answer
 * 502 integration_unreachable; nothing is stored and no event written in either case, and no
 * secret ever reaches a response or a log line.
 */

const ledger = new SecretLedger();
const secret = (prefix: string): string => ledger.secret(prefix);

const hubspotBody = (token: string) => ({ type: 'crm', provider: 'hubspot', credentials: { access_token: token } });
function salesforceCredentials() {
  return {
    instance_url: 'https://acme.my.salesforce.com',
    client_id: secret('3MVG9sf-client-'),
    client_secret: secret('sf-secret-'),
    refresh_token: secret('5Aep861-refresh-'),
  };
}
const salesforceBody = (credentials: Record<string, string>) => ({ type: 'crm', provider: 'salesforce', credentials });

describe('connecting a CRM verifies the credentials with the provider', () => {
  let crms: FakeCrms;
  let app: TestApp;
  let account: TestAccount;
  const logStream = ledger.logStream;

  const connect = async (body: unknown, target: TestApp = app, key = account.testKey): Promise<HttpResponse> => {
    const res = await target.request('POST', '/v1/integrations', { key, body });
    ledger.responses.push(res.text);
    return res;
  };
  const stored = (target: TestApp = app) => storedFor(target, account.account.id);
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
    crms.hubspot.recover();
    crms.salesforce.recover();
    account = await app.createAccount();
  });
  afterAll(async () => {
    await app.close();
    await crms.close();
  });

  describe('HubSpot (a private app access token)', () => {
    it('connects a token HubSpot accepts, after one authenticated read of contacts', async () => {
      const token = secret('pat-na1-');
      crms.hubspot.accept(token);
      const res = await connect(hubspotBody(token));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ provider: 'hubspot', status: 'connected', last_error: null, last_error_at: null, last_synced_at: null });
      const calls = crms.hubspot.seen('/crm/v3/objects/contacts').filter((call) => call.headers.authorization === `Bearer ${token}`);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ method: 'GET', path: '/crm/v3/objects/contacts?limit=1' });
      expect(await stored()).toEqual({ integrations: 1, events: 1 });
    });

    it("refuses a wrong or revoked token: 422 integration_auth_failed with HubSpot's reason, nothing stored", async () => {
      const wrong = secret('pat-na1-');
      const message = expectRefused(await connect(hubspotBody(wrong)), 422, 'integration_auth_failed');
      expect(message).toMatch(/^HubSpot refused the credentials: Authentication credentials not found/);
      expect(message).not.toContain(wrong);

      const revoked = secret('pat-na1-');
      crms.hubspot.accept(revoked);
      crms.hubspot.revoke(revoked);
      expectRefused(await connect(hubspotBody(revoked)), 422, 'integration_auth_failed');
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
      expect((await app.request('GET', '/v1/integrations', { key: account.testKey })).body.data).toEqual([]);

      const gql = await app.graphql(
        'mutation ($input: IntegrationConnectInput!) { connectIntegration(input: $input) { id } }',
        { input: hubspotBody(wrong) },
        account.testKey,
      );
      ledger.responses.push(gql.text);
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'integration_auth_failed', param: 'credentials' });
    });

    it('answers 502 integration_unreachable for a 5xx and for a 429 (with its Retry-After), storing nothing', async () => {
      const token = secret('pat-na1-');
      crms.hubspot.accept(token);
      crms.hubspot.fail(503);
      expect(expectRefused(await connect(hubspotBody(token)), 502, 'integration_unreachable')).toMatch(/HubSpot could not be reached \(answered 503\)/);
      crms.hubspot.rateLimit(7);
      const limited = await connect(hubspotBody(token));
      expect(expectRefused(limited, 502, 'integration_unreachable')).toMatch(/429/);
      expect(limited.headers.get('retry-after')).toBe('7');
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
      crms.hubspot.recover();
      expect((await connect(hubspotBody(token))).status).toBe(201);
    });
  });

  describe('Salesforce (a connected app and a refresh token)', () => {
    it('connects: the refresh-token grant on the login host, then the limits of the instance_url it answered', async () => {
      const credentials = salesforceCredentials();
      crms.salesforce.accept(credentials.client_id, credentials.client_secret, credentials.refresh_token);
      const res = await connect(salesforceBody(credentials));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ provider: 'salesforce', status: 'connected' });
      const grants = crms.salesforce.seen('/services/oauth2/token').filter((call) => call.body.includes(encodeURIComponent(credentials.refresh_token)));
      expect(grants).toHaveLength(1);
      expect(grants[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(grants[0].body))).toEqual({
        grant_type: 'refresh_token',
        client_id: credentials.client_id,
        client_secret: credentials.client_secret,
        refresh_token: credentials.refresh_token,
      });
      const limits = crms.salesforce.requests.filter((call) => /^\/services\/data\/v\d+\.\d+\/limits$/.test(call.path));
      expect(limits.at(-1)?.headers.authorization).toMatch(/^Bearer 00D/);
      expect(await stored()).toEqual({ integrations: 1, events: 1 });
    });

    it("refuses a revoked refresh token, a wrong client secret and an unknown client with Salesforce's reason", async () => {
      const credentials = salesforceCredentials();
      crms.salesforce.accept(credentials.client_id, credentials.client_secret, credentials.refresh_token);
      crms.salesforce.revoke(credentials.refresh_token);
      const cases: Array<[Record<string, string>, string]> = [
        [credentials, 'invalid_grant: expired access/refresh token'],
        [{ ...credentials, client_secret: secret('wrong-secret-') }, 'invalid_client: invalid client credentials'],
        [{ ...credentials, client_id: secret('3MVG9unknown-') }, 'invalid_client_id: client identifier invalid'],
      ];
      for (const [sent, reason] of cases) {
        const message = expectRefused(await connect(salesforceBody(sent)), 422, 'integration_auth_failed');
        expect(message).toBe(`Salesforce refused the credentials: ${reason}`);
      }
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
    });

    it('answers 502 when the login host fails', async () => {
      const credentials = salesforceCredentials();
      crms.salesforce.accept(credentials.client_id, credentials.client_secret, credentials.refresh_token);
      crms.salesforce.fail(500);
      expectRefused(await connect(salesforceBody(credentials)), 502, 'integration_unreachable');
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
    });
  });

  describe('providers that cannot be reached', () => {
    it('answers 502 when nothing listens at the configured hosts', async () => {
      const port = await closedPort();
      const closed = await startTestApp({
        crms,
        env: { HUBSPOT_API_URL: `http://127.0.0.1:${port}`, SALESFORCE_LOGIN_URL: `http://127.0.0.1:${port}` },
        logStream,
      });
      try {
        const hubspot = await connect(hubspotBody(secret('pat-na1-')), closed);
        expect(expectRefused(hubspot, 502, 'integration_unreachable')).toMatch(/^HubSpot could not be reached \(ECONNREFUSED\); nothing was stored/);
        expectRefused(await connect(salesforceBody(salesforceCredentials()), closed), 502, 'integration_unreachable');
        expect(await stored(closed)).toEqual({ integrations: 0, events: 0 });
      } finally {
        await closed.close();
      }
    });

    it('answers 502 when the provider does not answer within INTEGRATION_TIMEOUT_MS', async () => {
      const quick = await startTestApp({ crms, env: { INTEGRATION_TIMEOUT_MS: '300' }, logStream });
      try {
        const token = secret('pat-na1-');
        crms.hubspot.accept(token);
        crms.hubspot.hang();
        const started = Date.now();
        expect(expectRefused(await connect(hubspotBody(token), quick), 502, 'integration_unreachable')).toMatch(/timed out/);
        expect(Date.now() - started).toBeLessThan(5_000);
        crms.salesforce.hang();
        expectRefused(await connect(salesforceBody(salesforceCredentials()), quick), 502, 'integration_unreachable');
        expect(await stored(quick)).toEqual({ integrations: 0, events: 0 });
      } finally {
        await quick.close();
      }
    });

    it('refuses an instance_url at a private address unless private addresses are allowed', async () => {
      const guarded = await startTestApp({ crms, env: { INTEGRATION_ALLOW_PRIVATE_URLS: 'false' }, logStream });
      try {
        const credentials = salesforceCredentials();
        crms.salesforce.accept(credentials.client_id, credentials.client_secret, credentials.refresh_token);
        const before = crms.salesforce.requests.length;
        const message = expectRefused(await connect(salesforceBody(credentials), guarded), 502, 'integration_unreachable');
        expect(message).toMatch(/127\.0\.0\.1, a loopback, private, link-local or otherwise non-public address/);
        // The login host (configured, outside production) was asked; the instance it named was not.
        expect(crms.salesforce.requests.slice(before).map((call) => call.path)).toEqual(['/services/oauth2/token']);
        expect(await stored(guarded)).toEqual({ integrations: 0, events: 0 });
      } finally {
        await guarded.close();
      }
    });
  });

  // Last on purpose: it reads what every test above sent, received and logged.
  it('no response and no log line ever held a credential', () => {
    ledger.expectNothingLeaked();
  });
});

import { randomBytes } from 'node:crypto';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { closedPort, expectRefused, SecretLedger, storedFor } from '../helpers/verification';

/**
 * Connecting a PSA is proven with the provider (issue 22), as a CRM's is: POST /v1/integrations
 * calls the loopback ConnectWise, Autotask and HaloPSA of test/helpers/fakes through real HTTP and
 * stores the integration only when they accept the credentials. Refused credentials are 422
 * integration_auth_failed with the provider's reason, no usable answer 502
 * integration_unreachable; nothing is stored and no event written in either case, and no secret
 * ever reaches a response or a log line.
 */

const ledger = new SecretLedger();
const secret = (prefix: string): string => ledger.secret(prefix);

function connectwiseCredentials() {
  return {
    site: 'api-na.myconnectwise.net',
    company_id: 'acmemsp',
    public_key: secret('pub'),
    private_key: secret('priv-'),
    client_id: secret('cw-client-'),
  };
}
function autotaskCredentials() {
  return { username: `api-${randomBytes(4).toString('hex')}@acme-msp.example.com`, secret: secret('at-secret-'), integration_code: secret('AT-TRACK-') };
}
function halopsaCredentials() {
  return { instance_url: 'https://acme.halopsa.com', client_id: secret('halo-client-'), client_secret: secret('halo-secret-') };
}
const body = (provider: string, credentials: Record<string, string>) => ({ type: 'psa', provider, credentials });

describe('connecting a PSA verifies the credentials with the provider', () => {
  let psas: FakeCrms;
  let app: TestApp;
  let account: TestAccount;
  const logStream = ledger.logStream;

  const connect = async (payload: unknown, target: TestApp = app): Promise<HttpResponse> => {
    const res = await target.request('POST', '/v1/integrations', { key: account.testKey, body: payload });
    ledger.responses.push(res.text);
    return res;
  };
  const stored = (target: TestApp = app) => storedFor(target, account.account.id);
  beforeAll(async () => {
    psas = await startFakeCrms();
    app = await startTestApp({
      crms: psas,
      env: { LOG_LEVEL: 'info' },
      logStream,
      operationLimits: { ...OPERATION_LIMITS, connectIntegration: { windowS: 60, max: 1_000_000 } },
    });
  });
  beforeEach(async () => {
    await app.reset();
    for (const fake of [psas.connectwise, psas.autotask, psas.halopsa]) fake.recover();
    psas.autotask.zoneUrl = undefined;
    account = await app.createAccount();
  });
  afterAll(async () => {
    await app.close();
    await psas.close();
  });

  describe('ConnectWise PSA (an API member key pair and a clientId)', () => {
    it('connects keys ConnectWise accepts, after GET /system/info with Basic auth and the clientId header', async () => {
      const credentials = connectwiseCredentials();
      psas.connectwise.accept(credentials);
      const res = await connect(body('connectwise', credentials));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ provider: 'connectwise', status: 'connected', last_error: null });
      const calls = psas.connectwise.seen('/v4_6_release/apis/3.0/system/info').filter((call) => call.headers.clientid === credentials.client_id);
      expect(calls).toHaveLength(1);
      const basic = Buffer.from(`acmemsp+${credentials.public_key}:${credentials.private_key}`).toString('base64');
      expect(calls[0]).toMatchObject({ method: 'GET', headers: { authorization: `Basic ${basic}` } });
      expect(await stored()).toEqual({ integrations: 1, events: 1 });
    });

    it("refuses wrong keys, a revoked pair and an unknown clientId: 422 with ConnectWise's reason, nothing stored", async () => {
      const credentials = connectwiseCredentials();
      psas.connectwise.accept(credentials);
      const revoked = connectwiseCredentials();
      psas.connectwise.accept(revoked);
      psas.connectwise.revoke(revoked.public_key);
      const cases: Array<[Record<string, string>, string]> = [
        [{ ...credentials, private_key: secret('wrong-') }, 'Unauthorized: Incorrect public/private key'],
        [revoked, 'Unauthorized: Incorrect public/private key'],
        [{ ...credentials, client_id: secret('unknown-client-') }, 'Unauthorized: clientId is invalid'],
        // Every credential value is taken out of a reason, the company id as well.
        [{ ...credentials, company_id: 'othermsp' }, 'Unauthorized: Company [redacted] was not found'],
      ];
      for (const [sent, reason] of cases) {
        expect(expectRefused(await connect(body('connectwise', sent)), 422, 'integration_auth_failed')).toBe(
          `ConnectWise PSA refused the credentials: ${reason}`,
        );
      }
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
    });

    it('answers 502 for a 5xx and for a 429 (with its Retry-After), storing nothing', async () => {
      const credentials = connectwiseCredentials();
      psas.connectwise.accept(credentials);
      psas.connectwise.fail(503);
      expect(expectRefused(await connect(body('connectwise', credentials)), 502, 'integration_unreachable')).toMatch(
        /^ConnectWise PSA could not be reached \(answered 503\); nothing was stored/,
      );
      psas.connectwise.rateLimit(9);
      const limited = await connect(body('connectwise', credentials));
      expectRefused(limited, 502, 'integration_unreachable');
      expect(limited.headers.get('retry-after')).toBe('9');
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
    });
  });

  describe('Autotask PSA (an API user and its tracking identifier)', () => {
    it('connects: the zone lookup, then ThresholdInformation on the zone it answered with the three headers', async () => {
      const credentials = autotaskCredentials();
      psas.autotask.accept(credentials);
      const res = await connect(body('autotask', credentials));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ provider: 'autotask', status: 'connected' });
      const lookups = psas.autotask.seen('/atservicesrest/v1.0/zoneInformation');
      expect(lookups.at(-1)?.path).toBe(`/atservicesrest/v1.0/zoneInformation?user=${encodeURIComponent(credentials.username)}`);
      expect(lookups.at(-1)?.headers.secret).toBeUndefined();
      const calls = psas.autotask.seen('/atservicesrest/v1.0/ThresholdInformation');
      expect(calls).toHaveLength(1);
      expect(calls[0].headers).toMatchObject({ apiintegrationcode: credentials.integration_code, username: credentials.username, secret: credentials.secret });
      expect(await stored()).toEqual({ integrations: 1, events: 1 });
    });

    it("refuses an unknown user, a wrong secret, a wrong tracking identifier and a revoked user with Autotask's reason", async () => {
      const credentials = autotaskCredentials();
      psas.autotask.accept(credentials);
      const revoked = autotaskCredentials();
      psas.autotask.accept(revoked);
      psas.autotask.revoke(revoked.username);
      const cases: Array<[Record<string, string>, string]> = [
        [autotaskCredentials(), 'Zone information could not be determined for this user.'],
        [{ ...credentials, secret: secret('wrong-') }, 'The user name or secret is incorrect.'],
        [{ ...credentials, integration_code: secret('WRONG-') }, 'The API tracking identifier is invalid.'],
        [revoked, 'Zone information could not be determined for this user.'],
      ];
      for (const [sent, reason] of cases) {
        expect(expectRefused(await connect(body('autotask', sent)), 422, 'integration_auth_failed')).toBe(`Autotask PSA refused the credentials: ${reason}`);
      }
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
    });

    it('answers 502 for a 5xx, and for a zone answer without a usable url', async () => {
      const credentials = autotaskCredentials();
      psas.autotask.accept(credentials);
      psas.autotask.fail(500);
      expect(expectRefused(await connect(body('autotask', credentials)), 502, 'integration_unreachable')).toMatch(
        /^Autotask PSA could not be reached \(answered 500\)/,
      );
      psas.autotask.recover();
      psas.autotask.zoneUrl = 'ftp://zone.example.com/atservicesrest/';
      expect(expectRefused(await connect(body('autotask', credentials)), 502, 'integration_unreachable')).toMatch(/no usable url/);
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
    });
  });

  describe('HaloPSA (a client-credentials application)', () => {
    it('connects: the client-credentials grant on the instance, then GET /api/Agent/me with the bearer token', async () => {
      const credentials = halopsaCredentials();
      psas.halopsa.accept(credentials.client_id, credentials.client_secret);
      const res = await connect(body('halopsa', credentials));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ provider: 'halopsa', status: 'connected' });
      const grants = psas.halopsa.seen('/auth/token').filter((call) => call.body.includes(encodeURIComponent(credentials.client_id)));
      expect(grants).toHaveLength(1);
      expect(grants[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(grants[0].body))).toEqual({
        grant_type: 'client_credentials',
        client_id: credentials.client_id,
        client_secret: credentials.client_secret,
        scope: 'all',
      });
      expect(psas.halopsa.seen('/api/Agent/me').at(-1)?.headers.authorization).toMatch(/^Bearer \S+$/);
      expect(await stored()).toEqual({ integrations: 1, events: 1 });
    });

    it("refuses a wrong secret, an unknown and a deactivated application with HaloPSA's reason", async () => {
      const credentials = halopsaCredentials();
      psas.halopsa.accept(credentials.client_id, credentials.client_secret);
      const revoked = halopsaCredentials();
      psas.halopsa.accept(revoked.client_id, revoked.client_secret);
      psas.halopsa.revoke(revoked.client_id);
      const cases: Array<[Record<string, string>, string]> = [
        [{ ...credentials, client_secret: secret('wrong-') }, 'invalid_client: the client secret is incorrect'],
        [halopsaCredentials(), 'invalid_client: the application is unknown or inactive'],
        [revoked, 'invalid_client: the application is unknown or inactive'],
      ];
      for (const [sent, reason] of cases) {
        expect(expectRefused(await connect(body('halopsa', sent)), 422, 'integration_auth_failed')).toBe(`HaloPSA refused the credentials: ${reason}`);
      }
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
    });

    it('answers 502 for a 5xx, storing nothing', async () => {
      const credentials = halopsaCredentials();
      psas.halopsa.accept(credentials.client_id, credentials.client_secret);
      psas.halopsa.fail(502);
      expect(expectRefused(await connect(body('halopsa', credentials)), 502, 'integration_unreachable')).toMatch(
        /^HaloPSA could not be reached \(answered 502\)/,
      );
      expect(await stored()).toEqual({ integrations: 0, events: 0 });
    });
  });

  describe('PSAs that cannot be reached', () => {
    it('answers 502 when nothing listens where they are reached', async () => {
      const port = await closedPort();
      const closed = await startTestApp({
        crms: psas,
        env: {
          AUTOTASK_ZONE_URL: `http://127.0.0.1:${port}`,
          CONNECTWISE_SITE_URL: `http://127.0.0.1:${port}`,
          HALOPSA_INSTANCE_URL: `http://127.0.0.1:${port}`,
        },
        logStream,
      });
      try {
        for (const [provider, credentials, name] of [
          ['connectwise', connectwiseCredentials(), 'ConnectWise PSA'],
          ['autotask', autotaskCredentials(), 'Autotask PSA'],
          ['halopsa', halopsaCredentials(), 'HaloPSA'],
        ] as const) {
          const message = expectRefused(await connect(body(provider, credentials), closed), 502, 'integration_unreachable');
          expect(message).toMatch(new RegExp(`^${name} could not be reached \\(ECONNREFUSED\\); nothing was stored`));
        }
        expect(await stored(closed)).toEqual({ integrations: 0, events: 0 });
      } finally {
        await closed.close();
      }
    });

    it('answers 502 when a PSA does not answer within INTEGRATION_TIMEOUT_MS', async () => {
      const quick = await startTestApp({ crms: psas, env: { INTEGRATION_TIMEOUT_MS: '300' }, logStream });
      try {
        const cw = connectwiseCredentials();
        psas.connectwise.accept(cw);
        const at = autotaskCredentials();
        psas.autotask.accept(at);
        const halo = halopsaCredentials();
        psas.halopsa.accept(halo.client_id, halo.client_secret);
        for (const fake of [psas.connectwise, psas.autotask, psas.halopsa]) fake.hang();
        const started = Date.now();
        for (const [provider, credentials] of [
          ['connectwise', cw],
          ['autotask', at],
          ['halopsa', halo],
        ] as const) {
          expect(expectRefused(await connect(body(provider, credentials), quick), 502, 'integration_unreachable')).toMatch(/timed out/);
        }
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(await stored(quick)).toEqual({ integrations: 0, events: 0 });
      } finally {
        await quick.close();
      }
    });

    it("refuses the customer's host, or the zone Autotask names, at a private address unless private addresses are allowed", async () => {
      // No fakes in the way: the site and instance named in the credentials are called, and resolve to private addresses.
      const guarded = await startTestApp({
        crms: psas,
        env: { INTEGRATION_ALLOW_PRIVATE_URLS: 'false', CONNECTWISE_SITE_URL: '', HALOPSA_INSTANCE_URL: '' },
        resolveHost: async (host) => (host === '127.0.0.1' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.0.0.7', family: 4 }]),
        logStream,
      });
      try {
        const seenBefore = psas.connectwise.requests.length + psas.halopsa.requests.length;
        for (const [provider, credentials] of [
          ['connectwise', connectwiseCredentials()],
          ['halopsa', halopsaCredentials()],
        ] as const) {
          const message = expectRefused(await connect(body(provider, credentials), guarded), 502, 'integration_unreachable');
          expect(message).toMatch(/resolves to 10\.0\.0\.7, a non-public address/);
        }
        expect(psas.connectwise.requests.length + psas.halopsa.requests.length).toBe(seenBefore);

        // Autotask's zone lookup host is configured (guarded in production only); the zone it names (loopback here) is not let through.
        const credentials = autotaskCredentials();
        psas.autotask.accept(credentials);
        const before = psas.autotask.requests.length;
        const message = expectRefused(await connect(body('autotask', credentials), guarded), 502, 'integration_unreachable');
        expect(message).toMatch(/127\.0\.0\.1, a loopback, private, link-local or otherwise non-public address/);
        expect(psas.autotask.requests.slice(before).map((call) => call.path.split('?')[0])).toEqual(['/atservicesrest/v1.0/zoneInformation']);
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

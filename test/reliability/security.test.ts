import { createHash } from 'node:crypto';
import { Browser, chromium, Page } from 'playwright-core';
import { MAX_COMPLEXITY, MAX_DEPTH } from '../../src/graphql/checks/cost-limit';
import { MAX_BODY_BYTES } from '../../src/http/json-body';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { BROWSER_STEP_TIMEOUT_MS } from '../helpers/timeouts';

/**
 * The security checks, through real HTTP against the real app and PostgreSQL (and headless
 * Chromium for what the Content-Security-Policies allow):
 * - API keys are stored only as a SHA-256 hash and found by it; a near-miss or revoked key is 401;
 * - keys, webhook secrets, integration credentials and passwords never reach the logs (captured at
 *   debug level) nor any later response, nor any table in clear;
 * - the body cap (1 MiB, 413) and the page-size cap (100, 400), GraphQL depth and cost limits;
 * - helmet's headers on API answers, web pages, /docs and the Sandbox landing page, HSTS only over
 *   HTTPS, each page's CSP letting it work (and still refusing what it does not need);
 * - no CORS allowance anywhere; /v1/openapi.json and /docs limited per client address, without
 *   counting against an account; the webhook address guard at creation.
 *
 * The app trusts loopback proxies (TRUST_PROXY), so each test speaks from its own client address
 * (X-Forwarded-For) and the small per-address allowance below is never shared between tests.
 */

/** Requests without a key (and to the public routes) allowed per client address per minute. */
const PER_ADDRESS = 5;
/** CONTRACT §3's error fields; `param` only when one parameter is at fault, as Stripe does. */
const ERROR_KEYS = ['code', 'message', 'param', 'request_id', 'type'];
const LEAD_FIELDS =
  'id object company contactEmail contactName industry employees website country source status score scoreLabel modelVersion scoredAt metadata livemode createdAt updatedAt';

let addressCounter = 0;
/** A client address of its own (TEST-NET-3), sent as X-Forwarded-For through the trusted loopback proxy. */
const newAddress = () => `203.0.113.${++addressCounter}`;

/** CONTRACT §3: the error shape, with its status and code. */
function expectApiError(response: HttpResponse, status: number, type: string, code: string): void {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });
  expect(ERROR_KEYS).toEqual(expect.arrayContaining(Object.keys(response.body.error)));
  expect(response.body.error.type).toBe(type);
  expect(response.body.error.message).toEqual(expect.any(String));
  expect(response.body.error.request_id).toMatch(/^req_/);
  expect(response.headers.get('x-request-id')).toBe(response.body.error.request_id);
}

/** A Content-Security-Policy header as directive → sources. */
function csp(response: HttpResponse): Map<string, string[]> {
  const header = response.headers.get('content-security-policy');
  expect(header).toEqual(expect.any(String));
  return new Map(
    header!
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name, sources]),
  );
}

/** The headers helmet adds to every answer, whatever its policy. */
function expectBaseHeaders(response: HttpResponse): void {
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('x-frame-options')).toBe('DENY');
  expect(response.headers.get('referrer-policy')).toBe('same-origin');
  expect(response.headers.get('cross-origin-resource-policy')).toBe('same-origin');
  expect(response.headers.get('x-powered-by')).toBeNull();
  expect(csp(response).get('frame-ancestors')).toEqual(["'none'"]);
  // Plain HTTP: a browser ignores HSTS here, so none is sent.
  expect(response.headers.get('strict-transport-security')).toBeNull();
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('security', () => {
  let app: TestApp;
  let owner: TestAccount;
  const logLines: string[] = [];

  /** app.request from a client address of its own. */
  const from =
    (address: string) =>
    (method: string, path: string, options: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}) =>
      app.request(method, path, { ...options, headers: { 'x-forwarded-for': address, ...options.headers } });

  beforeAll(async () => {
    app = await startTestApp({
      env: { LOG_LEVEL: 'debug', WEBHOOK_ALLOW_PRIVATE_URLS: 'false', TRUST_PROXY: 'loopback' },
      quotaSettings: { testMode: { perMinute: 1_000_000, perDay: null }, unauthenticatedPerMinute: PER_ADDRESS, signupsPerHour: 1_000_000 },
      logStream: { write: (line: string) => void logLines.push(line) },
    });
    owner = await app.createAccount();
  });
  afterAll(() => app?.close());

  describe('API keys', () => {
    it('are stored only as a SHA-256 hash (no column holds the key), looked up through a unique index on it', async () => {
      const rows = await app.orm.em.getConnection().execute<Array<Record<string, unknown>>>('select * from api_keys where account_id = ?', [owner.account.id]);
      expect(rows).toHaveLength(2);
      for (const key of [owner.testKey, owner.liveKey]) {
        const [row] = rows.filter((r) => r.secret_hash === sha256(key));
        expect(row).toBeDefined();
        expect(row).toMatchObject({ prefix: key.slice(0, 8), last4: key.slice(-4) });
        for (const [column, value] of Object.entries(row)) {
          expect([column, String(value)]).not.toEqual([column, expect.stringContaining(key.slice(8))]);
        }
      }
      // The only way to match a key is to hash it and look the digest up: there is nothing else to compare.
      const indexes = await app.orm.em.getConnection().execute<Array<{ indexdef: string }>>("select indexdef from pg_indexes where tablename = 'api_keys'");
      expect(indexes.map((i) => i.indexdef)).toContainEqual(expect.stringMatching(/^CREATE UNIQUE INDEX .* \(secret_hash\)$/));
    });

    it('refuses a key differing only in its last character (401 api_key_invalid), and a revoked key at once (401 api_key_revoked)', async () => {
      const request = from(newAddress());
      const { testKey } = await app.createAccount();
      expect((await request('GET', '/v1/leads', { key: testKey })).status).toBe(200);

      const nearMiss = testKey.slice(0, -1) + (testKey.endsWith('a') ? 'b' : 'a');
      expectApiError(await request('GET', '/v1/leads', { key: nearMiss }), 401, 'authentication_error', 'api_key_invalid');

      const [{ id }] = await app.orm.em.getConnection().execute<Array<{ id: string }>>('select id from api_keys where secret_hash = ?', [sha256(testKey)]);
      await new ApiKeyService(app.orm.em.fork()).revoke(id);
      expectApiError(await request('GET', '/v1/leads', { key: testKey }), 401, 'authentication_error', 'api_key_revoked');
      const graphql = await request('POST', '/graphql', { key: testKey, body: { query: '{ leads { data { id } } }' } });
      expect(graphql.status).toBe(401);
      expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'UNAUTHENTICATED', errorCode: 'api_key_revoked' });
    });
  });

  it('never shows keys, webhook secrets, credentials or passwords in logs, in later responses or in clear in any table', async () => {
    const request = from(newAddress());
    const key = owner.testKey;
    const secrets: Record<string, string> = {
      testKey: owner.testKey,
      liveKey: owner.liveKey,
      nearMissKey: key.slice(0, -1) + (key.endsWith('Z') ? 'Y' : 'Z'),
      clientSecret: 'sf-client-secret-6f1c2e9a7b',
      refreshToken: 'sf-refresh-token-0d4b8c1e55',
      hubspotToken: 'pat-na1-3c9e7f2a-1b4d-4e8f-9a0b-5c6d7e8f9a0b',
      m365Secret: 'm365-client-secret-77aa11bb',
      password: 'my very secret password 42',
    };
    const responses: HttpResponse[] = [];
    const send = async (...args: Parameters<ReturnType<typeof from>>) => {
      const response = await request(...args);
      responses.push(response);
      return response;
    };

    // Authentication: a valid key, a near-miss and none on /v1; a near-miss on /graphql.
    expect((await send('GET', '/v1/leads', { key })).status).toBe(200);
    expect((await send('GET', '/v1/leads', { key: secrets.nearMissKey })).status).toBe(401);
    expect((await send('GET', '/v1/leads')).status).toBe(401);
    expect((await send('POST', '/graphql', { key: secrets.nearMissKey, body: { query: '{ leads { data { id } } }' } })).status).toBe(401);

    // A webhook: its secret in the create response only, once.
    // With an Idempotency-Key, so the stored answer (which holds the secret) is checked at rest below.
    const createWebhook = () =>
      request('POST', '/v1/webhooks', {
        key,
        headers: { 'Idempotency-Key': 'webhook-create-1' },
        body: { url: 'https://93.184.216.34/hooks/sales', events: ['lead.created'] },
      });
    const created = await createWebhook();
    expect(created.status).toBe(201);
    // A replay answers what the first request did, as Stripe does (decrypted from the stored answer).
    const replayed = await createWebhook();
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(created.body);
    const webhookSecret = created.body.secret as string;
    expect(webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/=]{24,}$/);
    expect(created.text.split(webhookSecret)).toHaveLength(2);
    secrets.webhookSecret = webhookSecret;
    const webhookId = created.body.id as string;
    expect((await send('GET', '/v1/webhooks', { key })).body.data.map((w: { id: string }) => w.id)).toEqual([webhookId]);
    expect((await send('PUT', `/v1/webhooks/${webhookId}`, { key, body: { description: 'Sales hook' } })).status).toBe(200);
    const webhookReads = await send('POST', '/graphql', {
      key,
      body: { query: 'query ($id: ID!) { webhook(id: $id) { id url status } webhooks { data { id url description } } }', variables: { id: webhookId } },
    });
    expect(webhookReads.body.data.webhook.id).toBe(webhookId);
    // A subscription read has no secret field to ask for.
    const askForSecret = await send('POST', '/graphql', {
      key,
      body: { query: 'query ($id: ID!) { webhook(id: $id) { id secret } }', variables: { id: webhookId } },
    });
    expect(askForSecret.status).toBe(400);

    // An integration: its credentials accepted, never returned (only the hint of 4 characters).
    const connected = await send('POST', '/v1/integrations', {
      key,
      body: {
        type: 'crm',
        provider: 'salesforce',
        credentials: {
          instance_url: 'https://acme.my.salesforce.com',
          client_id: 'sf-client-id-1',
          client_secret: secrets.clientSecret,
          refresh_token: secrets.refreshToken,
        },
      },
    });
    expect(connected.status).toBe(201);
    expect(connected.body.credentials).toBeUndefined();
    expect(connected.body.credentials_hint).toMatch(/^.{4}$/);
    expect((await send('GET', '/v1/integrations', { key })).body.data.map((i: { id: string }) => i.id)).toEqual([connected.body.id]);
    expect((await send('POST', '/graphql', { key, body: { query: '{ integrations { data { id credentialsHint status } } }' } })).status).toBe(200);
    // Refused credentials are not echoed either, on REST or GraphQL (in variables).
    const extra = await send('POST', '/v1/integrations', {
      key,
      body: { type: 'crm', provider: 'hubspot', credentials: { access_token: secrets.hubspotToken, extra: secrets.m365Secret } },
    });
    expectApiError(extra, 400, 'invalid_request_error', 'parameter_unknown');
    const badTenant = await send('POST', '/graphql', {
      key,
      body: {
        query: 'mutation ($input: IntegrationConnectInput!) { connectIntegration(input: $input) { id } }',
        variables: {
          input: {
            type: 'm365',
            provider: 'microsoft365',
            credentials: { tenant_id: secrets.hubspotToken, client_id: 'not-a-guid', client_secret: secrets.m365Secret, mailbox: 'sales@contoso.com' },
          },
        },
      },
    });
    expect(badTenant.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');

    // A failed sign-in to the web app, with a password.
    const login = await send('POST', '/login', {
      rawBody: new URLSearchParams({ email: 'nobody@example.test', password: secrets.password }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
    });
    expect(login.status).toBe(401);

    // The logs were written (one request line per request, at debug level) and name the requests…
    const logs = logLines.join('');
    for (const response of [...responses, created]) expect(logs).toContain(`"requestId":"${response.headers.get('x-request-id')}"`);
    // …but no secret, whole or without its prefix; nor does any response after the webhook's creation.
    for (const [name, secret] of Object.entries(secrets)) {
      const core = secret.replace(/^(sk_(test|live)_|whsec_)/, '');
      expect([name, logs.includes(core)]).toEqual([name, false]);
      for (const response of responses) expect([name, response.text.includes(core)]).toEqual([name, false]);
    }
    // Nor is any stored in clear, in any table.
    const tables = await app.orm.em.getConnection().execute<Array<{ tablename: string }>>("select tablename from pg_tables where schemaname = 'public'");
    expect(tables.map((t) => t.tablename)).toEqual(expect.arrayContaining(['api_keys', 'webhooks', 'integrations', 'accounts']));
    for (const { tablename } of tables) {
      const rows = await app.orm.em.getConnection().execute<Array<{ row: string }>>(`select t::text as row from "${tablename}" t`);
      const text = rows.map((r) => r.row).join('\n');
      for (const [name, secret] of Object.entries(secrets)) {
        expect([tablename, name, text.includes(secret.replace(/^(sk_(test|live)_|whsec_)/, ''))]).toEqual([tablename, name, false]);
      }
    }
  });

  describe('size limits', () => {
    const jsonOfSize = (bytes: number) => {
      const head = '{"company":"Big","contact_email":"big@big.test","metadata":{"pad":"';
      const tail = '"}}';
      return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
    };

    it(`refuses a JSON body over ${MAX_BODY_BYTES} bytes with 413 request_too_large, on REST and GraphQL; one of exactly that size is read`, async () => {
      const request = from(newAddress());
      const headers = { 'content-type': 'application/json' };
      const tooLarge = await request('POST', '/v1/leads', { key: owner.testKey, rawBody: jsonOfSize(MAX_BODY_BYTES + 1), headers });
      expectApiError(tooLarge, 413, 'invalid_request_error', 'request_too_large');
      // At the cap the body is parsed, and refused for what it says (a metadata value over 500 characters).
      const atCap = await request('POST', '/v1/leads', { key: owner.testKey, rawBody: jsonOfSize(MAX_BODY_BYTES), headers });
      expectApiError(atCap, 400, 'invalid_request_error', 'parameter_invalid');
      const graphql = await request('POST', '/graphql', {
        key: owner.testKey,
        rawBody: `{"query":"{ leads { data { id } } }","x":"${'x'.repeat(MAX_BODY_BYTES)}"}`,
        headers,
      });
      expect(graphql.status).toBe(413);
      expect(graphql.body.errors[0].extensions).toMatchObject({ errorCode: 'request_too_large' });
    });

    it('refuses a page size above 100 with 400 parameter_invalid (param limit), and serves 100', async () => {
      const request = from(newAddress());
      const over = await request('GET', '/v1/leads?limit=101', { key: owner.testKey });
      expectApiError(over, 400, 'invalid_request_error', 'parameter_invalid');
      expect(over.body.error.param).toBe('limit');
      expect((await request('GET', '/v1/leads?limit=100', { key: owner.testKey })).status).toBe(200);
      const graphql = await request('POST', '/graphql', { key: owner.testKey, body: { query: '{ leads(filter: { limit: 101 }) { data { id } } }' } });
      expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', param: 'limit' });
    });

    it(`refuses a GraphQL operation deeper than ${MAX_DEPTH} levels and one costing over ${MAX_COMPLEXITY}, and runs one full page`, async () => {
      const request = from(newAddress());
      const graphql = (query: string) => request('POST', '/graphql', { key: owner.testKey, body: { query } });
      // The schema is at most 4 deep, so anything deeper is a bomb: refused for its depth before
      // anything runs (beside GraphQL's own complaint about the made-up fields).
      let deep = 'id';
      for (let i = 0; i < MAX_DEPTH + 2; i++) deep = `n${i} { ${deep} }`;
      const tooDeep = await graphql(`{ leads { data { ${deep} } } }`);
      expect(tooDeep.status).toBe(400);
      expect(tooDeep.body.errors.map((e: { message: string }) => e.message)).toContainEqual(
        expect.stringContaining(`exceeds maximum operation depth of ${MAX_DEPTH}`),
      );

      const page = (alias: string) => `${alias}: leads(filter: { limit: 100 }) { data { ${LEAD_FIELDS} } }`;
      expect((await graphql(`{ ${page('a')} }`)).status).toBe(200);
      const costly = await graphql(`{ ${page('a')} ${page('b')} }`);
      expect(costly.status).toBe(400);
      expect(costly.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'query_too_complex' });
    });
  });

  describe('security headers', () => {
    it("API answers, successes and errors alike, may load nothing and carry helmet's headers", async () => {
      const request = from(newAddress());
      const answers = [
        await request('GET', '/v1/leads', { key: owner.testKey }),
        await request('GET', '/v1/leads'),
        await request('GET', '/v1/nothing-here', { key: owner.testKey }),
        await request('POST', '/graphql', { key: owner.testKey, body: { query: '{ leads { data { id } } }' } }),
        await request('GET', '/healthz'),
        await request('GET', '/v1/openapi.json'),
      ];
      expect(answers.map((r) => r.status)).toEqual([200, 401, 404, 200, 200, 200]);
      for (const answer of answers) {
        expectBaseHeaders(answer);
        expect(Object.fromEntries(csp(answer))).toEqual({
          'default-src': ["'none'"],
          'frame-ancestors': ["'none'"],
          'base-uri': ["'none'"],
          'form-action': ["'none'"],
        });
        expect(answer.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      }
    });

    it("the web app's pages, /docs and the Sandbox landing page carry their own policies, with no inline scripts of ours", async () => {
      const request = from(newAddress());
      const login = await request('GET', '/login');
      const docs = await request('GET', '/docs', { headers: { accept: 'text/html' } });
      const sandbox = await request('GET', '/graphql', { headers: { accept: 'text/html' } });
      expect([login.status, docs.status, sandbox.status]).toEqual([200, 200, 200]);
      for (const page of [login, docs, sandbox]) expectBaseHeaders(page);

      expect(csp(login).get('default-src')).toEqual(["'self'"]);
      expect(csp(login).has('script-src')).toBe(false);
      expect(csp(docs).get('script-src')).toEqual(["'self'"]);
      // Apollo's page sets scripts, styles, images and frames in its own <meta> policy (nonces and
      // its CDN); the header adds what a meta cannot say and keeps the page talking to this server.
      expect(sandbox.text).toContain('embeddable-sandbox.cdn.apollographql.com');
      expect(sandbox.text).toMatch(/<meta http-equiv="Content-Security-Policy" content="script-src 'self' 'nonce-/);
      expect(Object.fromEntries(csp(sandbox))).toEqual({
        'connect-src': ["'self'"],
        'frame-ancestors': ["'none'"],
        'base-uri': ["'none'"],
        'object-src': ["'none'"],
        'form-action': ["'none'"],
      });
      expect(sandbox.headers.get('cross-origin-opener-policy')).toBe('same-origin-allow-popups');
    });

    it('sends Strict-Transport-Security only on requests that came over HTTPS (through the trusted proxy)', async () => {
      const request = from(newAddress());
      const https = await request('GET', '/v1/leads', { key: owner.testKey, headers: { 'x-forwarded-proto': 'https' } });
      expect(https.headers.get('strict-transport-security')).toBe('max-age=31536000');
      const page = await request('GET', '/login', { headers: { 'x-forwarded-proto': 'https' } });
      expect(page.headers.get('strict-transport-security')).toBe('max-age=31536000');
      expect((await request('GET', '/v1/leads', { key: owner.testKey })).headers.get('strict-transport-security')).toBeNull();
    });

    describe('in a browser, each page works under its policy', () => {
      let browser: Browser;

      beforeAll(async () => {
        browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
      }, CHROMIUM_INSTALL_TIMEOUT_MS);
      afterAll(() => browser?.close());

      interface Violation {
        directive: string;
        blocked: string;
        policy: string;
      }
      /** Opens a page of the app (nothing leaves the machine), recording every CSP violation it meets. */
      async function open(path: string, ready: (page: Page) => Promise<unknown>): Promise<{ page: Page; violations: () => Promise<Violation[]> }> {
        const context = await browser.newContext();
        context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
        // Apollo's CDN and Google Fonts are not reached: the policy is checked before a request leaves.
        await context.route('**/*', (route) => (route.request().url().startsWith(app.baseUrl) ? route.continue() : route.abort()));
        await context.addInitScript(() => {
          type PolicyViolation = { effectiveDirective: string; blockedURI: string; originalPolicy: string };
          const window = globalThis as unknown as {
            cspViolations: unknown[];
            addEventListener(type: string, listener: (event: PolicyViolation) => void): void;
          };
          window.cspViolations = [];
          window.addEventListener('securitypolicyviolation', (event) => {
            window.cspViolations.push({ directive: event.effectiveDirective, blocked: event.blockedURI, policy: event.originalPolicy });
          });
        });
        const page = await context.newPage();
        await page.goto(`${app.baseUrl}${path}`, { waitUntil: 'load' });
        await ready(page);
        return { page, violations: () => page.evaluate(() => (globalThis as unknown as { cspViolations: Violation[] }).cspViolations) };
      }
      /** An inline script and a fetch to another site, which each policy here refuses. */
      const tryForbidden = (page: Page) =>
        page.evaluate(async () => {
          const doc = (
            globalThis as unknown as { document: { createElement(tag: string): { textContent: string }; body: { appendChild(node: unknown): void } } }
          ).document;
          const script = doc.createElement('script');
          script.textContent = 'globalThis.inlineRan = true';
          doc.body.appendChild(script);
          await fetch('https://elsewhere.example/steal').catch(() => undefined);
          return Boolean((globalThis as unknown as { inlineRan?: boolean }).inlineRan);
        });

      it('/docs: Swagger UI renders every route from /v1/openapi.json, with no violation', async () => {
        const { page, violations } = await open('/docs', (p) => p.locator('.opblock').first().waitFor());
        await expect(page.locator('.swagger-ui .info .title').textContent()).resolves.toContain('Sales Pipeline API');
        expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(20);
        expect(await violations()).toEqual([]);
        expect(await tryForbidden(page)).toBe(false);
        expect((await violations()).map((v) => v.directive).sort()).toEqual(['connect-src', 'script-src-elem']);
        await page.context().close();
      });

      it('the web app: the login page loads and applies its stylesheet, with no violation', async () => {
        const { page, violations } = await open('/login', (p) => p.getByRole('button', { name: 'Log in' }).waitFor());
        // The stylesheet applied: the form is styled as a card, not the browser's default block.
        const styled = await page
          .locator('form.card')
          .evaluate((form) =>
            (globalThis as unknown as { getComputedStyle(e: unknown): { borderTopStyle: string; paddingTop: string } }).getComputedStyle(form),
          );
        expect([styled.borderTopStyle, styled.paddingTop]).not.toEqual(['none', '0px']);
        expect(await violations()).toEqual([]);
        expect(await tryForbidden(page)).toBe(false);
        expect((await violations()).map((v) => v.directive).sort()).toEqual(['connect-src', 'script-src-elem']);
        await page.context().close();
      });

      it("the Sandbox landing page: Apollo's CDN scripts, nonce scripts and styles and fonts pass the header policy; other sites are refused", async () => {
        const { page, violations } = await open('/graphql', (p) => p.locator('#embeddableSandbox').waitFor({ state: 'attached' }));
        expect(await violations()).toEqual([]);
        // Its own <meta> policy refuses the inline script; the header refuses the fetch elsewhere.
        expect(await tryForbidden(page)).toBe(false);
        const refused = await violations();
        expect(refused.find((v) => v.directive === 'connect-src')?.policy).toBe(
          "connect-src 'self';frame-ancestors 'none';base-uri 'none';object-src 'none';form-action 'none'",
        );
        expect(refused.find((v) => v.directive === 'script-src-elem')?.policy).toMatch(/^script-src 'self' 'nonce-/);
        await page.context().close();
      });
    });
  });

  describe('CORS', () => {
    const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-allow-methods', 'access-control-allow-headers'];
    const corsOf = (response: HttpResponse) => CORS_HEADERS.filter((name) => response.headers.has(name));

    it('a cross-origin preflight to /v1 or /graphql gets no Access-Control-Allow-* header, and neither does a cross-origin request', async () => {
      const request = from(newAddress());
      const preflight = {
        origin: 'https://attacker.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      };
      for (const path of ['/v1/leads', '/graphql', '/v1/openapi.json']) {
        const response = await request('OPTIONS', path, { headers: preflight });
        expect([path, corsOf(response)]).toEqual([path, []]);
      }
      const read = await request('GET', '/v1/leads', { key: owner.testKey, headers: { origin: 'https://attacker.example' } });
      expect(read.status).toBe(200);
      expect(corsOf(read)).toEqual([]);
      const graphql = await request('POST', '/graphql', {
        key: owner.testKey,
        body: { query: '{ leads { data { id } } }' },
        headers: { origin: 'https://attacker.example' },
      });
      expect(graphql.status).toBe(200);
      expect(corsOf(graphql)).toEqual([]);
    });
  });

  describe('public routes', () => {
    it(`limits /v1/openapi.json and /docs to ${PER_ADDRESS} a minute per client address, without counting against the account or locking the API`, async () => {
      const address = newAddress();
      const request = from(address);
      const accountRemaining = async () => Number((await request('GET', '/v1/leads', { key: owner.testKey })).headers.get('x-ratelimit-remaining'));
      const before = await accountRemaining();

      // The page with a valid key, which it does not look at; the document without one (with one, it is the account's own: below).
      const answers: HttpResponse[] = [];
      for (let i = 0; i < PER_ADDRESS; i++)
        answers.push(await request('GET', i % 2 ? '/docs' : '/v1/openapi.json', { key: i % 2 ? owner.testKey : undefined }));
      expect(answers.map((r) => r.status)).toEqual(Array(PER_ADDRESS).fill(200));
      expect(answers.map((r) => r.headers.get('x-ratelimit-limit'))).toEqual(Array(PER_ADDRESS).fill(String(PER_ADDRESS)));
      expect(answers.map((r) => Number(r.headers.get('x-ratelimit-remaining')))).toEqual(Array.from({ length: PER_ADDRESS }, (_, i) => PER_ADDRESS - 1 - i));

      for (const path of ['/v1/openapi.json', '/docs']) {
        const refused = await request('GET', path, { key: path === '/docs' ? owner.testKey : undefined });
        expectApiError(refused, 429, 'rate_limit_error', 'rate_limit_exceeded');
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      }
      // Another address is not affected; Swagger UI's own files are not counted.
      expect((await from(newAddress())('GET', '/v1/openapi.json')).status).toBe(200);
      expect((await request('GET', '/docs/assets/swagger-ui.css')).status).toBe(200);
      // The account counted only its own two /v1/leads calls; its key still works from this address.
      expect(await accountRemaining()).toBe(before - 1);
      // With the key, the document is the account's own (issue 68): judged by the key's quota, not the address's.
      const own = await request('GET', '/v1/openapi.json', { key: owner.testKey });
      expect([own.status, own.headers.get('cache-control')]).toEqual([200, 'private, no-store']);
      expect(await accountRemaining()).toBe(before - 3);
    });
  });

  it('refuses webhooks to loopback and metadata addresses at creation when the guard is on (400 url_not_allowed)', async () => {
    expect(app.config.webhookAllowPrivateUrls).toBe(false);
    const request = from(newAddress());
    const { testKey } = await app.createAccount();
    for (const url of ['http://127.0.0.1:8080/hook', 'http://169.254.169.254/latest/meta-data/']) {
      const response = await request('POST', '/v1/webhooks', { key: testKey, body: { url, events: ['lead.created'] } });
      expectApiError(response, 400, 'invalid_request_error', 'url_not_allowed');
      expect(response.body.error.param).toBe('url');
    }
    expect((await request('GET', '/v1/webhooks', { key: testKey })).body.data).toEqual([]);
  });
});

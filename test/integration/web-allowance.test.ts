import { randomUUID } from 'node:crypto';
import { Account } from '../../src/modules/accounts/account.entity';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { DEFAULT_QUOTA_SETTINGS } from '../../src/limits/quota';
import { startTestApp, TestApp } from '../helpers/app';
import { markVerified } from '../helpers/web';

/**
 * The web app's /graphql calls (a session cookie, no key) have their own allowance per account
 * and mode (issue 24: a busy script blanked its owner's dashboard with 429s): a key that used up
 * the plan's minute leaves the dashboard working, the dashboard's calls leave the key's allowance
 * alone, and the dashboard's allowance is bounded too.
 */
describe("the web app's own allowance on /graphql", () => {
  const WEB_APP_PER_MINUTE = 12;
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ quotaSettings: { ...DEFAULT_QUOTA_SETTINGS, webAppPerMinute: WEB_APP_PER_MINUTE } });
  });
  afterAll(() => app.close());

  /** Signs up through the form; the session cookie, the page's CSRF token and a test key of the same account. */
  async function signedUp(): Promise<{ cookie: string; csrf: string; key: string }> {
    const email = `allowance-${randomUUID()}@example.test`;
    const body = new URLSearchParams({ name: 'Allowance Co', email, password: 'correct horse battery staple' }).toString();
    const signup = await fetch(`${app.baseUrl}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
      body,
      redirect: 'manual',
    });
    expect(signup.status).toBe(303);
    // Sign-up signs no one in: the address is verified directly (the e-mailed link is web-account.test.ts's), then logged in.
    await markVerified(app, email);
    const login = await fetch(`${app.baseUrl}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
      body: new URLSearchParams({ email, password: 'correct horse battery staple' }).toString(),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = /(spa_session=[^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1];
    const page = await (await fetch(`${app.baseUrl}/dashboard`, { headers: { cookie } })).text();
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page)![1];
    const account = await app.orm.em.fork().findOneOrFail(Account, { email });
    const { secret } = await new ApiKeyService(app.orm.em.fork()).create(account, KeyType.test, 'script');
    return { cookie, csrf, key: secret };
  }

  const dashboardQuery = (session: { cookie: string; csrf: string }) =>
    fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: session.cookie, 'x-csrf-token': session.csrf },
      body: JSON.stringify({ query: '{ leads(filter: { limit: 5 }) { data { id } } }' }),
    });
  const keyRequest = (key: string) => app.request('GET', '/v1/leads?limit=1', { key });

  it("keeps the dashboard answering after a script used up the key's minute, and counts apart", async () => {
    const session = await signedUp();
    const limit = DEFAULT_QUOTA_SETTINGS.testMode.perMinute;
    const first = await keyRequest(session.key);
    expect(first.status).toBe(200);
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    expect(remaining).toBe(limit - 1);

    // The dashboard's calls do not touch the key's allowance.
    for (let i = 0; i < 3; i++) {
      const answer = await dashboardQuery(session);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-limit')).toBe(String(WEB_APP_PER_MINUTE));
      expect(answer.headers.get('x-ratelimit-remaining')).toBe(String(WEB_APP_PER_MINUTE - 1 - i));
    }
    const second = await keyRequest(session.key);
    expect(second.headers.get('x-ratelimit-remaining')).toBe(String(limit - 2));

    // A busy script uses up the key's minute…
    for (let i = 2; i < limit; i++) expect((await keyRequest(session.key)).status).toBe(200);
    const refused = await keyRequest(session.key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limit_exceeded');

    // …and the dashboard still gets its data.
    const dashboard = await dashboardQuery(session);
    expect(dashboard.status).toBe(200);
    expect(((await dashboard.json()) as { data: { leads: { data: unknown[] } } }).data.leads.data).toEqual([]);
  });

  it("bounds the dashboard's own allowance: past it 429 with Retry-After, and the key is unaffected", async () => {
    const session = await signedUp();
    for (let i = 0; i < WEB_APP_PER_MINUTE; i++) expect((await dashboardQuery(session)).status).toBe(200);
    const refused = await dashboardQuery(session);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(body.errors[0].extensions.code).toBe('RATE_LIMITED');
    const key = await keyRequest(session.key);
    expect(key.status).toBe(200);
    expect(key.headers.get('x-ratelimit-remaining')).toBe(String(DEFAULT_QUOTA_SETTINGS.testMode.perMinute - 1));
  });

  it('charges a dashboard request once per root field against its own allowance, not the plan', async () => {
    const session = await signedUp();
    const answer = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: session.cookie, 'x-csrf-token': session.csrf },
      body: JSON.stringify({ query: '{ a: leads(filter: { limit: 1 }) { data { id } } b: deals(filter: { limit: 1 }) { data { id } } }' }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-ratelimit-cost')).toBe('2');
    expect(answer.headers.get('x-ratelimit-remaining')).toBe(String(WEB_APP_PER_MINUTE - 2));
    const key = await keyRequest(session.key);
    expect(key.headers.get('x-ratelimit-remaining')).toBe(String(DEFAULT_QUOTA_SETTINGS.testMode.perMinute - 1));
  });
});

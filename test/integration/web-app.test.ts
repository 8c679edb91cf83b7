import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { DEFAULT_QUOTA_SETTINGS } from '../../src/limits/quota';
import { Account } from '../../src/modules/accounts/account.entity';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { BROWSER_STEP_TIMEOUT_MS } from '../helpers/timeouts';
import { BAD_LOGIN, http, markVerified, money, PASSWORD, screenshot, sessionCookie, signUp, tableRows, uniqueEmail } from '../helpers/web';
import { waitFor } from '../helpers/wait';

/**
 * The web application (src/web) in a real browser: playwright-core drives Debian's Chromium
 * against a real app on 127.0.0.1. Sign up, generate a key and read it once, use it over HTTP,
 * revoke it (the next call fails at once), log out and in, and a dashboard that is a
 * session-authenticated GraphQL client showing data created through the API, with the test / live
 * switch. Beside it, HTTP-level checks of the session cookie, CSRF and login limits.
 *
 * Each page is photographed (into docs/screenshots/ with UPDATE_SCREENSHOTS=1) for people to look at; files are written
 * atomically (temporary file, then rename) and never compared, so they cannot make the test flaky.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomElement {
  id: string;
  tagName: string;
  textContent: string | null;
  style: { filter: string };
  getAttribute(name: string): string | null;
  removeAttribute(name: string): void;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}
declare const document: { cookie: string; activeElement: DomElement | null };
declare const navigator: { clipboard: { readText(): Promise<string> } };

describe('web application', () => {
  let app: TestApp;
  let executablePath: string;
  let browser: Browser;

  beforeAll(async () => {
    executablePath = chromiumPath();
    app = await startTestApp();
    await app.reset();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  }, CHROMIUM_INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  describe('in the browser: the whole flow', () => {
    let context: BrowserContext;
    let page: Page;
    const email = 'owner@northwind.example';
    let crmKey: string;
    let dashboardKey: string;
    let liveKey: string;
    const leads: Array<{ company: string; contact_email: string; score: number; score_label: string }> = [];

    beforeAll(async () => {
      context = await browser.newContext({ viewport: { width: 1100, height: 800 }, deviceScaleFactor: 1, locale: 'en-US', timezoneId: 'UTC' });
      context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS); // a missing element fails with its name, well before jest's timeout
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
      page = await context.newPage();
    });
    afterAll(() => context?.close());

    const v1 = (method: string, pathname: string, key: string, body?: unknown) => app.request(method, pathname, { key, body });

    it('signs up through the form (inputs found by their labels), logs in once verified (first sign-in: /welcome) and opens API keys', async () => {
      await page.goto(`${app.baseUrl}/signup`);
      await expect(page.title()).resolves.toBe('Create your account · Sales Pipeline');
      await screenshot(page, 'signup');

      // A too-short password is refused with a clear error, keeping what was typed.
      await page.getByLabel('Company or team name').fill('Northwind Traders');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('short');
      await page.getByLabel('Password').evaluate((input: DomElement) => input.removeAttribute('minlength')); // past the browser's own check
      await page.getByRole('button', { name: 'Create account' }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toBe('Choose a password of at least 10 characters.');
      await expect(page.getByLabel('Email').inputValue()).resolves.toBe(email);
      await expect(page.getByLabel('Company or team name').inputValue()).resolves.toBe('Northwind Traders');

      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL(`${app.baseUrl}/signup/sent`);
      await markVerified(app, email);
      await page.goto(`${app.baseUrl}/login`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${app.baseUrl}/welcome`); // no key and no data yet: the getting-started steps
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('API keys');

      const [cookie] = (await context.cookies()).filter((c) => c.name === 'spa_session');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', secure: false });
      await expect(page.evaluate(() => document.cookie)).resolves.not.toContain('spa_session');
    });

    it('generates a test key "CRM sync", shows it once with a warning and a copy button', async () => {
      await page.getByLabel('Name (what will use it)').fill('CRM sync'); // a test key: the page is in test mode
      await page.getByRole('button', { name: 'Generate key' }).click();
      await page.locator('#new-secret').waitFor();

      crmKey = ((await page.locator('#new-secret').textContent()) ?? '').trim();
      expect(crmKey).toMatch(/^sk_test_\S{20,}$/);
      await expect(page.getByRole('heading', { name: 'Your new key “CRM sync”' }).isVisible()).resolves.toBe(true);
      await expect(page.getByText('Copy it now: it is shown only once.').isVisible()).resolves.toBe(true);

      // A throwaway key of a test account; blurred anyway, so the picture teaches no one to paste keys.
      await page.locator('#new-secret').evaluate((el: DomElement) => {
        el.style.filter = 'blur(5px)';
      });
      await screenshot(page, 'api-keys-new');

      const copy = page.getByRole('button', { name: 'Copy key' });
      await copy.click();
      await page.getByRole('button', { name: 'Copied' }).waitFor();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(crmKey);

      // Reloaded (the generation answered with a redirect, so nothing is sent again), the page no
      // longer has the secret: only its prefix and last four, and still one key.
      await page.reload();
      const content = await page.content();
      expect(content).not.toContain(crmKey);
      await expect(page.locator('#new-secret').count()).resolves.toBe(0);
      const row = await tableRows(page, 'table[aria-label="API keys"]');
      expect(row.filter((cells) => cells[0] === 'CRM sync')).toHaveLength(1);
      const crm = row.find((cells) => cells[0] === 'CRM sync');
      expect(crm?.slice(1, 4)).toEqual(['secret', 'full access', `sk_test_…${crmKey.slice(-4)}`]);
      expect(crm?.[5]).toBe('—'); // never used yet
      expect(crm?.[6]).toBe('Active');
    });

    it('the key works over HTTP: POST /v1/leads is 201 and GET /v1/leads lists the lead; "Last used" follows', async () => {
      const created = await v1('POST', '/v1/leads', crmKey, { company: 'Synced Ltd', contact_email: 'buyer@synced.example' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ object: 'lead', company: 'Synced Ltd', livemode: false });
      const list = await v1('GET', '/v1/leads', crmKey);
      expect(list.status).toBe(200);
      expect(list.body.data.map((lead: { id: string }) => lead.id)).toContain(created.body.id);

      // "last used" is written after the request, not awaited by it: look again until it shows.
      const lastUsed = await waitFor('the key’s last use on the page', async () => {
        await page.goto(`${app.baseUrl}/settings/api-keys`);
        const shown = (await tableRows(page, 'table[aria-label="API keys"]')).find((cells) => cells[0] === 'CRM sync')?.[5] ?? '—';
        return shown !== '—' && shown;
      });
      expect(lastUsed).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    });

    it('revokes the key only after the confirmation is accepted; the next call fails 401 api_key_revoked', async () => {
      const revoke = page.getByRole('button', { name: 'Revoke CRM sync' });

      let message = '';
      page.once('dialog', (dialog) => {
        message = dialog.message();
        void dialog.dismiss();
      });
      await revoke.click();
      expect(message).toBe('Revoke “CRM sync”? Requests using it will fail at once.');
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      expect((await tableRows(page, 'table[aria-label="API keys"]')).find((cells) => cells[0] === 'CRM sync')?.[6]).toBe('Active');
      expect((await v1('GET', '/v1/leads', crmKey)).status).toBe(200);

      page.once('dialog', (dialog) => void dialog.accept());
      await Promise.all([page.waitForResponse((res) => res.url().endsWith('/revoke') && res.request().method() === 'POST'), revoke.click()]);
      await page.waitForURL(`${app.baseUrl}/settings/api-keys`);
      const crm = (await tableRows(page, 'table[aria-label="API keys"]')).find((cells) => cells[0] === 'CRM sync');
      expect(crm?.[6]).toMatch(/^Revoked \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
      await expect(page.getByRole('button', { name: 'Revoke CRM sync' }).count()).resolves.toBe(0);

      const post = await v1('POST', '/v1/leads', crmKey, { company: 'Too Late', contact_email: 'late@synced.example' });
      expect(post.status).toBe(401);
      expect(post.body.error).toMatchObject({ type: 'authentication_error', code: 'api_key_revoked' });
      const get = await v1('GET', '/v1/leads', crmKey);
      expect(get.status).toBe(401);
      expect(get.body.error.code).toBe('api_key_revoked');
      await screenshot(page, 'api-keys');
    });

    it('logs out (the dashboard then sends to /login); wrong password and unknown email get the same message; logs in', async () => {
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.waitForURL(`${app.baseUrl}/login`);
      expect((await context.cookies()).filter((c) => c.name === 'spa_session')).toEqual([]);
      await page.goto(`${app.baseUrl}/dashboard`);
      expect(page.url()).toBe(`${app.baseUrl}/login`);

      const attempt = async (who: string, password: string) => {
        await page.getByLabel('Email').fill(who);
        await page.getByLabel('Password').fill(password);
        const [response] = await Promise.all([
          page.waitForResponse((res) => res.url() === `${app.baseUrl}/login` && res.request().method() === 'POST'),
          page.getByRole('button', { name: 'Log in' }).click(),
        ]);
        return response.status();
      };
      expect(await attempt('nobody@nowhere.example', PASSWORD)).toBe(401);
      await expect(page.getByRole('alert').textContent()).resolves.toBe(BAD_LOGIN);
      expect(await attempt(email, 'not the password at all')).toBe(401);
      await expect(page.getByRole('alert').textContent()).resolves.toBe(BAD_LOGIN);
      await expect(page.getByLabel('Email').inputValue()).resolves.toBe(email);
      await expect(page.getByLabel('Password').inputValue()).resolves.toBe('');
      await screenshot(page, 'login-error');

      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${app.baseUrl}/dashboard`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Northwind Traders: pipeline');
    });

    it('the dashboard (GraphQL over the session) shows deals by stage with a chart, and recent leads with scores', async () => {
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      await page.getByLabel('Name (what will use it)').fill('Dashboard data');
      await page.getByRole('button', { name: 'Generate key' }).click();
      dashboardKey = ((await page.locator('#new-secret').textContent()) ?? '').trim();
      expect(dashboardKey).toMatch(/^sk_test_/);

      const deals = [
        { name: 'Fjord pilot', stage: 'prospecting', value: 1200 },
        { name: 'Harbor rollout', stage: 'qualification', value: 2500 },
        { name: 'Summit renewal', stage: 'negotiation', value: 8000.5 },
        { name: 'Summit expansion', stage: 'negotiation', value: 2000 },
      ];
      for (const deal of deals) {
        const res = await v1('POST', '/v1/deals', dashboardKey, deal);
        expect(res.status).toBe(201);
      }
      for (const lead of [
        { company: 'Globex', contact_email: 'cto@globex.example', industry: 'Software', employees: 800 },
        { company: 'Initech', contact_email: 'peter@initech.example', industry: 'Retail', employees: 30 },
      ]) {
        const res = await v1('POST', '/v1/leads', dashboardKey, lead);
        expect(res.status).toBe(201);
        leads.push(res.body);
      }

      await page.goto(`${app.baseUrl}/dashboard`);
      await page
        .getByRole('status')
        .filter({ hasText: /^Updated / })
        .waitFor();
      await expect(page.getByRole('heading', { name: 'Pipeline by stage (test data)' }).isVisible()).resolves.toBe(true);

      const expected = [
        ['prospecting', '1', money(1200), money(120), '10%'],
        ['qualification', '1', money(2500), money(625), '25%'],
        ['negotiation', '2', money(10000.5), money(7500.38), '75%'],
      ];
      expect(await tableRows(page, '#pipeline')).toEqual(expected);
      await expect(page.locator('#pipeline-empty').isHidden()).resolves.toBe(true);

      // One bar per stage row, the longest for the largest value.
      const bars = await page.locator('#chart rect').evaluateAll((rects: DomElement[]) => rects.map((r) => Number(r.getAttribute('width'))));
      expect(bars).toHaveLength(expected.length);
      expect(Math.max(...bars)).toBe(bars[2]);
      expect(bars[0]).toBeLessThan(bars[1]);
      await expect(page.locator('#chart text').allTextContents()).resolves.toEqual(expect.arrayContaining(['negotiation (USD)', money(10000.5)]));

      // Newest first, with the scores the API gave (the lead created through the revoked key too).
      const leadRows = await tableRows(page, '#leads');
      expect(leadRows.slice(0, 2).map((cells) => cells.slice(0, 4))).toEqual(
        [...leads].reverse().map((lead) => [lead.company, lead.contact_email, String(lead.score), lead.score_label]),
      );
      expect(leadRows.map((cells) => cells[0])).toEqual(['Initech', 'Globex', 'Synced Ltd']);
      await screenshot(page, 'dashboard');
    });

    it('switches to live data (only live deals and leads) and back to test', async () => {
      // Keys are made in the page's mode, as in Stripe: a live key from the live-mode keys page.
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      await page.getByRole('button', { name: 'Switch to live' }).click();
      await page.waitForURL(`${app.baseUrl}/settings/api-keys`);
      await page.getByLabel('Name (what will use it)').fill('Live import');
      await page.getByRole('button', { name: 'Generate key' }).click();
      liveKey = ((await page.locator('#new-secret').textContent()) ?? '').trim();
      expect(liveKey).toMatch(/^sk_live_/);
      await page.getByRole('button', { name: 'Switch to test' }).click();
      await page.waitForURL(`${app.baseUrl}/settings/api-keys`);
      expect((await v1('POST', '/v1/deals', liveKey, { name: 'Real deal', stage: 'proposal', value: 4200 })).status).toBe(201);
      const liveLead = await v1('POST', '/v1/leads', liveKey, { company: 'Live Corp', contact_email: 'ceo@livecorp.example' });
      expect(liveLead.status).toBe(201);

      await page.goto(`${app.baseUrl}/dashboard`);
      await page
        .getByRole('status')
        .filter({ hasText: /^Updated / })
        .waitFor();
      await expect(page.locator('.badge').textContent()).resolves.toBe('Test data');
      await page.getByRole('button', { name: 'Switch to live' }).click();
      await page.waitForURL(`${app.baseUrl}/dashboard`);
      await page
        .getByRole('status')
        .filter({ hasText: /^Updated / })
        .waitFor();
      await expect(page.locator('.badge').textContent()).resolves.toBe('Live data');
      await expect(page.getByRole('heading', { name: 'Pipeline by stage (live data)' }).isVisible()).resolves.toBe(true);
      expect(await tableRows(page, '#pipeline')).toEqual([['proposal', '1', money(4200), money(2100), '50%']]);
      await expect(page.locator('#chart rect').count()).resolves.toBe(1);
      expect((await tableRows(page, '#leads')).map((cells) => cells.slice(0, 3))).toEqual([['Live Corp', 'ceo@livecorp.example', String(liveLead.body.score)]]);

      // The mode is the session's: another page load keeps it, until switched back.
      await page.reload();
      await expect(page.locator('.badge').textContent()).resolves.toBe('Live data');
      await page.getByRole('button', { name: 'Switch to test' }).click();
      await page.waitForURL(`${app.baseUrl}/dashboard`);
      await page
        .getByRole('status')
        .filter({ hasText: /^Updated / })
        .waitFor();
      await expect(page.locator('.badge').textContent()).resolves.toBe('Test data');
      expect((await tableRows(page, '#pipeline')).map((cells) => cells[0])).toEqual(['prospecting', 'qualification', 'negotiation']);
    });

    it('Settings → Plan shows the plan, its limits and usage that rises with API calls', async () => {
      const usage = async () => {
        await page.goto(`${app.baseUrl}/settings/plan`);
        const rows = await tableRows(page, 'table[aria-label="Limits and usage"]');
        const live = rows.find((cells) => cells[0] === 'Live (sk_live_)')!;
        const test = rows.find((cells) => cells[0] === 'Test (sk_test_)')!;
        return { live, test, liveToday: Number(live[4].replace(/,/g, '')), testMinute: Number(test[2].replace(/,/g, '')) };
      };
      const before = await usage();
      await expect(page.getByRole('heading', { name: 'Plan: starter' }).isVisible()).resolves.toBe(true);
      expect([before.live[1], before.live[3]]).toEqual(['60', '10,000']);
      expect([before.test[1], before.test[3]]).toEqual(['100', 'no cap']);
      expect(before.liveToday).toBeGreaterThanOrEqual(2); // the live deal and lead above

      for (let i = 0; i < 3; i++) {
        expect((await v1('GET', '/v1/leads', liveKey)).status).toBe(200);
        expect((await v1('GET', '/v1/leads', dashboardKey)).status).toBe(200);
      }
      const after = await usage();
      expect(after.liveToday).toBe(before.liveToday + 3);
      // A one-minute window may have turned over between the two looks; the calls just made are in it.
      expect(after.testMinute).toBeGreaterThanOrEqual(1);
      await screenshot(page, 'plan');
    });
  });

  describe('in the browser: keyboard use', () => {
    let context: BrowserContext;
    let page: Page;

    beforeAll(async () => {
      context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
      context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
      page = await context.newPage();
    });
    afterAll(() => context?.close());

    const focused = () =>
      page.evaluate(() => {
        const el = document.activeElement;
        return el ? `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}:${(el.textContent ?? '').trim()}` : '';
      });

    it('Tab reaches the login inputs and button in order, and Enter submits', async () => {
      const { email } = await signUp(app, uniqueEmail('keyboard'));
      await page.goto(`${app.baseUrl}/login`);
      const order: string[] = [];
      for (let i = 0; i < 4; i++) {
        await page.keyboard.press('Tab');
        order.push(await focused());
      }
      expect(order).toEqual(['a:Skip to content', 'input#email:', 'input#password:', 'button:Log in']);
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('a:Create an account');
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Shift+Tab');
      expect(await focused()).toBe('input#email:');

      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.waitForURL(`${app.baseUrl}/welcome`); // an account without keys or data: its first sign-in
    });

    it('Tab reaches the sign-up inputs in order', async () => {
      const fresh = await browser.newContext();
      try {
        const signup = await fresh.newPage();
        await signup.goto(`${app.baseUrl}/signup`);
        const order: string[] = [];
        for (let i = 0; i < 5; i++) {
          await signup.keyboard.press('Tab');
          order.push(await signup.evaluate(() => (document.activeElement?.id || document.activeElement?.textContent) ?? ''));
        }
        expect(order).toEqual(['Skip to content', 'name', 'email', 'password', 'Create account']);
      } finally {
        await fresh.close();
      }
    });
  });

  describe('over HTTP', () => {
    it('the session cookie is HttpOnly, SameSite=Lax, Path=/ and not Secure over plain HTTP; the password is stored as scrypt', async () => {
      const email = uniqueEmail('cookie');
      const signup = await http(app, 'POST', '/signup', { form: { name: 'Cookie Co', email, password: PASSWORD } });
      expect(signup.status).toBe(303);
      expect(signup.headers.get('set-cookie')).toBeNull();
      await markVerified(app, email);
      const res = await http(app, 'POST', '/login', { form: { email, password: PASSWORD } });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/welcome'); // the first sign-in of an account without keys or data
      const setCookie = res.headers.get('set-cookie') ?? '';
      expect(setCookie).toMatch(/^spa_session=[\w-]{40,};/);
      expect(setCookie).toMatch(/; HttpOnly(;|$)/);
      expect(setCookie).toMatch(/; SameSite=Lax(;|$)/);
      expect(setCookie).toMatch(/; Path=\/(;|$)/);
      expect(setCookie).not.toMatch(/Secure/i);

      const token = decodeURIComponent(sessionCookie(res).slice('spa_session='.length));
      const connection = app.orm.em.fork().getConnection();
      const [user] = await connection.execute<{ id: string; password_hash: string }[]>('select id, password_hash from users where email = ?', [email]);
      expect(user.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
      expect(user.password_hash).not.toContain(PASSWORD);
      const sessions = await connection.execute<{ token_hash: string }[]>('select token_hash from web_sessions where user_id = ?', [user.id]);
      expect(sessions).toHaveLength(1);
      expect(sessions[0].token_hash).not.toBe(token);
    });

    it('behind a proxy that says https (TRUST_PROXY), the cookie is also Secure', async () => {
      const proxied = await startTestApp({ env: { TRUST_PROXY: 'loopback' } });
      try {
        const host = new URL(proxied.baseUrl).host;
        const email = uniqueEmail('secure');
        expect((await http(proxied, 'POST', '/signup', { form: { name: 'Secure Co', email, password: PASSWORD } })).status).toBe(303);
        await markVerified(proxied, email);
        const viaHttps = await http(proxied, 'POST', '/login', {
          form: { email, password: PASSWORD },
          origin: `https://${host}`,
          headers: { 'x-forwarded-proto': 'https' },
        });
        expect(viaHttps.status).toBe(303);
        const setCookie = viaHttps.headers.get('set-cookie') ?? '';
        expect(setCookie).toMatch(/; Secure(;|$)/);
        expect(setCookie).toMatch(/; HttpOnly(;|$)/);
        expect(setCookie).toMatch(/; SameSite=Lax(;|$)/);

        const viaHttp = await http(proxied, 'POST', '/login', { form: { email, password: PASSWORD } });
        expect(viaHttp.status).toBe(303);
        expect(viaHttp.headers.get('set-cookie')).not.toMatch(/Secure/i);
      } finally {
        await proxied.close();
      }
    });

    it('forms posted from another origin (or with no Origin or Referer) are refused 403', async () => {
      const { email } = await signUp(app, uniqueEmail('origin'));
      const foreign = await http(app, 'POST', '/login', { form: { email, password: PASSWORD }, origin: 'https://evil.example' });
      expect(foreign.status).toBe(403);
      expect(foreign.headers.get('set-cookie')).toBeNull();
      const none = await http(app, 'POST', '/login', { form: { email, password: PASSWORD }, origin: null });
      expect(none.status).toBe(403);
      const byReferer = await http(app, 'POST', '/login', { form: { email, password: PASSWORD }, origin: null, headers: { referer: `${app.baseUrl}/login` } });
      expect(byReferer.status).toBe(303);
      const crossSignup = await http(app, 'POST', '/signup', {
        form: { name: 'X', email: uniqueEmail('cross'), password: PASSWORD },
        origin: 'https://evil.example',
      });
      expect(crossSignup.status).toBe(403);
      const ok = await http(app, 'POST', '/login', { form: { email, password: PASSWORD } });
      expect(ok.status).toBe(303);
      expect(ok.headers.get('location')).toBe('/welcome'); // still no key and no data
    });

    it("signed-in forms need the session's _csrf: without it or with another one they are 403 and change nothing", async () => {
      const { cookie, csrf } = await signUp(app);
      const other = await signUp(app);
      const keyCount = async () => ((await http(app, 'GET', '/settings/api-keys', { cookie })).text.match(/aria-label="Revoke /g) ?? []).length;

      for (const form of [
        { name: 'No token', type: 'test' } as Record<string, string>,
        { name: 'Wrong token', type: 'test', _csrf: other.csrf },
        { name: 'Empty', type: 'test', _csrf: '' },
      ]) {
        const res = await http(app, 'POST', '/settings/api-keys', { cookie, form });
        expect(res.status).toBe(403);
        expect(res.text).not.toMatch(/sk_test_[\w-]{20,}/);
        // The refusal is a page that says so and offers the form again, filled in, with the session's token.
        expect(res.text).toContain('<h1>This form was out of date</h1>');
        expect(res.text).toContain(`value="${form.name}"`);
        expect(res.text).toContain(`<input type="hidden" name="_csrf" value="${csrf}">`);
      }
      expect(await keyCount()).toBe(0);
      const created = await http(app, 'POST', '/settings/api-keys', { cookie, form: { name: 'With token', type: 'test', _csrf: csrf } });
      // Post, redirect, get: the page after the redirect shows the key once; reloading it shows it no more.
      expect(created.status).toBe(303);
      expect(created.headers.get('location')).toBe('/settings/api-keys');
      const shown = await http(app, 'GET', '/settings/api-keys', { cookie });
      expect(shown.text).toMatch(/id="new-secret">sk_test_/);
      expect((await http(app, 'GET', '/settings/api-keys', { cookie })).text).not.toMatch(/sk_test_[A-Za-z0-9]{32}/);
      expect(await keyCount()).toBe(1);

      const id = /action="\/settings\/api-keys\/([^/"]+)\/revoke"/.exec((await http(app, 'GET', '/settings/api-keys', { cookie })).text)![1];
      expect((await http(app, 'POST', `/settings/api-keys/${id}/revoke`, { cookie, form: {} })).status).toBe(403);
      expect((await http(app, 'POST', '/settings/mode', { cookie, form: { mode: 'live' } })).status).toBe(403);
      expect((await http(app, 'POST', '/logout', { cookie, form: {} })).status).toBe(403);
      expect(await keyCount()).toBe(1);
      // Another account's session cannot revoke this account's key even with its own token.
      expect((await http(app, 'POST', `/settings/api-keys/${id}/revoke`, { cookie: other.cookie, form: { _csrf: other.csrf } })).status).toBe(303);
      expect(await keyCount()).toBe(1);

      const logout = await http(app, 'POST', '/logout', { cookie, form: { _csrf: csrf } });
      expect(logout.status).toBe(303);
      const after = await http(app, 'GET', '/dashboard', { cookie });
      expect(after.status).toBe(303);
      expect(after.headers.get('location')).toBe('/login');
    });

    it('/graphql with the session cookie needs X-CSRF-Token: without it 403 permission_denied, with it the data', async () => {
      const { cookie, csrf } = await signUp(app);
      const query = JSON.stringify({ query: '{ pipelineSummary { stage count } }' });
      const post = (headers: Record<string, string>) =>
        fetch(`${app.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', cookie, ...headers }, body: query });

      for (const headers of [{}, { 'x-csrf-token': 'not-the-token' }] as Array<Record<string, string>>) {
        const res = await post(headers);
        expect(res.status).toBe(403);
        const body = (await res.json()) as { data?: unknown; errors: Array<{ extensions: Record<string, unknown> }> };
        expect(body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', errorCode: 'permission_denied' });
        expect(body.data).toBeUndefined();
      }
      const ok = await post({ 'x-csrf-token': csrf });
      expect(ok.status).toBe(200);
      await expect(ok.json()).resolves.toEqual({ data: { pipelineSummary: [] } });

      // Without a session (logged out) the cookie is ignored: the request needs an API key.
      await http(app, 'POST', '/logout', { cookie, form: { _csrf: csrf } });
      const loggedOut = await post({ 'x-csrf-token': csrf });
      expect(loggedOut.status).toBe(401);
    });

    it('a wrong password and an unknown email get the same status and the same page', async () => {
      const { email } = await signUp(app, uniqueEmail('generic'));
      const unknown = uniqueEmail('nobody');
      const wrong = await http(app, 'POST', '/login', { form: { email, password: 'wrong password here' } });
      const missing = await http(app, 'POST', '/login', { form: { email: unknown, password: 'wrong password here' } });
      expect([wrong.status, missing.status]).toEqual([401, 401]);
      expect(wrong.text).toContain(`<p class="error" id="form-error" role="alert">${BAD_LOGIN}</p>`);
      expect(wrong.text.replace(email, 'EMAIL')).toBe(missing.text.replace(unknown, 'EMAIL'));
      expect(wrong.headers.get('set-cookie')).toBeNull();
      expect(missing.headers.get('set-cookie')).toBeNull();
    });

    it('limits login attempts: the 11th for one email from one address in 15 minutes is 429 with Retry-After', async () => {
      const { email } = await signUp(app, uniqueEmail('limited'));
      for (let i = 1; i <= 10; i++) {
        const res = await http(app, 'POST', '/login', { form: { email, password: `wrong password ${i}` } });
        expect({ attempt: i, status: res.status }).toEqual({ attempt: i, status: 401 });
      }
      const limited = await http(app, 'POST', '/login', { form: { email: email.toUpperCase(), password: 'wrong password 11' } });
      expect(limited.status).toBe(429);
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(900);
      expect(limited.headers.get('content-type')).toMatch(/^text\/html/);
      expect(limited.text).toContain('Too many attempts. Wait about');
      // Even the right password waits now; another email from the same address does not.
      const right = await http(app, 'POST', '/login', { form: { email, password: PASSWORD } });
      expect(right.status).toBe(429);
      expect(right.headers.get('set-cookie')).toBeNull();
      const other = await signUp(app, uniqueEmail('neighbour'));
      expect((await http(app, 'POST', '/login', { form: { email: other.email, password: PASSWORD } })).status).toBe(303);
    });

    it('limits sign-ups per address (each account comes with fresh quotas): the 6th in an hour is 429 and makes no account', async () => {
      const limited = await startTestApp({ quotaSettings: { ...DEFAULT_QUOTA_SETTINGS, signupsPerHour: 5 } });
      try {
        for (let i = 1; i <= 5; i++) await signUp(limited, uniqueEmail(`signup${i}`));
        const email = uniqueEmail('sixth');
        const sixth = await http(limited, 'POST', '/signup', { form: { name: 'Sixth', email, password: PASSWORD } });
        expect(sixth.status).toBe(429);
        expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(sixth.text).toContain('Too many sign-ups');
        expect(sixth.headers.get('set-cookie')).toBeNull();
        expect(await limited.orm.em.fork().count(Account, { email })).toBe(0);
      } finally {
        await limited.close();
      }
    });
  });
});

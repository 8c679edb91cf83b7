import { createRequire } from 'node:module';
import path from 'node:path';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { createLogger } from '../../src/logger';
import { webErrorHandler } from '../../src/web/web-errors';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { BROWSER_STEP_TIMEOUT_MS } from '../helpers/timeouts';
import { BAD_LOGIN, csrfOf, http, markVerified, PASSWORD, screenshot, signUp, uniqueEmail } from '../helpers/web';

/**
 * Every page of the web app in Chromium at a desktop size (1366×900) and a phone's (390×844): no
 * page scrolls sideways, the header takes at most two rows, axe-core finds nothing serious or
 * critical, and the key flow works with the keyboard alone. Beside them, the error pages (403 for a
 * stale form that keeps what was typed, 404 for unknown app URLs while the API keeps JSON, 429,
 * 500) and the mode switch returning to the page it was on. Each page is photographed
 * (docs/screenshots/<page>-<size>.png with UPDATE_SCREENSHOTS=1).
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomElement {
  id: string;
  tagName: string;
  textContent: string | null;
  style: { filter: string };
  getAttribute(name: string): string | null;
  removeAttribute(name: string): void;
  getBoundingClientRect(): { top: number; bottom: number; width: number };
  children: ArrayLike<DomElement>;
}
declare const document: { activeElement: DomElement | null; documentElement: { scrollWidth: number }; querySelector(s: string): DomElement | null };
declare const window: { innerWidth: number; getComputedStyle(el: DomElement): Record<string, string> };

const AXE_PATH = createRequire(__filename).resolve('axe-core');

interface Violation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/** axe-core's violations of serious or critical impact on the page as it is now. */
async function seriousViolations(page: Page): Promise<Violation[]> {
  await page.addScriptTag({ path: AXE_PATH });
  return page.evaluate(`axe.run(document).then((result) => result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) })))`);
}

/** How many rows the header's items take: items whose vertical extents overlap share a row. */
const headerRows = (page: Page) =>
  page.evaluate(() => {
    const header = document.querySelector('header');
    if (!header) return 0;
    const boxes = Array.from(header.children)
      .map((el) => el.getBoundingClientRect())
      .filter((box) => box.width > 0)
      .sort((a, b) => a.top - b.top);
    let rows = 0;
    let bottom = -Infinity;
    for (const box of boxes) {
      if (box.top >= bottom - 1) rows++;
      bottom = Math.max(bottom, box.bottom);
    }
    return rows;
  });

const SIZES = [
  { size: 'desktop', viewport: { width: 1366, height: 900 } },
  { size: 'mobile', viewport: { width: 390, height: 844 } },
] as const;

describe('web app pages at two sizes', () => {
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    const executablePath = chromiumPath();
    app = await startTestApp();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  }, CHROMIUM_INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  describe.each(SIZES)('at $size size ($viewport.width × $viewport.height)', ({ size, viewport }) => {
    let context: BrowserContext;
    let page: Page;
    const email = uniqueEmail(`pages-${size}`);
    const checked: string[] = [];
    let key = '';

    beforeAll(async () => {
      // axe is injected as a script tag, which the pages' Content-Security-Policy would refuse.
      context = await browser.newContext({ viewport, deviceScaleFactor: 1, locale: 'en-US', timezoneId: 'UTC', bypassCSP: true });
      context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
      page = await context.newPage();
    });
    afterAll(() => context?.close());

    /** The checks every page must pass, then its picture. */
    async function checkPage(name: string, options: { signedIn?: boolean } = {}): Promise<void> {
      await screenshot(page, `${name}-${size}`); // first, so a failing page can be looked at
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      expect({ name, ...widths, fits: widths.scroll <= widths.inner }).toEqual({ name, ...widths, fits: true });
      expect({ name, rows: (await headerRows(page)) <= 2 }).toEqual({ name, rows: true });
      expect({ name, violations: await seriousViolations(page) }).toEqual({ name, violations: [] });
      if (options.signedIn) await expect(page.getByRole('button', { name: 'Log out' }).isVisible()).resolves.toBe(true);
      checked.push(name);
    }

    const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');
    const attribute = (selector: string, name: string) => page.locator(selector).getAttribute(name);

    it('sign-up: a refused password takes the focus, is marked invalid and described by the error; then the account is made', async () => {
      await page.goto(`${app.baseUrl}/signup`);
      await checkPage('signup');
      await page.getByLabel('Company or team name').fill('Pages Company With A Rather Long Name Incorporated');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('short');
      await page.getByLabel('Password').evaluate((input: DomElement) => input.removeAttribute('minlength'));
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('alert').waitFor();
      expect(await focusedId()).toBe('password');
      expect(await attribute('#password', 'aria-invalid')).toBe('true');
      expect(await attribute('#password', 'aria-describedby')).toBe('form-error password-hint');
      expect(await attribute('#email', 'aria-invalid')).toBeNull();
      await expect(page.locator('#form-error').textContent()).resolves.toBe('Choose a password of at least 10 characters.');
      await checkPage('signup-error');

      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();
      // Sign-up signs no one in: the address is verified (by the e-mailed link in web-account.test.ts; directly here), then the person logs in.
      await page.waitForURL(`${app.baseUrl}/signup/sent`);
      await markVerified(app, email);
      await page.goto(`${app.baseUrl}/login`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${app.baseUrl}/welcome`); // a first sign-in (no key, no data) lands on the getting-started steps
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      await checkPage('api-keys-empty', { signedIn: true });
    });

    it('keyboard only: skip link, key name, kind, generate; the focus moves to the new key, then to its copy button', async () => {
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Skip to content');
      await page.keyboard.press('Enter');
      expect(await focusedId()).toBe('main');
      // The Developers section's tabs come first, then the form.
      for (const tab of ['API keys', 'Webhooks', 'Events', 'Request logs']) {
        await page.keyboard.press('Tab');
        await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe(tab);
      }
      await page.keyboard.press('Tab');
      expect(await focusedId()).toBe('key-name');
      await page.keyboard.type('Keyboard key');
      await page.keyboard.press('Tab');
      expect(await focusedId()).toBe('kind-secret'); // a secret key: its permissions are hidden, so next is the button
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Generate key');
      await page.keyboard.press('Enter');
      await page.locator('#new-secret').waitFor();
      await page.waitForFunction(() => document.activeElement?.id === 'new-key-section');
      key = ((await page.locator('#new-secret').textContent()) ?? '').trim();
      expect(key).toMatch(/^sk_test_/);
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Copy key');
      await page.locator('#new-secret').evaluate((el: DomElement) => {
        el.style.filter = 'blur(5px)'; // a throwaway key, blurred anyway
      });
      await checkPage('api-keys-new', { signedIn: true });
    });

    it('header controls look like buttons and show a visible focus ring', async () => {
      const look = await page.getByRole('button', { name: 'Log out' }).evaluate((button: DomElement) => {
        const style = window.getComputedStyle(button);
        const header = window.getComputedStyle(document.querySelector('header')!);
        return { background: style.backgroundColor, headerBackground: header.backgroundColor, border: style.borderTopStyle, cursor: style.cursor };
      });
      expect(look.background).not.toBe(look.headerBackground);
      expect(look.border).toBe('solid');
      expect(look.cursor).toBe('pointer');
      await page.getByRole('button', { name: /^Switch to / }).focus();
      await page.keyboard.press('Shift+Tab'); // back to the last nav link, by keyboard so :focus-visible applies
      await page.keyboard.press('Tab');
      const ring = await page
        .getByRole('button', { name: /^Switch to / })
        .evaluate((button: DomElement) => ({ style: window.getComputedStyle(button).outlineStyle, width: window.getComputedStyle(button).outlineWidth }));
      expect(ring).toEqual({ style: 'solid', width: '3px' });
    });

    it('the dashboard with data: a chart that fits and tables that fit (stacked on a phone)', async () => {
      for (const deal of [
        { name: 'Fjord pilot', stage: 'prospecting', value: 1200 },
        { name: 'Summit renewal', stage: 'negotiation', value: 98000.5 },
        { name: 'Harbor', stage: 'closed_won', value: 4000 },
      ]) {
        expect((await app.request('POST', '/v1/deals', { key, body: deal })).status).toBe(201);
      }
      const lead = {
        company: 'Extraordinarily Long Company Name Holdings International',
        contact_email: 'procurement.department.lead@extraordinarily-long-domain.example',
      };
      expect((await app.request('POST', '/v1/leads', { key, body: lead })).status).toBe(201);
      await page.goto(`${app.baseUrl}/dashboard`);
      await page
        .getByRole('status')
        .filter({ hasText: /^Updated / })
        .waitFor();
      await expect(page.locator('#chart rect').count()).resolves.toBe(3);
      const chart = await page
        .locator('#chart')
        .evaluate((svg: DomElement) => ({ viewBox: svg.getAttribute('viewBox'), width: svg.getBoundingClientRect().width }));
      expect(chart.viewBox).toMatch(/^0 0 \d+ \d+$/);
      expect(chart.width).toBeLessThanOrEqual(viewport.width);
      await checkPage('dashboard', { signedIn: true });
    });

    it('the plan page', async () => {
      await page.goto(`${app.baseUrl}/settings/plan`);
      await checkPage('plan', { signedIn: true });
    });

    it('switching test/live returns to the page it was sent from', async () => {
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      await page.getByRole('button', { name: 'Switch to live' }).click();
      await page.waitForURL(`${app.baseUrl}/settings/api-keys`);
      await expect(page.locator('.badge').textContent()).resolves.toBe('Live data');
      await page.goto(`${app.baseUrl}/settings/plan`);
      await page.getByRole('button', { name: 'Switch to test' }).click();
      await page.waitForURL(`${app.baseUrl}/settings/plan`);
      await expect(page.locator('.badge').textContent()).resolves.toBe('Test data');
    });

    it('unknown app URLs get a styled 404 page', async () => {
      for (const pathname of ['/settings', '/settings/team']) {
        const response = await page.goto(`${app.baseUrl}${pathname}`);
        expect(response?.status()).toBe(404);
        await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Page not found');
      }
      await checkPage('not-found');
    });

    it('a stale form (logged out and in from another tab) gets a 403 page that keeps what was typed; one click sends it', async () => {
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      const other = await context.newPage();
      try {
        await other.goto(`${app.baseUrl}/settings/api-keys`);
        await other.getByRole('button', { name: 'Log out' }).click();
        await other.waitForURL(`${app.baseUrl}/login`);
        await other.getByLabel('Email').fill(email);
        await other.getByLabel('Password').fill(PASSWORD);
        await other.getByRole('button', { name: 'Log in' }).click();
        await other.waitForURL(`${app.baseUrl}/dashboard`);
      } finally {
        await other.close();
      }
      const keysBefore = await page.locator('table[aria-label="API keys"] tbody tr').count();
      await page.getByLabel('Name (what will use it)').fill('Billing export');
      await page.getByLabel('Restricted key').check();
      await page.getByLabel('Leads').selectOption('read');
      const [response] = await Promise.all([
        page.waitForResponse((res) => res.url() === `${app.baseUrl}/settings/api-keys` && res.request().method() === 'POST'),
        page.getByRole('button', { name: 'Generate key' }).click(),
      ]);
      expect(response.status()).toBe(403);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('This form was out of date');
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/^Nothing was changed\./);
      await expect(page.getByLabel('Name (what will use it)').inputValue()).resolves.toBe('Billing export');
      await expect(page.getByLabel('Restricted key').isChecked()).resolves.toBe(true);
      await expect(page.getByLabel('Leads').inputValue()).resolves.toBe('read');
      await checkPage('stale-form', { signedIn: true });

      await page.getByRole('button', { name: 'Generate key' }).click();
      await page.waitForURL(`${app.baseUrl}/settings/api-keys`);
      await expect(page.getByRole('heading', { name: 'Your new key “Billing export”' }).isVisible()).resolves.toBe(true);
      await expect(page.locator('#new-secret').textContent()).resolves.toMatch(/^rk_test_/);
      await expect(page.locator('table[aria-label="API keys"] tbody tr').count()).resolves.toBe(keysBefore + 1);
    });

    it('a failed sign-in puts the focus on the email field, both fields tied to the error', async () => {
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.waitForURL(`${app.baseUrl}/login`);
      await checkPage('login');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('alert').waitFor();
      await expect(page.getByRole('alert').textContent()).resolves.toBe(BAD_LOGIN);
      expect(await focusedId()).toBe('email');
      for (const field of ['#email', '#password']) {
        expect(await attribute(field, 'aria-invalid')).toBe('true');
        expect(await attribute(field, 'aria-describedby')).toBe('form-error');
      }
      await checkPage('login-error');
    });

    it('too many sign-in attempts: a styled 429 page with Retry-After, the email kept', async () => {
      const limited = uniqueEmail(`limited-${size}`);
      for (let i = 0; i < 10; i++) expect((await http(app, 'POST', '/login', { form: { email: limited, password: `wrong ${i}` } })).status).toBe(401);
      await page.goto(`${app.baseUrl}/login`);
      await page.getByLabel('Email').fill(limited);
      await page.getByLabel('Password').fill('wrong again');
      const [response] = await Promise.all([
        page.waitForResponse((res) => res.url() === `${app.baseUrl}/login` && res.request().method() === 'POST'),
        page.getByRole('button', { name: 'Log in' }).click(),
      ]);
      expect(response.status()).toBe(429);
      expect(Number(response.headers()['retry-after'])).toBeGreaterThanOrEqual(1);
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/^Too many attempts\. Wait about \d+ (minutes|seconds), then try again\.$/);
      await expect(page.getByLabel('Email').inputValue()).resolves.toBe(limited);
      await checkPage('login-limited');
    });

    it('checked every page', () => {
      expect(checked).toEqual([
        'signup',
        'signup-error',
        'api-keys-empty',
        'api-keys-new',
        'dashboard',
        'plan',
        'not-found',
        'stale-form',
        'login',
        'login-error',
        'login-limited',
      ]);
    });
  });

  describe('error pages over HTTP', () => {
    const asBrowser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

    it('unknown app pages are HTML 404s with the web policy; API paths keep their JSON 404 whatever is accepted', async () => {
      for (const pathname of ['/settings', '/settings/team', '/nothing/here']) {
        const res = await http(app, 'GET', pathname, { headers: asBrowser });
        expect({ pathname, status: res.status, type: res.headers.get('content-type') }).toEqual({ pathname, status: 404, type: 'text/html; charset=utf-8' });
        expect(res.text).toContain('<h1>Page not found</h1>');
        expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      }
      // Paths the web router owns are pages even for other clients.
      expect((await http(app, 'GET', '/settings/nothing')).headers.get('content-type')).toMatch(/^text\/html/);
      const { testKey } = await app.createAccount();
      for (const pathname of ['/v1/nothing', '/healthz/nothing', '/metrics/nothing', '/docs/nothing', '/help']) {
        const headers = pathname === '/help' ? { accept: 'application/json' } : { ...asBrowser, authorization: `Bearer ${testKey}` };
        const res = await http(app, 'GET', pathname, { headers });
        expect({ pathname, status: res.status, type: res.headers.get('content-type') }).toEqual({
          pathname,
          status: 404,
          type: 'application/json; charset=utf-8',
        });
        expect(JSON.parse(res.text).error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
      }
    });

    it('a stale token never acts: the 403 page re-shows the form with a fresh token, and that token works', async () => {
      const first = await signUp(app);
      await http(app, 'POST', '/logout', { cookie: first.cookie, form: { _csrf: first.csrf } });
      const login = await http(app, 'POST', '/login', { form: { email: first.email, password: PASSWORD } });
      const cookie = /(spa_session=[^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1];
      const fresh = csrfOf((await http(app, 'GET', '/settings/api-keys', { cookie })).text);
      expect(fresh).not.toBe(first.csrf);

      const billing = { name: 'Billing <export>', type: 'test', kind: 'restricted', perm_leads: 'read' };
      const stale = await http(app, 'POST', '/settings/api-keys', { cookie, form: { _csrf: first.csrf, ...billing } });
      expect(stale.status).toBe(403);
      expect(stale.headers.get('content-type')).toMatch(/^text\/html/);
      expect(stale.text).toContain('value="Billing &lt;export&gt;"');
      expect(stale.text).toMatch(/id="kind-restricted"\s+checked/);
      expect(stale.text).toMatch(/name="perm_leads"[^>]*>\s*<option value="none"\s*>None<\/option>\s*<option value="read"\s+selected>/);
      expect(stale.text).toContain(`<input type="hidden" name="_csrf" value="${fresh}">`);
      expect(stale.text).not.toContain(first.csrf);
      expect((await http(app, 'GET', '/settings/api-keys', { cookie })).text).not.toContain('Billing &lt;export&gt;');

      const mode = await http(app, 'POST', '/settings/mode', { cookie, form: { _csrf: first.csrf, mode: 'live', return_to: '/settings/plan' } });
      expect(mode.status).toBe(403);
      expect(mode.text).toContain('<input type="hidden" name="return_to" value="/settings/plan">');
      expect(mode.text).toContain('Switch to live</button>');
      expect((await http(app, 'GET', '/settings/plan', { cookie })).text).toContain('Test data');

      const resent = await http(app, 'POST', '/settings/api-keys', { cookie, form: { _csrf: fresh, ...billing } });
      expect(resent.status).toBe(303);
      const keys = (await http(app, 'GET', '/settings/api-keys', { cookie })).text;
      const id = /action="\/settings\/api-keys\/([^/"]+)\/revoke"/.exec(keys)![1];
      const revoke = await http(app, 'POST', `/settings/api-keys/${id}/revoke`, { cookie, form: { _csrf: first.csrf } });
      expect(revoke.status).toBe(403);
      // The revoke form comes back with its confirmation (app.js asks before sending it).
      expect(revoke.text).toContain(`action="/settings/api-keys/${id}/revoke" class="card" data-confirm="Revoke this key?`);
      expect(revoke.text).toContain('<script src="/assets/app.js" defer></script>');
      expect((await http(app, 'GET', '/settings/api-keys', { cookie })).text).toContain(`action="/settings/api-keys/${id}/revoke"`);
    });

    it('the mode switch returns only to our own pages (no open redirect)', async () => {
      const { cookie, csrf } = await signUp(app);
      const go = async (returnTo?: string) => {
        const form: Record<string, string> = { _csrf: csrf, mode: 'test' };
        if (returnTo !== undefined) form.return_to = returnTo;
        const res = await http(app, 'POST', '/settings/mode', { cookie, form });
        expect(res.status).toBe(303);
        return res.headers.get('location');
      };
      expect(await go('/settings/api-keys')).toBe('/settings/api-keys');
      expect(await go('/settings/plan')).toBe('/settings/plan');
      for (const bad of ['https://evil.example/', '//evil.example', '/settings/api-keys/../../x', '/v1/leads', undefined])
        expect(await go(bad)).toBe('/dashboard');
    });

    it('a form from another site gets a styled 403; a form too large a styled 413', async () => {
      const foreign = await http(app, 'POST', '/login', { form: { email: 'a@b.example', password: PASSWORD }, origin: 'https://evil.example' });
      expect(foreign.status).toBe(403);
      expect(foreign.headers.get('content-type')).toMatch(/^text\/html/);
      expect(foreign.text).toContain('This form must be sent from this site.');
      const large = await http(app, 'POST', '/login', { form: { email: 'a@b.example', password: 'x'.repeat(20_000) } });
      expect(large.status).toBe(413);
      expect(large.headers.get('content-type')).toMatch(/^text\/html/);
      expect(large.text).toContain('<h1>The form could not be read</h1>');
    });

    it("an error in a page is answered with the 500 page (the web router's error handler), naming the request", async () => {
      const tiny = express();
      tiny.use((_req, res, next) => {
        res.locals.requestId = 'req_test_500';
        next();
      });
      tiny.use('/assets', express.static(path.join(__dirname, '..', '..', 'src', 'web', 'assets')));
      tiny.get('/broken', () => {
        throw new Error('a bug');
      });
      tiny.use(webErrorHandler(createLogger('silent')));
      const server = tiny.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/broken`;
        const res = await fetch(url);
        expect(res.status).toBe(500);
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
        const text = await res.text();
        expect(text).toContain('<h1>Something went wrong</h1>');
        expect(text).toContain('<code>req_test_500</code>');
        expect(text).not.toContain('a bug');
        for (const { size, viewport } of SIZES) {
          const context = await browser.newContext({ viewport, deviceScaleFactor: 1, bypassCSP: true });
          try {
            const page = await context.newPage();
            await page.goto(url);
            await expect(page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).resolves.toBe(true);
            expect(await seriousViolations(page)).toEqual([]);
            await screenshot(page, `server-error-${size}`);
          } finally {
            await context.close();
          }
        }
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
});

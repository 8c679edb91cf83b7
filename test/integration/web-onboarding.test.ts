import { Browser, chromium } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { BROWSER_STEP_TIMEOUT_MS } from '../helpers/timeouts';
import { waitFor } from '../helpers/wait';
import { markVerified, PASSWORD, screenshot, uniqueEmail } from '../helpers/web';
import { expectSoundPage, OpenPage, VIEWPORTS } from '../helpers/workspace';
import { DEMO_LEADS } from '../../src/web/onboarding';

/**
 * Onboarding (/welcome, src/web/welcome.router.ts): a new user signs up and, signing in for the
 * first time, lands on three steps: a first test key (shown once, with a curl line that works),
 * demo data (the seed, in test mode, never doubled), and the API reference. Each step is marked
 * done from what the account holds, checked here against the API.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomElement {
  id: string;
  style: { filter: string };
}
declare const document: { activeElement: DomElement | null };

interface List {
  data: Array<{ id: string; company: string; livemode: boolean }>;
  has_more: boolean;
}

describe('onboarding', () => {
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

  describe.each(VIEWPORTS)('at $label size', (viewport) => {
    const email = uniqueEmail(`welcome-${viewport.label}`);
    let open: OpenPage;
    let key = '';

    beforeAll(async () => {
      // As helpers/workspace.ts openAs, but signed out: the person signs up and in through the pages.
      const context = await browser.newContext({
        viewport: { width: viewport.width, height: viewport.height },
        deviceScaleFactor: 1,
        locale: 'en-US',
        timezoneId: 'UTC',
      });
      context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('response', (response) => {
        if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) errors.push(`${response.status()} ${response.url()}`);
      });
      open = { context, page, errors };
    });
    afterAll(() => open?.context.close());

    /** The steps' headings as read: number, title, and whether "Done" or "(to do)". */
    const steps = () =>
      open.page
        .locator('li.step h2')
        .allTextContents()
        .then((texts) => texts.map((text) => text.replace(/\s+/g, ' ').trim()));
    const logIn = async () => {
      await open.page.goto(`${app.baseUrl}/login`);
      await open.page.getByLabel('Email').fill(email);
      await open.page.getByLabel('Password').fill(PASSWORD);
      await open.page.getByRole('button', { name: 'Log in' }).click();
    };

    it('a new user signs up, is verified, and on the first sign-in lands on /welcome with three steps to do', async () => {
      await open.page.goto(`${app.baseUrl}/signup`);
      await open.page.getByLabel('Company or team name').fill('Onboarding Co');
      await open.page.getByLabel('Email').fill(email);
      await open.page.getByLabel('Password').fill(PASSWORD);
      await open.page.getByRole('button', { name: 'Create account' }).click();
      await open.page.waitForURL(`${app.baseUrl}/signup/sent`);
      await markVerified(app, email);
      await logIn();
      await open.page.waitForURL(`${app.baseUrl}/welcome`);
      await expect(open.page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Welcome, Onboarding Co');
      expect(await steps()).toEqual(['1 Create your first test key (to do)', '2 Load demo data (to do)', '3 Make a request and explore (to do)']);
      await expect(open.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current')).resolves.toBe(
        'true',
      );
      await expectSoundPage(open);
      await screenshot(open.page, `welcome-${viewport.label}`);
    });

    it('links to the API reference the service serves', async () => {
      const href = await open.page.getByRole('link', { name: 'API reference' }).getAttribute('href');
      expect(href).toBe('/docs');
      const docs = await fetch(`${app.baseUrl}${href}`);
      expect(docs.status).toBe(200);
      expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    });

    it('the empty dashboard says what to do: demo data on /welcome, the API reference', async () => {
      await open.page.goto(`${app.baseUrl}/dashboard`);
      await open.page
        .getByRole('status')
        .filter({ hasText: /^Updated / })
        .waitFor();
      for (const empty of ['#pipeline-empty', '#leads-empty']) {
        await expect(open.page.locator(empty).isVisible()).resolves.toBe(true);
        await expect(
          open.page
            .locator(`${empty} a`)
            .evaluateAll((links: Array<{ getAttribute(name: string): string | null }>) => links.map((a) => a.getAttribute('href'))),
        ).resolves.toEqual(['/welcome', '/docs']);
      }
      await expect(open.page.locator('#pipeline-empty').textContent()).resolves.toBe(
        'No deals yet. To see your pipeline here, load demo data or create them with the API (see the API reference).',
      );
      await expectSoundPage(open);
      await open.page.locator('#leads-empty').getByRole('link', { name: 'load demo data' }).click();
      await open.page.waitForURL(`${app.baseUrl}/welcome`);
    });

    it('step 1: the first test key, shown once and focused, with a curl line that works as shown', async () => {
      await open.page.getByLabel('Name (what will use it)').fill('First key');
      await open.page.getByRole('button', { name: 'Generate key' }).click();
      await open.page.waitForURL(`${app.baseUrl}/welcome`);
      await open.page.locator('#new-secret').waitFor();
      await open.page.waitForFunction(() => document.activeElement?.id === 'new-key-section');
      key = ((await open.page.locator('#new-secret').textContent()) ?? '').trim();
      expect(key).toMatch(/^sk_test_[A-Za-z0-9]{32}$/);
      await expect(open.page.getByRole('button', { name: 'Copy key' }).isVisible()).resolves.toBe(true);
      await expect(open.page.getByRole('button', { name: 'Copy curl command' }).isVisible()).resolves.toBe(true);
      expect((await steps())[0]).toBe('✓ Create your first test key Done');

      // The line as shown, run as curl runs it: its URL, with its header.
      const line = ((await open.page.locator('#curl-line').textContent()) ?? '').trim();
      expect(line).toBe(`curl ${app.baseUrl}/v1/leads -H "Authorization: Bearer ${key}"`);
      const [, url, header] = /^curl (\S+) -H "Authorization: (.+)"$/.exec(line)!;
      const listed = await fetch(url, { headers: { authorization: header } });
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as List).data).toEqual([]);
      await expectSoundPage(open);

      // Shown once: the page again names the key by its prefix and last four only.
      await open.page.reload();
      await expect(open.page.content()).resolves.not.toContain(key);
      await expect(open.page.locator('li.step').first().textContent()).resolves.toContain(`sk_test_…${key.slice(-4)}`);
    });

    it('step 3 is marked done once the key has made a request', async () => {
      // "Last used" is written after the request, not awaited by it: look again until it shows.
      await waitFor('step 3 done', async () => {
        await open.page.goto(`${app.baseUrl}/welcome`);
        return (await steps())[2] === '✓ Make a request and explore Done';
      });
    });

    it('step 2: demo data in test mode, read back over the API; a second press (another tab) adds nothing', async () => {
      const other = await open.context.newPage();
      try {
        await other.goto(`${app.baseUrl}/welcome`);
        await open.page.goto(`${app.baseUrl}/welcome`);
        const started = Date.now();
        await open.page.getByRole('button', { name: 'Load demo data' }).click();
        await open.page.waitForURL(`${app.baseUrl}/welcome?demo=loaded`);
        const took = Date.now() - started;
        expect(took).toBeLessThan(10_000); // "a few seconds", with room for a busy machine
        await expect(open.page.locator('#demo-status').textContent()).resolves.toBe('Demo data loaded.');
        expect(await steps()).toEqual(['✓ Create your first test key Done', '✓ Load demo data Done', '✓ Make a request and explore Done']);

        const leads = await app.request<List>('GET', `/v1/leads?limit=100`, { key });
        expect(leads.status).toBe(200);
        expect(leads.body.data).toHaveLength(DEMO_LEADS);
        expect(leads.body.has_more).toBe(false);
        expect(leads.body.data.every((lead) => lead.livemode === false)).toBe(true);
        const deals = await app.request<List>('GET', `/v1/deals?limit=100`, { key });
        expect(deals.body.data.length).toBeGreaterThan(0);
        await expect(open.page.locator('li.step').nth(1).textContent()).resolves.toContain(
          `Your test data has ${DEMO_LEADS} leads and ${deals.body.data.length} deals.`,
        );
        await expectSoundPage(open);

        // The other tab still has the button: pressed, it is refused politely and nothing is doubled.
        const [response] = await Promise.all([
          other.waitForResponse((res) => res.url() === `${app.baseUrl}/welcome/demo-data` && res.request().method() === 'POST'),
          other.getByRole('button', { name: 'Load demo data' }).click(),
        ]);
        expect(response.status()).toBe(409);
        await expect(other.locator('#demo-status').textContent()).resolves.toMatch(
          new RegExp(`^Nothing was added: your test data already has ${DEMO_LEADS} leads and ${deals.body.data.length} deals`),
        );
        const again = await app.request<List>('GET', `/v1/leads?limit=100`, { key });
        expect(again.body.data.map((lead) => lead.id).sort()).toEqual(leads.body.data.map((lead) => lead.id).sort());
      } finally {
        await other.close();
      }
    });

    it('later sign-ins land on the dashboard, which shows the demo data', async () => {
      await open.page.getByRole('button', { name: 'Log out' }).click();
      await open.page.waitForURL(`${app.baseUrl}/login`);
      await logIn();
      await open.page.waitForURL(`${app.baseUrl}/dashboard`);
      await open.page
        .getByRole('status')
        .filter({ hasText: /^Updated / })
        .waitFor();
      await expect(open.page.locator('#leads tbody tr').count()).resolves.toBe(10);
      await expect(open.page.locator('#leads-empty').isHidden()).resolves.toBe(true);
      await expectSoundPage(open);
    });
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, cpSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { buildWeb, webStaleReason } from '../../scripts/build-web';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { ROOT } from '../helpers/dist';
import { BROWSER_STEP_TIMEOUT_MS } from '../helpers/timeouts';
import { waitFor } from '../helpers/wait';
import { markVerified, PASSWORD, screenshot } from '../helpers/web';

/**
 * The pipeline board (/pipeline): the Preact workspace bundled by scripts/build-web.js, driven in
 * Debian's Chromium at a laptop's and a phone's size, on deals made through the API. Columns and
 * cards match the API's deals, totals its pipelineSummary; a card moves by drag and drop and by the
 * keyboard alone, and deals are added and edited in place, each change read back over REST.
 * Pictures go to docs/screenshots with UPDATE_SCREENSHOTS=1 (never compared).
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomElement {
  id: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}
declare const document: { activeElement: DomElement | null; documentElement: { scrollWidth: number; clientWidth: number } };
declare const axe: { run(options: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> };

const STAGES = ['prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost'];

interface Deal {
  id: string;
  name: string;
  value: number;
  currency: string;
  stage: string;
  expected_close_date: string | null;
  owner: string | null;
  lead_id: string | null;
}
interface Summary {
  stage: string;
  currency: string;
  count: number;
  totalValue: number;
  weightedValue: number;
}

const money = (value: number, currency: string) => new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
const day = (date: string) => new Date(`${date}T00:00:00Z`).toLocaleDateString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric' });

/** What a signed-in person of a new account has: the session cookie and a test key for the API. */
async function newAccount(app: TestApp, label: string): Promise<{ cookie: string; key: string }> {
  const form = (body: Record<string, string>) => ({
    method: 'POST',
    redirect: 'manual' as const,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
    body: new URLSearchParams(body).toString(),
  });
  const email = `board-${label}-${Date.now()}@example.test`;
  const signup = await fetch(`${app.baseUrl}/signup`, form({ name: `Board ${label}`, email, password: PASSWORD }));
  expect(signup.status).toBe(303);
  // Sign-up signs no one in: the address is verified directly (the e-mailed link is web-account.test.ts's), then the person logs in.
  await markVerified(app, email);
  const login = await fetch(`${app.baseUrl}/login`, form({ email, password: PASSWORD }));
  expect(login.status).toBe(303);
  const cookie = /(spa_session=[^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1];
  const keysPage = await (await fetch(`${app.baseUrl}/settings/api-keys`, { headers: { cookie } })).text();
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(keysPage)![1];
  const made = await fetch(`${app.baseUrl}/settings/api-keys`, {
    ...form({ _csrf: csrf, name: 'board test', type: 'test' }),
    headers: { ...form({}).headers, cookie },
  });
  expect(made.status).toBe(303);
  const shown = await (await fetch(`${app.baseUrl}/settings/api-keys`, { headers: { cookie } })).text();
  const key = /(sk_test_[A-Za-z0-9_]+)/.exec(shown)![1];
  return { cookie, key };
}

/** The board as a person reads it: per column, its cards' texts, whether it is expanded, and its totals. */
async function boardState(page: Page) {
  return page.locator('section[data-stage]').evaluateAll((columns: DomElement[]) =>
    columns.map((column) => {
      const text = (element: DomElement | null) => (element?.textContent ?? '').trim();
      const list = column.querySelector('ul.cards');
      return {
        stage: column.getAttribute('data-stage'),
        heading: text(column.querySelector('h2')),
        expanded: list?.getAttribute('hidden') === null,
        totals: Array.from(column.querySelectorAll('.totals [data-currency]')).map((row) => ({
          currency: row.getAttribute('data-currency'),
          total: text(row.querySelector('.total')),
          weighted: text(row.querySelector('.weighted')),
        })),
        cards: Array.from(column.querySelectorAll('article.deal')).map((card) => {
          const details = Array.from(card.querySelectorAll('dd')).map(text);
          return { id: card.getAttribute('data-deal-id'), name: text(card.querySelector('h3')), value: text(card.querySelector('.deal-value')), details };
        }),
      };
    }),
  );
}

const VIEWPORTS = [
  { label: 'desktop', width: 1366, height: 900, picture: 'pipeline-board', dropOn: { stage: 'proposal', name: 'Proposal' } },
  // Stacked columns: the card goes to the next column down, dropped near its top (both in view).
  { label: 'mobile', width: 390, height: 844, picture: 'pipeline-board-mobile', dropOn: { stage: 'qualification', name: 'Qualification' } },
];

describe('pipeline board', () => {
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    const executablePath = chromiumPath();
    app = await startTestApp();
    await app.reset();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  }, CHROMIUM_INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('serves the bundle npm start builds: hashed, cached for good, JavaScript; the page loads it under the CSP', async () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'dist', 'web', 'manifest.json'), 'utf8')) as { script: string; style: string };
    expect(manifest.script).toMatch(/^workspace-[A-Z0-9]+\.js$/);
    const script = await fetch(`${app.baseUrl}/assets/web/${manifest.script}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('cache-control')).toMatch(/immutable/);
    const code = await script.text();
    expect(code).not.toMatch(/\beval\(|new Function\(/);
    const style = await fetch(`${app.baseUrl}/assets/web/${manifest.style}`);
    expect([style.status, style.headers.get('content-type')]).toEqual([200, expect.stringMatching(/text\/css/)]);

    const signedOut = await fetch(`${app.baseUrl}/pipeline`, { redirect: 'manual' });
    expect([signedOut.status, signedOut.headers.get('location')]).toEqual([303, '/login']);
    const { cookie } = await newAccount(app, 'shell');
    const shell = await fetch(`${app.baseUrl}/pipeline`, { headers: { cookie } });
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-security-policy')).toContain("default-src 'self'");
    const body = await shell.text();
    expect(body).toContain(`<script src="/assets/web/${manifest.script}" defer></script>`);
    expect(body).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>/);
  });

  describe.each(VIEWPORTS)('at $width×$height', ({ label, width, height, picture, dropOn }) => {
    let context: BrowserContext;
    let page: Page;
    let key: string;
    const errors: string[] = [];

    const rest = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
      const res = await app.request<T>(method, pathname, { key, body });
      if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const allDeals = async () => (await rest<{ data: Deal[] }>('GET', '/v1/deals?limit=100')).data;
    const summary = async () => {
      const res = await app.graphql<{ data: { pipelineSummary: Summary[] } }>('{ pipelineSummary { stage currency count totalValue weightedValue } }', {}, key);
      return res.body.data.pipelineSummary;
    };
    const card = (name: string) => page.locator('article.deal', { has: page.getByRole('heading', { name, exact: true }) });
    const stageOf = async (id: string) => (await rest<Deal>('GET', `/v1/deals/${id}`)).stage;

    /** Columns and cards match the API's deals; totals and weighted values are the API's own. */
    async function expectBoardMatchesApi(): Promise<void> {
      const [deals, sums] = await Promise.all([allDeals(), summary()]);
      const leads = (await rest<{ data: Array<{ id: string; company: string }> }>('GET', '/v1/leads?limit=100')).data;
      const company = new Map(leads.map((lead) => [lead.id, lead.company]));
      await waitFor('the board to show every deal', async () => (await page.locator('article.deal').count()) === deals.length);
      const board = await boardState(page);
      expect(board.map((column) => column.stage)).toEqual(STAGES);
      for (const column of board) {
        const inStage = deals.filter((deal) => deal.stage === column.stage);
        expect(column.heading).toContain(`(${inStage.length} ${inStage.length === 1 ? 'deal' : 'deals'})`);
        expect(column.cards.map((c) => c.id).sort()).toEqual(inStage.map((deal) => deal.id).sort());
        for (const shown of column.cards) {
          const deal = inStage.find((d) => d.id === shown.id)!;
          expect(shown).toEqual({
            id: deal.id,
            name: deal.name,
            value: money(deal.value, deal.currency),
            details: [deal.lead_id ? company.get(deal.lead_id) : '—', deal.expected_close_date ? day(deal.expected_close_date) : '—', deal.owner ?? '—'],
          });
        }
        const rows = sums.filter((row) => row.stage === column.stage);
        expect(column.totals).toEqual(
          rows.map((row) => ({ currency: row.currency, total: money(row.totalValue, row.currency), weighted: money(row.weightedValue, row.currency) })),
        );
        // The API's figures are the deals' own: the test adds them up too.
        for (const row of rows) {
          const values = inStage.filter((deal) => deal.currency === row.currency).map((deal) => deal.value);
          expect(row.count).toBe(values.length);
          expect(row.totalValue).toBeCloseTo(
            values.reduce((a, b) => a + b, 0),
            2,
          );
        }
      }
    }

    async function expectNoHorizontalOverflow(): Promise<void> {
      const { scrollWidth, clientWidth } = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
      }));
      expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    }

    async function expectNoSeriousAxeViolations(): Promise<void> {
      // Evaluated over the DevTools protocol: the page's CSP (no inline scripts) stays in force for the page itself.
      await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
      const { violations } = await page.evaluate(() => axe.run({ resultTypes: ['violations'] }));
      const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    }

    beforeAll(async () => {
      let cookie: string;
      ({ cookie, key } = await newAccount(app, label));
      const acme = await rest<{ id: string }>('POST', '/v1/leads', { company: 'Acme Robotics', contact_email: `buyer-${label}@acme.test` });
      const globex = await rest<{ id: string }>('POST', '/v1/leads', { company: 'Globex GmbH', contact_email: `cfo-${label}@globex.test` });
      const seeds = [
        { name: 'Acme rollout', value: 48000, stage: 'prospecting', lead_id: acme.id, expected_close_date: '2027-03-31', owner: 'Dana Scully' },
        { name: 'Pilot for Initech', value: 7500.5, stage: 'prospecting', owner: 'Fox Mulder' },
        { name: 'Globex support plan', value: 12000, currency: 'EUR', stage: 'qualification', lead_id: globex.id, expected_close_date: '2027-01-15' },
        { name: 'Umbrella renewal', value: 30000, stage: 'qualification', owner: 'Dana Scully' },
        { name: 'Hooli analytics', value: 91000, stage: 'proposal', expected_close_date: '2026-12-20' },
        { name: 'Stark expansion', value: 150000, stage: 'negotiation', lead_id: acme.id, owner: 'Walter Skinner' },
        { name: 'Wayne security', value: 64000, stage: 'closed_won', owner: 'Fox Mulder' },
        { name: 'Tyrell lost bid', value: 22000, stage: 'closed_lost' },
      ];
      for (const seed of seeds) await rest('POST', '/v1/deals', seed);

      context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1, locale: 'en-US', timezoneId: 'UTC' });
      context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
      await context.addCookies([{ name: 'spa_session', value: cookie.split('=')[1], url: app.baseUrl }]);
      page = await context.newPage();
      page.on('pageerror', (error) => errors.push(error.message));
      // Anything of ours the page fails to load (the browser's own favicon request aside).
      page.on('response', (response) => {
        if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) errors.push(`${response.status()} ${response.url()}`);
      });
      await page.goto(`${app.baseUrl}/pipeline`);
    }, CHROMIUM_INSTALL_TIMEOUT_MS);
    afterAll(() => context?.close());

    it('shows a column per stage and a card per deal with the API’s totals; closed stages collapsed; fits the screen; axe finds nothing serious', async () => {
      await expect(page.title()).resolves.toBe('Pipeline board · Sales Pipeline');
      await expectBoardMatchesApi();
      const board = await boardState(page);
      expect(board.map((column) => column.expanded)).toEqual([true, true, true, true, false, false]);
      await expect(card('Wayne security').isVisible()).resolves.toBe(false);
      await expectNoHorizontalOverflow();
      await expectNoSeriousAxeViolations();
      await screenshot(page, picture);

      // Expanded, a closed column shows its cards, which cannot move any more.
      const toggle = page.getByRole('button', { name: 'Closed won', exact: true });
      await toggle.click();
      await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('true');
      await expect(card('Wayne security').isVisible()).resolves.toBe(true);
      await expect(card('Wayne security').getByRole('combobox').count()).resolves.toBe(0);
      await expect(card('Wayne security').getAttribute('draggable')).resolves.toBe('false');
      await toggle.click();
      await expect(card('Wayne security').isVisible()).resolves.toBe(false);
      await expectNoHorizontalOverflow();
      expect(errors).toEqual([]);
    });

    it('drag and drop: a card dropped on another column changes the deal’s stage', async () => {
      const deal = (await allDeals()).find((d) => d.name === 'Pilot for Initech')!;
      const column = page.locator(`section[data-stage="${dropOn.stage}"]`);
      await card('Pilot for Initech').dragTo(column, { targetPosition: { x: 40, y: 12 } });
      await waitFor(
        `the card in the ${dropOn.name} column`,
        async () => (await column.locator('article.deal', { hasText: 'Pilot for Initech' }).count()) === 1,
      );
      await expect(stageOf(deal.id)).resolves.toBe(dropOn.stage);
      await expect(page.locator('#board-announcer').textContent()).resolves.toBe(`Moved Pilot for Initech to ${dropOn.name}.`);
      await expectBoardMatchesApi();
    });

    it('keyboard only: Tab to a card’s “Move to” list, choose with the arrows, Enter on Move; the move is announced and focus follows the card', async () => {
      const deal = (await allDeals()).find((d) => d.name === 'Umbrella renewal')!;
      // Tab from the top of the page until the card's list has focus, as a keyboard user would.
      await page.locator('h1').click();
      const select = `move-${deal.id}`;
      for (let presses = 0; presses < 80 && (await page.evaluate(() => document.activeElement?.id)) !== select; presses++) await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe(select);
      // qualification's list offers: Prospecting, Proposal, Negotiation, …
      for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
      await expect(page.locator(`#${select}`).inputValue()).resolves.toBe('negotiation');
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.textContent?.trim())).resolves.toBe('Move');
      await page.keyboard.press('Enter');

      await waitFor('the announcement', async () => (await page.locator('#board-announcer').textContent()) === 'Moved Umbrella renewal to Negotiation.');
      await expect(stageOf(deal.id)).resolves.toBe('negotiation');
      await waitFor('focus on the moved card', async () => (await page.evaluate(() => document.activeElement?.id)) === `deal-${deal.id}`);
      await expect(page.locator('section[data-stage="negotiation"] article.deal', { hasText: 'Umbrella renewal' }).count()).resolves.toBe(1);
      await expectBoardMatchesApi();
    });

    it('adds a deal in place: the API’s error is shown next to its field, then the deal is created in that column', async () => {
      await page.getByRole('button', { name: 'Add a deal to Proposal' }).click();
      const form = page.getByRole('form', { name: 'New deal in Proposal' });
      await form.getByLabel('Name').fill('Cyberdyne upgrade');
      await form.getByLabel('Value').fill('1000.555');
      await form.getByLabel('Expected close').fill('2027-02-28');
      await form.getByLabel('Owner').fill('Sarah Connor');
      await form.getByRole('button', { name: 'Add deal', exact: true }).click();

      // The same mutation sent by the test with the key gets the message the form shows.
      const refused = await app.graphql('mutation { createDeal(input: { name: "x", value: 1000.555 }) { id } }', {}, key);
      const message = refused.body.errors[0].message as string;
      const value = form.getByLabel('Value');
      await waitFor('the value field marked invalid', async () => (await value.getAttribute('aria-invalid')) === 'true');
      const describedBy = (await value.getAttribute('aria-describedby'))!;
      await expect(page.locator(`#${describedBy}`).textContent()).resolves.toBe(message);
      await expect(form.getByLabel('Name').getAttribute('aria-invalid')).resolves.toBeNull();
      expect((await allDeals()).some((d) => d.name === 'Cyberdyne upgrade')).toBe(false);
      await expectNoSeriousAxeViolations();

      await value.fill('1000.55');
      await form.getByRole('button', { name: 'Add deal', exact: true }).click();
      await waitFor('the new card', async () => (await card('Cyberdyne upgrade').count()) === 1);
      const made = (await allDeals()).find((d) => d.name === 'Cyberdyne upgrade')!;
      expect(made).toMatchObject({ stage: 'proposal', value: 1000.55, currency: 'USD', expected_close_date: '2027-02-28', owner: 'Sarah Connor' });
      await expect(page.locator('#board-announcer').textContent()).resolves.toBe('Added Cyberdyne upgrade to Proposal.');
      await expectBoardMatchesApi();
    });

    it('edits a deal in place (name, value, expected close, owner) and the change persists', async () => {
      const deal = (await allDeals()).find((d) => d.name === 'Hooli analytics')!;
      await card('Hooli analytics').getByRole('button', { name: 'Edit Hooli analytics' }).click();
      const form = page.getByRole('form', { name: 'Edit Hooli analytics' });
      await expect(form.getByLabel('Value').inputValue()).resolves.toBe('91000');
      await form.getByLabel('Name').fill('Hooli analytics suite');
      await form.getByLabel('Value').fill('95500.25');
      await form.getByLabel('Expected close').fill('2027-04-30');
      await form.getByLabel('Owner').fill('Gavin Belson');
      await form.getByRole('button', { name: 'Save' }).click();

      await waitFor('the edited card', async () => (await card('Hooli analytics suite').count()) === 1);
      await expect(rest<Deal>('GET', `/v1/deals/${deal.id}`)).resolves.toMatchObject({
        name: 'Hooli analytics suite',
        value: 95500.25,
        expected_close_date: '2027-04-30',
        owner: 'Gavin Belson',
        stage: 'proposal',
      });
      await page.reload();
      await expectBoardMatchesApi();
      await expectNoHorizontalOverflow();
      expect(errors).toEqual([]);
    });
  });
});

describe('scripts/build-web.js', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'spa-build-web-'));
    cpSync(path.join(ROOT, 'src', 'web', 'workspace'), path.join(root, 'src', 'web', 'workspace'), { recursive: true });
    // The integrations pages bundle the service's providers and credential fields from their module.
    cpSync(path.join(ROOT, 'src', 'modules', 'integrations'), path.join(root, 'src', 'modules', 'integrations'), { recursive: true });
    writeFileSync(path.join(root, 'package-lock.json'), '{}');
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('bundles the workspace into hashed files named by a manifest, not again until a source changes', () => {
    expect(webStaleReason(root)).toBe('no finished bundle in dist/web/');
    expect(buildWeb({ root })).toBe(true);
    const manifest = JSON.parse(readFileSync(path.join(root, 'dist', 'web', 'manifest.json'), 'utf8')) as { script: string; style: string };
    expect(existsSync(path.join(root, 'dist', 'web', manifest.script))).toBe(true);
    expect(existsSync(path.join(root, 'dist', 'web', manifest.style))).toBe(true);
    expect(readFileSync(path.join(root, 'dist', 'web', manifest.script), 'utf8')).toContain('Loading the pipeline');
    expect(webStaleReason(root)).toBeUndefined();
    expect(buildWeb({ root })).toBe(false);

    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(root, 'src', 'web', 'workspace', 'board.css'), later, later);
    expect(webStaleReason(root)).toBe(path.join('src', 'web', 'workspace') + ' changed');
    expect(buildWeb({ root })).toBe(true);

    // A file bundled from outside the workspace folder counts too (board.css dated back first, so only it is newer).
    const earlier = new Date(Date.now() - 60_000);
    utimesSync(path.join(root, 'src', 'web', 'workspace', 'board.css'), earlier, earlier);
    expect(webStaleReason(root)).toBeUndefined();
    const shared = path.join('src', 'modules', 'integrations', 'credential-fields.ts');
    utimesSync(path.join(root, shared), later, later);
    expect(webStaleReason(root)).toBe(`${shared} changed`);
    expect(buildWeb({ root })).toBe(true);
  });
});

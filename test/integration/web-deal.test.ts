import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Browser, chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { syncRuns } from '../helpers/sync-runs';
import { waitFor } from '../helpers/wait';
import { csrfOf, http, PASSWORD, screenshot, sessionCookie, tableRows } from '../helpers/web';
import { expectSoundPage, newPerson, openAs, OpenPage, Person, restAs, VIEWPORTS } from '../helpers/workspace';

/**
 * The Deal page (/deals/:id) in Debian's Chromium at a laptop's and a phone's size, on data made
 * through REST: the facts, stage history, proposals (their PDFs through the web app's session
 * route), co-sell and linked CRM records it shows are checked against what the API holds, and
 * what is changed on the page (edit, move, proposal, registration) is read back over the API.
 * The app runs its real CRM sync worker against the loopback HubSpot (test/helpers/fakes).
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomElement {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): DomElement | null;
}
declare const document: { activeElement: { id: string } | null };

interface Deal {
  id: string;
  name: string;
  value: number;
  currency: string;
  stage: string;
  probability: number;
  expected_close_date: string | null;
  owner: string | null;
  lead_id: string | null;
  co_sell: { status: string; status_reason: string | null; referral_id: string | null; integration_id: string } | null;
}
interface Proposal {
  id: string;
  number: string;
  title: string;
  status: string;
  total: number;
  currency: string;
  valid_until: string;
  line_items: Array<{ description: string; quantity: number; unit_price: number }>;
}
interface StageChange {
  fromStage: string | null;
  toStage: string;
  changedAt: string;
}

const money = (value: number, currency: string) => new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
const day = (date: string) => new Date(`${date}T00:00:00Z`).toLocaleDateString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric' });
const stageLabel = (stage: string) => ({ closed_won: 'Closed won', closed_lost: 'Closed lost' })[stage] ?? stage[0].toUpperCase() + stage.slice(1);
const humanize = (name: string) => name[0].toUpperCase() + name.slice(1).replace(/_/g, ' ');

/**
 * A conditional GET over plain node:http: WHATWG fetch adds `Cache-Control: no-cache` to a request
 * with If-None-Match (fetch spec), which asks for a full response (as proposals.test.ts notes).
 */
function conditionalGet(url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('deal page', () => {
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    const executablePath = chromiumPath();
    // The app's own loopback providers accept any credentials; the sync worker links deals to HubSpot records.
    app = await startTestApp({ sync: { leaseMs: 3_000 } });
    await app.reset();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  }, CHROMIUM_INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  describe.each(VIEWPORTS)('at $width×$height', (viewport) => {
    let person: Person;
    let open: OpenPage;
    let page: Page;
    let rest: ReturnType<typeof restAs>;
    let deal: Deal;
    let company: string;

    const dealNow = () => rest<Deal>('GET', `/v1/deals/${deal.id}`);
    const historyNow = async () =>
      (
        await app.graphql<{ data: { deal: { history: StageChange[] } } }>(
          'query H($id: ID!) { deal(id: $id) { history { fromStage toStage changedAt } } }',
          { id: deal.id },
          person.key,
        )
      ).body.data.deal.history;
    const announced = (text: string) => waitFor(`“${text}” announced`, async () => (await page.locator('#deal-announcer').textContent()) === text);
    const fact = (name: string) => page.locator(`[data-fact="${name}"]`).textContent();
    const visit = async () => {
      await page.goto(`${app.baseUrl}/deals/${deal.id}`);
      await waitFor('the deal drawn', async () => (await page.locator('#deal-facts').count()) === 1);
    };

    /** The facts shown are the API's deal, field by field. */
    async function expectFactsMatchApi(): Promise<void> {
      const now = await dealNow();
      await waitFor('the page to show the stored name', async () => (await page.locator('main h1').textContent()) === now.name);
      expect({
        value: await fact('value'),
        currency: await fact('currency'),
        stage: await fact('stage'),
        probability: await fact('probability'),
        close: await fact('expected-close'),
        owner: await fact('owner'),
        lead: await fact('lead'),
      }).toEqual({
        value: money(now.value, now.currency),
        currency: now.currency,
        stage: stageLabel(now.stage),
        probability: `${now.probability}%`,
        close: now.expected_close_date ? day(now.expected_close_date) : '—',
        owner: now.owner ?? '—',
        lead: company,
      });
      await expect(page.locator('[data-fact="lead"] a').getAttribute('href')).resolves.toBe(`/leads/${now.lead_id}`);
      await expect(page.title()).resolves.toBe(`${now.name} · Sales Pipeline`);
    }

    /** The timeline is the API's history: one entry per change, oldest first, each with its moment. */
    async function expectHistoryMatchesApi(): Promise<void> {
      const history = await historyNow();
      await waitFor('every stage change listed', async () => (await page.locator('ol.timeline li').count()) === history.length);
      const shown = await page.locator('ol.timeline li').evaluateAll((items: DomElement[]) =>
        items.map((item) => ({
          change: (item.querySelector('.change')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
          at: item.querySelector('time')?.getAttribute('datetime'),
        })),
      );
      expect(shown).toEqual(
        history.map((change) => ({
          change: change.fromStage ? `${stageLabel(change.fromStage)} → to ${stageLabel(change.toStage)}` : `Created in ${stageLabel(change.toStage)}`,
          at: change.changedAt,
        })),
      );
    }

    beforeAll(async () => {
      person = await newPerson(app, `deal-${viewport.label}`);
      rest = restAs(app, person.key);
      company = `Acme Robotics ${viewport.label}`;
      const lead = await rest<{ id: string }>('POST', '/v1/leads', { company, contact_email: `buyer-${viewport.label}@acme.test`, contact_name: 'Ada Buyer' });
      deal = await rest<Deal>('POST', '/v1/deals', {
        name: 'Acme rollout',
        value: 48000,
        stage: 'prospecting',
        lead_id: lead.id,
        expected_close_date: '2027-03-31',
        owner: 'Dana Scully',
      });
      // Moved through stages before the page is opened: its history has three entries.
      await rest('PUT', `/v1/deals/${deal.id}`, { stage: 'qualification' });
      await rest('PUT', `/v1/deals/${deal.id}`, { stage: 'proposal' });
      open = await openAs(browser, app, person, viewport);
      page = open.page;
    });
    afterAll(() => open?.context.close());

    it('is reached from the board by the card’s name, and shows the deal’s facts and stage history as the API holds them', async () => {
      await page.goto(`${app.baseUrl}/pipeline`);
      const link = page.locator('article.deal h3 a', { hasText: 'Acme rollout' });
      await expect(link.getAttribute('href')).resolves.toBe(`/deals/${deal.id}`);
      await link.click();
      await waitFor('the deal page', async () => page.url() === `${app.baseUrl}/deals/${deal.id}`);
      await waitFor('the deal drawn', async () => (await page.locator('#deal-facts').count()) === 1);
      await expectFactsMatchApi();
      await expectHistoryMatchesApi();
      expect((await historyNow()).map((change) => change.toStage)).toEqual(['prospecting', 'qualification', 'proposal']);
      // Nothing linked yet: the empty state says how records get linked.
      const empty = page.locator('section[aria-labelledby="records-title"] .empty');
      await expect(empty.textContent()).resolves.toContain('not linked to any CRM or PSA record yet');
      await expect(empty.getByRole('link', { name: 'Connect an integration' }).getAttribute('href')).resolves.toBe('/integrations');
    });

    it('edits the deal in place; the change persists', async () => {
      await page.getByRole('button', { name: 'Edit Acme rollout' }).click();
      const form = page.getByRole('form', { name: 'Edit Acme rollout' });
      await expect(form.getByLabel('Value').inputValue()).resolves.toBe('48000');
      await form.getByLabel('Value').fill('1000.555');
      await form.getByRole('button', { name: 'Save' }).click();
      // The API refuses three decimals; its message is shown next to the field, and nothing is saved.
      const refused = await app.graphql('mutation { createDeal(input: { name: "x", value: 1000.555 }) { id } }', {}, person.key);
      const value = form.getByLabel('Value');
      await waitFor('the value field marked invalid', async () => (await value.getAttribute('aria-invalid')) === 'true');
      await expect(page.locator(`#${await value.getAttribute('aria-describedby')}`).textContent()).resolves.toBe(refused.body.errors[0].message);
      await expect(dealNow()).resolves.toMatchObject({ value: 48000 });

      await form.getByLabel('Name').fill('Acme rollout phase 2');
      await value.fill('52500.75');
      await form.getByLabel('Expected close').fill('2027-05-15');
      await form.getByLabel('Owner').fill('Fox Mulder');
      await form.getByRole('button', { name: 'Save' }).click();
      await announced('Saved Acme rollout phase 2.');
      await expect(dealNow()).resolves.toMatchObject({
        name: 'Acme rollout phase 2',
        value: 52500.75,
        expected_close_date: '2027-05-15',
        owner: 'Fox Mulder',
        stage: 'proposal',
      });
      await waitFor('focus back on Edit', async () => (await page.evaluate(() => document.activeElement?.id)) === 'edit-deal');
      await page.reload();
      await waitFor('the deal drawn', async () => (await page.locator('#deal-facts').count()) === 1);
      await expectFactsMatchApi();
    });

    it('moves the deal to another stage with the keyboard; the history shown grows as the API’s does', async () => {
      const select = page.getByLabel('Move to stage');
      await select.focus();
      await select.selectOption('negotiation');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await announced('Moved Acme rollout phase 2 to Negotiation.');
      await expect(dealNow()).resolves.toMatchObject({ stage: 'negotiation', probability: expect.any(Number) });
      await expectFactsMatchApi();
      await expectHistoryMatchesApi();
      expect((await historyNow()).map((change) => change.toStage)).toEqual(['prospecting', 'qualification', 'proposal', 'negotiation']);
    });

    it('creates a proposal with two lines; its PDF downloads through the page’s link, and is 404 for another account or mode', async () => {
      await page.getByRole('button', { name: 'Create proposal' }).click();
      const form = page.getByRole('form', { name: 'New proposal' });
      await form.getByLabel('Title (optional)').fill('Rollout offer');
      await form.getByLabel('Description').fill('Robots');
      await form.getByLabel('Quantity').fill('2');
      await form.getByLabel(/Unit price/).fill('20000');
      await form.getByRole('button', { name: 'Add a line' }).click();
      const second = form.getByRole('group', { name: 'Line 2' });
      await second.getByLabel('Description').fill('Installation');
      await second.getByLabel('Quantity').fill('0');
      await second.getByLabel(/Unit price/).fill('1500.5');
      await form.getByRole('button', { name: 'Create proposal' }).click();
      // A quantity of 0 is refused by the API; the message is tied to that input.
      const quantity = second.getByLabel('Quantity');
      await waitFor('the quantity marked invalid', async () => (await quantity.getAttribute('aria-invalid')) === 'true');
      await expect(page.locator('#proposal-error').textContent()).resolves.toBe('lineItems.1.quantity must be more than 0');
      await quantity.fill('1');
      await form.getByRole('button', { name: 'Create proposal' }).click();

      await waitFor('the proposal listed', async () => (await page.locator('table[aria-label="Proposals"] tbody tr').count()) === 1);
      const [proposal] = (await rest<{ data: Proposal[] }>('GET', `/v1/proposals?deal_id=${deal.id}`)).data;
      await announced(`Created proposal ${proposal.number}.`);
      expect(proposal).toMatchObject({
        title: 'Rollout offer',
        total: 41500.5,
        line_items: [
          { description: 'Robots', quantity: 2 },
          { description: 'Installation', quantity: 1 },
        ],
      });
      const [row] = await tableRows(page, 'table[aria-label="Proposals"]');
      expect([row[0], row[1], row[2], row[3], row[5], row[6]]).toEqual([
        proposal.number,
        proposal.title,
        humanize(proposal.status),
        money(proposal.total, proposal.currency),
        day(proposal.valid_until),
        `Download ${proposal.number} as a PDF`,
      ]);

      // The browser downloads the file behind the link.
      const link = page.getByRole('link', { name: `Download ${proposal.number} as a PDF` });
      const href = (await link.getAttribute('href'))!;
      expect(href).toBe(`/proposals/${proposal.id}/pdf`);
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      expect(download.suggestedFilename()).toBe(`${proposal.number}.pdf`);
      expect(
        readFileSync((await download.path())!)
          .subarray(0, 5)
          .toString('latin1'),
      ).toBe('%PDF-');

      // The same URL with the session: the API's file, headers and ETag (304 when the browser has it).
      const response = await fetch(`${app.baseUrl}${href}`, { headers: { cookie: person.cookie } });
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/pdf');
      expect(response.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="?${proposal.number}\\.pdf"?$`));
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const api = await app.request('GET', `/v1/proposals/${proposal.id}/pdf`, { key: person.key });
      expect(api.status).toBe(200);
      for (const header of ['content-type', 'content-disposition', 'etag', 'cache-control'])
        expect([header, response.headers.get(header)]).toEqual([header, api.headers.get(header)]);
      const again = await conditionalGet(`${app.baseUrl}${href}`, { cookie: person.cookie, 'if-none-match': response.headers.get('etag')! });
      expect([again.status, again.bytes]).toEqual([304, 0]);

      // Another account's session: the styled 404 page, not the PDF; and signed out, the login page.
      const stranger = await newPerson(app, `stranger-${viewport.label}`);
      const refused = await http(app, 'GET', href, { cookie: stranger.cookie });
      expect(refused.status).toBe(404);
      expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
      expect(refused.text).toContain('Proposal not found');
      expect(refused.text).not.toContain('%PDF');
      // The same person in live mode: the proposal is test data, so it is not there either.
      const live = sessionCookie(await http(app, 'POST', '/login', { form: { email: person.email, password: PASSWORD } }));
      const csrf = csrfOf((await http(app, 'GET', '/settings/api-keys', { cookie: live })).text);
      expect((await http(app, 'POST', '/settings/mode', { cookie: live, form: { _csrf: csrf, mode: 'live', return_to: '/dashboard' } })).status).toBe(303);
      const inLive = await http(app, 'GET', href, { cookie: live });
      expect(inLive.status).toBe(404);
      expect(inLive.text).toContain('in this account&#39;s live data');
      const signedOut = await http(app, 'GET', href);
      expect([signedOut.status, signedOut.headers.get('location')]).toEqual([303, '/login']);
    });

    it('shows the co-sell eligibility the API reports, then registers and shows the status the API gives', async () => {
      const eligibility = async () =>
        rest<{ eligible: boolean; reasons: Array<{ rule: string; message: string }> }>('GET', `/v1/deals/${deal.id}/co_sell_eligibility`);
      const before = await eligibility();
      expect(before.eligible).toBe(false);
      // Test mode without a Microsoft 365 integration: the rule it fails is the API's, in its words.
      expect(before.reasons.map((reason) => reason.rule)).toEqual(['m365_integration']);
      const reasons = page.locator('#co-sell-eligibility li');
      await waitFor('the reasons shown', async () => (await reasons.count()) === before.reasons.length);
      await expect(reasons.allTextContents()).resolves.toEqual(before.reasons.map((reason) => reason.message));
      const register = page.getByRole('button', { name: 'Register for co-sell' });
      await expect(register.isDisabled()).resolves.toBe(true);

      const m365 = await rest<{ id: string }>('POST', '/v1/integrations', {
        type: 'm365',
        provider: 'microsoft365',
        credentials: { tenant_id: randomUUID(), client_id: randomUUID(), client_secret: 'secret-m365', mailbox: 'partner-sales@contoso.com' },
      });
      await expect(eligibility()).resolves.toMatchObject({ eligible: true, reasons: [] });
      await visit();
      await expect(page.locator('#co-sell-eligibility').textContent()).resolves.toBe('This deal can be registered now.');
      await register.focus();
      await page.keyboard.press('Enter');
      await announced('Registered Acme rollout phase 2 for co-sell.');
      const registered = (await dealNow()).co_sell!;
      expect(registered).toMatchObject({ status: 'accepted', integration_id: m365.id });
      await expect(fact('co-sell-status')).resolves.toBe(humanize(registered.status));
      await expect(fact('co-sell-reason')).resolves.toBe(registered.status_reason ?? '—');
      await expect(fact('co-sell-referral')).resolves.toBe(registered.referral_id ?? '—');
      await expect(fact('co-sell-integration')).resolves.toBe(registered.integration_id);
      await expect(register.count()).resolves.toBe(0);
    });

    it('lists the HubSpot records the sync linked the deal to', async () => {
      const hubspot = await rest<{ id: string }>('POST', '/v1/integrations', {
        type: 'crm',
        provider: 'hubspot',
        credentials: { access_token: `pat-na1-deal-${viewport.label}` },
      });
      const { settled } = syncRuns((method, path, body) => app.request(method, path, { key: person.key, body }));
      await settled(hubspot.id);
      const records = await waitFor('the deal linked at HubSpot', async () => {
        const res = await app.graphql<{ data: { deal: { externalIds: Array<{ integrationId: string; provider: string; record: string; id: string }> } } }>(
          'query X($id: ID!) { deal(id: $id) { externalIds { integrationId provider record id } } }',
          { id: deal.id },
          person.key,
        );
        const linked = res.body.data.deal.externalIds;
        return linked.length > 0 ? linked : undefined;
      });
      expect(records).toContainEqual(expect.objectContaining({ integrationId: hubspot.id, provider: 'hubspot', record: 'deal' }));
      await visit();
      await expect(tableRows(page, 'table[aria-label="Linked records"]')).resolves.toEqual(
        records.map((record) => [record.provider, record.record, record.id, record.integrationId]),
      );
      await expect(page.getByRole('link', { name: hubspot.id }).getAttribute('href')).resolves.toBe(`/integrations/${hubspot.id}`);

      // Everything filled in: the picture, and the checks every page passes.
      await expectFactsMatchApi();
      await screenshot(page, `deal-${viewport.label}`);
      await expectSoundPage(open);
    });

    it('says clearly when there is no such deal, or it is another account’s, with a way back to the board', async () => {
      const stranger = await newPerson(app, `other-${viewport.label}`);
      const theirs = await restAs(app, stranger.key)<{ id: string }>('POST', '/v1/deals', { name: 'Not yours', value: 10 });
      for (const id of ['deal_doesnotexist000000000000', theirs.id]) {
        await page.goto(`${app.baseUrl}/deals/${id}`);
        await waitFor('the not-found message', async () => (await page.locator('#not-found-title').count()) === 1);
        await waitFor('the heading to say so', async () => (await page.locator('main h1').textContent()) === 'Deal not found');
        await expect(page.locator('#workspace').textContent()).resolves.toContain(`There is no deal ${id} in this account’s test data.`);
        await expect(page.locator('#workspace').textContent()).resolves.not.toContain('Not yours');
        await expect(page.getByRole('link', { name: 'Go to the pipeline board' }).getAttribute('href')).resolves.toBe('/pipeline');
      }
      await expectSoundPage(open);
    });

    it('Delete deal asks first (Cancel, focused, keeps it); the API’s refusal of a deal with a proposal is shown; another deal is deleted (GET 404) and the board says so', async () => {
      const focusedId = () => page.evaluate(() => document.activeElement?.id);
      const deleteNow = (id: string) => app.graphql('mutation D($id: ID!) { deleteDeal(id: $id) { deleted } }', { id }, person.key);
      // The deal has the proposal made above: the API keeps it, and the page says why in its words.
      expect((await rest<{ data: Proposal[] }>('GET', `/v1/proposals?deal_id=${deal.id}`)).data.length).toBeGreaterThan(0);
      await visit();
      await page.getByRole('button', { name: 'Delete deal' }).click();
      await waitFor('focus on Cancel, the safe choice', async () => (await focusedId()) === 'delete-deal-cancel');
      await page.keyboard.press('Enter');
      await waitFor('focus back on Delete deal', async () => (await focusedId()) === 'delete-deal');
      await expect(dealNow()).resolves.toMatchObject({ id: deal.id });
      await page.getByRole('button', { name: 'Delete deal' }).click();
      await page.getByRole('button', { name: 'Yes, delete deal' }).click();
      const error = page.locator('#delete-deal-error');
      await error.waitFor();
      const refused = await deleteNow(deal.id);
      expect(refused.body.errors[0].extensions.code).toBe('CONFLICT');
      await expect(error.textContent()).resolves.toBe(refused.body.errors[0].message);
      await expect(page.getByRole('button', { name: 'Delete deal' }).getAttribute('aria-describedby')).resolves.toBe('delete-deal-error');
      await waitFor('focus back on Delete deal', async () => (await focusedId()) === 'delete-deal');
      expect(page.url()).toBe(`${app.baseUrl}/deals/${deal.id}`);
      await expect(dealNow()).resolves.toMatchObject({ id: deal.id });
      await expectSoundPage(open);

      // A deal without a proposal: Cancel by pointer keeps it; Yes deletes it.
      const spare = await rest<Deal>('POST', '/v1/deals', { name: `Spare parts ${viewport.label}`, value: 900, stage: 'qualification' });
      await page.goto(`${app.baseUrl}/deals/${spare.id}`);
      await waitFor('the deal drawn', async () => (await page.locator('#deal-facts').count()) === 1);
      await page.getByRole('button', { name: 'Delete deal' }).click();
      const question = page.getByRole('group', { name: `Delete ${spare.name}?`, exact: false });
      await question.waitFor();
      await screenshot(page, `deal-delete-${viewport.label}`);
      await question.getByRole('button', { name: 'Cancel' }).click();
      await expect(question.count()).resolves.toBe(0);
      await expect(rest<Deal>('GET', `/v1/deals/${spare.id}`)).resolves.toMatchObject({ id: spare.id, name: spare.name });

      await page.getByRole('button', { name: 'Delete deal' }).click();
      await page.getByRole('button', { name: 'Yes, delete deal' }).click();
      await waitFor('the pipeline board', async () => page.url() === `${app.baseUrl}/pipeline`);
      await waitFor('the deletion said', async () => (await page.locator('#deleted-notice').textContent()) === `Deleted ${spare.name}.`);
      const gone = await app.request('GET', `/v1/deals/${spare.id}`, { key: person.key });
      expect(gone.status).toBe(404);
      await waitFor('the board drawn', async () => (await page.locator('article.deal').count()) > 0);
      await expect(page.locator('article.deal h3 a', { hasText: spare.name }).count()).resolves.toBe(0);
      await expect(page.locator('article.deal h3 a', { hasText: 'Acme rollout phase 2' }).count()).resolves.toBe(1);
      await expectSoundPage(open);
      expect(open.errors).toEqual([]);
    });
  });
});

import { Browser, chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { waitFor } from '../helpers/wait';
import { screenshot } from '../helpers/web';
import { expectSoundPage, newPerson, openAs, OpenPage, Person, restAs, VIEWPORTS } from '../helpers/workspace';

/**
 * The leads pages (/leads, /leads/:id) in Debian's Chromium at a laptop's and a phone's size, on
 * leads made through REST. The list shows what `GET /v1/leads` answers for the same filters, sort
 * and page; the filters live in the URL (reload, Back); a lead's page shows its score and signals
 * as `GET /v1/leads/{id}/score` explains them, its deals and its events; its status is changed on
 * the page and read back over REST. Pictures go to docs/screenshots with UPDATE_SCREENSHOTS=1.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomElement {
  id: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}
declare const document: { activeElement: DomElement | null };
declare const location: { search: string; pathname: string };

interface Lead {
  id: string;
  company: string;
  contact_name: string | null;
  contact_email: string;
  industry: string | null;
  employees: number | null;
  score: number;
  score_label: string;
  status: string;
  owner_id: string | null;
  created_at: string;
}
interface Score {
  score: number;
  score_label: string;
  base_score: number;
  model_version: string;
  signals: Array<{ name: string; value: string; impact: number; description: string }>;
}
interface List<T> {
  data: T[];
  next_cursor: string | null;
}

const COMPANIES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Tyrell', 'Cyberdyne', 'Soylent'];
const INDUSTRIES = ['Software', 'Banking', 'Healthcare', 'Retail', 'Education', 'Non-profit', 'Manufacturing'];
const EMPLOYEES = [5, 30, 120, 600, 2000, 8000];
const SOURCES = ['referral', 'partner', 'inbound', 'event', 'purchased_list', undefined];
const STATUSES = ['new', 'contacted', 'qualified', 'disqualified'];

const humanize = (name: string) => name[0].toUpperCase() + name.slice(1).replace(/_/g, ' ');
const day = (moment: string) => new Date(moment).toLocaleDateString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric' });
const signed = (impact: number) => (impact > 0 ? `+${impact}` : impact < 0 ? `−${Math.abs(impact)}` : '0');

/** The list's rows as a person reads them: the lead each links to, and its cells. */
async function shownRows(page: Page) {
  return page.locator('table[aria-label^="Leads"] tbody tr').evaluateAll((rows: DomElement[]) =>
    rows.map((row) => ({
      href: row.querySelector('a')?.getAttribute('href') ?? null,
      cells: Array.from(row.querySelectorAll('td')).map((cell) => (cell.textContent ?? '').replace(/\s+/g, ' ').trim()),
    })),
  );
}

const rowOf = (lead: Lead) => ({
  href: `/leads/${lead.id}`,
  cells: [
    lead.company,
    `${lead.contact_name ?? ''}${lead.contact_email}`,
    `${lead.score} ${humanize(lead.score_label)}`,
    humanize(lead.status),
    // These leads have no owner (web-owners.test.ts shows owners' names).
    lead.owner_id === null ? 'No owner' : lead.owner_id,
    day(lead.created_at),
  ],
});

describe('leads pages', () => {
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

  describe.each(VIEWPORTS)('at $width×$height', (viewport) => {
    const { label } = viewport;
    let person: Person;
    let rest: ReturnType<typeof restAs>;
    let open: OpenPage;
    let page: Page;
    let leads: Lead[];

    /** The list must show what the API lists for the same query, in the same order. */
    async function expectListMatches(query: string, cursor?: string | null): Promise<List<Lead>> {
      const answer = await rest<List<Lead>>('GET', `/v1/leads?limit=25${query ? `&${query}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const expected = answer.data.map(rowOf);
      await waitFor(`the list to show ${query || 'every lead'}`, async () => JSON.stringify(await shownRows(page)) === JSON.stringify(expected));
      return answer;
    }

    beforeAll(async () => {
      person = await newPerson(app, `leads-${label}`);
      rest = restAs(app, person.key);
      for (let i = 0; i < 30; i++) {
        const free = i % 5 === 4;
        await rest('POST', '/v1/leads', {
          company: `${COMPANIES[i % COMPANIES.length]} ${label} ${String(i).padStart(2, '0')}`,
          contact_email: free ? `buyer${i}-${label}@gmail.com` : `buyer${i}@${COMPANIES[i % COMPANIES.length].toLowerCase()}-${i}.test`,
          contact_name: i % 3 === 0 ? `Contact ${i}` : undefined,
          industry: INDUSTRIES[i % INDUSTRIES.length],
          employees: EMPLOYEES[i % EMPLOYEES.length],
          source: SOURCES[i % SOURCES.length],
          status: STATUSES[i % STATUSES.length],
        });
      }
      leads = (await rest<List<Lead>>('GET', '/v1/leads?limit=100')).data;
      expect(leads).toHaveLength(30);
      // The seeds must give the filters something to tell apart: several labels and scores.
      expect(new Set(leads.map((lead) => lead.score_label)).size).toBeGreaterThan(1);
      open = await openAs(browser, app, person, viewport);
      page = open.page;
    }, CHROMIUM_INSTALL_TIMEOUT_MS);
    afterAll(() => open?.context.close());

    it('lists the leads as GET /v1/leads does, 25 a page, with Next and Previous; fits the screen; axe finds nothing serious', async () => {
      await page.goto(`${app.baseUrl}/leads`);
      await expect(page.title()).resolves.toBe('Leads · Sales Pipeline');
      const first = await expectListMatches('');
      expect(first.data).toHaveLength(25);
      expect(first.next_cursor).toBeTruthy();
      await expectSoundPage(open);
      await screenshot(page, `leads-${label}`);

      await page.getByRole('button', { name: 'Next' }).click();
      const second = await expectListMatches('', first.next_cursor);
      expect(second.data).toHaveLength(5);
      await expect(page.getByRole('button', { name: 'Next' }).isDisabled()).resolves.toBe(true);
      await page.getByRole('button', { name: 'Previous' }).click();
      await expectListMatches('');
      await expect(page.getByRole('button', { name: 'Previous' }).isDisabled()).resolves.toBe(true);
      expect(open.errors).toEqual([]);
    });

    it('filters and sorts with the API’s own parameters, kept in the URL through a reload and Back', async () => {
      await page.goto(`${app.baseUrl}/leads`);
      await expectListMatches('');
      await page.getByLabel('Status', { exact: true }).selectOption('qualified');
      await waitFor('the status in the URL', async () => (await page.evaluate(() => location.search)) === '?status=qualified');
      await expectListMatches('status=qualified');

      await page.getByLabel('Sort').selectOption('-score');
      await page.getByLabel('Min score').fill('30');
      await page.getByLabel('Search').fill(label);
      await page.getByRole('button', { name: 'Apply filters' }).click();
      const query = `q=${label}&status=qualified&min_score=30&sort=-score`;
      await waitFor('the filters in the URL', async () => (await page.evaluate(() => location.search)) === `?${query}`);
      const filtered = await expectListMatches(query);
      expect(filtered.data.length).toBeGreaterThan(0);
      expect(filtered.data.length).toBeLessThan(leads.length);

      await page.reload();
      await expectListMatches(query);
      await expect(page.getByLabel('Status', { exact: true }).inputValue()).resolves.toBe('qualified');
      await expect(page.getByLabel('Min score').inputValue()).resolves.toBe('30');
      await expect(page.getByLabel('Sort').inputValue()).resolves.toBe('-score');

      // A choice applies at once (a history entry of its own); typed filters apply together.
      await page.goBack();
      await waitFor('Back to the status and sort alone', async () => (await page.evaluate(() => location.search)) === '?status=qualified&sort=-score');
      await expectListMatches('status=qualified&sort=-score');
      await expect(page.getByLabel('Min score').inputValue()).resolves.toBe('');
      await page.goBack();
      await waitFor('Back to the status alone', async () => (await page.evaluate(() => location.search)) === '?status=qualified');
      await expectListMatches('status=qualified');
      await expect(page.getByLabel('Sort').inputValue()).resolves.toBe('-created_at');

      // A label and an industry, sorted by company, straight from a bookmarked URL.
      const bookmarked = 'industry=software&score_label=' + leads.find((lead) => lead.industry === 'Software')!.score_label + '&sort=company';
      await page.goto(`${app.baseUrl}/leads?${bookmarked}`);
      const software = await expectListMatches(bookmarked);
      expect(software.data.length).toBeGreaterThan(0);
      expect(open.errors).toEqual([]);
    });

    it('shows the API’s refusal of a filter on that field', async () => {
      await page.goto(`${app.baseUrl}/leads`);
      await expectListMatches('');
      await page.getByLabel('Max score').fill('150');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      const refused = await app.graphql('query { leads(filter: { maxScore: 150 }) { data { id } } }', {}, person.key);
      const message = refused.body.errors[0].message as string;
      const field = page.getByLabel('Max score');
      await waitFor('the max score marked invalid', async () => (await field.getAttribute('aria-invalid')) === 'true');
      await expect(page.locator(`#${await field.getAttribute('aria-describedby')}`).textContent()).resolves.toBe(message);
      await expect(page.getByLabel('Min score').getAttribute('aria-invalid')).resolves.toBeNull();
      await expect(page.locator('table[aria-label^="Leads"]').count()).resolves.toBe(0);
      // A page with a refused filter is still sound (the API's 200 with errors is no failed load).
      await expectSoundPage(open);

      await field.fill('');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expectListMatches('');
      await expect(field.getAttribute('aria-invalid')).resolves.toBeNull();
    });

    it('says when nothing matches, and "Clear filters" brings every lead back', async () => {
      await page.goto(`${app.baseUrl}/leads?q=no-such-company-anywhere&sort=company`);
      await expect(rest<List<Lead>>('GET', '/v1/leads?q=no-such-company-anywhere')).resolves.toMatchObject({ data: [] });
      const empty = page.locator('.empty', { hasText: 'No leads match these filters.' });
      await empty.waitFor();
      await expectSoundPage(open);
      await empty.getByRole('button', { name: 'Clear filters' }).click();
      await waitFor('the filters gone from the URL', async () => (await page.evaluate(() => location.search)) === '?sort=company');
      await expectListMatches('sort=company');
      await expect(page.getByLabel('Search').inputValue()).resolves.toBe('');
    });

    it('keyboard only: Tab to a filter, change it, Tab to a lead’s link, Enter opens the lead', async () => {
      await page.goto(`${app.baseUrl}/leads`);
      await expectListMatches('');
      await page.locator('h1').click();
      const tabTo = async (test: () => Promise<boolean>) => {
        for (let presses = 0; presses < 80 && !(await test()); presses++) await page.keyboard.press('Tab');
        expect(await test()).toBe(true);
      };
      const focused = () => page.evaluate(() => ({ id: document.activeElement?.id ?? '', href: document.activeElement?.getAttribute('href') ?? null }));
      await tabTo(async () => (await focused()).id === 'filter-score_label');
      // The list offers Any label, Hot, Warm, Cold: the arrows move to the first label some lead has.
      const labels = ['hot', 'warm', 'cold'];
      const wanted = labels.find((name) => leads.some((lead) => lead.score_label === name))!;
      for (let i = 0; i <= labels.indexOf(wanted); i++) await page.keyboard.press('ArrowDown');
      await waitFor('the label in the URL', async () => (await page.evaluate(() => location.search)) === `?score_label=${wanted}`);
      const chosen = await expectListMatches(`score_label=${wanted}`);
      expect(chosen.data.length).toBeGreaterThan(0);
      await tabTo(async () => (await focused()).id.startsWith('lead-link-'));
      const href = (await focused()).href;
      const target = chosen.data.find((lead) => `/leads/${lead.id}` === href)!;
      expect(target).toBeDefined();
      await page.keyboard.press('Enter');
      await page.waitForURL(`${app.baseUrl}/leads/${target.id}`);
      await waitFor('the lead’s name as the heading', async () => (await page.locator('h1').textContent()) === target.company);
      expect(open.errors).toEqual([]);
    });

    it('a lead’s page: its facts, its score and signals as GET /v1/leads/{id}/score has them, its deals and its events; fits; axe', async () => {
      // A named contact at a personal address: signals that add and one that takes away.
      const lead = leads.find((l) => l.contact_name && l.contact_email.endsWith('@gmail.com'))!;
      const made = [
        await rest<{ id: string; name: string }>('POST', '/v1/deals', { name: `${lead.company} rollout`, value: 42000, stage: 'proposal', lead_id: lead.id }),
        await rest<{ id: string; name: string }>('POST', '/v1/deals', { name: `${lead.company} pilot`, value: 5000.5, stage: 'prospecting', lead_id: lead.id }),
      ];
      await page.goto(`${app.baseUrl}/leads/${lead.id}`);
      await waitFor('the lead’s name as the heading', async () => (await page.locator('h1').textContent()) === lead.company);
      await expect(page.title()).resolves.toBe(`${lead.company} · Sales Pipeline`);

      const fact = (name: string) => page.locator(`[data-fact="${name}"]`).textContent();
      await expect(fact('Company')).resolves.toBe(lead.company);
      await expect(fact('Email')).resolves.toBe(lead.contact_email);
      await expect(fact('Industry')).resolves.toBe(lead.industry);
      await expect(fact('Employees')).resolves.toBe(lead.employees!.toLocaleString('en-US'));
      await expect(fact('Status')).resolves.toBe(humanize(lead.status));
      await expect(fact('Owner')).resolves.toBe('No owner');

      const score = await rest<Score>('GET', `/v1/leads/${lead.id}/score`);
      await expect(page.locator('[data-score]').textContent()).resolves.toBe(String(score.score));
      await expect(page.locator('.lead-score .badge').textContent()).resolves.toBe(humanize(score.score_label));
      await expect(page.locator('[data-base-score]').textContent()).resolves.toBe(String(score.base_score));
      await expect(page.locator('[data-model-version]').textContent()).resolves.toBe(score.model_version);
      const signals = await page.locator('ol.signals li').evaluateAll((items: DomElement[]) =>
        items.map((item) => ({
          name: item.getAttribute('data-signal'),
          value: item.querySelector('.signal-value')?.textContent,
          impact: item.querySelector('.signal-impact')?.textContent,
          description: item.querySelector('.signal-description')?.textContent,
        })),
      );
      const byImpact = [...score.signals].sort((a, b) => b.impact - a.impact);
      expect(signals).toEqual(byImpact.map((s) => ({ name: s.name, value: s.value, impact: `${signed(s.impact)} points`, description: s.description })));
      // score = base + the impacts: the page shows the API's own arithmetic.
      expect(score.base_score + score.signals.reduce((sum, s) => sum + s.impact, 0)).toBe(score.score);

      const deals = (await rest<List<{ id: string; name: string }>>('GET', `/v1/deals?lead_id=${lead.id}`)).data;
      expect(deals.map((deal) => deal.id).sort()).toEqual(made.map((deal) => deal.id).sort());
      const dealLinks = page.locator('[data-section="deals"] tbody a');
      await waitFor('the lead’s deals', async () => (await dealLinks.count()) === deals.length);
      const shownDeals = await dealLinks.evaluateAll((links: DomElement[]) => links.map((a) => ({ href: a.getAttribute('href'), name: a.textContent })));
      expect(shownDeals).toEqual(deals.map((deal) => ({ href: `/deals/${deal.id}`, name: deal.name })));

      const events = (await rest<List<{ id: string; type: string }>>('GET', `/v1/events?object_id=${lead.id}`)).data;
      expect(events.length).toBeGreaterThan(0);
      const eventLinks = page.locator('[data-section="events"] tbody a');
      await waitFor('the lead’s events', async () => (await eventLinks.count()) === events.length);
      const shownEvents = await eventLinks.evaluateAll((links: DomElement[]) => links.map((a) => ({ href: a.getAttribute('href'), type: a.textContent })));
      expect(shownEvents).toEqual(events.map((event) => ({ href: `/developers/events/${event.id}`, type: event.type })));

      await expectSoundPage(open);
      await screenshot(page, `lead-${label}`);
    });

    it('changes the lead’s status: saved through the API, announced, read back over REST, a new event listed', async () => {
      const lead = leads.find((l) => l.status === 'new')!;
      await page.goto(`${app.baseUrl}/leads/${lead.id}`);
      await waitFor('the lead’s name as the heading', async () => (await page.locator('h1').textContent()) === lead.company);
      const before = (await rest<List<{ id: string }>>('GET', `/v1/events?object_id=${lead.id}`)).data.length;
      const save = page.getByRole('button', { name: 'Save status' });
      await expect(save.isDisabled()).resolves.toBe(true);
      await page.getByLabel('Change status').selectOption('qualified');
      await save.click();
      await waitFor('the announcement', async () => (await page.locator('#lead-announcer').textContent()) === 'Status saved: Qualified.');
      await expect(rest<Lead>('GET', `/v1/leads/${lead.id}`)).resolves.toMatchObject({ status: 'qualified' });
      await expect(page.locator('[data-fact="Status"]').textContent()).resolves.toBe('Qualified');
      const events = (await rest<List<{ id: string; type: string }>>('GET', `/v1/events?object_id=${lead.id}`)).data;
      expect(events.length).toBeGreaterThan(before);
      const eventLinks = page.locator('[data-section="events"] tbody a');
      await waitFor('the new event listed', async () => (await eventLinks.count()) === events.length);
      await expect(eventLinks.first().getAttribute('href')).resolves.toBe(`/developers/events/${events[0].id}`);
      await page.reload();
      await expect(page.getByLabel('Change status').inputValue()).resolves.toBe('qualified');
      expect(open.errors).toEqual([]);
    });

    it('a lead that does not exist, or is another account’s, is "not found" with a way back', async () => {
      const other = await newPerson(app, `leads-other-${label}`);
      const theirs = await restAs(app, other.key)<Lead>('POST', '/v1/leads', { company: 'Not yours', contact_email: `x-${label}@notyours.test` });
      for (const id of ['lead_0000000000000000000000000', theirs.id]) {
        await page.goto(`${app.baseUrl}/leads/${id}`);
        await page.getByText(`There is no lead with the id ${id}`).waitFor();
        await expect(page.locator('h1').textContent()).resolves.toBe('Lead not found');
        await expect(page.getByRole('link', { name: 'Back to all leads' }).getAttribute('href')).resolves.toBe('/leads');
      }
      await expectSoundPage(open);
    });

    it('Delete lead asks first (Cancel, focused, keeps it); then the lead is gone (GET 404), its deal unlinked, and the list says so', async () => {
      const lead = await rest<Lead>('POST', '/v1/leads', { company: `Doomed ${label}`, contact_email: `gone-${label}@doomed.test` });
      const deal = await rest<{ id: string }>('POST', '/v1/deals', { name: `Doomed ${label} deal`, value: 100, lead_id: lead.id });
      const focusedId = () => page.evaluate(() => document.activeElement?.id);
      await page.goto(`${app.baseUrl}/leads/${lead.id}`);
      await waitFor('the lead’s name as the heading', async () => (await page.locator('h1').textContent()) === lead.company);

      await page.getByRole('button', { name: 'Delete lead' }).click();
      const question = page.getByRole('group', { name: `Delete ${lead.company}?`, exact: false });
      await question.waitFor();
      await waitFor('focus on Cancel, the safe choice', async () => (await focusedId()) === 'delete-lead-cancel');
      await expectSoundPage(open);
      await screenshot(page, `lead-delete-${label}`);
      await page.keyboard.press('Enter');
      await waitFor('focus back on Delete lead', async () => (await focusedId()) === 'delete-lead');
      await expect(question.count()).resolves.toBe(0);
      await expect(rest<Lead>('GET', `/v1/leads/${lead.id}`)).resolves.toMatchObject({ id: lead.id, company: lead.company });

      await page.getByRole('button', { name: 'Delete lead' }).click();
      await page.getByRole('button', { name: 'Yes, delete lead' }).click();
      await waitFor('the leads list', async () => page.url() === `${app.baseUrl}/leads`);
      await waitFor('the deletion said', async () => (await page.locator('#deleted-notice').textContent()) === `Deleted ${lead.company}.`);
      const gone = await app.request('GET', `/v1/leads/${lead.id}`, { key: person.key });
      expect(gone.status).toBe(404);
      await expect(rest<{ lead_id: string | null }>('GET', `/v1/deals/${deal.id}`)).resolves.toMatchObject({ lead_id: null });
      const listed = await expectListMatches('');
      expect(listed.data.map((one) => one.id)).not.toContain(lead.id);
      await expectSoundPage(open);
      // Said once: a reload of the list does not repeat it.
      await page.reload();
      await expectListMatches('');
      await expect(page.locator('#deleted-notice').textContent()).resolves.toBe('');
      expect(open.errors).toEqual([]);
    });
  });

  describe.each(VIEWPORTS)('an account without leads at $width×$height', (viewport) => {
    it('says how to add a lead (a form, the API, demo data on /welcome); the API’s error shows on its field; the new lead is listed', async () => {
      const person = await newPerson(app, `leads-empty-${viewport.label}`);
      const rest = restAs(app, person.key);
      const open = await openAs(browser, app, person, viewport);
      const { page } = open;
      try {
        await page.goto(`${app.baseUrl}/leads`);
        const empty = page.locator('.empty', { hasText: 'No leads yet.' });
        await empty.waitFor();
        await expect(empty.getByRole('link', { name: 'load demo data' }).getAttribute('href')).resolves.toBe('/welcome');
        await expect(page.getByRole('search').count()).resolves.toBe(0);
        await expectSoundPage(open);
        await screenshot(page, `leads-empty-${viewport.label}`);

        const form = page.getByRole('form', { name: 'Add a lead' });
        await form.getByLabel('Company').fill('Vandelay Industries');
        await form.getByLabel('Contact email').fill('art-at-vandelay');
        await form.getByLabel('Industry').fill('Manufacturing');
        await form.getByLabel('Employees').fill('120');
        await form.getByRole('button', { name: 'Add lead' }).click();
        const refused = await app.graphql('mutation { createLead(input: { company: "x", contactEmail: "art-at-vandelay" }) { id } }', {}, person.key);
        const message = refused.body.errors[0].message as string;
        const email = form.getByLabel('Contact email');
        await waitFor('the email marked invalid', async () => (await email.getAttribute('aria-invalid')) === 'true');
        await expect(page.locator(`#${await email.getAttribute('aria-describedby')}`).textContent()).resolves.toBe(message);
        await expect(form.getByLabel('Company').getAttribute('aria-invalid')).resolves.toBeNull();
        await expect(rest<List<Lead>>('GET', '/v1/leads')).resolves.toMatchObject({ data: [] });
        await expectSoundPage(open);

        await email.fill('art@vandelay.test');
        await form.getByRole('button', { name: 'Add lead' }).click();
        await waitFor('the new lead in the list', async () => (await shownRows(page)).length === 1);
        const [made] = (await rest<List<Lead>>('GET', '/v1/leads')).data;
        expect(made).toMatchObject({ company: 'Vandelay Industries', contact_email: 'art@vandelay.test', industry: 'Manufacturing', employees: 120 });
        await expect(shownRows(page)).resolves.toEqual([rowOf(made)]);
        await waitFor('focus on the new lead’s link', async () => (await page.evaluate(() => document.activeElement?.id)) === `lead-link-${made.id}`);
        await expect(page.locator('#leads-announcer').textContent()).resolves.toBe('Added Vandelay Industries.');

        // With a lead, the page lists and filters; another lead is added from "Add a lead".
        await expect(page.getByRole('search', { name: 'Filter leads' }).count()).resolves.toBe(1);
        const toggle = page.getByRole('button', { name: 'Add a lead' });
        await toggle.click();
        await expect(page.getByRole('button', { name: 'Close the new lead form' }).getAttribute('aria-expanded')).resolves.toBe('true');
        const again = page.getByRole('form', { name: 'Add a lead' });
        await again.getByLabel('Company').fill('Kramerica');
        await again.getByLabel('Contact email').fill('kramer@kramerica.test');
        await again.getByRole('button', { name: 'Add lead' }).click();
        await waitFor('two leads in the list', async () => (await shownRows(page)).length === 2);
        const both = (await rest<List<Lead>>('GET', '/v1/leads')).data;
        await expect(shownRows(page)).resolves.toEqual(both.map(rowOf));
        await expect(page.getByRole('form', { name: 'Add a lead' }).count()).resolves.toBe(0);
        expect(open.errors).toEqual([]);
      } finally {
        await open.context.close();
      }
    });
  });
});

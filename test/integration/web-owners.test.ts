import { Browser, chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { SmtpInbox, startSmtpInbox } from '../helpers/fakes/smtp-inbox';
import { waitFor } from '../helpers/wait';
import { tableRows } from '../helpers/web';
import { expectSoundPage, joinedColleague, newPerson, openAs, OpenPage, Person, restAs, VIEWPORTS } from '../helpers/workspace';

/**
 * Owners in the web workspace, in Debian's Chromium at a laptop's and a phone's size: an owner gives
 * a lead to a colleague on the lead page, filters the leads list by owner and gives a deal to
 * themselves on the deal page, each read back over the API; the colleague (role member, who may
 * not read members) sees owners as "You" or ids and is offered no select, never an error.
 */

const PUBLIC_URL = 'https://app.example.test';

interface ApiMember {
  id: string;
  email: string;
  name: string;
  role: string;
}
interface ApiLead {
  id: string;
  company: string;
  owner_id: string | null;
}

let app: TestApp;
let browser: Browser;
let inbox: SmtpInbox;

beforeAll(async () => {
  const executablePath = chromiumPath();
  inbox = await startSmtpInbox();
  app = await startTestApp({ env: { SMTP_URL: inbox.url, MAIL_FROM: 'Sales Pipeline <accounts@example.test>', PUBLIC_URL } });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await inbox?.close();
});

describe.each(VIEWPORTS)('owners at $width×$height', (viewport) => {
  const { label } = viewport;
  let owner: Person;
  let rest: ReturnType<typeof restAs>;
  let me: ApiMember;
  let colleague: ApiMember;
  let colleagueCookie: string;
  let ownerPage: OpenPage;
  let page: Page;
  const leads: Record<'unowned' | 'theirs' | 'spare', ApiLead> = {} as never;

  const leadNow = (id: string) => rest<ApiLead>('GET', `/v1/leads/${id}`);
  const leadFact = (name: string) => page.locator(`[data-fact="${name}"]`).textContent();

  beforeAll(async () => {
    owner = await newPerson(app, `owners-${label}`);
    rest = restAs(app, owner.key);
    const colleagueEmail = `bea-${label}-${Date.now()}@owners.test`;
    colleagueCookie = (await joinedColleague(app, inbox, owner.key, { email: colleagueEmail, name: `Bea ${label}`, role: 'member' })).cookie;
    const members = (await rest<{ data: ApiMember[] }>('GET', '/v1/members?limit=50')).data;
    me = members.find((member) => member.email === owner.email)!;
    colleague = members.find((member) => member.email === colleagueEmail)!;

    leads.unowned = await rest<ApiLead>('POST', '/v1/leads', { company: `Unowned ${label}`, contact_email: `a-${label}@unowned.test` });
    leads.theirs = await rest<ApiLead>('POST', '/v1/leads', { company: `Theirs ${label}`, contact_email: `b-${label}@theirs.test`, owner_id: colleague.id });
    leads.spare = await rest<ApiLead>('POST', '/v1/leads', { company: `Spare ${label}`, contact_email: `c-${label}@spare.test` });
    ownerPage = await openAs(browser, app, owner, viewport);
    page = ownerPage.page;
  });
  afterAll(() => ownerPage?.context.close());

  it("sets a lead's owner on the lead page, as the API then holds it", async () => {
    await page.goto(`${app.baseUrl}/leads/${leads.unowned.id}`);
    await waitFor('the owner select', async () => (await page.locator('#lead-owner option').count()) > 1);
    await expect(leadFact('Owner')).resolves.toBe('No owner');
    const choices = await page.locator('#lead-owner option').allTextContents();
    expect(choices).toEqual(expect.arrayContaining(['No owner', `${me.name} (you)`, colleague.name]));
    await expectSoundPage(ownerPage);

    await page.getByLabel('Change owner').selectOption(colleague.id);
    await page.getByRole('button', { name: 'Save owner' }).click();
    await waitFor('the owner saved', async () => (await page.locator('#lead-owner-announcer').textContent()) === `Owner saved: ${colleague.name}.`);
    await expect(leadNow(leads.unowned.id)).resolves.toMatchObject({ owner_id: colleague.id });
    await expect(leadFact('Owner')).resolves.toBe(colleague.name);

    // And back to nobody: null clears it.
    await page.getByLabel('Change owner').selectOption('');
    await page.getByRole('button', { name: 'Save owner' }).click();
    await waitFor('the owner cleared', async () => (await page.locator('#lead-owner-announcer').textContent()) === 'Owner saved: No owner.');
    await expect(leadNow(leads.unowned.id)).resolves.toMatchObject({ owner_id: null });
    await rest('PUT', `/v1/leads/${leads.unowned.id}`, { owner_id: colleague.id });
  });

  it('shows owners in the leads list and filters it by owner, as the API filters', async () => {
    const companies = async (query: string) => (await rest<{ data: ApiLead[] }>('GET', `/v1/leads?limit=100${query}`)).data.map((lead) => lead.company).sort();
    const shownCompanies = async () => (await tableRows(page, 'table[aria-label^="Leads"]')).map((row) => row[0]).sort();
    const waitForList = async (expected: string[]) => {
      await waitFor(`the list to show ${expected.join(', ')}`, async () => JSON.stringify(await shownCompanies()) === JSON.stringify(expected));
    };

    await page.goto(`${app.baseUrl}/leads`);
    await waitFor('the owner filter', async () => (await page.locator('#filter-owner_id option').count()) > 2);
    const rows = await tableRows(page, 'table[aria-label^="Leads"]');
    const ownerColumn = Object.fromEntries(rows.map((row) => [row[0], row[4]]));
    expect(ownerColumn).toMatchObject({ [leads.unowned.company]: colleague.name, [leads.theirs.company]: colleague.name, [leads.spare.company]: 'No owner' });
    await expectSoundPage(ownerPage);

    await page.getByLabel('Owner', { exact: true }).selectOption(colleague.id);
    await waitFor('the owner in the address', () => new URL(page.url()).searchParams.get('owner_id') === colleague.id);
    const theirs = await companies(`&owner_id=${colleague.id}`);
    expect(theirs).toEqual([leads.theirs.company, leads.unowned.company].sort());
    await waitForList(theirs);

    await page.getByLabel('Owner', { exact: true }).selectOption('none');
    const nobodys = await companies('&owner_id=none');
    expect(nobodys).toEqual([leads.spare.company]);
    await waitForList(nobodys);
    await expectSoundPage(ownerPage);

    // A bookmarked filter draws the same list.
    await page.reload();
    await waitForList(nobodys);
    await expect(page.getByLabel('Owner', { exact: true }).inputValue()).resolves.toBe('none');
  });

  it("sets a deal's owning member on the deal page", async () => {
    const deal = await rest<{ id: string }>('POST', '/v1/deals', { name: `Owned deal ${label}`, value: 1200, owner_id: colleague.id });
    await page.goto(`${app.baseUrl}/deals/${deal.id}`);
    await waitFor('the owning member named', async () => (await page.locator('[data-fact="owner-member"]').textContent()) === colleague.name);
    await expectSoundPage(ownerPage);

    await page.locator('#edit-deal').click();
    const form = page.getByRole('form', { name: `Edit Owned deal ${label}` });
    await waitFor('the owning member select', async () => (await form.getByLabel('Owning member').inputValue()) === colleague.id);
    await form.getByLabel('Owning member').selectOption(me.id);
    await expectSoundPage(ownerPage);
    await form.getByRole('button', { name: 'Save' }).click();
    await waitFor('the deal saved', async () => (await page.locator('#deal-announcer').textContent()) === `Saved Owned deal ${label}.`);
    await expect(rest('GET', `/v1/deals/${deal.id}`)).resolves.toMatchObject({ owner_id: me.id });
    await expect(page.locator('[data-fact="owner-member"]').textContent()).resolves.toBe(`${me.name} (you)`);
  });

  it('names owning members on the board, and gives a deal added there to the member chosen', async () => {
    const deal = await rest<{ id: string }>('POST', '/v1/deals', { name: `Board deal ${label}`, value: 900, stage: 'prospecting', owner_id: colleague.id });
    await page.goto(`${app.baseUrl}/pipeline`);
    const card = page.locator(`#deal-${deal.id}`);
    await waitFor(
      'the card to name its owning member',
      async () => (await card.locator(`dd[data-owner-id="${colleague.id}"]`).textContent()) === colleague.name,
    );

    await page.getByRole('button', { name: 'Add a deal to Prospecting' }).click();
    const form = page.getByRole('form', { name: 'New deal in Prospecting' });
    await form.getByLabel('Name').fill(`Added on the board ${label}`);
    await form.getByLabel('Value').fill('300');
    await waitFor('the owning member select', async () => (await form.getByLabel('Owning member').locator('option').count()) > 1);
    await form.getByLabel('Owning member').selectOption(colleague.id);
    await expectSoundPage(ownerPage);
    await form.getByRole('button', { name: 'Add deal' }).click();
    const added = await waitFor('the deal added', async () =>
      (await rest<{ data: Array<{ id: string; name: string; owner_id: string | null }> }>('GET', '/v1/deals?limit=100')).data.find(
        (d) => d.name === `Added on the board ${label}`,
      ),
    );
    expect(added.owner_id).toBe(colleague.id);
    await waitFor(
      'the new card to name its owning member',
      async () => (await page.locator(`#deal-${added.id} dd[data-owner-id]`).textContent()) === colleague.name,
    );
    await rest('DELETE', `/v1/deals/${added.id}`);
  });

  it('a member, who may not read members, sees "You" and ids, and no owner select', async () => {
    const open = await openAs(browser, app, { cookie: colleagueCookie }, viewport);
    try {
      const their = open.page;
      await their.goto(`${app.baseUrl}/leads/${leads.theirs.id}`);
      await waitFor('the lead drawn', async () => (await their.locator('[data-fact="Owner"]').count()) === 1);
      await waitFor('the owner as "You"', async () => (await their.locator('[data-fact="Owner"]').textContent()) === 'You');
      await expect(their.locator('#lead-owner').count()).resolves.toBe(0);
      await expectSoundPage(open);

      await their.goto(`${app.baseUrl}/leads`);
      await waitFor('the list drawn', async () => (await tableRows(their, 'table[aria-label^="Leads"]')).length === 3);
      const ownerColumn = Object.fromEntries((await tableRows(their, 'table[aria-label^="Leads"]')).map((row) => [row[0], row[4]]));
      expect(ownerColumn).toMatchObject({ [leads.theirs.company]: 'You', [leads.spare.company]: 'No owner' });
      await expect(their.locator('#filter-owner_id').count()).resolves.toBe(0);
      // The members query was refused (FORBIDDEN in a 200 answer): no error on the page.
      await expect(their.locator('[role="alert"]').count()).resolves.toBe(0);
      await expectSoundPage(open);
    } finally {
      await open.context.close();
    }
  });

  it("hands a deactivated member's leads to the member chosen on the Members page", async () => {
    expect((await leadNow(leads.theirs.id)).owner_id).toBe(colleague.id);
    await page.goto(`${app.baseUrl}/settings/members`);
    const base = `#member-${colleague.id}-deactivate`;
    await page.locator(base).click();
    await page.locator(`${base}-confirm`).click();
    // The API refuses (409: they own leads) and the row asks whom to hand them to.
    const transfer = page.locator(`${base}-transfer`);
    await waitFor('the hand-over question', async () => (await transfer.count()) === 1);
    await expect(page.locator(`${base}-handover`).textContent()).resolves.toMatch(/owns \d+ leads? and \d+ deals?.*hand them to/);
    await expect(rest<ApiMember & { status: string }>('GET', `/v1/members/${colleague.id}`)).resolves.toMatchObject({ status: 'active' });
    await expectSoundPage(ownerPage);

    await transfer.selectOption(me.id);
    await page.locator(`${base}-transfer-confirm`).click();
    await waitFor(
      'the deactivation announced',
      async () => (await page.locator('#announcer').textContent()) === `${colleague.name} was deactivated; ${me.name} now owns their leads and deals.`,
    );
    await expect(rest<ApiMember & { status: string }>('GET', `/v1/members/${colleague.id}`)).resolves.toMatchObject({ status: 'deactivated' });
    await expect(leadNow(leads.theirs.id)).resolves.toMatchObject({ owner_id: me.id });
    await expect(leadNow(leads.unowned.id)).resolves.toMatchObject({ owner_id: me.id });
    await expectSoundPage(ownerPage);
  });
});

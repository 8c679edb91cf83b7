import { Browser, chromium, Page } from 'playwright-core';
import { Account } from '../../src/modules/accounts/account.entity';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { SmtpInbox, startSmtpInbox } from '../helpers/fakes/smtp-inbox';
import { waitFor } from '../helpers/wait';
import { http, PASSWORD, screenshot } from '../helpers/web';
import { expectSoundPage, invitationPath, invitationToken, newPerson, openAs, OpenPage, openSignedOut, Person, restAs, VIEWPORTS } from '../helpers/workspace';

/**
 * Settings → Members (issue 67) driven in Chromium at a laptop's and a phone's size: an owner
 * invites a person on the page, the person follows the e-mailed link (a loopback SMTP inbox) and
 * joins as a member, who is told what is missing on the Members and API keys pages but works on
 * the board and the leads; the owner makes them an admin, who then sees the members; the API's
 * refusals (seats, the last owner, an admin making an owner) are shown in the API's words; the owner
 * deactivates them and their session ends. Last, the header's account switcher of a person in two
 * accounts. Everything the page shows is checked against the API. Pictures go to docs/screenshots
 * with UPDATE_SCREENSHOTS=1.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomCell {
  textContent: string | null;
  querySelector(selector: string): { selectedOptions: ArrayLike<{ textContent: string | null }> } | null;
}
interface DomRow {
  querySelectorAll(selector: string): ArrayLike<DomCell>;
}
declare const document: { activeElement: { id: string } | null };

interface ApiMember {
  id: string;
  email: string;
  name: string;
  role: string;
  status: string;
  last_seen_at: string | null;
}

const PUBLIC_URL = 'https://app.example.test';

const when = (moment: string) =>
  `${new Date(moment).toLocaleString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })} UTC`;
const capitalized = (word: string) => word[0].toUpperCase() + word.slice(1);

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

/** The members table as a person reads it: name, e-mail, role (the chosen one where it is a select), status, last seen. */
const shownMembers = (page: Page): Promise<string[][]> =>
  page.locator('table[aria-label="Members"] tbody tr').evaluateAll((rows: DomRow[]) =>
    rows.map((row) =>
      Array.from(row.querySelectorAll('td'))
        .slice(0, 5)
        .map((cell) => ((cell.querySelector('select')?.selectedOptions[0] ?? cell).textContent ?? '').trim()),
    ),
  );

describe.each(VIEWPORTS)('the Members page at $width×$height', (viewport) => {
  const { label } = viewport;
  const newcomerEmail = `grace-${label}-${Date.now()}@members.test`;
  const newcomerName = `Grace ${label}`;
  let owner: Person;
  let accountName: string;
  let rest: ReturnType<typeof restAs>;
  let ownerPage: OpenPage;
  /** The invited person's browser, signed in by accepting the invitation. */
  let newcomer: OpenPage;
  let newcomerId: string;

  const members = async () => (await rest<{ data: ApiMember[] }>('GET', '/v1/members?limit=50')).data;
  const member = async (email: string) => (await members()).find((candidate) => candidate.email === email)!;

  /** Waits until the page's table shows what GET /v1/members answers, in its order. */
  async function expectTableMatchesApi(page: Page): Promise<void> {
    let expected: string[][] = [];
    let shown: string[][] = [];
    try {
      await waitFor('the members table to match the API', async () => {
        expected = (await members()).map((m) => [m.name, m.email, capitalized(m.role), capitalized(m.status), m.last_seen_at ? when(m.last_seen_at) : 'Never']);
        shown = await shownMembers(page);
        return JSON.stringify(shown) === JSON.stringify(expected);
      });
    } catch (error) {
      expect(shown).toEqual(expected); // says how they differ
      throw error;
    }
  }

  /** A GraphQL request with a browser's session (cookie and CSRF token), as the page sends it. */
  async function sessionGraphql(open: OpenPage, query: string, variables: Record<string, unknown>) {
    const cookies = await open.context.cookies(app.baseUrl);
    const cookie = cookies.map(({ name, value }) => `${name}=${value}`).join('; ');
    const csrf = await open.page.locator('meta[name="csrf-token"]').getAttribute('content');
    const response = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf ?? '' },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as { errors?: Array<{ message: string; extensions: { errorCode: string } }> };
  }

  beforeAll(async () => {
    owner = await newPerson(app, `owner-${label}`);
    rest = restAs(app, owner.key);
    accountName = (await app.orm.em.fork().findOneOrFail(Account, { email: owner.email })).name;
    // Something on the board and in the leads, for the new member to see.
    const lead = await rest<{ id: string }>('POST', '/v1/leads', { company: `Initech ${label}`, contact_email: `buyer-${label}@initech.test` });
    await rest('POST', '/v1/deals', { name: `Initech rollout ${label}`, value: 25000, stage: 'proposal', lead_id: lead.id });
    ownerPage = await openAs(browser, app, owner, viewport);
  });
  afterAll(async () => {
    await ownerPage?.context.close();
    await newcomer?.context.close();
  });

  it('lists the members as GET /v1/members does, beside the invitation form; Members is in the navigation; fits the screen; axe finds nothing serious', async () => {
    const { page } = ownerPage;
    await page.goto(`${app.baseUrl}/settings/members`);
    await expect(page.title()).resolves.toBe('Members · Sales Pipeline');
    await expectTableMatchesApi(page);
    expect(await shownMembers(page)).toEqual([[expect.any(String), owner.email, 'Owner', 'Active', expect.stringMatching(/UTC$/)]]);
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).getAttribute('aria-current')).resolves.toBe('page');
    await expect(page.getByRole('form', { name: 'Invite a person' }).isVisible()).resolves.toBe(true);
    // One account: no switcher.
    await expect(page.locator('form.switcher').count()).resolves.toBe(0);
    await expectSoundPage(ownerPage);
  });

  it('invites a person on the page; the e-mailed link, accepted with a new password, signs them in', async () => {
    const { page } = ownerPage;
    await page.getByLabel('E-mail').fill(newcomerEmail);
    await page.getByLabel('Name (optional)').fill(newcomerName);
    await expect(page.getByLabel('Role', { exact: true }).inputValue()).resolves.toBe('member');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText(`Invitation sent to ${newcomerEmail}.`).waitFor();
    await expectTableMatchesApi(page);
    expect(await member(newcomerEmail)).toMatchObject({ name: newcomerName, role: 'member', status: 'invited' });
    await expect(page.getByLabel('E-mail').inputValue()).resolves.toBe('');
    await expectSoundPage(ownerPage);
    await screenshot(page, `members-${label}`);

    newcomer = await openSignedOut(browser, viewport);
    await newcomer.page.goto(`${app.baseUrl}${await invitationPath(inbox, newcomerEmail)}`);
    await newcomer.page.getByText(`You were invited to ${accountName} as ${newcomerEmail}.`).waitFor();
    await newcomer.page.getByLabel('Choose a password').fill(PASSWORD);
    await newcomer.page.getByRole('button', { name: `Join ${accountName}` }).click();
    await newcomer.page.waitForURL(`${app.baseUrl}/dashboard`);
    newcomerId = (await member(newcomerEmail)).id;
    expect(await member(newcomerEmail)).toMatchObject({ status: 'active', role: 'member' });
  });

  it('the new member is told what is missing on the Members and API keys pages, and works on the board and the leads', async () => {
    const { page } = newcomer;
    await page.goto(`${app.baseUrl}/settings/members`);
    await page.getByText(`Managing members needs the owner or admin role; you are a member of ${accountName}. Ask an owner or admin.`).waitFor();
    await expect(page.locator('table[aria-label="Members"]').count()).resolves.toBe(0);
    await expect(page.getByRole('form', { name: 'Invite a person' }).count()).resolves.toBe(0);
    // What the page was told: the API's refusal, naming the permission.
    const refused = await sessionGraphql(newcomer, 'query { members { data { id } } }', {});
    expect(refused.errors?.[0]).toMatchObject({ extensions: { errorCode: 'permission_denied' } });
    expect(refused.errors?.[0].message).toContain('members:read');
    await expectSoundPage(newcomer);
    await screenshot(page, `members-refused-${label}`);

    const keys = await page.goto(`${app.baseUrl}/settings/api-keys`);
    expect(keys?.status()).toBe(403);
    await page.getByText('Managing API keys needs the owner or admin role. You are a member of').waitFor();
    expect(newcomer.errors.splice(0)).toEqual([`403 ${app.baseUrl}/settings/api-keys`]);

    await page.goto(`${app.baseUrl}/leads`);
    await page.getByRole('link', { name: `Initech ${label}` }).waitFor();
    await page.goto(`${app.baseUrl}/pipeline`);
    // A member writes deals: the card's "Move to" list moves it, as the API then says.
    await page.getByLabel(`Move Initech rollout ${label} to`).selectOption('negotiation');
    await page.getByRole('button', { name: `Move Initech rollout ${label}`, exact: true }).click();
    await waitFor('the deal to be in negotiation', async () => {
      const deals = await rest<{ data: Array<{ name: string; stage: string }> }>('GET', '/v1/deals');
      return deals.data.find((deal) => deal.name === `Initech rollout ${label}`)?.stage === 'negotiation';
    });
    expect(newcomer.errors).toEqual([]);
  });

  it("shows the API's refusals in its words: the last owner beside the row, the plan's seats beside the address", async () => {
    const { page } = ownerPage;
    await page.reload();
    await expectTableMatchesApi(page); // the newcomer active, last seen just now
    const self = await member(owner.email);
    await page.getByLabel(`Role of ${self.name}`).selectOption('admin');
    await page.getByRole('button', { name: `Change the role of ${self.name}` }).click();
    const roleError = page.locator(`#member-${self.id}-role-error`);
    await roleError.waitFor();
    const lastOwner = await sessionGraphql(ownerPage, 'mutation($id: ID!) { updateMember(id: $id, input: { role: admin }) { id } }', { id: self.id });
    expect(await roleError.textContent()).toBe(lastOwner.errors?.[0].message);
    expect(lastOwner.errors?.[0].message).toContain('at least one active owner');
    await expect(page.getByLabel(`Role of ${self.name}`).inputValue()).resolves.toBe('owner');
    expect((await member(owner.email)).role).toBe('owner');

    // The starter plan's three seats: the owner, the newcomer, and one more.
    await page.getByLabel('E-mail').fill(`viewer-${label}-${Date.now()}@members.test`);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText('Invitation sent to viewer-').waitFor();
    const fourth = `fourth-${label}-${Date.now()}@members.test`;
    await page.getByLabel('E-mail').fill(fourth);
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const email = page.getByLabel('E-mail');
    await waitFor('the address to be marked invalid', async () => (await email.getAttribute('aria-invalid')) === 'true');
    const shown = await page.locator(`#${await email.getAttribute('aria-describedby')}`).textContent();
    const api = await app.request('POST', '/v1/members', { key: owner.key, body: { email: fourth, role: 'viewer' } });
    expect([api.status, api.body.error.code, api.body.error.param]).toEqual([409, 'seat_limit_reached', 'email']);
    expect(shown).toBe(api.body.error.message);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('invite-email');
    await expectTableMatchesApi(page);
    expect(await members()).toHaveLength(3);
    await expectSoundPage(ownerPage);
    await screenshot(page, `members-refused-seat-${label}`);
  });

  it('the owner makes the member an admin on the page; the admin then sees the members, and is refused making an owner', async () => {
    const { page } = ownerPage;
    await page.getByLabel(`Role of ${newcomerName}`).selectOption('admin');
    await page.getByRole('button', { name: `Change the role of ${newcomerName}` }).click();
    await waitFor('the newcomer to be an admin', async () => (await member(newcomerEmail)).role === 'admin');
    await expectTableMatchesApi(page);

    await newcomer.page.goto(`${app.baseUrl}/settings/members`);
    await expectTableMatchesApi(newcomer.page);
    const viewer = (await members()).find((candidate) => candidate.role === 'viewer')!;
    await newcomer.page.getByLabel(`Role of ${viewer.name}`).selectOption('owner');
    await newcomer.page.getByRole('button', { name: `Change the role of ${viewer.name}` }).click();
    const refusal = newcomer.page.locator(`#member-${viewer.id}-role-error`);
    await refusal.waitFor();
    // A key acts as an admin: the same request over REST is refused with the same words.
    const api = await app.request('PUT', `/v1/members/${viewer.id}`, { key: owner.key, body: { role: 'owner' } });
    expect([api.status, api.body.error.code]).toEqual([403, 'permission_denied']);
    expect(await refusal.textContent()).toBe(api.body.error.message);
    expect((await member(viewer.email)).role).toBe('viewer');
    await expectSoundPage(newcomer);
  });

  it('the owner deactivates the member after a confirmation; their session ends at once', async () => {
    const { page } = ownerPage;
    await page.getByRole('button', { name: `Deactivate ${newcomerName}` }).click();
    const question = page.getByRole('group', { name: new RegExp(`^Deactivate ${newcomerName}\\?`) });
    await question.waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(`member-${newcomerId}-deactivate-cancel`);
    await expectSoundPage(ownerPage);
    await question.getByRole('button', { name: 'Yes, deactivate' }).click();
    await waitFor('the newcomer to be deactivated', async () => (await member(newcomerEmail)).status === 'deactivated');
    await expectTableMatchesApi(page);
    await expect(page.getByRole('button', { name: `Deactivate ${newcomerName}` }).count()).resolves.toBe(0);
    expect(ownerPage.errors).toEqual([]);

    await newcomer.page.goto(`${app.baseUrl}/settings/members`);
    await newcomer.page.waitForURL(`${app.baseUrl}/login`);
    const cookies = await newcomer.context.cookies(app.baseUrl);
    const dashboard = await http(app, 'GET', '/dashboard', { cookie: cookies.map(({ name, value }) => `${name}=${value}`).join('; ') });
    expect([dashboard.status, dashboard.headers.get('location')]).toEqual([303, '/login']);
  });

  it('a person in two accounts switches between them in the header', async () => {
    const other = await app.createAccount({ name: `Second account ${label}` });
    const invited = await app.request('POST', '/v1/members', { key: other.testKey, body: { email: owner.email, role: 'admin' } });
    expect(invited.status).toBe(201);
    const token = await invitationToken(inbox, owner.email);
    // They sign in here already: they confirm with their password.
    expect((await http(app, 'POST', '/invitations/accept', { form: { token, password: PASSWORD } })).status).toBe(303);

    const { page } = ownerPage;
    await page.goto(`${app.baseUrl}/dashboard`);
    const switcher = page.getByLabel('Account', { exact: true });
    await expect(switcher.locator('option').allTextContents()).resolves.toEqual([accountName, other.account.name].sort((a, b) => a.localeCompare(b)));
    await expect(switcher.inputValue()).resolves.toBe((await app.orm.em.fork().findOneOrFail(Account, { email: owner.email })).id);
    await expectSoundPage(ownerPage);
    await screenshot(page, `account-switcher-${label}`);

    await switcher.selectOption({ label: other.account.name });
    await page.getByRole('button', { name: 'Switch account' }).click();
    await page.waitForURL(`${app.baseUrl}/dashboard`);
    await expect(page.title()).resolves.toBe(`${other.account.name}: pipeline · Sales Pipeline`);
    await expect(page.getByLabel('Account', { exact: true }).inputValue()).resolves.toBe(other.account.id);
    expect(ownerPage.errors).toEqual([]);
  });
});

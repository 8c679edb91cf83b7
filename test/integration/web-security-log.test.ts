import { Browser, chromium, Page } from 'playwright-core';
import { Account } from '../../src/modules/accounts/account.entity';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { SmtpInbox, startSmtpInbox } from '../helpers/fakes/smtp-inbox';
import { waitFor } from '../helpers/wait';
import { http, screenshot, tableRows } from '../helpers/web';
import { expectSoundPage, joinedColleague, newPerson, openAs, OpenPage, Person, restAs, VIEWPORTS } from '../helpers/workspace';

/**
 * Settings → Security log (issue 67) in Debian's Chromium at a laptop's and a phone's size: an
 * owner reads the account's log as GET /v1/security_events answers it (sign-ins, a failed one, an
 * invitation and its acceptance, a role change, the key made at sign-up), filters it by type and by
 * member as the API filters, and a colleague who may not read it is told why. Pictures go to
 * docs/screenshots with UPDATE_SCREENSHOTS=1.
 */

const PUBLIC_URL = 'https://app.example.test';

interface ApiEntry {
  id: string;
  type: string;
  actor: { type: string; id: string | null };
  member_id: string | null;
  address: string | null;
  details: Record<string, unknown>;
  created_at: string;
}
interface ApiMember {
  id: string;
  name: string;
}

const moment = (iso: string) =>
  `${new Date(iso).toLocaleString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })} UTC`;

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

describe.each(VIEWPORTS)('the security log at $width×$height', (viewport) => {
  const { label } = viewport;
  const colleagueEmail = `lin-${label}-${Date.now()}@security.test`;
  let owner: Person;
  let rest: ReturnType<typeof restAs>;
  let accountName: string;
  let colleague: { id: string; cookie: string };
  let ownerPage: OpenPage;
  let page: Page;

  /** The table as the page shows it: event, member, by and time (details and address are checked apart). */
  const shown = async () => (await tableRows(page, 'table[aria-label="Security log"]')).map((row) => [row[0], row[1], row[2], row[5]]);

  /** The same columns from GET /v1/security_events with `query`, members named as the page names them. */
  async function expected(query = ''): Promise<string[][]> {
    const members = (await rest<{ data: ApiMember[] }>('GET', '/v1/members?limit=100')).data;
    const named = (id: string | null) => (id ? (members.find((member) => member.id === id)?.name ?? id) : '—');
    const log = await rest<{ data: ApiEntry[] }>('GET', `/v1/security_events?limit=50${query}`);
    return log.data.map((entry) => [
      entry.type,
      named(entry.member_id),
      entry.actor.type === 'member' ? named(entry.actor.id) : `${entry.actor.type === 'api_key' ? 'API key' : entry.actor.type} ${entry.actor.id}`,
      moment(entry.created_at),
    ]);
  }

  /** Waits until the page's table shows what the API answers for `query`, in its order. */
  async function expectTableMatchesApi(query = ''): Promise<void> {
    let want: string[][] = [];
    let got: string[][] = [];
    try {
      await waitFor(`the security log to match the API${query}`, async () => {
        want = await expected(query);
        got = await shown();
        return JSON.stringify(got) === JSON.stringify(want);
      });
    } catch (error) {
      expect(got).toEqual(want); // says how they differ
      throw error;
    }
  }

  beforeAll(async () => {
    owner = await newPerson(app, `security-${label}`);
    rest = restAs(app, owner.key);
    accountName = (await app.orm.em.fork().findOneOrFail(Account, { email: owner.email })).name;
    colleague = await joinedColleague(app, inbox, owner.key, { email: colleagueEmail, name: `Lin ${label}`, role: 'member' });
    // A wrong password for the colleague, and a role change by the owner's key.
    const failed = await http(app, 'POST', '/login', { form: { email: colleagueEmail, password: 'not the password at all' } });
    expect(failed.status).toBe(401);
    await rest('PUT', `/v1/members/${colleague.id}`, { role: 'viewer' });
    ownerPage = await openAs(browser, app, owner, viewport);
    page = ownerPage.page;
  });
  afterAll(() => ownerPage?.context.close());

  it('lists the log as GET /v1/security_events does, under the Team tabs; fits the screen; axe finds nothing serious', async () => {
    await page.goto(`${app.baseUrl}/settings/security`);
    await expect(page.title()).resolves.toBe('Security log · Sales Pipeline');
    await expectTableMatchesApi();
    const types = (await shown()).map((row) => row[0]);
    expect(types).toEqual(
      expect.arrayContaining(['sign_in.succeeded', 'api_key.created', 'member.invited', 'member.joined', 'sign_in.failed', 'member.role_changed']),
    );
    // The role change: its details, and the address it came from.
    const rows = await tableRows(page, 'table[aria-label="Security log"]');
    const roleChange = rows.find((row) => row[0] === 'member.role_changed')!;
    expect(roleChange[3]).toBe('member → viewer');
    expect(roleChange[4]).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
    await expect(page.getByRole('navigation', { name: 'Team' }).getByRole('link', { name: 'Security log' }).getAttribute('aria-current')).resolves.toBe('page');
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).getAttribute('aria-current')).resolves.toBe('true');
    await expectSoundPage(ownerPage);
    await screenshot(page, `security-log-${label}`);
  });

  it('filters by type and by member as the API filters, and says when nothing matches', async () => {
    await page.locator('#security-type').selectOption('member.role_changed');
    await expectTableMatchesApi('&type=member.role_changed');
    expect(await shown()).toHaveLength(1);

    await page.locator('#security-type').selectOption('');
    await page.locator('#security-member').selectOption(colleague.id);
    await expectTableMatchesApi(`&member_id=${colleague.id}`);
    expect(new Set((await shown()).map((row) => row[1]))).toEqual(new Set([`Lin ${label}`]));

    await page.locator('#security-type').selectOption('webhook.secret_rolled');
    await page.getByText('Nothing in the log matches these filters.').waitFor();
    await expect(rest<{ data: unknown[] }>('GET', `/v1/security_events?type=webhook.secret_rolled&member_id=${colleague.id}`)).resolves.toMatchObject({
      data: [],
    });
    await expectSoundPage(ownerPage);
  });

  it('tells a colleague who may not read it what is missing, as the API refuses them', async () => {
    const viewer = await openAs(browser, app, { cookie: colleague.cookie }, viewport);
    try {
      await viewer.page.goto(`${app.baseUrl}/settings/security`);
      await viewer.page.getByText(`The security log is for owners and admins; you are a viewer of ${accountName}. Ask an owner or admin.`).waitFor();
      await expect(viewer.page.locator('table[aria-label="Security log"]').count()).resolves.toBe(0);
      await expectSoundPage(viewer);
    } finally {
      await viewer.context.close();
    }
  });
});

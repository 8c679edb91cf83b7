import { Browser, chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { SmtpInbox, startSmtpInbox } from '../helpers/fakes/smtp-inbox';
import { waitFor } from '../helpers/wait';
import { screenshot } from '../helpers/web';
import { expectSoundPage, joinedColleague, newPerson, openAs, OpenPage, Person, restAs, VIEWPORTS } from '../helpers/workspace';

/**
 * A lead_router made and edited in the agent forms (issue 67), in Debian's Chromium at a laptop's
 * and a phone's size, with the real agent runner: an owner writes a rule (countries and a member),
 * ticks the members who take turns and picks a fallback by name; the API first names a rule in
 * error under the rules, then holds exactly what was chosen; deployed, it gives a new lead from
 * the rule's country to the rule's member. The agent's page shows the rules with members' names,
 * and the edit form starts from them; a removed rule is gone from the API. A colleague who may not
 * read members types ids instead of choosing names.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
declare const document: { activeElement: { id: string } | null };

const PUBLIC_URL = 'https://app.example.test';

interface Agent {
  id: string;
  name: string;
  type: string;
  config: { rules: Array<Record<string, unknown>>; round_robin: string[]; fallback_owner_id: string | null };
}

let app: TestApp;
let browser: Browser;
let inbox: SmtpInbox;

beforeAll(async () => {
  const executablePath = chromiumPath();
  inbox = await startSmtpInbox();
  app = await startTestApp({ agents: {}, env: { SMTP_URL: inbox.url, MAIL_FROM: 'Sales Pipeline <accounts@example.test>', PUBLIC_URL } });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await inbox?.close();
});

describe.each(VIEWPORTS)('a lead router in the agent forms at $width×$height', (viewport) => {
  const { label } = viewport;
  let owner: Person;
  let rest: ReturnType<typeof restAs>;
  let meId: string;
  let ivy: { id: string; cookie: string };
  let jon: { id: string; cookie: string };
  let ownerPage: OpenPage;
  let page: Page;
  let agent: Agent;
  /** The members who take turns as the form ticks them: in the order GET /v1/members lists them. */
  let turns: string[];

  beforeAll(async () => {
    owner = await newPerson(app, `router-${label}`);
    rest = restAs(app, owner.key);
    const stamp = `${label}-${Date.now()}`;
    ivy = await joinedColleague(app, inbox, owner.key, { email: `ivy-${stamp}@router.test`, name: `Ivy ${label}`, role: 'member' });
    jon = await joinedColleague(app, inbox, owner.key, { email: `jon-${stamp}@router.test`, name: `Jon ${label}`, role: 'member' });
    const members = (await rest<{ data: Array<{ id: string; email: string }> }>('GET', '/v1/members?limit=50')).data;
    meId = members.find((m) => m.email === owner.email)!.id;
    turns = members.map((m) => m.id).filter((id) => id === meId || id === jon.id);
    ownerPage = await openAs(browser, app, owner, viewport);
    page = ownerPage.page;
  });
  afterAll(() => ownerPage?.context.close());

  it('makes a router with a rule, turns and a fallback chosen by name; the API names a rule in error first, then holds what was chosen', async () => {
    await page.goto(`${app.baseUrl}/agents`);
    await page.getByLabel('Type', { exact: true }).selectOption('lead_router');
    await page.getByLabel('Name', { exact: true }).fill(`Router ${label}`);
    await page.getByText('No rules: every lead goes to the members who take turns, or to the fallback.').waitFor();
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await waitFor('the new rule to have the focus', async () => (await page.evaluate(() => document.activeElement?.id)) === 'agent-rules-0-country');
    await page.getByLabel('Countries (ISO codes, comma-separated)').fill('ie, GB');
    await page.getByLabel('Employees at least').fill('500');
    await page.getByLabel('Employees at most').fill('50');
    await page.getByLabel('Give the leads rule 1 matches to').selectOption({ label: `Ivy ${label}` });
    await page.getByLabel(`Jon ${label}`).check();
    await page.getByLabel(`(you)`).check();
    await page.getByLabel('Give any other lead to').selectOption({ label: `Jon ${label}` });
    await expectSoundPage(ownerPage);
    await page.getByRole('button', { name: 'Create agent' }).click();

    // The API's own message under the rules, which take the focus; nothing made.
    const error = page.locator('#agent-rules-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('rules[0].min_employees must not be above max_employees');
    await waitFor('the rules to have the focus', async () => (await page.evaluate(() => document.activeElement?.id)) === 'agent-rules');
    expect((await rest<{ data: Agent[] }>('GET', '/v1/agents')).data).toEqual([]);
    await screenshot(page, `agent-router-form-${label}`);

    await page.getByLabel('Employees at most').fill('');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('link', { name: `Router ${label}`, exact: true }).waitFor();
    [agent] = (await rest<{ data: Agent[] }>('GET', '/v1/agents')).data as Agent[];
    expect(agent).toMatchObject({ name: `Router ${label}`, type: 'lead_router' });
    expect(agent.config).toEqual({ rules: [{ country: ['ie', 'GB'], min_employees: 500, owner_id: ivy.id }], round_robin: turns, fallback_owner_id: jon.id });
    expect(ownerPage.errors).toEqual([]);
  });

  it("shows the rules with members' names; deployed, it gives a matching lead to the rule's member", async () => {
    await page.goto(`${app.baseUrl}/agents/${agent.id}`);
    const rules = page.locator('[data-setting="rules"]');
    await waitFor("the rules with the member's name", async () => (await rules.textContent()) === `1. Country ie, GB; employees 500–∞ → Ivy ${label}`);
    const names: Record<string, string> = { [jon.id]: `Jon ${label}` };
    const shownTurns = (await page.locator('[data-setting="round_robin"]').textContent())!.split(', ');
    expect(shownTurns).toEqual(turns.map((id) => names[id] ?? expect.stringMatching(/ \(you\)$/)));
    await expect(page.locator('[data-setting="fallback_owner_id"]').textContent()).resolves.toBe(`Jon ${label}`);
    await expectSoundPage(ownerPage);
    await screenshot(page, `agent-router-${label}`);

    await rest('POST', `/v1/agents/${agent.id}/deploy`);
    const lead = await rest<{ id: string }>('POST', '/v1/leads', {
      company: `Dublin ${label}`,
      contact_email: `buyer-${label}@dublin.test`,
      country: 'IE',
      employees: 800,
    });
    await waitFor(
      "the router to give the lead to the rule's member",
      async () => (await rest<{ owner_id: string | null }>('GET', `/v1/leads/${lead.id}`)).owner_id === ivy.id,
    );
  });

  it('the edit form starts from the rules; a removed rule is gone from the API', async () => {
    await page.getByRole('button', { name: 'Edit settings' }).click();
    await expect(page.getByLabel('Countries (ISO codes, comma-separated)').inputValue()).resolves.toBe('ie, GB');
    await expect(page.getByLabel('Give the leads rule 1 matches to').inputValue()).resolves.toBe(ivy.id);
    await expect(page.getByLabel(`Jon ${label}`).isChecked()).resolves.toBe(true);
    await expect(page.getByLabel(`Ivy ${label}`, { exact: true }).isChecked()).resolves.toBe(false);
    await page.getByRole('button', { name: 'Remove rule 1' }).click();
    await page.getByLabel('Give any other lead to').selectOption('');
    await expectSoundPage(ownerPage);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await waitFor('the rules to be gone', async () => (await page.locator('[data-setting="rules"]').textContent()) === 'None');
    expect((await rest<Agent>('GET', `/v1/agents/${agent.id}`)).config).toEqual({ rules: [], round_robin: turns, fallback_owner_id: null });
    await expect(page.locator('[data-setting="fallback_owner_id"]').textContent()).resolves.toBe('Nobody (no owner)');
  });

  it('a colleague who may not read members types member ids instead', async () => {
    const colleague = await openAs(browser, app, { cookie: jon.cookie }, viewport);
    try {
      await colleague.page.goto(`${app.baseUrl}/agents`);
      await colleague.page.getByLabel('Type', { exact: true }).selectOption('lead_router');
      await colleague.page.getByLabel('Name', { exact: true }).fill(`Jon's router ${label}`);
      await colleague.page.getByLabel('Give any other lead to').fill(jon.id);
      await colleague.page.getByLabel('Take turns with the leads no rule matched (member ids, comma-separated)').fill(`${jon.id}, ${ivy.id}`);
      await expectSoundPage(colleague);
      await colleague.page.getByRole('button', { name: 'Create agent' }).click();
      await colleague.page.getByRole('link', { name: `Jon's router ${label}`, exact: true }).waitFor();
      const made = (await rest<{ data: Agent[] }>('GET', '/v1/agents')).data.find((candidate) => candidate.name === `Jon's router ${label}`)!;
      expect(made.config).toEqual({ rules: [], round_robin: [jon.id, ivy.id], fallback_owner_id: jon.id });
    } finally {
      await colleague.context.close();
    }
  });
});

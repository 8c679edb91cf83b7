import { Browser, chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { waitFor } from '../helpers/wait';
import { screenshot, tableRows } from '../helpers/web';
import { expectSoundPage, newPerson, openAs, OpenPage, Person, restAs, VIEWPORTS } from '../helpers/workspace';

/**
 * The agents pages (/agents, /agents/:id) in Debian's Chromium at a laptop's and a phone's size,
 * against the real app with its agent runner: an agent created through the form (after the API
 * named a field in error), deployed, paused and resumed from its page, each read back over REST; a
 * lead_researcher that has run, its metrics on the page against GET /v1/agents/{id}/metrics, and
 * its suggestions (written by the runner as the service writes them) approved, edited and
 * rejected from the page, the keyboard alone approving one, each decision read back over REST; an
 * agent's settings edited from its page and a draft deleted after a cancelled confirmation.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
declare const document: { activeElement: { id: string } | null };

interface Agent {
  id: string;
  name: string;
  type: string;
  status: string;
  version: number;
  config: Record<string, unknown>;
  deployed_at: string | null;
}
interface Suggestion {
  id: string;
  kind: string;
  status: string;
  lead_id: string | null;
  content: Record<string, string>;
  approved_content: Record<string, string> | null;
}
interface Metrics {
  runs: number;
  errors: number;
  success_rate: number | null;
  actions_by_kind: Record<string, number>;
  suggestions: { pending: number; approved: number; rejected: number; expired: number };
}

const humanize = (name: string) => name[0].toUpperCase() + name.slice(1).replace(/_/g, ' ');
const when = (moment: string) =>
  `${new Date(moment).toLocaleString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })} UTC`;
const percent = (share: number | null) => (share === null ? '—' : `${Math.round(share * 1000) / 10}%`);

describe('agents pages', () => {
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    const executablePath = chromiumPath();
    app = await startTestApp({ agents: {} });
    await app.reset();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  }, CHROMIUM_INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  describe.each(VIEWPORTS)('at $width×$height', (viewport) => {
    let person: Person;
    let rest: ReturnType<typeof restAs>;
    let open: OpenPage;
    let page: Page;

    beforeAll(async () => {
      person = await newPerson(app, `agents-${viewport.label}`);
      rest = restAs(app, person.key);
    });
    beforeEach(async () => {
      open = await openAs(browser, app, person, viewport);
      page = open.page;
    });
    afterEach(async () => {
      await open.context.close();
    });

    const agentOf = (id: string) => rest<Agent>('GET', `/v1/agents/${id}`);
    const shownFact = async (name: string) => ((await page.locator(`[data-fact="${name}"]`).textContent()) ?? '').trim();

    it('creates an agent through the form (the API naming a field first), then deploys, pauses and resumes it; REST agrees', async () => {
      await page.goto(`${app.baseUrl}/agents`);
      await page.getByText('No agents yet.').waitFor();
      await expectSoundPage(open);

      const name = `Qualifier ${viewport.label}`;
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel('Type', { exact: true }).selectOption('lead_qualifier');
      const qualifyAt = page.getByLabel('Qualify at score');
      await qualifyAt.fill('150');
      await page.getByRole('button', { name: 'Create agent' }).click();
      // The API's own message, next to the field it names, which takes the focus.
      const error = page.locator('#agent-qualify_at-error');
      await error.waitFor();
      expect(await error.textContent()).toBe('qualify_at must be a whole number from 0 to 100');
      expect(await qualifyAt.getAttribute('aria-invalid')).toBe('true');
      expect((await qualifyAt.getAttribute('aria-describedby'))?.split(' ')).toContain('agent-qualify_at-error');
      await waitFor('the field in error to have the focus', async () => (await page.evaluate(() => document.activeElement?.id)) === 'agent-qualify_at');
      expect((await rest<{ data: Agent[] }>('GET', '/v1/agents')).data).toEqual([]);

      await qualifyAt.fill('80');
      await page.getByLabel('Open a deal for a qualified lead').check();
      await page.getByRole('button', { name: 'Create agent' }).click();
      const link = page.getByRole('link', { name, exact: true });
      await link.waitFor();
      const [agent] = (await rest<{ data: Agent[] }>('GET', '/v1/agents')).data;
      expect(agent).toMatchObject({ name, type: 'lead_qualifier', status: 'draft', version: 0, deployed_at: null });
      expect(agent.config).toEqual({ qualify_at: 80, disqualify_below: 20, open_deal: true, deal_stage: 'qualification', deal_value: 0 });
      expect(await link.getAttribute('href')).toBe(`/agents/${agent.id}`);
      expect(await tableRows(page, 'table[aria-label="Agents"]')).toEqual([[name, 'Lead qualifier', 'Draft', '—', '—']]);
      await waitFor('the new agent link to have the focus', async () => (await page.evaluate(() => document.activeElement?.id)) === `agent-link-${agent.id}`);
      expect(await page.locator('#agents-announcer').textContent()).toContain(`Created ${name}`);
      await expectSoundPage(open);
      await screenshot(page, `agents-${viewport.label}`);

      await link.click();
      await page.waitForURL(`${app.baseUrl}/agents/${agent.id}`);
      await page.getByRole('heading', { level: 1, name }).waitFor();
      expect(await shownFact('status')).toBe('Draft');
      expect(await page.locator('[data-setting="qualify_at"]').textContent()).toBe('80');

      await page.getByRole('button', { name: 'Deploy', exact: true }).click();
      await waitFor('the page to show version 1', async () => (await shownFact('version')) === 'v1');
      const deployed = await agentOf(agent.id);
      expect(deployed).toMatchObject({ status: 'deployed', version: 1 });
      expect(deployed.config).toEqual(agent.config);
      expect(await shownFact('status')).toBe('Deployed');
      expect(await shownFact('deployed')).toBe(when(deployed.deployed_at!));

      await page.getByRole('button', { name: 'Pause' }).click();
      await waitFor('the page to show it paused', async () => (await shownFact('status')) === 'Paused');
      expect((await agentOf(agent.id)).status).toBe('paused');
      await waitFor('focus on Resume', async () => (await page.evaluate(() => document.activeElement?.id)) === 'agent-resume');
      await page.keyboard.press('Enter');
      await waitFor('the page to show it deployed again', async () => (await shownFact('status')) === 'Deployed');
      expect(await agentOf(agent.id)).toMatchObject({ status: 'deployed', version: 1 });

      // Deployed elsewhere since the page loaded: the page refuses, says so, and shows the agent as it is.
      await rest('POST', `/v1/agents/${agent.id}/deploy`, { config: { ...agent.config, qualify_at: 75 } });
      await page.getByRole('button', { name: 'Deploy again' }).click();
      const refusal = page.locator('#agent-action-error');
      await refusal.waitFor();
      expect(await refusal.textContent()).toMatch(/^Not deployed: this agent is at version 2 now, not version 1/);
      await waitFor('the page to show version 2', async () => (await shownFact('version')) === 'v2');
      expect(await page.locator('[data-setting="qualify_at"]').textContent()).toBe('75');
      expect(await agentOf(agent.id)).toMatchObject({ version: 2, config: { ...agent.config, qualify_at: 75 } });
      // Now up to date, it deploys what it shows.
      await page.getByRole('button', { name: 'Deploy again' }).click();
      await waitFor('the page to show version 3', async () => (await shownFact('version')) === 'v3');
      expect(await agentOf(agent.id)).toMatchObject({ version: 3, status: 'deployed', config: { qualify_at: 75 } });
      await expectSoundPage(open);
    });

    it("shows a writer's metrics as the API counts them, and approves (mouse, keyboard with edits) and rejects its suggestions", async () => {
      const agent = await rest<Agent>('POST', '/v1/agents', { name: `Researcher ${viewport.label}`, type: 'lead_researcher' });
      await rest('POST', `/v1/agents/${agent.id}/deploy`);
      const leads: Array<{ id: string; company: string }> = [];
      for (const company of ['Initech', 'Globex', 'Umbrella']) {
        leads.push(
          await rest('POST', '/v1/leads', {
            company: `${company} ${viewport.label}`,
            contact_email: `ceo@${company.toLowerCase()}.test`,
            contact_name: 'Dana Whitfield',
          }),
        );
      }
      const suggestions = await waitFor('three lead briefs', async () => {
        const listed = (await rest<{ data: Suggestion[] }>('GET', `/v1/agents/${agent.id}/suggestions?limit=100`)).data;
        return listed.length === 3 && listed;
      });
      expect(suggestions.map((s) => s.lead_id).sort()).toEqual(leads.map((lead) => lead.id).sort());

      await page.goto(`${app.baseUrl}/agents/${agent.id}`);
      await page.getByRole('heading', { level: 1, name: agent.name }).waitFor();
      await page.locator('article.suggestion').nth(2).waitFor();
      // Newest first, as the API lists them; each shows what the agent wrote and links its lead.
      const articles = page.locator('article.suggestion');
      expect(await articles.evaluateAll((all) => all.map((a) => (a as unknown as { dataset: { suggestionId: string } }).dataset.suggestionId))).toEqual(
        suggestions.map((s) => s.id),
      );
      for (const [index, suggestion] of suggestions.entries()) {
        const article = articles.nth(index);
        expect((await article.locator('.content-brief').textContent())?.trim()).toBe(suggestion.content.brief.trim());
        expect((await article.locator('.content-next_step').textContent())?.trim()).toBe(suggestion.content.next_step.trim());
        const company = leads.find((lead) => lead.id === suggestion.lead_id)!.company;
        expect(await article.getByRole('link', { name: `Lead ${company}`, exact: true }).getAttribute('href')).toBe(`/leads/${suggestion.lead_id}`);
        expect(await article.textContent()).toContain('Built-in template');
      }

      // A dry run from the page says what the API's simulation answers; nothing is written (still three suggestions).
      await page.getByRole('button', { name: 'Simulate', exact: true }).click();
      const simulated = await rest<{ events_replayed: number; actions_total: number }>('POST', `/v1/agents/${agent.id}/simulate`, { window: '7d' });
      await page.locator('#agent-simulation p').waitFor();
      expect(await page.locator('#agent-simulation p').textContent()).toMatch(
        new RegExp(`^Replaying ${simulated.events_replayed} events? .*it would have taken ${simulated.actions_total} actions?\\.$`),
      );
      expect((await rest<{ data: Suggestion[] }>('GET', `/v1/agents/${agent.id}/suggestions?limit=100`)).data).toHaveLength(3);

      // The metrics are the API's own figures for the same window.
      await expectMetricsMatch(page, () => rest<Metrics>('GET', `/v1/agents/${agent.id}/metrics?window=7d`), '7d');
      expect(await page.locator('#chart-actions').getAttribute('role')).toBe('img');
      expect(await page.locator('#chart-actions').getAttribute('aria-label')).toBe('Actions by kind, last 7 days: Lead brief 3.');
      await page.locator('#metrics-window').selectOption('30d');
      await expectMetricsMatch(page, () => rest<Metrics>('GET', `/v1/agents/${agent.id}/metrics?window=30d`), '30d');
      await expectSoundPage(open);
      await screenshot(page, `agent-${viewport.label}`);

      const [first, second, third] = suggestions;
      await page.locator(`#suggestion-${first.id}-approve`).click();
      await waitFor('the first to leave the pending list', async () => (await page.locator(`article[data-suggestion-id="${first.id}"]`).count()) === 0);
      expect(await rest<Suggestion>('GET', `/v1/suggestions/${first.id}`)).toMatchObject({ status: 'approved', approved_content: first.content });
      expect(await page.locator('#suggestions-announcer').textContent()).toBe('Approved the lead brief; it is now approved.');
      await waitFor('focus on the next pending one', async () => (await page.evaluate(() => document.activeElement?.id)) === `suggestion-${second.id}-title`);

      await page.locator(`#suggestion-${second.id}-reject`).click();
      await waitFor('the second to leave the pending list', async () => (await page.locator(`article[data-suggestion-id="${second.id}"]`).count()) === 0);
      expect(await rest<Suggestion>('GET', `/v1/suggestions/${second.id}`)).toMatchObject({ status: 'rejected', approved_content: null });
      expect(await page.locator('#suggestions-announcer').textContent()).toBe('Rejected the lead brief; nothing was done with it.');
      await waitFor('focus on the last pending one', async () => (await page.evaluate(() => document.activeElement?.id)) === `suggestion-${third.id}-title`);

      // The keyboard alone: from its heading, Tab to "Edit before approving", change the next step, Tab to "Approve with edits".
      const focused = () => page.evaluate(() => document.activeElement?.id ?? '');
      const tabTo = async (target: (id: string) => boolean, what: string) => {
        for (let presses = 0; presses < 12 && !target(await focused()); presses++) await page.keyboard.press('Tab');
        expect({ what, focused: target(await focused()) }).toEqual({ what, focused: true });
      };
      await tabTo((id) => id === `suggestion-${third.id}-edit`, 'Edit before approving');
      await page.keyboard.press('Enter');
      await waitFor('the brief field to have the focus', async () => (await focused()) === `suggestion-${third.id}-brief`);
      await page.keyboard.press('Tab');
      expect(await focused()).toBe(`suggestion-${third.id}-nextStep`);
      await page.keyboard.press('Control+A');
      await page.keyboard.type('Call Dana on Tuesday about the pilot.');
      await tabTo((id) => id === `suggestion-${third.id}-approve`, 'Approve with edits');
      await page.keyboard.press('Enter');
      await waitFor('nothing pending', async () => (await page.locator('#no-pending').count()) === 1);
      const approved = await rest<Suggestion>('GET', `/v1/suggestions/${third.id}`);
      expect(approved).toMatchObject({ status: 'approved', approved_content: { ...third.content, next_step: 'Call Dana on Tuesday about the pilot.' } });
      expect(await page.locator('#suggestions-announcer').textContent()).toBe('Approved the lead brief with your edits; it is now approved.');
      await waitFor('focus on the section heading', async () => (await focused()) === 'agent-suggestions-title');
      expect(await tableRows(page, 'table[aria-label="Decided suggestions"]')).toHaveLength(3);

      // The figures follow the decisions.
      await expectMetricsMatch(page, () => rest<Metrics>('GET', `/v1/agents/${agent.id}/metrics?window=30d`), '30d', { approved: 2, rejected: 1 });
      await expectSoundPage(open);
    });

    it("shows a drafted e-mail's subject and body, and approves it with an edited subject", async () => {
      const agent = await rest<Agent>('POST', '/v1/agents', { name: `Writer ${viewport.label}`, type: 'follow_up_writer' });
      await rest('POST', `/v1/agents/${agent.id}/deploy`);
      const lead = await rest<{ id: string }>('POST', '/v1/leads', {
        company: `Hooli ${viewport.label}`,
        contact_email: 'gavin@hooli.test',
        contact_name: 'Gavin Belson',
      });
      await rest('PUT', `/v1/leads/${lead.id}`, { status: 'qualified' });
      const [email] = await waitFor('a drafted e-mail', async () => {
        const listed = (await rest<{ data: Suggestion[] }>('GET', `/v1/agents/${agent.id}/suggestions`)).data;
        return listed.length === 1 && listed;
      });
      expect(email).toMatchObject({ kind: 'follow_up_email', lead_id: lead.id });

      await page.goto(`${app.baseUrl}/agents/${agent.id}`);
      const article = page.locator(`article[data-suggestion-id="${email.id}"]`);
      await article.waitFor();
      expect(await article.getByRole('heading').textContent()).toBe('Follow-up e-mail');
      expect(await article.locator('.content-subject').textContent()).toBe(email.content.subject);
      expect(await article.locator('.content-body').textContent()).toBe(email.content.body);
      await article.getByRole('button', { name: 'Edit before approving' }).click();
      const subject = article.getByLabel('Subject');
      expect(await subject.inputValue()).toBe(email.content.subject);
      expect(await article.getByLabel('Body').inputValue()).toBe(email.content.body);
      // A blank subject is the API's to refuse; its message shows in the card and nothing is decided.
      await subject.fill('   ');
      await article.getByRole('button', { name: 'Approve with edits' }).click();
      await article.getByRole('alert').waitFor();
      expect(await article.getByRole('alert').textContent()).toBe('subject must not be blank');
      expect(await subject.getAttribute('aria-invalid')).toBe('true');
      expect((await rest<Suggestion>('GET', `/v1/suggestions/${email.id}`)).status).toBe('pending');
      await subject.fill('A pilot for Hooli');
      await article.getByRole('button', { name: 'Approve with edits' }).click();
      await page.locator('#no-pending').waitFor();
      expect(await rest<Suggestion>('GET', `/v1/suggestions/${email.id}`)).toMatchObject({
        status: 'approved',
        approved_content: { subject: 'A pilot for Hooli', body: email.content.body },
      });
      await expectSoundPage(open);
    });

    it("edits a deployed agent's settings (the API naming a field first) without redeploying; REST agrees", async () => {
      const agent = await rest<Agent>('POST', '/v1/agents', { name: `Editable ${viewport.label}`, type: 'lead_qualifier', config: { qualify_at: 70 } });
      await rest('POST', `/v1/agents/${agent.id}/deploy`);
      await page.goto(`${app.baseUrl}/agents/${agent.id}`);
      await page.getByRole('heading', { level: 1, name: agent.name }).waitFor();
      expect(await page.locator('#agent-settings-note').textContent()).toBe(
        'Changes take effect on the next deploy: until then the agent keeps acting with the settings of version 1.',
      );

      await page.getByRole('button', { name: 'Edit settings' }).click();
      const nameField = page.getByLabel('Name', { exact: true });
      await waitFor('the name field to have the focus', async () => (await page.evaluate(() => document.activeElement?.id)) === 'agent-name');
      // The form starts from what the API holds.
      expect(await nameField.inputValue()).toBe(agent.name);
      const qualifyAt = page.getByLabel('Qualify at score');
      expect(await qualifyAt.inputValue()).toBe(String(agent.config.qualify_at));
      expect(await page.getByLabel('Open a deal for a qualified lead').isChecked()).toBe(agent.config.open_deal);
      expect(await page.getByLabel('Stage of the new deal').inputValue()).toBe(agent.config.deal_stage);

      await qualifyAt.fill('150');
      await page.getByRole('button', { name: 'Save settings' }).click();
      const error = page.locator('#agent-qualify_at-error');
      await error.waitFor();
      // The API's own message (updateAgent checks the config as createAgent does), next to the field, which takes the focus.
      expect(await error.textContent()).toBe('qualify_at must be a whole number from 0 to 100');
      expect(await qualifyAt.getAttribute('aria-invalid')).toBe('true');
      expect((await qualifyAt.getAttribute('aria-describedby'))?.split(' ')).toContain('agent-qualify_at-error');
      await waitFor('the field in error to have the focus', async () => (await page.evaluate(() => document.activeElement?.id)) === 'agent-qualify_at');
      expect(await agentOf(agent.id)).toMatchObject({ name: agent.name, config: agent.config });
      await expectSoundPage(open);
      await screenshot(page, `agent-edit-${viewport.label}`);

      const renamed = `Edited ${viewport.label}`;
      await nameField.fill(renamed);
      await qualifyAt.fill('60');
      await page.getByLabel('Open a deal for a qualified lead').check();
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('heading', { level: 1, name: renamed }).waitFor();
      const after = await agentOf(agent.id);
      expect(after).toMatchObject({ name: renamed, status: 'deployed', version: 1 });
      expect(after.config).toEqual({ ...agent.config, qualify_at: 60, open_deal: true });
      expect(await page.locator('[data-setting="qualify_at"]').textContent()).toBe(String(after.config.qualify_at));
      expect(await page.locator('[data-setting="open_deal"]').textContent()).toBe('Yes');
      expect(await shownFact('version')).toBe('v1');
      expect(await page.locator('#agent-announcer').textContent()).toBe(
        `Saved the settings of ${renamed}; they take effect on the next deploy (it acts with version 1 until then).`,
      );
      await waitFor('focus back on Edit settings', async () => (await page.evaluate(() => document.activeElement?.id)) === 'agent-edit');
      // A deployed agent is not offered for deletion: the service keeps it.
      expect(await page.locator('#agent-delete-note').textContent()).toContain('Only a draft agent can be deleted');
      expect(await page.getByRole('button', { name: 'Delete agent' }).count()).toBe(0);
      await expectSoundPage(open);
    });

    it('deletes a draft agent after an in-page confirmation (cancelled once), then lists the agents; REST answers 404', async () => {
      const agent = await rest<Agent>('POST', '/v1/agents', { name: `Doomed ${viewport.label}`, type: 'deal_follow_up' });
      await page.goto(`${app.baseUrl}/agents/${agent.id}`);
      await page.getByRole('heading', { level: 1, name: agent.name }).waitFor();
      const focused = () => page.evaluate(() => document.activeElement?.id ?? '');

      // The question takes the focus on Cancel, the safe choice; Enter there keeps the agent.
      await page.getByRole('button', { name: 'Delete agent' }).click();
      await page.getByText(`Delete ${agent.name}?`).waitFor();
      await waitFor('focus on Cancel', async () => (await focused()) === 'agent-delete-cancel');
      await expectSoundPage(open);
      await screenshot(page, `agent-delete-${viewport.label}`);
      await page.keyboard.press('Enter');
      await waitFor('focus back on Delete agent', async () => (await focused()) === 'agent-delete');
      expect(await page.getByRole('button', { name: 'Yes, delete' }).count()).toBe(0);
      expect((await agentOf(agent.id)).status).toBe('draft');

      await page.getByRole('button', { name: 'Delete agent' }).click();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await page.waitForURL(`${app.baseUrl}/agents`);
      expect((await app.request('GET', `/v1/agents/${agent.id}`, { key: person.key })).status).toBe(404);
      await page.locator('table[aria-label="Agents"]').waitFor();
      expect(await page.getByRole('link', { name: agent.name, exact: true }).count()).toBe(0);
    });

    it('says plainly when an agent does not exist, with a link to the list', async () => {
      await page.goto(`${app.baseUrl}/agents/agent_00000000000000000000000000`);
      await page.getByText('There is no agent agent_00000000000000000000000000 here.').waitFor();
      expect(await page.getByRole('link', { name: 'See all agents' }).getAttribute('href')).toBe('/agents');
      expect(await page.title()).toBe('Agent not found · Sales Pipeline');
      await expectSoundPage(open);
    });
  });
});

/**
 * The metrics section shows the API's figures for `window`: the headline numbers, each chart's
 * table and its picture's name. The API is read until the page and it agree (the page reads
 * once; the API at the same moment), so a run recorded in between cannot make this flaky in a way
 * that hides a wrong figure: both must come to the same numbers.
 */
async function expectMetricsMatch(page: Page, read: () => Promise<Metrics>, window: string, decided?: { approved: number; rejected: number }): Promise<void> {
  await page.locator(`#agent-metrics[data-window="${window}"]`).waitFor();
  const metric = async (name: string) => ((await page.locator(`#agent-metrics [data-metric="${name}"]`).first().textContent()) ?? '').trim();
  const api = await waitFor('the API figures to settle on what the page shows', async () => {
    const figures = await read();
    return (await metric('runs')) === String(figures.runs) && figures;
  });
  if (decided) expect(api.suggestions).toMatchObject(decided);
  expect(await metric('errors')).toBe(String(api.errors));
  expect(await metric('successRate')).toBe(percent(api.success_rate));
  expect(await tableRows(page, 'table[aria-label="Runs figures"]')).toEqual([
    ['Succeeded', String(api.runs - api.errors)],
    ['Errors', String(api.errors)],
  ]);
  expect(await tableRows(page, 'table[aria-label="Actions by kind figures"]')).toEqual(
    Object.entries(api.actions_by_kind).map(([kind, count]) => [humanize(kind), String(count)]),
  );
  const { pending, approved, rejected, expired } = api.suggestions;
  await waitFor('the suggestions figures', async () => {
    const rows = await tableRows(page, 'table[aria-label="Suggestions figures"]');
    return (
      JSON.stringify(rows) ===
      JSON.stringify([
        ['Pending', String(pending)],
        ['Approved', String(approved)],
        ['Rejected', String(rejected)],
        ['Expired', String(expired)],
      ])
    );
  });
  expect(await page.locator('#chart-suggestions').getAttribute('aria-label')).toBe(
    `Suggestions, last ${window === '7d' ? '7 days' : '30 days'}: Pending ${pending}, Approved ${approved}, Rejected ${rejected}, Expired ${expired}.`,
  );
}

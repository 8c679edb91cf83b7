import { Browser, chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { SyncRunBody, syncRuns } from '../helpers/sync-runs';
import { waitFor } from '../helpers/wait';
import { screenshot, tableRows } from '../helpers/web';
import { expectSoundPage, newPerson, OpenPage, openAs, Person, VIEWPORTS } from '../helpers/workspace';

/**
 * The Integrations pages (/integrations, /integrations/:id) in Chromium at a laptop's and a phone's
 * size, against the loopback HubSpot of test/helpers/fakes (the app reaches it at HUBSPOT_API_URL)
 * and the real sync worker. Connect is refused with the fake's 401 and then accepted, by keyboard
 * alone; the integration page shows what GET /v1/integrations/{id} and its sync_runs report; Sync
 * now starts a run; a revoked token shows the last error; disconnect is read back over REST.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
declare const document: { activeElement: { id: string; textContent: string | null } | null };

interface IntegrationBody {
  id: string;
  provider: string;
  type: string;
  status: string;
  name: string | null;
  credentials_hint: string | null;
  last_error: string | null;
  last_error_at: string | null;
  last_synced_at: string | null;
  settings: { stage_map: Record<string, string> | null };
}

/** REST's snake_case stage map as GraphQL's StageMapInput takes it. */
const toCamel = (map: Record<string, string>) =>
  Object.fromEntries(Object.entries(map).map(([key, value]) => [key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()), value]));

/** As the pages write a moment: "Nov 24, 2026, 17:40 UTC". */
const when = (moment: string | null) =>
  moment
    ? `${new Date(moment).toLocaleString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })} UTC`
    : '—';
const capitalized = (word: string) => word[0].toUpperCase() + word.slice(1);

describe('integrations pages', () => {
  let app: TestApp;
  let crms: FakeCrms;
  let browser: Browser;

  beforeAll(async () => {
    crms = await startFakeCrms();
    app = await startTestApp({ crms, sync: {} });
    await app.reset();
    browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  }, CHROMIUM_INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await crms?.close();
  });

  describe.each(VIEWPORTS)('at $label size ($width×$height)', (viewport) => {
    let person: Person;
    let open: OpenPage;
    let page: Page;
    let integrationId: string;
    const token = `pat-na1-web-${viewport.label}-${Date.now()}`;

    const api = (method: string, path: string, body?: unknown) => app.request(method, path, { key: person.key, body });
    const integrations = async (): Promise<IntegrationBody[]> => (await api('GET', '/v1/integrations?limit=100')).body.data;
    const integration = async (): Promise<IntegrationBody> => (await api('GET', `/v1/integrations/${integrationId}`)).body;
    const runs = () => syncRuns(api).runs(integrationId);
    const announced = (id: string) => page.locator(`#${id}`).textContent();
    /** The sync runs table as a person reads it, against what the sync_runs route reports. */
    const expectRunsMatchApi = async (reported: SyncRunBody[]) => {
      const rows = await tableRows(page, 'table[aria-label="Sync runs"]');
      expect(rows.map((cells) => cells.slice(0, 4).concat(cells[5], cells[6], cells[8]))).toEqual(
        reported.map((run) => [
          capitalized(run.status),
          capitalized(run.trigger),
          String(run.pushed),
          String(run.pulled),
          String(run.to_push),
          when(run.started_at),
          run.error ?? '—',
        ]),
      );
      expect(rows.map((cells) => cells[4].replace(/\D.*$/s, ''))).toEqual(reported.map((run) => String(run.failed)));
    };

    beforeAll(async () => {
      person = await newPerson(app, `integrations-${viewport.label}`);
      open = await openAs(browser, app, person, viewport);
      page = open.page;
    });
    afterAll(() => open?.context.close());

    it('explains connecting when there is none, offers every provider by type, and shows the API’s refusals next to their field', async () => {
      await page.goto(`${app.baseUrl}/integrations`);
      await page.getByText('No integrations yet.').waitFor();
      for (const [group, providers] of [
        ['CRM', ['Salesforce', 'HubSpot']],
        ['PSA', ['ConnectWise PSA', 'Autotask', 'HaloPSA']],
        ['Microsoft 365', ['Microsoft 365', 'Partner Center']],
        ['Model providers', ['OpenAI', 'Azure OpenAI', 'OpenAI-compatible server']],
      ] as const) {
        const region = page.getByRole('region', { name: group, exact: true });
        for (const provider of providers) await expect(region.getByRole('button', { name: `Connect ${provider}`, exact: true }).count()).resolves.toBe(1);
      }
      await expectSoundPage(open);

      // Exactly a provider's own fields, secrets masked: ConnectWise's five, then HubSpot's one.
      await page.getByRole('button', { name: 'Connect ConnectWise PSA', exact: true }).click();
      const connectwise = page.getByRole('form', { name: 'Connect ConnectWise PSA' });
      const labels = await connectwise.locator('fieldset label').allTextContents();
      expect(labels.map((label) => label.trim())).toEqual(['Site', 'Company ID', 'Public key', 'Private key', 'Client ID']);
      await expect(connectwise.getByLabel('Private key').getAttribute('type')).resolves.toBe('password');
      await expect(connectwise.getByLabel('Public key').getAttribute('type')).resolves.toBe('text');
      await connectwise.getByRole('button', { name: 'Cancel' }).click();

      await page.getByRole('button', { name: 'Connect HubSpot', exact: true }).click();
      const form = page.getByRole('form', { name: 'Connect HubSpot' });
      await expect(form.locator('fieldset input').count()).resolves.toBe(1);
      const field = form.getByLabel('Access token');
      await expect(field.getAttribute('type')).resolves.toBe('password');

      // Too short: the API's validation message, next to the field it names.
      await field.fill('short');
      await form.getByRole('button', { name: 'Verify and connect' }).click();
      // The same mutation the page sends, sent with the key: the message the page must show.
      const tooShort = await app.graphql(
        'mutation ($input: IntegrationConnectInput!) { connectIntegration(input: $input) { id } }',
        { input: { type: 'crm', provider: 'hubspot', credentials: { access_token: 'short' } } },
        person.key,
      );
      const [problem] = tooShort.body.errors as Array<{ message: string; extensions: { param: string } }>;
      expect(problem.extensions.param).toMatch(/credentials\.access_token$/);
      await waitFor('the field marked invalid', async () => (await field.getAttribute('aria-invalid')) === 'true');
      const describedBy = (await field.getAttribute('aria-describedby'))!.split(' ');
      await expect(page.locator(`#${describedBy[describedBy.length - 1]}`).textContent()).resolves.toBe(problem.message);
      await expect(integrations()).resolves.toEqual([]);

      // A token HubSpot does not know: the fake answers 401, the page shows the API's message and nothing is connected.
      const wrong = `pat-na1-wrong-${viewport.label}-${Date.now()}`;
      await field.fill(wrong);
      await form.getByRole('button', { name: 'Verify and connect' }).click();
      const refused = await api('POST', '/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: wrong } });
      expect([refused.status, refused.body.error.code]).toEqual([422, 'integration_auth_failed']);
      const alert = form.getByRole('alert');
      await waitFor('the refusal', async () => (await alert.textContent()) === refused.body.error.message);
      expect(refused.body.error.message).toMatch(/^HubSpot refused the credentials/);
      expect(crms.hubspot.seen('/crm/v3/objects/contacts').some((request) => request.headers.authorization === `Bearer ${wrong}`)).toBe(true);
      await expect(integrations()).resolves.toEqual([]);
      // The secret is not put back: the input is empty and the token is nowhere in the page.
      await expect(field.inputValue()).resolves.toBe('');
      expect(await page.content()).not.toContain(wrong);
      await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
      await expectSoundPage(open);
      await form.getByRole('button', { name: 'Cancel' }).click();
    });

    it('connects HubSpot by keyboard alone; the list shows what the API holds', async () => {
      crms.hubspot.accept(token);
      await page.reload();
      const choose = page.getByRole('button', { name: 'Connect HubSpot', exact: true });
      await choose.waitFor();
      for (let presses = 0; presses < 80 && (await page.evaluate(() => document.activeElement?.id)) !== 'choose-hubspot'; presses++) {
        await page.keyboard.press('Tab');
      }
      await page.keyboard.press('Enter');
      // The form opens with the cursor in its first field.
      await waitFor('focus in the access token', async () => (await page.evaluate(() => document.activeElement?.id)) === 'connect-hubspot-access_token');
      await page.keyboard.type(token);
      for (let presses = 0; presses < 5 && (await page.evaluate(() => document.activeElement?.id)) !== 'connect-hubspot-name'; presses++) {
        await page.keyboard.press('Tab');
      }
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('connect-hubspot-name');
      await page.keyboard.type('Acme portal');
      await page.keyboard.press('Enter');

      const [made] = await waitFor('the integration over REST', async () => {
        const all = await integrations();
        return all.length === 1 ? all : undefined;
      });
      integrationId = made.id;
      expect(made).toMatchObject({ provider: 'hubspot', type: 'crm', name: 'Acme portal', credentials_hint: token.slice(-4) });
      expect(['connected', 'error']).toContain(made.status);
      await waitFor('focus on the new row', async () => (await page.evaluate(() => document.activeElement?.id)) === `integration-${integrationId}`);
      await expect(announced('integrations-announcer')).resolves.toBe('Connected HubSpot; its first sync has started.');
      expect(await page.content()).not.toContain(token);

      // The first run (the backfill) ends; the list then shows the integration as the API does.
      await syncRuns(api).settled(integrationId);
      await page.reload();
      const shown = await integration();
      await waitFor('the row', async () => (await tableRows(page, 'table[aria-label="Integrations"]')).length === 1);
      expect(await tableRows(page, 'table[aria-label="Integrations"]')).toEqual([
        ['HubSpot', 'Acme portal', 'CRM', capitalized(shown.status), when(shown.last_synced_at), shown.last_error ?? '—'],
      ]);
      // HubSpot's place is taken: its Connect becomes a link to it.
      await expect(page.getByRole('button', { name: 'Connect HubSpot', exact: true }).count()).resolves.toBe(0);
      const provider = page.getByRole('region', { name: 'CRM', exact: true }).getByRole('listitem').filter({ hasText: 'HubSpot' });
      await expect(provider.getByRole('link', { name: 'Open HubSpot' }).getAttribute('href')).resolves.toBe(`/integrations/${integrationId}`);
      await expect(provider.locator('.integration-status').textContent()).resolves.toBe(capitalized(shown.status));
      // Salesforce's form open in the picture: its four fields, two of them secrets.
      await page.getByRole('button', { name: 'Connect Salesforce', exact: true }).click();
      await expect(page.getByRole('form', { name: 'Connect Salesforce' }).locator('input[type="password"]').count()).resolves.toBe(2);
      await expectSoundPage(open);
      await screenshot(page, `integrations-${viewport.label}`);
    });

    it('shows the integration as GET /v1/integrations/{id} and its sync runs report it; Sync now starts a run', async () => {
      await page.getByRole('link', { name: 'HubSpot', exact: true }).click();
      await page.waitForURL(`${app.baseUrl}/integrations/${integrationId}`);
      await page.getByRole('heading', { name: 'HubSpot · Acme portal', level: 1 }).waitFor();
      const shown = await integration();
      const facts = await page
        .locator('section[aria-labelledby="connection-title"] dl.facts')
        .evaluate((list: { textContent: string | null }) => list.textContent);
      expect(facts).toContain(`Status${capitalized(shown.status)}`);
      expect(facts).toContain(`CredentialsEnding in …${shown.credentials_hint}`);
      expect(facts).toContain(`Last sync${when(shown.last_synced_at)}`);
      expect(facts).not.toContain(token);
      await expect(page.getByRole('region', { name: 'Settings' }).textContent()).resolves.toContain('Stage map');
      const before = await runs();
      await waitFor('the runs table', async () => (await tableRows(page, 'table[aria-label="Sync runs"]')).length === before.length);
      await expectRunsMatchApi(before);

      // A HubSpot contact without an e-mail cannot become a lead: the run goes on, and keeps it as a failure.
      crms.hubspot.userCreate('contacts', { firstname: 'No', lastname: 'Email', company: `Nameless ${viewport.label}` });
      await page.getByRole('button', { name: 'Sync now' }).click();
      await waitFor('the run to finish on the page', async () => /^Sync (succeeded|failed):/.test((await announced('integration-announcer')) ?? ''));
      const after = await runs();
      expect(after).toHaveLength(before.length + 1);
      expect(after[0]).toMatchObject({ trigger: 'manual', status: 'succeeded', error: null });
      await expect(announced('integration-announcer')).resolves.toBe(
        `Sync succeeded: ${after[0].pushed} pushed, ${after[0].pulled} pulled, ${after[0].failed} failed.`,
      );
      await expectRunsMatchApi(after);

      // The run's failures fold open, each with the reason GraphQL gives.
      // (The contacts of the other viewport's test fail here too: the fake HubSpot is shared.)
      expect(after[0].failed).toBeGreaterThanOrEqual(1);
      const read = await app.graphql(
        'query ($id: ID!) { integrationSyncRuns(id: $id, filter: { limit: 1 }) { data { id failures(limit: 20) { direction objectType message } } } }',
        { id: integrationId },
        person.key,
      );
      const [newest] = read.body.data.integrationSyncRuns.data as Array<{
        id: string;
        failures: Array<{ direction: string; objectType: string; message: string }>;
      }>;
      expect(newest.id).toBe(after[0].id);
      const details = page.locator('table[aria-label="Sync runs"] tbody tr').first().locator('details.failures');
      await details.getByText(`${after[0].failed} failed object`).click();
      await expect(details.locator('li').first().isVisible()).resolves.toBe(true);
      const shownFailures = await details.locator('li').allTextContents();
      expect(shownFailures).toHaveLength(newest.failures.length);
      newest.failures.forEach((failure, at) => {
        expect(shownFailures[at]).toContain(`${capitalized(failure.direction)} ${failure.objectType}`);
        expect(shownFailures[at]).toContain(failure.message);
      });
      await expectSoundPage(open);
    });

    it('shows the last error when HubSpot refuses the token during a sync', async () => {
      crms.hubspot.revoke(token);
      await page.getByRole('button', { name: 'Sync now' }).click();
      await waitFor('the failed run on the page', async () => /^Sync failed:/.test((await announced('integration-announcer')) ?? ''));
      const shown = await waitFor('the integration in error', async () => {
        const body = await integration();
        return body.status === 'error' ? body : undefined;
      });
      await page.reload();
      const lastError = page.locator('#last-error');
      await lastError.waitFor();
      await expect(lastError.textContent()).resolves.toBe(shown.last_error);
      await expect(page.getByRole('region', { name: 'Last error' }).textContent()).resolves.toContain(`At ${when(shown.last_error_at)}`);
      await expect(page.locator('#integration-status').textContent()).resolves.toBe('Error');
      const reported = await runs();
      expect(reported[0]).toMatchObject({ status: 'failed', error: shown.last_error });
      await waitFor('the runs table', async () => (await tableRows(page, 'table[aria-label="Sync runs"]')).length === reported.length);
      await expectRunsMatchApi(reported);
      await expectSoundPage(open);
      await screenshot(page, `integration-${viewport.label}`);
    });

    it('edits the name and the stage map; the API’s refusal is shown on its field, the change read back over REST', async () => {
      const before = await integration();
      const settingsRegion = page.getByRole('region', { name: 'Settings' });
      await settingsRegion.getByRole('button', { name: 'Edit settings' }).focus();
      await page.keyboard.press('Enter');
      await waitFor('focus in the name', async () => (await page.evaluate(() => document.activeElement?.id)) === 'edit-name');
      const form = page.getByRole('form', { name: 'Edit the settings of HubSpot' });
      // Exactly what HubSpot takes: a name and the stage map (no delivery record, sales rep or model).
      const labels = (await form.locator('label').allTextContents()).map((label) => label.trim());
      expect(labels).toEqual(['Name', 'Prospecting', 'Qualification', 'Proposal', 'Negotiation', 'Closed won', 'Closed lost']);
      await expect(form.getByLabel('Name').inputValue()).resolves.toBe(before.name);
      await expect(form.getByLabel('Prospecting').inputValue()).resolves.toBe(before.settings.stage_map!.prospecting);

      // An emptied stage: the API refuses it, and the page shows its message on that field.
      const name = `Acme sales ${viewport.label}`;
      await form.getByLabel('Name').fill(name);
      const prospecting = form.getByLabel('Prospecting');
      await prospecting.fill('');
      await form.getByRole('button', { name: 'Save settings' }).click();
      const stageMap = { ...toCamel(before.settings.stage_map!), prospecting: '' };
      const refused = await app.graphql(
        'mutation ($id: ID!, $input: IntegrationUpdateInput!) { updateIntegration(id: $id, input: $input) { id } }',
        { id: integrationId, input: { name, settings: { stageMap } } },
        person.key,
      );
      const [problem] = refused.body.errors as Array<{ message: string; extensions: { param: string } }>;
      expect(problem.extensions.param).toMatch(/^settings\.stage_?[mM]ap\.prospecting$/);
      await waitFor('the stage marked invalid', async () => (await prospecting.getAttribute('aria-invalid')) === 'true');
      await waitFor('focus on the stage', async () => (await page.evaluate(() => document.activeElement?.id)) === 'edit-settings-stage_map-prospecting');
      const describedBy = (await prospecting.getAttribute('aria-describedby'))!.split(' ');
      await expect(page.locator(`#${describedBy[describedBy.length - 1]}`).textContent()).resolves.toBe(problem.message);
      await expect(integration()).resolves.toMatchObject({ name: before.name, settings: before.settings });
      await expectSoundPage(open);
      await screenshot(page, `integration-settings-${viewport.label}`);

      // A stage of the portal's own pipeline: saved, announced, and what REST reads back.
      const stage = `discovery-${viewport.label}`;
      await prospecting.fill(stage);
      await form.getByRole('button', { name: 'Save settings' }).click();
      await waitFor('the save announced', async () => (await announced('integration-announcer')) === `Saved the settings of HubSpot · ${name}.`);
      const after = await integration();
      expect(after.name).toBe(name);
      expect(after.settings.stage_map).toEqual({ ...before.settings.stage_map, prospecting: stage });
      await page.getByRole('heading', { name: `HubSpot · ${name}`, level: 1 }).waitFor();
      await expect(form.count()).resolves.toBe(0);
      await waitFor('focus back on Edit settings', async () => (await page.evaluate(() => document.activeElement?.id)) === 'edit-settings');
      const facts = await settingsRegion.locator('dl.stage-map').evaluate((list: { textContent: string | null }) => list.textContent);
      expect(facts).toContain(`Prospecting${stage}`);
      expect(facts).toContain(`Closed won${after.settings.stage_map!.closed_won}`);
      await expectSoundPage(open);
    });

    it('disconnects after a confirmation; the status is read back over REST', async () => {
      await page.getByRole('button', { name: 'Disconnect' }).click();
      await waitFor('focus on Cancel', async () => (await page.evaluate(() => document.activeElement?.id)) === 'disconnect-cancel');
      await expect(page.getByRole('group', { name: /^Disconnect HubSpot\?/ }).isVisible()).resolves.toBe(true);
      await expect(integration()).resolves.toMatchObject({ status: 'error' });
      await page.getByRole('button', { name: 'Yes, disconnect' }).click();
      await waitFor('the disconnected status', async () => (await page.locator('#integration-status').textContent()) === 'Disconnected');
      await expect(integration()).resolves.toMatchObject({ status: 'disconnected' });
      await expect(announced('integration-announcer')).resolves.toBe('Disconnected HubSpot; its credentials were destroyed.');
      await expect(page.getByRole('button', { name: 'Sync now' }).count()).resolves.toBe(0);
      await expect(page.getByRole('button', { name: 'Disconnect' }).count()).resolves.toBe(0);
      await expectSoundPage(open);

      // The list keeps it as history, and HubSpot can be connected again.
      await page.goto(`${app.baseUrl}/integrations`);
      await waitFor('the row', async () => (await tableRows(page, 'table[aria-label="Integrations"]'))[0]?.[3] === 'Disconnected');
      await expect(page.getByRole('button', { name: 'Connect HubSpot', exact: true }).count()).resolves.toBe(1);
    });

    it('says clearly when an integration is not found, with a way back', async () => {
      await page.goto(`${app.baseUrl}/integrations/int_doesnotexist000000000000`);
      await page.getByText('There is no integration int_doesnotexist000000000000 in this account and mode.').waitFor();
      const missing = await api('GET', '/v1/integrations/int_doesnotexist000000000000');
      expect(missing.status).toBe(404);
      await expect(page.getByRole('link', { name: 'Back to the integrations' }).getAttribute('href')).resolves.toBe('/integrations');
      await expectSoundPage(open);
    });
  });
});

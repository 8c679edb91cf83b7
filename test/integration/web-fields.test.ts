import { Browser, chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { waitFor } from '../helpers/wait';
import { screenshot, tableRows } from '../helpers/web';
import { expectSoundPage, newPerson, openAs, OpenPage, Person, restAs, VIEWPORTS } from '../helpers/workspace';

/**
 * Custom fields in the web workspace (issue 68), in Debian's Chromium at a laptop's and a phone's
 * size: an owner defines fields on Settings → Fields (a number, and a select from a comma list),
 * the table then shows what GET /v1/fields holds; on a lead's page the fields are shown and edited,
 * the API's refusal shown under the input it names; a deal's page says none are defined for deals;
 * deleting a field (after a question) takes its values from the lead, as the API then holds it.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
declare const document: { activeElement: { id: string } | null };

interface ApiField {
  id: string;
  key: string;
  label: string;
  type: string;
  object_type: string;
}

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

describe.each(VIEWPORTS)('custom fields in the workspace at $width×$height', (viewport) => {
  const { label } = viewport;
  let owner: Person;
  let rest: ReturnType<typeof restAs>;
  let open: OpenPage;
  let page: Page;
  let leadId: string;
  let dealId: string;

  const definitions = async () => (await rest<{ data: ApiField[] }>('GET', '/v1/fields?limit=100')).data;

  beforeAll(async () => {
    owner = await newPerson(app, `fields-${label}`);
    rest = restAs(app, owner.key);
    leadId = (await rest<{ id: string }>('POST', '/v1/leads', { company: `Fielded ${label}`, contact_email: `f-${label}@fielded.test` })).id;
    dealId = (await rest<{ id: string }>('POST', '/v1/deals', { name: `Fielded deal ${label}`, value: 100 })).id;
    open = await openAs(browser, app, owner, viewport);
    page = open.page;
  });
  afterAll(() => open?.context.close());

  it('defines a number and a select on Settings → Fields; the table shows what the API holds', async () => {
    await page.goto(`${app.baseUrl}/settings/fields`);
    await page.getByText('No custom fields yet.').waitFor();
    await expect(page.getByRole('navigation', { name: 'Team' }).getByRole('link', { name: 'Fields' }).getAttribute('aria-current')).resolves.toBe('page');
    await expectSoundPage(open);

    await page.getByLabel('Label').fill('Seats');
    await expect(page.getByLabel('Key').inputValue()).resolves.toBe('seats');
    await page.getByLabel('Type').selectOption('number');
    await page.getByRole('button', { name: 'Define field' }).click();
    await waitFor('Seats in the table', async () => (await tableRows(page, 'table[aria-label="Custom fields"]')).length === 1);

    // A taken key: the API's words, by the key.
    await page.getByLabel('Label').fill('Seats');
    await page.getByRole('button', { name: 'Define field' }).click();
    await page.locator('#define-error').waitFor();
    expect(await page.locator('#define-error').textContent()).toContain('already has a custom field with this key');
    await expect(page.getByLabel('Key').getAttribute('aria-invalid')).resolves.toBe('true');

    await page.getByLabel('Label').fill('Customer tier');
    await page.getByLabel('Type').selectOption('select');
    await page.getByLabel('Options (comma-separated)').fill('Gold, Silver plus');
    await page.getByRole('button', { name: 'Define field' }).click();
    await waitFor('two fields in the table', async () => (await tableRows(page, 'table[aria-label="Custom fields"]')).length === 2);
    const fields = await definitions();
    expect(fields.map((field) => [field.key, field.type, field.object_type]).sort()).toEqual([
      ['customer_tier', 'select', 'lead'],
      ['seats', 'number', 'lead'],
    ]);
    expect((await rest<{ options: unknown[] }>('GET', `/v1/fields/${fields.find((f) => f.key === 'customer_tier')!.id}`)).options).toEqual([
      { value: 'gold', label: 'Gold', archived: false },
      { value: 'silver_plus', label: 'Silver plus', archived: false },
    ]);
    const rows = await tableRows(page, 'table[aria-label="Custom fields"]');
    expect(rows.map((row) => row.slice(0, 5))).toEqual([
      ['Seats', 'Lead', 'seats', 'Number', '—'],
      ['Customer tier', 'Lead', 'customer_tier', 'Select', 'Gold, Silver plus'],
    ]);
    await expectSoundPage(open);
    await screenshot(page, `fields-${label}`);
  });

  it("shows and edits a lead's fields; the API's refusal is shown under the input it names", async () => {
    await page.goto(`${app.baseUrl}/leads/${leadId}`);
    await page.locator('[data-field="seats"]').waitFor();
    await expect(page.locator('[data-field="seats"]').textContent()).resolves.toBe('—');
    await page.getByRole('button', { name: 'Edit fields' }).click();
    await waitFor('the first field to have the focus', async () => (await page.evaluate(() => document.activeElement?.id)) === 'field-seats');
    await page.getByLabel('Seats').fill('10000000000000000');
    await page.getByRole('button', { name: 'Save fields' }).click();
    const error = page.locator('#field-seats-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/^fields\[seats\] must be a number/);
    await expect(page.getByLabel('Seats').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(rest<{ fields: unknown }>('GET', `/v1/leads/${leadId}`)).resolves.toMatchObject({ fields: {} });
    await expectSoundPage(open);

    await page.getByLabel('Seats').fill('120');
    await page.getByLabel('Customer tier').selectOption('silver_plus');
    await page.getByRole('button', { name: 'Save fields' }).click();
    await waitFor('the values shown', async () => (await page.locator('[data-field="customer_tier"]').textContent()) === 'Silver plus');
    await expect(page.locator('[data-field="seats"]').textContent()).resolves.toBe('120');
    await expect(rest<{ fields: unknown }>('GET', `/v1/leads/${leadId}`)).resolves.toMatchObject({ fields: { seats: 120, customer_tier: 'silver_plus' } });
    await expectSoundPage(open);
    await screenshot(page, `lead-fields-${label}`);
  });

  it("a deal's page says no fields are defined for deals", async () => {
    await page.goto(`${app.baseUrl}/deals/${dealId}`);
    await page.getByText('No custom fields for deals in this mode yet.').waitFor();
    await expectSoundPage(open);
  });

  it('deleting a field after a question takes its values from the lead', async () => {
    await page.goto(`${app.baseUrl}/settings/fields`);
    const seats = (await definitions()).find((field) => field.key === 'seats')!;
    await page.getByRole('button', { name: 'Delete Seats' }).click();
    await page
      .getByRole('group', { name: /^Delete Seats\?/ })
      .getByRole('button', { name: 'Yes, delete' })
      .click();
    await waitFor('one field left', async () => (await tableRows(page, 'table[aria-label="Custom fields"]')).length === 1);
    expect((await app.request('GET', `/v1/fields/${seats.id}`, { key: owner.key })).status).toBe(404);
    await expect(rest<{ fields: unknown }>('GET', `/v1/leads/${leadId}`)).resolves.toMatchObject({ fields: { customer_tier: 'silver_plus' } });
    expect(open.errors).toEqual([]);
  });
});

import { Browser, chromium } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { screenshot, tableRows } from '../helpers/web';
import { expectSoundPage, newPerson, OpenPage, openAs, Person, VIEWPORTS } from '../helpers/workspace';
import { ApiKey } from '../../src/modules/accounts/api-key.entity';

/**
 * Developers → API keys (src/web/keys.router.ts), as in Stripe's dashboard: the keys of the
 * session's mode, generated secret or restricted, rolled with a chosen expiry of the old value,
 * each new value shown once with a copy button and a curl line. Every key made here is then used
 * against the real API, and what the table shows is compared with the stored keys.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomElement {
  id: string;
  textContent: string | null;
  style: { filter: string };
}
declare const document: { activeElement: DomElement | null };
declare const navigator: { clipboard: { readText(): Promise<string> } };

const KEYS_TABLE = 'table[aria-label="API keys"]';
/** How the page writes a time (src/web/key-views.ts fmt). */
const fmt = (date: Date | null | undefined) => (date ? date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—');
const COLUMNS = ['name', 'type', 'permissions', 'key', 'created', 'lastUsed', 'status'] as const;

describe('API keys page', () => {
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

  describe.each(VIEWPORTS)('at $label size', (viewport) => {
    let person: Person;
    let open: OpenPage;

    beforeAll(async () => {
      person = await newPerson(app, `keys-${viewport.label}`);
      open = await openAs(browser, app, person, viewport);
      await open.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    });
    afterAll(() => open?.context.close());

    const v1 = (method: string, pathname: string, key: string, body?: unknown) => app.request(method, pathname, { key, body });
    /** The table as the person reads it, one object per row. */
    const rows = async () =>
      (await tableRows(open.page, KEYS_TABLE)).map(
        (cells) => Object.fromEntries(COLUMNS.map((column, i) => [column, cells[i]])) as Record<(typeof COLUMNS)[number], string>,
      );
    const stored = async () => app.orm.em.fork().find(ApiKey, { account: { email: person.email } }, { orderBy: { createdAt: 'asc' } });
    const shownValue = async () => ((await open.page.locator('#new-secret').textContent()) ?? '').trim();
    /** Blurs the value shown (a throwaway key of a test account) before a picture is taken. */
    const blurSecrets = () =>
      open.page.locator('#new-secret, #curl-line').evaluateAll((elements: DomElement[]) => {
        for (const element of elements) element.style.filter = 'blur(5px)';
      });
    /** The curl line shown with a value, checked to be the value's, and run as curl would run it. */
    const runCurlLine = async (value: string) => {
      const line = ((await open.page.locator('#curl-line').textContent()) ?? '').trim();
      expect(line).toBe(`curl ${app.baseUrl}/v1/leads -H "Authorization: Bearer ${value}"`);
      const [, url, header] = /^curl (\S+) -H "Authorization: (.+)"$/.exec(line)!;
      return fetch(url, { headers: { authorization: header } });
    };

    it('lists the test keys of test mode as stored: type, permissions, prefix…last4, created, last used, status', async () => {
      await open.page.goto(`${app.baseUrl}/settings/api-keys`);
      await expect(open.page.getByRole('heading', { name: 'Generate a new test key' }).isVisible()).resolves.toBe(true);
      const keys = await stored();
      expect(await rows()).toEqual(
        keys.map((key) => ({
          name: key.name,
          type: 'secret',
          permissions: 'full access',
          key: `sk_test_…${key.last4}`,
          created: fmt(key.createdAt),
          lastUsed: fmt(key.lastUsedAt),
          status: 'Active',
        })),
      );
      // A restricted key's levels show only once "Restricted key" is chosen.
      await expect(open.page.locator('#key-permissions').isHidden()).resolves.toBe(true);
      await expectSoundPage(open);
    });

    it('refuses a restricted key with no permission, the levels marked invalid, what was typed kept', async () => {
      await open.page.getByLabel('Name (what will use it)').fill('Nothing allowed');
      await open.page.getByLabel('Restricted key').check();
      await open.page.getByRole('button', { name: 'Generate key' }).click();
      await expect(open.page.getByRole('alert').textContent()).resolves.toBe('Give the restricted key at least one permission (read or write on a resource).');
      await expect(open.page.getByLabel('Leads').getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(open.page.evaluate(() => document.activeElement?.id)).resolves.toBe('perm-leads');
      await expect(open.page.getByLabel('Name (what will use it)').inputValue()).resolves.toBe('Nothing allowed');
      await expect(open.page.getByLabel('Restricted key').isChecked()).resolves.toBe(true);
      expect((await stored()).map((key) => key.name)).not.toContain('Nothing allowed');
      open.errors.length = 0; // the refusal was a 400 on purpose
    });

    it('generates a restricted key leads=read: shown once with a curl line; it reads leads and is refused writing them', async () => {
      await open.page.goto(`${app.baseUrl}/settings/api-keys`);
      await open.page.getByLabel('Name (what will use it)').fill('Lead reader');
      await open.page.getByLabel('Restricted key').check();
      await open.page.getByLabel('Leads').selectOption('read');
      await expect(open.page.locator('#key-permissions').isVisible()).resolves.toBe(true);
      await expectSoundPage(open);
      await screenshot(open.page, `api-keys-restricted-${viewport.label}`); // the form with its levels
      await open.page.getByRole('button', { name: 'Generate key' }).click();
      await open.page.locator('#new-secret').waitFor();
      const value = await shownValue();
      expect(value).toMatch(/^rk_test_[A-Za-z0-9]{32}$/);
      await open.page.waitForFunction(() => document.activeElement?.id === 'new-key-section');

      const listed = await runCurlLine(value);
      expect(listed.status).toBe(200);
      const created = await v1('POST', '/v1/leads', value, { company: 'Not Allowed Ltd', contact_email: 'no@notallowed.example' });
      expect(created.status).toBe(403);
      expect(created.body.error).toMatchObject({ type: 'permission_error', code: 'permission_denied' });
      expect(created.body.error.message).toBe('This key lacks the leads:write permission this request needs.');

      const key = (await stored()).find((k) => k.name === 'Lead reader')!;
      expect(key.permissions).toMatchObject({ leads: 'read', deals: 'none' });
      expect((await rows()).find((row) => row.name === 'Lead reader')).toMatchObject({
        type: 'restricted',
        permissions: 'leads=read',
        key: `rk_test_…${value.slice(-4)}`,
      });
      await expectSoundPage(open);

      await open.page.reload();
      await expect(open.page.content()).resolves.not.toContain(value);
    });

    it('rolls a key with the old value kept 1 hour: both values work, the status says when the old one expires', async () => {
      const [first] = await stored();
      await open.page.goto(`${app.baseUrl}/settings/api-keys`);
      await open.page.getByRole('link', { name: `Roll ${first.name}` }).click();
      await open.page.waitForURL(`${app.baseUrl}/settings/api-keys/${first.id}/roll`);
      await expectSoundPage(open);
      await open.page.getByLabel('In 1 hour').check();
      await open.page.getByRole('button', { name: 'Roll key' }).click();
      await open.page.waitForURL(`${app.baseUrl}/settings/api-keys`);
      await expect(open.page.getByRole('heading', { name: `New value of “${first.name}”` }).isVisible()).resolves.toBe(true);
      const rolled = await shownValue();
      expect(rolled).toMatch(/^sk_test_/);
      expect(rolled).not.toBe(person.key);

      const after = (await stored()).find((key) => key.id === first.id)!;
      expect(after.previousSecretExpiresAt!.getTime() - Date.now()).toBeGreaterThan(59 * 60_000);
      expect(after.previousSecretExpiresAt!.getTime() - Date.now()).toBeLessThanOrEqual(60 * 60_000);
      await expect(open.page.locator('#new-key-section').textContent()).resolves.toContain(
        `The old value keeps working until ${fmt(after.previousSecretExpiresAt)}`,
      );
      expect((await rows()).find((row) => row.name === first.name)?.status).toBe(`Active · old value expires at ${fmt(after.previousSecretExpiresAt)}`);
      expect((await runCurlLine(rolled)).status).toBe(200);
      expect((await v1('GET', '/v1/leads', person.key)).status).toBe(200);
      person.key = rolled;
      await blurSecrets();
      await expectSoundPage(open);
      await screenshot(open.page, `api-keys-${viewport.label}`);
    });

    it('rolls with "now": the old value is refused at once with the API\'s error, the new one works', async () => {
      const [first] = await stored();
      const old = person.key;
      await open.page.goto(`${app.baseUrl}/settings/api-keys/${first.id}/roll`);
      await expect(open.page.getByLabel('Now').isChecked()).resolves.toBe(true);
      await open.page.getByRole('button', { name: 'Roll key' }).click();
      await open.page.locator('#new-secret').waitFor();
      const rolled = await shownValue();
      await expect(open.page.locator('#new-key-section').textContent()).resolves.toContain('The old value no longer works.');
      const refused = await v1('GET', '/v1/leads', old);
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ type: 'authentication_error', code: 'api_key_revoked' });
      expect(refused.body.error.message).toMatch(/^This API key was rolled; its old value expired at .+\. Use its new value\.$/);
      expect((await runCurlLine(rolled)).status).toBe(200);
      expect((await rows()).find((row) => row.name === first.name)?.status).toBe('Active');
      person.key = rolled;
    });

    it('keyboard only: name, kind, generate; the focus moves to the new value, then its copy button copies it', async () => {
      const { page } = open;
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      const focused = () => page.evaluate(() => `${document.activeElement?.id ?? ''}|${(document.activeElement?.textContent ?? '').trim()}`);
      await page.keyboard.press('Tab');
      await expect(focused()).resolves.toBe('|Skip to content');
      await page.keyboard.press('Enter');
      for (let i = 0; i < 5; i++) await page.keyboard.press('Tab'); // the four Developers tabs, then the form
      await expect(focused()).resolves.toBe('key-name|');
      await page.keyboard.type('Keyboard key');
      await page.keyboard.press('Tab');
      await expect(focused()).resolves.toBe('kind-secret|');
      await page.keyboard.press('Tab'); // a secret key: the permissions are hidden, so straight to the button
      await expect(focused()).resolves.toBe('|Generate key');
      await page.keyboard.press('Enter');
      await page.locator('#new-secret').waitFor();
      await page.waitForFunction(() => document.activeElement?.id === 'new-key-section');
      const value = await shownValue();
      await expect(page.locator('#new-key-section').locator('#new-secret').textContent()).resolves.toBe(value);
      await page.keyboard.press('Tab');
      await expect(focused()).resolves.toBe('|Copy key');
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Copied' }).waitFor();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(value);
      await page.keyboard.press('Tab');
      await expect(focused()).resolves.toBe('|Copy curl command');
      await page.keyboard.press('Enter');
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(`curl ${app.baseUrl}/v1/leads -H "Authorization: Bearer ${value}"`);
      expect((await v1('GET', '/v1/leads', value)).status).toBe(200);
    });

    it('live keys appear only in live mode, and test keys only in test mode', async () => {
      const { page } = open;
      await page.goto(`${app.baseUrl}/settings/api-keys`);
      await page.getByRole('button', { name: 'Switch to live' }).click();
      await page.waitForURL(`${app.baseUrl}/settings/api-keys`);
      await expect(page.locator('#no-keys').textContent()).resolves.toContain('No live keys yet.');
      await page.getByLabel('Name (what will use it)').fill('Live import');
      await page.getByRole('button', { name: 'Generate key' }).click();
      await page.locator('#new-secret').waitFor();
      const live = await shownValue();
      expect(live).toMatch(/^sk_live_/);
      const keys = await stored();
      const liveKeys = keys.filter((key) => key.type === 'live');
      expect((await rows()).map((row) => row.key)).toEqual(liveKeys.map((key) => `sk_live_…${key.last4}`));
      const created = await v1('POST', '/v1/leads', live, { company: 'Live Corp', contact_email: 'ceo@livecorp.example' });
      expect(created.body).toMatchObject({ livemode: true });
      await expectSoundPage(open);

      await page.getByRole('button', { name: 'Switch to test' }).click();
      await page.waitForURL(`${app.baseUrl}/settings/api-keys`);
      const testKeys = keys.filter((key) => key.type === 'test').reverse(); // newest first
      expect((await rows()).map((row) => row.key)).toEqual(testKeys.map((key) => `${key.prefix}…${key.last4}`));
      expect((await rows()).some((row) => row.key.startsWith('sk_live_'))).toBe(false);
    });
  });
});

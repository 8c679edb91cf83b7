import { Browser, chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { OidcProvider, startOidcProvider } from '../helpers/oidc-provider';
import { freePort } from '../helpers/service-process';
import { SSO_CLIENT } from '../helpers/sso';
import { BROWSER_STEP_TIMEOUT_MS } from '../helpers/timeouts';
import { totpCode } from '../helpers/two-factor';
import { PASSWORD, screenshot } from '../helpers/web';
import { expectNoHorizontalOverflow, expectNoSeriousAxeViolations, VIEWPORTS } from '../helpers/workspace';
import { hashPassword } from '../../src/modules/accounts/password';
import { User } from '../../src/modules/accounts/user.entity';

/**
 * The pages of two-step sign-in and single sign-on in Chromium, at a desktop and a phone size:
 * an owner turns two-step sign-in on (typing a code computed from the secret the page shows), sets
 * up single sign-on against a real OpenID provider on loopback, signs in again with a code, and a
 * colleague signs in through the provider from the login page. Every page fits the screen (no
 * sideways scrolling) and axe-core finds nothing serious or critical on it.
 */
describe('sign-in pages in Chromium', () => {
  let app: TestApp;
  let provider: OidcProvider;
  let browser: Browser;

  beforeAll(async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    provider = await startOidcProvider({ clients: [{ ...SSO_CLIENT, redirect_uris: [`${publicUrl}/sso/callback`] }] });
    app = await startTestApp({ port, env: { PUBLIC_URL: publicUrl, SSO_ALLOW_PRIVATE_URLS: 'true' } });
  });
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  }, CHROMIUM_INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await provider?.close();
  });

  const sound = async (page: Page, what: string) => {
    try {
      await expectNoHorizontalOverflow(page);
      await expectNoSeriousAxeViolations(page);
    } catch (error) {
      throw new Error(`${what}: ${(error as Error).message}`);
    }
  };

  for (const viewport of VIEWPORTS) {
    it(`two-step sign-in and single sign-on, set up and used (${viewport.width}×${viewport.height})`, async () => {
      const domain = `browser-${viewport.label}-${Date.now().toString(36)}.test`;
      const owner = await app.createAccount({ email: `owner@${domain}`, name: `Browser ${viewport.label} Co` });
      await app.orm.em.fork().nativeUpdate(User, { email: owner.account.email }, { passwordHash: await hashPassword(PASSWORD), emailVerifiedAt: new Date() });

      const context = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height }, locale: 'en-US', timezoneId: 'UTC' });
      context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
      const page = await context.newPage();
      const heading = () => page.getByRole('heading', { level: 1 }).textContent();
      const logIn = async () => {
        await page.goto(`${app.baseUrl}/login`);
        await page.getByLabel('Email').fill(owner.account.email);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Log in' }).click();
      };
      try {
        await logIn();
        await page.waitForURL(/\/(welcome|dashboard)$/);

        // Two-step sign-in: the owner turns it on.
        await page.goto(`${app.baseUrl}/settings/plan`);
        await page.getByRole('link', { name: 'Two-step sign-in' }).click();
        await page.waitForURL(`${app.baseUrl}/settings/two-factor`);
        await sound(page, 'two-step sign-in off');
        await page.getByRole('button', { name: 'Set up two-step sign-in' }).click();
        await page.waitForURL(`${app.baseUrl}/settings/two-factor`);
        const secret = (await page.locator('#totp-secret').textContent())!.trim();
        await expect(page.locator('#totp-uri').textContent()).resolves.toContain('otpauth://totp/');
        await page.getByLabel('Code from your app').fill('000000');
        await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
        await expect(page.getByLabel('Code from your app').getAttribute('aria-invalid')).resolves.toBe('true');
        await sound(page, 'two-step sign-in set-up with a wrong code');
        await page.getByLabel('Code from your app').fill(await totpCode(secret));
        await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
        await expect(page.locator('#recovery-codes li').count()).resolves.toBe(10);
        await sound(page, 'recovery codes');
        await screenshot(page, `two-factor-setup-${viewport.label}`);

        // Single sign-on: the owner connects the provider.
        await page.goto(`${app.baseUrl}/settings/plan`);
        await page.getByRole('link', { name: 'Single sign-on' }).click();
        await page.waitForURL(`${app.baseUrl}/settings/sso`);
        await sound(page, 'single sign-on off');
        await page.getByLabel('Issuer URL').fill(provider.issuer);
        await page.getByLabel('Client ID').fill(SSO_CLIENT.client_id);
        await page.getByLabel('Client secret').fill(SSO_CLIENT.client_secret);
        await page.getByLabel('E-mail domains').fill('gmail.com');
        await page.getByRole('button', { name: 'Save' }).click();
        await expect(page.getByLabel('E-mail domains').getAttribute('aria-invalid')).resolves.toBe('true');
        await sound(page, 'single sign-on with an error');
        await page.getByLabel('Client secret').fill(SSO_CLIENT.client_secret);
        await page.getByLabel('E-mail domains').fill(domain);
        await page.getByLabel('Role of people who sign in for the first time').selectOption('viewer');
        await page.getByRole('button', { name: 'Save' }).click();
        await page.waitForURL(`${app.baseUrl}/settings/sso?saved=1`);
        await expect(page.getByRole('status').textContent()).resolves.toContain('Single sign-on saved.');
        await sound(page, 'single sign-on saved');
        await screenshot(page, `sso-settings-${viewport.label}`);

        // Signing in again asks for the code.
        await page.getByRole('button', { name: 'Log out' }).click();
        await page.waitForURL(`${app.baseUrl}/login`);
        await logIn();
        await page.waitForURL(`${app.baseUrl}/login/two-factor`);
        await sound(page, 'the code step');
        await page.getByLabel('Code').fill(await totpCode(secret, 1));
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(/\/(welcome|dashboard)$/);

        // A colleague signs in through the provider, from the login page.
        await page.getByRole('button', { name: 'Log out' }).click();
        await page.waitForURL(`${app.baseUrl}/login`);
        await page.getByRole('link', { name: 'Sign in with SSO' }).click();
        await page.waitForURL(`${app.baseUrl}/login/sso`);
        await sound(page, 'single sign-on start');
        await page.getByLabel('Work email').fill(`colleague@${domain}`);
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.waitForURL(/\/(welcome|dashboard)$/);
        await expect(heading()).resolves.not.toContain('did not complete');
      } finally {
        await context.close();
      }
    });
  }
});

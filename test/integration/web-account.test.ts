import { createHash } from 'node:crypto';
import { AddressInfo, createServer, Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { Browser, chromium, Page } from 'playwright-core';
import { HttpResponse, startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { ReceivedMail, SmtpInbox, startSmtpInbox } from '../helpers/fakes/smtp-inbox';
import { BROWSER_STEP_TIMEOUT_MS } from '../helpers/timeouts';
import { waitFor } from '../helpers/wait';
import { Account } from '../../src/modules/accounts/account.entity';
import { User } from '../../src/modules/accounts/user.entity';
import { createMailer } from '../../src/mail/mailer';
import { createLogger } from '../../src/logger';

/**
 * The account's e-mail (issue 24): sign-up with a verification link, a forgotten password's reset
 * link, a password change. The app sends through nodemailer to a loopback SMTP server (SmtpInbox);
 * the tests read the messages as their recipient would and follow the links, over HTTP and in
 * Chromium at a desktop and a phone size (no horizontal overflow, axe-core without serious or
 * critical violations). A sign-up with a taken address must look exactly like one with a new address.
 */

/** The little of the DOM the page functions here use (the project compiles without lib "dom"). */
declare const document: { documentElement: { scrollWidth: number; clientWidth: number } };
interface AxeResult {
  violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown }> }>;
}
declare const axe: { run(): Promise<AxeResult> };

const PUBLIC_URL = 'https://app.example.test';
const PASSWORD = 'correct horse battery staple';
const BAD_LOGIN = 'Email or password is incorrect.';
let counter = 0;
const uniqueEmail = (who = 'user') => `${who}-${Date.now()}-${++counter}@example.test`;

async function http(
  app: TestApp,
  method: string,
  pathname: string,
  options: { cookie?: string; form?: Record<string, string> } = {},
): Promise<HttpResponse<string>> {
  const headers: Record<string, string> = {};
  if (options.cookie) headers.cookie = options.cookie;
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  if (method !== 'GET') headers.origin = app.baseUrl;
  const response = await fetch(`${app.baseUrl}${pathname}`, { method, headers, body, redirect: 'manual' });
  return { status: response.status, headers: response.headers, body: '', text: await response.text() };
}

function sessionCookie(res: HttpResponse): string {
  const match = /(?:^|,\s*)(spa_session=[^;]+)/.exec(res.headers.get('set-cookie') ?? '');
  if (!match) throw new Error(`no session cookie in ${res.status}: ${res.headers.get('set-cookie')}`);
  return match[1];
}

const csrfOf = (pageHtml: string) => /<meta name="csrf-token" content="([^"]+)">/.exec(pageHtml)![1];

/** The one link of a message, checked to be built from PUBLIC_URL (never the request's Host). */
function linkIn(mail: ReceivedMail, path: string): { token: string; local: string } {
  const match = new RegExp(`${PUBLIC_URL.replace(/\./g, '\\.')}${path}\\?token=([A-Za-z0-9_-]{43})\\b`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in: ${mail.text}`);
  return { token: match[1], local: `${path}?token=${match[1]}` };
}

describe('account e-mail', () => {
  let inbox: SmtpInbox;
  let app: TestApp;

  const mailFor = (address: string, count = 1) =>
    waitFor(`${count} message(s) for ${address}`, () => inbox.for(address).length >= count && inbox.for(address)[count - 1]);
  const signUp = (email: string, password = PASSWORD, name = 'Acme') => http(app, 'POST', '/signup', { form: { name, email, password } });
  const logIn = (email: string, password = PASSWORD) => http(app, 'POST', '/login', { form: { email, password } });

  /** Signs up and verifies through the e-mailed link; returns a signed-in session. */
  async function verifiedAccount(email = uniqueEmail()): Promise<{ email: string; cookie: string; csrf: string }> {
    expect((await signUp(email)).status).toBe(303);
    expect((await http(app, 'GET', linkIn(await mailFor(email), '/verify-email').local)).status).toBe(200);
    const login = await logIn(email);
    expect(login.status).toBe(303);
    const cookie = sessionCookie(login);
    return { email, cookie, csrf: csrfOf((await http(app, 'GET', '/settings/password', { cookie })).text) };
  }

  beforeAll(async () => {
    inbox = await startSmtpInbox();
    app = await startTestApp({ env: { SMTP_URL: inbox.url, MAIL_FROM: 'Sales Pipeline <accounts@example.test>', PUBLIC_URL } });
    await app.reset();
  });
  afterAll(async () => {
    await app?.close();
    await inbox?.close();
  });

  describe('sign-up and verification', () => {
    it('a new address: "check your inbox", no session, a verification e-mail whose link verifies once; sign-in waits for it', async () => {
      const email = uniqueEmail('new');
      const res = await signUp(email);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/signup/sent');
      expect(res.headers.get('set-cookie')).toBeNull();
      const sent = await http(app, 'GET', '/signup/sent');
      expect(sent.text).toContain('We sent a message to the address you gave.');

      const mail = await mailFor(email);
      expect(mail.recipients).toEqual([email]);
      expect(mail.envelopeFrom).toBe('accounts@example.test');
      expect(mail.headers.from).toBe('Sales Pipeline <accounts@example.test>');
      expect(mail.subject).toBe('Verify your e-mail address');
      expect(inbox.logins).toContain('mailer:secret');
      const { token, local } = linkIn(mail, '/verify-email');

      // Only the token's SHA-256 is stored, with a 7-day expiry.
      const connection = app.orm.em.fork().getConnection();
      const [row] = await connection.execute<Array<{ token_hash: string; purpose: string; expires_at: Date; created_at: Date }>>(
        'select t.token_hash, t.purpose, t.expires_at, t.created_at from account_email_tokens t join users u on u.id = t.user_id where u.email = ?',
        [email],
      );
      expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
      expect(row.purpose).toBe('verify_email');
      expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBe(7 * 86_400_000);

      // Not verified yet: the right password gets the same answer as a wrong one.
      const early = await logIn(email);
      expect(early.status).toBe(401);
      expect(early.text).toContain(BAD_LOGIN);
      expect(early.headers.get('set-cookie')).toBeNull();

      const verified = await http(app, 'GET', local);
      expect(verified.status).toBe(200);
      expect(verified.text).toContain('Your e-mail address is verified.');
      expect(verified.headers.get('referrer-policy')).toBe('same-origin');
      const user = await app.orm.em.fork().findOneOrFail(User, { email });
      expect(user.emailVerifiedAt).toBeInstanceOf(Date);

      const again = await http(app, 'GET', local);
      expect(again.status).toBe(400);
      expect(again.text).toContain('The link has expired or was already used.');

      const login = await logIn(email);
      expect(login.status).toBe(303);
      expect(login.headers.get('location')).toBe('/welcome'); // the first sign-in: no key, no data yet
    });

    it('a taken address gets the very same answer; its owner is told by e-mail (with a reset link) and nothing changes', async () => {
      const owner = await verifiedAccount(uniqueEmail('owner'));
      const fresh = uniqueEmail('fresh');
      const newAnswer = await signUp(fresh, 'another password 123', 'Intruder');
      const takenAnswer = await signUp(owner.email.toUpperCase(), 'another password 123', 'Intruder');
      for (const res of [newAnswer, takenAnswer]) {
        expect(res.status).toBe(303);
        expect(res.headers.get('location')).toBe('/signup/sent');
        expect(res.headers.get('set-cookie')).toBeNull();
      }
      expect(takenAnswer.text).toBe(newAnswer.text);

      const mail = await mailFor(owner.email, 2);
      expect(mail.recipients).toEqual([owner.email]);
      expect(mail.subject).toBe('Someone tried to sign up with your address');
      expect(mail.text).toContain('Nothing was changed.');
      linkIn(mail, '/reset-password');
      expect((await mailFor(fresh)).subject).toBe('Verify your e-mail address');

      // The owner's account, name and password are as they were, and there is still one account.
      expect(await app.orm.em.fork().count(Account, { email: owner.email })).toBe(1);
      expect((await app.orm.em.fork().findOneOrFail(Account, { email: owner.email })).name).toBe('Acme');
      expect((await logIn(owner.email, 'another password 123')).status).toBe(401);
      expect((await logIn(owner.email)).status).toBe(303);
    });

    it('expired verification links are refused and verify nothing', async () => {
      const email = uniqueEmail('late');
      await signUp(email);
      const { local } = linkIn(await mailFor(email), '/verify-email');
      await app.orm.em
        .fork()
        .getConnection()
        .execute(`update account_email_tokens set expires_at = now() - interval '1 second' where purpose = 'verify_email'`);
      expect((await http(app, 'GET', local)).status).toBe(400);
      expect((await http(app, 'GET', '/verify-email?token=not-a-token')).status).toBe(400);
      expect((await http(app, 'GET', '/verify-email')).status).toBe(400);
      expect((await app.orm.em.fork().findOneOrFail(User, { email })).emailVerifiedAt).toBeNull();
    });

    it('limits sign-ups per e-mail: the 4th in an hour is 429 with Retry-After, for a taken address as for a new one', async () => {
      const owner = await verifiedAccount(uniqueEmail('popular'));
      const fresh = uniqueEmail('repeat');
      for (const email of [owner.email, fresh]) {
        for (let i = 1; i <= (email === owner.email ? 2 : 3); i++) expect((await signUp(email)).status).toBe(303);
        const limited = await signUp(email);
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(limited.text).toContain('Too many sign-ups for this address.');
      }
    });
  });

  describe('forgotten password', () => {
    it('answers the same for an unknown address; the owner gets a 1-hour link that sets the password, ends other sessions and signs in', async () => {
      const { email, cookie: otherSession } = await verifiedAccount(uniqueEmail('forgetful'));
      const unknown = uniqueEmail('nobody');
      const forUnknown = await http(app, 'POST', '/forgot-password', { form: { email: unknown } });
      const forOwner = await http(app, 'POST', '/forgot-password', { form: { email } });
      for (const res of [forUnknown, forOwner]) {
        expect(res.status).toBe(303);
        expect(res.headers.get('location')).toBe('/forgot-password/sent');
      }
      expect(forOwner.text).toBe(forUnknown.text);
      expect((await http(app, 'GET', '/forgot-password/sent')).text).toContain('If an account uses that address, we sent it a link');

      const mail = await mailFor(email, 2);
      expect(mail.subject).toBe('Reset your password');
      expect(mail.recipients).toEqual([email]);
      expect(inbox.for(unknown)).toEqual([]);
      const { local, token } = linkIn(mail, '/reset-password');
      const [row] = await app.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ expires_at: Date; created_at: Date }>>('select expires_at, created_at from account_email_tokens where token_hash = ?', [
          createHash('sha256').update(token).digest('hex'),
        ]);
      expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBe(3_600_000);

      const form = await http(app, 'GET', local);
      expect(form.status).toBe(200);
      expect(form.text).toContain(`name="token" value="${token}"`);
      // Looking at the form does not use the link; a short password is refused on the field.
      const short = await http(app, 'POST', '/reset-password', { form: { token, password: 'short' } });
      expect(short.status).toBe(400);
      expect(short.text).toMatch(/id="password"[^>]*aria-invalid="true"[^>]*aria-describedby="password-error password-hint"/s);

      const reset = await http(app, 'POST', '/reset-password', { form: { token, password: 'a brand new password' } });
      expect(reset.status).toBe(303);
      expect(reset.headers.get('location')).toBe('/dashboard');
      expect((await http(app, 'GET', '/dashboard', { cookie: sessionCookie(reset) })).status).toBe(200);
      const ended = await http(app, 'GET', '/dashboard', { cookie: otherSession });
      expect(ended.status).toBe(303);
      expect(ended.headers.get('location')).toBe('/login');
      expect((await logIn(email)).status).toBe(401);
      expect((await logIn(email, 'a brand new password')).status).toBe(303);

      // Single use.
      expect((await http(app, 'GET', local)).status).toBe(400);
      const reused = await http(app, 'POST', '/reset-password', { form: { token, password: 'yet another password' } });
      expect(reused.status).toBe(400);
      expect(reused.text).toContain('The link has expired or was already used.');
      expect((await logIn(email, 'a brand new password')).status).toBe(303);
    });

    it('an expired reset link is refused, and the password stays', async () => {
      const { email } = await verifiedAccount(uniqueEmail('slow'));
      await http(app, 'POST', '/forgot-password', { form: { email } });
      const { token, local } = linkIn(await mailFor(email, 2), '/reset-password');
      await app.orm.em
        .fork()
        .getConnection()
        .execute(`update account_email_tokens set expires_at = now() - interval '1 second' where token_hash = ?`, [
          createHash('sha256').update(token).digest('hex'),
        ]);
      expect((await http(app, 'GET', local)).status).toBe(400);
      const late = await http(app, 'POST', '/reset-password', { form: { token, password: 'too late password' } });
      expect(late.status).toBe(400);
      expect(late.headers.get('set-cookie')).toBeNull();
      expect((await logIn(email)).status).toBe(303);
    });

    it('a reset link verifies an address that was never verified (it proves the mailbox)', async () => {
      const email = uniqueEmail('unverified');
      await signUp(email);
      await mailFor(email);
      await http(app, 'POST', '/forgot-password', { form: { email } });
      const { token } = linkIn(await mailFor(email, 2), '/reset-password');
      expect((await http(app, 'POST', '/reset-password', { form: { token, password: 'chosen after reset' } })).status).toBe(303);
      expect((await logIn(email, 'chosen after reset')).status).toBe(303);
    });

    it('limits requests per e-mail: the 4th in an hour is 429, for an unknown address as for a known one', async () => {
      const { email } = await verifiedAccount(uniqueEmail('limited'));
      for (const address of [email, uniqueEmail('ghost')]) {
        for (let i = 1; i <= 3; i++) expect((await http(app, 'POST', '/forgot-password', { form: { email: address } })).status).toBe(303);
        const limited = await http(app, 'POST', '/forgot-password', { form: { email: address } });
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      await waitFor('3 reset messages', () => inbox.for(email).filter((mail) => mail.subject === 'Reset your password').length === 3);
    });
  });

  describe('changing the password', () => {
    it('needs the current password (an error tied to its field) and the CSRF token; logs out the other sessions only', async () => {
      const { email, cookie, csrf } = await verifiedAccount(uniqueEmail('changer'));
      const other = sessionCookie(await logIn(email));

      const noToken = await http(app, 'POST', '/settings/password', { cookie, form: { current_password: PASSWORD, new_password: 'changed password 1' } });
      expect(noToken.status).toBe(403);
      const wrong = await http(app, 'POST', '/settings/password', {
        cookie,
        form: { _csrf: csrf, current_password: 'not my password', new_password: 'changed password 1' },
      });
      expect(wrong.status).toBe(400);
      expect(wrong.text).toMatch(/id="current_password"[^>]*aria-invalid="true"[^>]*aria-describedby="current_password-error"/s);
      expect(wrong.text).toContain('<p class="error" id="current_password-error">The current password is incorrect.</p>');
      const short = await http(app, 'POST', '/settings/password', { cookie, form: { _csrf: csrf, current_password: PASSWORD, new_password: 'short' } });
      expect(short.status).toBe(400);
      expect(short.text).toMatch(/id="new_password"[^>]*aria-invalid="true"/s);
      expect((await logIn(email)).status).toBe(303);

      const changed = await http(app, 'POST', '/settings/password', {
        cookie,
        form: { _csrf: csrf, current_password: PASSWORD, new_password: 'changed password 1' },
      });
      expect(changed.status).toBe(303);
      expect(changed.headers.get('location')).toBe('/settings/password?changed=1');
      expect((await http(app, 'GET', '/settings/password?changed=1', { cookie })).text).toContain('Your password was changed.');
      expect((await http(app, 'GET', '/dashboard', { cookie: other })).headers.get('location')).toBe('/login');
      expect((await logIn(email)).status).toBe(401);
      expect((await logIn(email, 'changed password 1')).status).toBe(303);
      expect((await http(app, 'GET', '/settings/password')).headers.get('location')).toBe('/login');
    });
  });

  describe('without SMTP_URL', () => {
    it('outside production, the link is written to the log (one info line, nothing else secret) and works', async () => {
      const stream = new PassThrough();
      const lines: string[] = [];
      stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
      const local = await startTestApp({ env: { LOG_LEVEL: 'info', PUBLIC_URL }, logStream: stream });
      try {
        const email = uniqueEmail('dev');
        const res = await http(local, 'POST', '/signup', { form: { name: 'Dev', email, password: PASSWORD } });
        expect(res.status).toBe(303);
        const line = await waitFor('the e-mail log line', () => lines.find((each) => each.includes('"mail"')));
        const entry = JSON.parse(line) as { level: number; msg: string; mail: { to: string; subject: string; link: string } };
        expect(entry.level).toBe(30);
        expect(entry.mail.to).toBe(email);
        expect(entry.mail.subject).toBe('Verify your e-mail address');
        expect(entry.mail.link).toMatch(new RegExp(`^${PUBLIC_URL}/verify-email\\?token=[\\w-]{43}$`));
        expect(line).not.toContain(PASSWORD);
        expect(line).not.toContain('Welcome to Sales Pipeline');
        expect(inbox.for(email)).toEqual([]);
        const verified = await http(local, 'GET', new URL(entry.mail.link).pathname + new URL(entry.mail.link).search);
        expect(verified.status).toBe(200);
      } finally {
        await local.close();
      }
    });

    it('in production, the mailer is not configured and sends nothing', async () => {
      const mailer = createMailer({ from: 'a@example.test', timeoutMs: 1000 }, createLogger('silent'), true);
      expect(mailer.configured).toBe(false);
      await expect(mailer.send({ to: 'b@example.test', subject: 's', text: 't', link: 'l' })).rejects.toThrow('SMTP_URL is not set');
    });
  });

  describe('a stalled SMTP server', () => {
    it('does not hold the answer; the delivery gives up after MAIL_TIMEOUT_MS and is logged as an error', async () => {
      // Accepts connections and never says a word (no 220 greeting).
      const sockets: Socket[] = [];
      const silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
      const stream = new PassThrough();
      const lines: string[] = [];
      stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
      const port = (silent.address() as AddressInfo).port;
      const stalled = await startTestApp({
        env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_TIMEOUT_MS: '300', LOG_LEVEL: 'error', PUBLIC_URL },
        logStream: stream,
      });
      try {
        const email = uniqueEmail('stalled');
        const res = await http(stalled, 'POST', '/signup', { form: { name: 'Stalled', email, password: PASSWORD } });
        expect(res.status).toBe(303);
        expect(res.headers.get('location')).toBe('/signup/sent');
        const line = await waitFor('the failed delivery in the log', () => lines.find((each) => each.includes('account e-mail could not be delivered')));
        const entry = JSON.parse(line) as { level: number; to: string; subject: string };
        expect(entry).toMatchObject({ level: 50, to: email, subject: 'Verify your e-mail address' });
        expect(sockets.length).toBeGreaterThanOrEqual(1);
      } finally {
        await stalled.close();
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });
  });

  describe('in Chromium at 1366×900 and 390×844', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
    }, CHROMIUM_INSTALL_TIMEOUT_MS);
    afterAll(() => browser?.close());

    /** No sideways scrolling, and axe-core finds nothing serious or critical. */
    async function checkPage(page: Page, what: string): Promise<void> {
      const { scrollWidth, clientWidth } = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
      }));
      expect({ what, overflow: scrollWidth > clientWidth }).toEqual({ what, overflow: false });
      await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
      const { violations } = await page.evaluate(() => axe.run());
      const serious = violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`);
      expect({ what, serious }).toEqual({ what, serious: [] });
    }

    for (const viewport of [
      { width: 1366, height: 900 },
      { width: 390, height: 844 },
    ]) {
      it(`signs up, verifies, changes and resets the password by following the e-mails (${viewport.width}×${viewport.height})`, async () => {
        // bypassCSP only so the test can inject axe-core; the app's own pages load nothing inline.
        const context = await browser.newContext({ viewport, bypassCSP: true });
        context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
        const page = await context.newPage();
        const open = (path: string) => page.goto(`${app.baseUrl}${path}`);
        try {
          const email = uniqueEmail(`browser${viewport.width}`);
          await open('/signup');
          await page.getByLabel('Company or team name').fill('Browser Co');
          await page.getByLabel('Email').fill(email);
          await page.getByLabel('Password').fill(PASSWORD);
          await page.getByRole('button', { name: 'Create account' }).click();
          await page.waitForURL(`${app.baseUrl}/signup/sent`);
          await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Check your inbox');
          await checkPage(page, 'signup sent');

          await open(linkIn(await mailFor(email), '/verify-email').local);
          await expect(page.getByRole('status').textContent()).resolves.toContain('Your e-mail address is verified.');
          await checkPage(page, 'verified');
          await open('/verify-email?token=used-or-unknown');
          await checkPage(page, 'verification link broken');

          await page.getByRole('link', { name: 'Log in' }).click();
          await page.getByLabel('Email').fill(email);
          await page.getByLabel('Password').fill(PASSWORD);
          await page.getByRole('button', { name: 'Log in' }).click();
          await page.waitForURL(`${app.baseUrl}/welcome`); // the first sign-in lands on the getting-started steps

          await page.getByRole('link', { name: 'Plan' }).click();
          await page.getByRole('link', { name: 'Change your password' }).click();
          await page.waitForURL(`${app.baseUrl}/settings/password`);
          await page.getByLabel('Current password').fill('not the password');
          await page.getByLabel('New password').fill('my second password');
          await page.getByRole('button', { name: 'Change password' }).click();
          await expect(page.getByLabel('Current password').getAttribute('aria-invalid')).resolves.toBe('true');
          await checkPage(page, 'change password with an error');
          await page.getByLabel('Current password').fill(PASSWORD);
          await page.getByLabel('New password').fill('my second password');
          await page.getByRole('button', { name: 'Change password' }).click();
          await page.waitForURL(`${app.baseUrl}/settings/password?changed=1`);
          await expect(page.getByRole('status').textContent()).resolves.toContain('Your password was changed.');
          await checkPage(page, 'password changed');

          await page.getByRole('button', { name: 'Log out' }).click();
          await page.waitForURL(`${app.baseUrl}/login`);
          await page.getByRole('link', { name: 'Forgot your password?' }).click();
          await page.waitForURL(`${app.baseUrl}/forgot-password`);
          await checkPage(page, 'forgot password');
          await page.getByLabel('Email').fill(email);
          await page.getByRole('button', { name: 'Send the link' }).click();
          await page.waitForURL(`${app.baseUrl}/forgot-password/sent`);
          await checkPage(page, 'forgot password sent');

          const reset = linkIn(await mailFor(email, 2), '/reset-password');
          await open(reset.local);
          await checkPage(page, 'reset password');
          await page.getByLabel('New password').fill('my third password');
          await page.getByRole('button', { name: 'Set the new password' }).click();
          await page.waitForURL(`${app.baseUrl}/dashboard`);
          await open(reset.local);
          await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('This link no longer works');
          await checkPage(page, 'reset link used');
          expect((await logIn(email, 'my third password')).status).toBe(303);
        } finally {
          await context.close();
        }
      });
    }
  });
});

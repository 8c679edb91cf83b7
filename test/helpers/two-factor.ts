import { Secret, TOTP } from 'otpauth';
import { tenantFork } from '../../src/db/tenant';
import type { Role } from '../../src/modules/accounts/key-permissions';
import { hashPassword } from '../../src/modules/accounts/password';
import { User } from '../../src/modules/accounts/user.entity';
import type { TestAccount, TestApp } from './app';
import { waitFor } from './wait';
import { csrfOf, http, PASSWORD, sessionCookie } from './web';

/** Helpers of the two-step sign-in and single sign-on tests (web-two-factor.test.ts, web-sso.test.ts, web-sign-in-pages.test.ts). */

const STEP_S = 30;

/**
 * A TOTP code of `secret` (as the settings page shows it, spaces and all) for the step `offset`
 * steps from now, computed with the library the app uses, as an authenticator app would. It waits,
 * if need be, for a step with at least 3 seconds left, so the step the code was made for is still
 * the server's when it checks it (the server accepts one step either side).
 */
export async function totpCode(secret: string, offset = 0): Promise<string> {
  await waitFor('a TOTP step with 3 seconds left', () => STEP_S - ((Date.now() / 1000) % STEP_S) > 3);
  const totp = new TOTP({ secret: Secret.fromBase32(secret.replace(/\s/g, '')), period: STEP_S });
  return totp.generate({ timestamp: Date.now() + offset * STEP_S * 1000 });
}

const unescape = (text: string) =>
  text
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');

/** What the set-up page shows: the secret as text and the otpauth:// URI. */
export function setupShown(pageHtml: string): { secret: string; uri: string } {
  const secret = /id="totp-secret">([^<]+)</.exec(pageHtml)?.[1];
  const uri = /id="totp-uri">([^<]+)</.exec(pageHtml)?.[1];
  if (!secret || !uri) throw new Error('no secret or otpauth URI on the page');
  return { secret: secret.trim(), uri: unescape(uri.trim()) };
}

/** The recovery codes a page shows (once). */
export const recoveryCodesShown = (pageHtml: string): string[] => [...pageHtml.matchAll(/<li><code>([a-z2-7-]+)<\/code><\/li>/g)].map((match) => match[1]);

/** Turns two-step sign-in on through the settings pages; the secret and the recovery codes shown. */
export async function turnOnTwoFactor(app: TestApp, session: { cookie: string }): Promise<{ secret: string; codes: string[] }> {
  const page = await http(app, 'GET', '/settings/two-factor', { cookie: session.cookie });
  const csrf = csrfOf(page.text);
  expect((await http(app, 'POST', '/settings/two-factor/setup', { cookie: session.cookie, form: { _csrf: csrf } })).status).toBe(303);
  const { secret } = setupShown((await http(app, 'GET', '/settings/two-factor', { cookie: session.cookie })).text);
  const confirmed = await http(app, 'POST', '/settings/two-factor/confirm', { cookie: session.cookie, form: { _csrf: csrf, code: await totpCode(secret) } });
  expect(confirmed.status).toBe(200);
  const codes = recoveryCodesShown(confirmed.text);
  expect(codes).toHaveLength(10);
  return { secret, codes };
}

/** The owner of a helper-made account (created without a password) given one, and signed in. */
export async function ownerSession(app: TestApp, owner: TestAccount): Promise<{ email: string; cookie: string; csrf: string }> {
  const email = owner.account.email;
  await app.orm.em.fork().nativeUpdate(User, { email }, { passwordHash: await hashPassword(PASSWORD), emailVerifiedAt: new Date() });
  const login = await http(app, 'POST', '/login', { form: { email, password: PASSWORD } });
  expect(login.status).toBe(303);
  const cookie = sessionCookie(login);
  return { email, cookie, csrf: csrfOf((await http(app, 'GET', '/settings/password', { cookie })).text) };
}

/** A person invited to `owner`'s account (by the operator, the invitation link used at once) who chose the test password; the answer to accepting. */
export async function joinAccount(app: TestApp, owner: TestAccount, email: string, role: Role = 'member') {
  const em = tenantFork(app.orm.em, { accountId: owner.account.id, livemode: false });
  const { link } = await app.servicesFor(em).members.invite({ email, role }, { kind: 'operator' });
  const token = new URL(link).searchParams.get('token')!;
  return http(app, 'POST', '/invitations/accept', { form: { token, password: PASSWORD } });
}

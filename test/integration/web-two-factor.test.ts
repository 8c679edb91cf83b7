import { createHash } from 'node:crypto';
import { startTestApp, TEST_ENCRYPTION_KEY_HEX, TestApp } from '../helpers/app';
import { recoveryCodesShown, joinAccount, ownerSession, setupShown, totpCode, turnOnTwoFactor } from '../helpers/two-factor';
import { csrfOf, http, PASSWORD, sessionCookie, signUp, uniqueEmail } from '../helpers/web';
import { decryptJson } from '../../src/common/crypto';
import { EmailTokenPurpose } from '../../src/modules/accounts/account-email-token.entity';
import { newEmailLink } from '../../src/modules/accounts/account-email.service';
import { User } from '../../src/modules/accounts/user.entity';

/**
 * Two-step sign-in with a TOTP app (issue 67): a person turns it on at /settings/two-factor (the
 * secret as text and an otpauth:// URI, confirmed by a first code), gets recovery codes once
 * (hashes kept, each good once); after a right password, sign-in asks for a code before any
 * session starts (a pending step of a few minutes and a few tries); an owner can require it of
 * the whole account. Codes are computed with otpauth from the secret the page shows, as an
 * authenticator app would.
 */
describe('two-step sign-in', () => {
  let app: TestApp;
  const logIn = (email: string, password = PASSWORD) => http(app, 'POST', '/login', { form: { email, password } });
  const pendingCookie = (res: { headers: Headers }) => {
    const match = /(?:^|,\s*)(spa_sign_in=[^;]+)/.exec(res.headers.get('set-cookie') ?? '');
    if (!match) throw new Error(`no pending sign-in cookie: ${res.headers.get('set-cookie')}`);
    return match[1];
  };
  const sendCode = (cookie: string, code: string) => http(app, 'POST', '/login/two-factor', { cookie, form: { code } });

  /** The password step of someone with two-step sign-in: no session yet, a pending sign-in. */
  async function passwordStep(email: string): Promise<string> {
    const res = await logIn(email);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login/two-factor');
    expect(res.headers.get('set-cookie')).not.toContain('spa_session=');
    return pendingCookie(res);
  }

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it('turns on with the secret the page shows (as text and an otpauth URI) and a first code; the recovery codes are shown once, stored as hashes', async () => {
    const session = await signUp(app, uniqueEmail('turn-on'));
    const off = await http(app, 'GET', '/settings/two-factor', { cookie: session.cookie });
    expect(off.status).toBe(200);
    expect(off.text).toContain('Set up two-step sign-in');

    expect((await http(app, 'POST', '/settings/two-factor/setup', { cookie: session.cookie, form: { _csrf: 'stale' } })).status).toBe(403);
    expect((await http(app, 'POST', '/settings/two-factor/setup', { cookie: session.cookie, form: { _csrf: session.csrf } })).status).toBe(303);
    const { secret, uri } = setupShown((await http(app, 'GET', '/settings/two-factor', { cookie: session.cookie })).text);
    const parsed = new URL(uri);
    expect(parsed.protocol).toBe('otpauth:');
    expect(parsed.host).toBe('totp');
    expect(decodeURIComponent(parsed.pathname)).toBe(`/Sales Pipeline:${session.email}`);
    expect(parsed.searchParams.get('secret')).toBe(secret.replace(/\s/g, ''));
    expect(parsed.searchParams.get('issuer')).toBe('Sales Pipeline');

    // Stored encrypted, and not in force before a code confirms it: signing in asks for no code.
    const stored = await app.orm.em.fork().findOneOrFail(User, { email: session.email }, { populate: ['totpSecretEncrypted'] });
    expect(stored.totpSecretEncrypted).not.toContain(secret.replace(/\s/g, ''));
    expect(decryptJson(stored.totpSecretEncrypted!, Buffer.from(TEST_ENCRYPTION_KEY_HEX, 'hex'))).toEqual({ secret: secret.replace(/\s/g, '') });
    expect(stored.totpEnabledAt).toBeNull();
    expect((await logIn(session.email)).headers.get('location')).not.toBe('/login/two-factor');

    const wrong = await http(app, 'POST', '/settings/two-factor/confirm', { cookie: session.cookie, form: { _csrf: session.csrf, code: '000000' } });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('That code is not right');
    expect(wrong.text).toMatch(/id="confirm-code"[^>]*aria-invalid="true"/);

    const confirmed = await http(app, 'POST', '/settings/two-factor/confirm', {
      cookie: session.cookie,
      form: { _csrf: session.csrf, code: await totpCode(secret) },
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain('Two-step sign-in is on.');
    const codes = recoveryCodesShown(confirmed.text);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);

    const rows = await app.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ code_hash: string }>>('select r.code_hash from recovery_codes r join users u on u.id = r.user_id where u.email = ?', [session.email]);
    const hashOf = (code: string) => createHash('sha256').update(code.replace(/-/g, '')).digest('hex');
    expect(rows.map((row) => row.code_hash).sort()).toEqual(codes.map(hashOf).sort());

    const again = await http(app, 'GET', '/settings/two-factor', { cookie: session.cookie });
    expect(recoveryCodesShown(again.text)).toEqual([]);
    expect(again.text).toContain('You have 10 unused recovery codes left.');
  });

  it('asks for the code after the password: no session before it, a wrong code refused, the right one once', async () => {
    const session = await signUp(app, uniqueEmail('code'));
    const { secret } = await turnOnTwoFactor(app, session);
    // Logging in with the password alone gives no session: pages still send the browser to /login.
    const pending = await passwordStep(session.email);
    expect((await http(app, 'GET', '/dashboard', { cookie: pending })).headers.get('location')).toBe('/login');

    const step = await http(app, 'GET', '/login/two-factor', { cookie: pending });
    expect(step.status).toBe(200);
    expect(step.text).toContain('autocomplete="one-time-code"');

    const wrong = await sendCode(pending, '123456');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('That code is not right');
    expect(wrong.headers.get('set-cookie') ?? '').not.toContain('spa_session=');

    const code = await totpCode(secret, 1); // the first code went to turning it on
    const right = await sendCode(pending, code);
    expect(right.status).toBe(303);
    expect(['/welcome', '/dashboard']).toContain(right.headers.get('location'));
    const cookie = sessionCookie(right);
    expect((await http(app, 'GET', '/settings/plan', { cookie })).status).toBe(200);
    // The pending sign-in is over: its cookie starts nothing more.
    expect((await sendCode(pending, code)).status).toBe(400);

    // The same code cannot sign in a second time (seen over a shoulder, replayed).
    const replay = await sendCode(await passwordStep(session.email), code);
    expect(replay.status).toBe(401);
  });

  it('takes a recovery code instead, once; shows how many are left', async () => {
    const session = await signUp(app, uniqueEmail('recovery'));
    const { codes } = await turnOnTwoFactor(app, session);
    const used = await sendCode(await passwordStep(session.email), codes[3].toUpperCase().replace(/-/g, ' '));
    expect(used.status).toBe(303);
    expect(used.headers.get('location')).toBe('/settings/two-factor?recovery=used');
    const settings = await http(app, 'GET', '/settings/two-factor?recovery=used', { cookie: sessionCookie(used) });
    expect(settings.text).toContain('You signed in with a recovery code; it no longer works. 9 left.');

    const again = await sendCode(await passwordStep(session.email), codes[3]);
    expect(again.status).toBe(401);
    expect((await sendCode(await passwordStep(session.email), codes[4])).status).toBe(303);
  });

  it('ends the pending sign-in after 5 wrong codes, and after 5 minutes', async () => {
    const session = await signUp(app, uniqueEmail('attempts'));
    const { secret } = await turnOnTwoFactor(app, session);
    const pending = await passwordStep(session.email);
    for (let attempt = 1; attempt < 5; attempt++) expect((await sendCode(pending, '000000')).status).toBe(401);
    const fifth = await sendCode(pending, '000000');
    expect(fifth.status).toBe(400);
    expect(fifth.text).toContain('Too many wrong codes for this sign-in. Sign in again.');
    const late = await sendCode(pending, await totpCode(secret, 1));
    expect(late.status).toBe(400);
    expect(late.headers.get('set-cookie') ?? '').not.toContain('spa_session=');

    const expiring = await passwordStep(session.email);
    await app.orm.em.fork().getConnection().execute(`update sign_in_challenges set expires_at = now() - interval '1 second'`);
    const expired = await sendCode(expiring, await totpCode(secret, 1));
    expect(expired.status).toBe(400);
    expect(expired.text).toContain('This sign-in expired');
  });

  it('limits wrong codes per person across sign-ins (10 in 15 minutes), whatever the address', async () => {
    const session = await signUp(app, uniqueEmail('limit'));
    const { secret } = await turnOnTwoFactor(app, session);
    for (let sent = 0; sent < 10;) {
      const pending = await passwordStep(session.email);
      for (let attempt = 0; attempt < 4 && sent < 10; attempt++, sent++) expect((await sendCode(pending, '000000')).status).toBe(401);
    }
    const locked = await sendCode(await passwordStep(session.email), await totpCode(secret, 1));
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(locked.text).toContain('Too many wrong codes.');
  });

  it('turns off with a code, and makes new recovery codes that replace the old', async () => {
    const session = await signUp(app, uniqueEmail('off'));
    const { secret, codes } = await turnOnTwoFactor(app, session);
    const fresh = await http(app, 'POST', '/settings/two-factor/recovery-codes', { cookie: session.cookie, form: { _csrf: session.csrf, code: codes[0] } });
    expect(fresh.status).toBe(200);
    const newCodes = recoveryCodesShown(fresh.text);
    expect(newCodes).toHaveLength(10);
    expect(newCodes).not.toContain(codes[1]);
    expect((await sendCode(await passwordStep(session.email), codes[1])).status).toBe(401);

    const refused = await http(app, 'POST', '/settings/two-factor/disable', { cookie: session.cookie, form: { _csrf: session.csrf, code: '000000' } });
    expect(refused.status).toBe(400);
    const off = await http(app, 'POST', '/settings/two-factor/disable', {
      cookie: session.cookie,
      form: { _csrf: session.csrf, code: await totpCode(secret, 1) },
    });
    expect(off.status).toBe(303);
    const login = await logIn(session.email);
    expect(login.headers.get('location')).not.toBe('/login/two-factor');
    expect(login.headers.get('set-cookie')).toContain('spa_session=');
    const count = await app.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ n: string }>>('select count(*) as n from recovery_codes r join users u on u.id = r.user_id where u.email = ?', [session.email]);
    expect(Number(count[0].n)).toBe(0);
  });

  it("a password reset's sign-in still asks for the code", async () => {
    const session = await signUp(app, uniqueEmail('reset'));
    await turnOnTwoFactor(app, session);
    const em = app.orm.em.fork();
    const user = await em.findOneOrFail(User, { email: session.email });
    const link = newEmailLink(em, app.baseUrl, { user, purpose: EmailTokenPurpose.resetPassword, path: '/reset-password' });
    await em.flush();
    const reset = await http(app, 'POST', '/reset-password', { form: { token: new URL(link).searchParams.get('token')!, password: 'a brand new password' } });
    expect(reset.status).toBe(303);
    expect(reset.headers.get('location')).toBe('/login/two-factor');
    expect(reset.headers.get('set-cookie')).not.toContain('spa_session=');
  });

  describe('required for the whole account', () => {
    it('only an owner with it on may require it; then a member without it is sent to set it up before anything else works', async () => {
      const owner = await app.createAccount({ name: 'Strict Co' });
      const ownerSide = await ownerSession(app, owner);
      const requireIt = (session: { cookie: string; csrf: string }, value: string) =>
        http(app, 'POST', '/settings/two-factor/require', { cookie: session.cookie, form: { _csrf: session.csrf, require: value } });

      const early = await requireIt(ownerSide, 'on');
      expect(early.status).toBe(409);
      expect(early.text).toContain('Turn on two-step sign-in for yourself first');

      const memberEmail = uniqueEmail('strict-member');
      const joined = await joinAccount(app, owner, memberEmail, 'admin');
      expect(joined.status).toBe(303);
      const adminSide = { cookie: sessionCookie(joined), csrf: '' };
      adminSide.csrf = csrfOf((await http(app, 'GET', '/settings/password', { cookie: adminSide.cookie })).text);
      const notOwner = await requireIt(adminSide, 'on');
      expect(notOwner.status).toBe(403);
      expect(notOwner.text).toContain('Requiring two-step sign-in needs the owner role');

      await turnOnTwoFactor(app, ownerSide);
      const required = await requireIt(ownerSide, 'on');
      expect(required.status).toBe(303);
      expect(required.headers.get('location')).toBe('/settings/two-factor?required=on');

      // The admin's open session: every page sends them to the set-up, /graphql does not know them.
      for (const path of ['/dashboard', '/settings/api-keys', '/settings/plan', '/pipeline', '/login']) {
        const res = await http(app, 'GET', path, { cookie: adminSide.cookie });
        expect({ path, status: res.status, location: res.headers.get('location') }).toEqual({ path, status: 303, location: '/settings/two-factor' });
      }
      const graphql = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: adminSide.cookie, 'x-csrf-token': adminSide.csrf },
        body: JSON.stringify({ query: '{ members { data { id } } }' }),
      });
      expect(graphql.status).toBe(401);

      // Signing in again: the password, then straight to the set-up.
      const login = await logIn(memberEmail);
      expect(login.status).toBe(303);
      const restricted = sessionCookie(login);
      expect((await http(app, 'GET', login.headers.get('location')!, { cookie: restricted })).headers.get('location')).toBe('/settings/two-factor');
      const setupPage = await http(app, 'GET', '/settings/two-factor', { cookie: restricted });
      expect(setupPage.status).toBe(200);
      expect(setupPage.text).toContain('Strict Co requires two-step sign-in.');

      await turnOnTwoFactor(app, { cookie: restricted });
      expect((await http(app, 'GET', '/dashboard', { cookie: restricted })).status).toBe(200);
      // While it is required, it cannot be turned off.
      const stays = await http(app, 'POST', '/settings/two-factor/disable', {
        cookie: restricted,
        form: { _csrf: csrfOf(setupPage.text), code: '000000' },
      });
      expect(stays.status).toBe(409);
      expect(stays.text).toContain('Strict Co requires two-step sign-in: it stays on.');

      expect((await requireIt(ownerSide, 'off')).headers.get('location')).toBe('/settings/two-factor?required=off');
    });
  });
});

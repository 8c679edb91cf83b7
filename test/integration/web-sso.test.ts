import { startTestApp, TEST_ENCRYPTION_KEY_HEX, TestApp } from '../helpers/app';
import { OidcProvider, startOidcProvider } from '../helpers/oidc-provider';
import { freePort } from '../helpers/service-process';
import { saveSso, SSO_CLIENT, ssoForm, ssoSignIn } from '../helpers/sso';
import { joinAccount, ownerSession } from '../helpers/two-factor';
import { http, PASSWORD, sessionCookie } from '../helpers/web';
import { decryptJson } from '../../src/common/crypto';
import { tenantFork } from '../../src/db/tenant';
import { Account } from '../../src/modules/accounts/account.entity';
import { User } from '../../src/modules/accounts/user.entity';
import { Member, MemberStatus } from '../../src/modules/members/member.entity';
import { SsoService } from '../../src/modules/sso/sso.service';
import { WebSession } from '../../src/web/web-session.entity';

/**
 * Single sign-on per account with OpenID Connect (issue 67), against a real OpenID provider on
 * loopback (oidc-provider, test/helpers/oidc-provider-process.mjs): its discovery, authorization endpoint,
 * token endpoint, userinfo and keys are the library's. The browser is played with fetch and a cookie
 * jar, redirects followed by hand, so a test can change the provider's answer before the app reads
 * it. The app is told it may reach loopback issuers over http (SSO_ALLOW_PRIVATE_URLS, as
 * WEBHOOK_ALLOW_PRIVATE_URLS for webhooks); the address guard itself is checked without it.
 */
describe('single sign-on', () => {
  let app: TestApp;
  let provider: OidcProvider;
  /** Another issuer, for answers that claim to come from it. */
  let other: OidcProvider;
  let counter = 0;
  const domainFor = (what: string) => `${what}-${Date.now().toString(36)}-${++counter}.test`;

  /** An account whose owner (owner@domain) is signed in and has saved a connection to the provider. */
  async function ssoAccount(what: string, extra: Record<string, string> = {}) {
    const domain = domainFor(what);
    const owner = await app.createAccount({ email: `owner@${domain}`, name: `${what} Co` });
    const session = await ownerSession(app, owner);
    const saved = await saveSso(app, session, ssoForm(provider.issuer, domain, extra));
    expect({ status: saved.status, location: saved.headers.get('location') }).toEqual({ status: 303, location: '/settings/sso?saved=1' });
    return { domain, owner, session };
  }
  const memberOf = (accountId: string, email: string) =>
    app.orm.em.fork().findOne(Member, { account: accountId, user: { email } }, { filters: false, populate: ['user'], refresh: true });

  beforeAll(async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const client = { ...SSO_CLIENT, redirect_uris: [`${publicUrl}/sso/callback`] };
    [provider, other] = await Promise.all([
      startOidcProvider({ clients: [client], accounts: { 'stranger@sso-outside.test': { email: 'someone@elsewhere.test' } } }),
      startOidcProvider({ clients: [client] }),
    ]);
    app = await startTestApp({ port, env: { PUBLIC_URL: publicUrl, SSO_ALLOW_PRIVATE_URLS: 'true' } });
  });
  afterAll(async () => {
    await app?.close();
    await provider?.close();
    await other?.close();
  });

  describe('the settings (/settings/sso)', () => {
    it('an owner saves the connection; the client secret is kept encrypted and never shown again', async () => {
      const { owner, session, domain } = await ssoAccount('settings');
      const shown = await http(app, 'GET', '/settings/sso', { cookie: session.cookie });
      expect(shown.status).toBe(200);
      expect(shown.text).toContain(`${app.config.publicUrl}/sso/callback`);
      expect(shown.text).toContain(`value="${provider.issuer}"`);
      expect(shown.text).toContain(`value="${domain}"`);
      expect(shown.text).not.toContain(SSO_CLIENT.client_secret);
      const [row] = await app.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ client_secret_encrypted: string }>>('select client_secret_encrypted from sso_connections where account_id = ?', [owner.account.id]);
      expect(row.client_secret_encrypted).not.toContain(SSO_CLIENT.client_secret);
      expect(decryptJson(row.client_secret_encrypted, Buffer.from(TEST_ENCRYPTION_KEY_HEX, 'hex'))).toEqual({ secret: SSO_CLIENT.client_secret });

      // Saved again without a secret: the stored one stays.
      expect((await saveSso(app, session, ssoForm(provider.issuer, domain, { client_secret: '', default_role: 'viewer' }))).status).toBe(303);
      const [kept] = await app.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ client_secret_encrypted: string; default_role: string }>>('select * from sso_connections where account_id = ?', [owner.account.id]);
      expect(kept.default_role).toBe('viewer');
      expect(decryptJson(kept.client_secret_encrypted, Buffer.from(TEST_ENCRYPTION_KEY_HEX, 'hex'))).toEqual({ secret: SSO_CLIENT.client_secret });
    });

    it('refuses what cannot work, naming the field: an unreachable issuer, a discovery document of another issuer, domains nobody here has proven, personal or taken domains, an owner as default role', async () => {
      const domain = domainFor('refusals');
      const owner = await app.createAccount({ email: `owner@${domain}` });
      const session = await ownerSession(app, owner);
      const refused = async (form: Record<string, string>, field: string, words: string) => {
        const res = await saveSso(app, session, form);
        expect({ status: res.status, invalid: new RegExp(`id="${field}"[^>]*aria-invalid="true"`).test(res.text) }).toEqual({ status: 400, invalid: true });
        expect(res.text).toContain(words);
      };
      const closed = `http://127.0.0.1:${await freePort()}`;
      await refused(ssoForm(closed, domain), 'issuer_url', 'could not be reached (ECONNREFUSED)');
      const elsewhere = await startOidcProvider({ clients: [], issuerHost: 'localhost' });
      try {
        await refused(ssoForm(elsewhere.url, domain), 'issuer_url', 'discovery document');
      } finally {
        await elsewhere.close();
      }
      await refused(
        ssoForm(provider.issuer, `${domain}, not-ours.test`),
        'domains',
        'No active member of this account signs in with a verified address at not-ours.test',
      );
      await refused(ssoForm(provider.issuer, 'gmail.com'), 'domains', 'gmail.com is a domain of personal mailboxes');
      await refused(ssoForm(provider.issuer, domain, { default_role: 'owner' }), 'default_role', 'Choose the role of people who sign in for the first time');
      await refused(ssoForm(provider.issuer, domain, { client_secret: '' }), 'client_secret', 'Enter the client secret');

      const { domain: taken } = await ssoAccount('taken');
      const second = await app.createAccount({ email: `second@${taken}` });
      const rival = await ownerSession(app, second);
      const res = await saveSso(app, rival, ssoForm(provider.issuer, taken));
      expect(res.status).toBe(400);
      expect(res.text).toContain(`Another account covers ${taken} with its single sign-on.`);
    });

    it('is for owners and admins only', async () => {
      const { owner } = await ssoAccount('roles');
      const joined = await joinAccount(app, owner, `member@${domainFor('roles-member')}`, 'member');
      const page = await http(app, 'GET', '/settings/sso', { cookie: sessionCookie(joined) });
      expect(page.status).toBe(403);
      expect(page.text).toContain('Setting up single sign-on needs the owner or admin role.');
    });

    it('the address guard: without SSO_ALLOW_PRIVATE_URLS, loopback and plain-http issuers are refused, and so is a public name that resolves to loopback when the issuer is called', async () => {
      const domain = domainFor('guard');
      const owner = await app.createAccount({ email: `owner@${domain}` });
      await ownerSession(app, owner);
      const guarded = (resolveHost = async () => [{ address: '127.0.0.1', family: 4 }]) =>
        new SsoService(app.orm.em.fork(), {
          allowPrivateUrls: false,
          resolveHost,
          timeoutMs: 5_000,
          encryptionKey: Buffer.from(TEST_ENCRYPTION_KEY_HEX, 'hex'),
        });
      const input = { clientId: 'x', clientSecret: 'y', domains: domain, defaultRole: 'member', requireSso: false };
      await expect(guarded().save(owner.account.id, { ...input, issuerUrl: provider.issuer })).rejects.toThrow('https:// address');
      await expect(guarded().save(owner.account.id, { ...input, issuerUrl: 'https://127.0.0.1:8443' })).rejects.toThrow(/loopback, private/);
      // A name that resolved to a public address when saved and to loopback when called: refused at the connection.
      let calls = 0;
      const rebinding = async () => [{ address: calls++ === 0 ? '93.184.215.14' : '127.0.0.1', family: 4 }];
      await expect(guarded(rebinding).save(owner.account.id, { ...input, issuerUrl: 'https://issuer.example.test' })).rejects.toThrow(/may not be reached/);
    });
  });

  describe('signing in', () => {
    it("a first sign-in makes the person an active member with the connection's default role; the next one finds them", async () => {
      const { owner, session, domain } = await ssoAccount('first', { default_role: 'viewer' });
      const email = `Ada.Lovelace@${domain}`;
      const first = await ssoSignIn(app, email);
      expect(first.res.status).toBe(303);
      expect(['/welcome', '/dashboard']).toContain(first.res.headers.get('location'));
      const cookie = first.jar.header(app.baseUrl);
      expect(cookie).toContain('spa_session=');
      expect((await http(app, 'GET', '/settings/plan', { cookie })).status).toBe(200);

      const member = await memberOf(owner.account.id, email.toLowerCase());
      expect(member).toMatchObject({ role: 'viewer', status: MemberStatus.active });
      const user = member!.user.getEntity();
      expect(user.emailVerifiedAt).toBeInstanceOf(Date);
      const withPassword = await app.orm.em.fork().findOneOrFail(User, { id: user.id }, { populate: ['passwordHash'] });
      expect(withPassword.passwordHash).toBeNull();
      const sessions = await app.orm.em.fork().find(WebSession, { user: user.id });
      expect(sessions.map((each) => each.ssoConnection?.id)).toEqual([expect.stringMatching(/^sso_/)]);

      // The role changes for newcomers only; the second sign-in finds the same person and member.
      expect((await saveSso(app, session, ssoForm(provider.issuer, domain, { default_role: 'member', client_secret: '' }))).status).toBe(303);
      const second = await ssoSignIn(app, email.toLowerCase());
      expect(second.res.status).toBe(303);
      const again = await memberOf(owner.account.id, email.toLowerCase());
      expect(again).toMatchObject({ id: member!.id, role: 'viewer', status: MemberStatus.active });
      expect(await app.orm.em.fork().count(User, { email: email.toLowerCase() })).toBe(1);
    });

    it('an invited person joins with the role they were invited with; a deactivated one is refused', async () => {
      const { owner, domain } = await ssoAccount('invited');
      const email = `grace@${domain}`;
      const members = app.servicesFor(tenantFork(app.orm.em, { accountId: owner.account.id, livemode: false })).members;
      await members.invite({ email, role: 'admin' }, { kind: 'operator' });
      expect((await ssoSignIn(app, email)).res.status).toBe(303);
      expect(await memberOf(owner.account.id, email)).toMatchObject({ role: 'admin', status: MemberStatus.active });

      const member = await memberOf(owner.account.id, email);
      await app.servicesFor(tenantFork(app.orm.em, { accountId: owner.account.id, livemode: false })).members.deactivate(member!.user.id, { kind: 'operator' });
      const refused = await ssoSignIn(app, email);
      expect(refused.res.status).toBe(403);
      expect(refused.text).toContain('You were deactivated in');
      expect(refused.jar.header(app.baseUrl)).not.toContain('spa_session=');
    });

    it("refuses an address outside the connection's domains, even when the provider vouches for it", async () => {
      const owner = await app.createAccount({ email: 'owner@sso-outside.test' });
      expect((await saveSso(app, await ownerSession(app, owner), ssoForm(provider.issuer, 'sso-outside.test'))).status).toBe(303);
      const run = await ssoSignIn(app, 'stranger@sso-outside.test');
      expect(run.res.status).toBe(403);
      expect(run.text).toContain('The provider signed in someone@elsewhere.test, but this account&#39;s single sign-on covers sso-outside.test only.');
      expect(await app.orm.em.fork().count(User, { email: 'someone@elsewhere.test' })).toBe(0);
    });

    it('is not held at the set-up of two-step sign-in the account requires (the issuer asks its own second step)', async () => {
      const { owner, domain } = await ssoAccount('strict');
      await app.orm.em.fork().nativeUpdate(Account, { id: owner.account.id }, { requireTwoFactor: true });
      const run = await ssoSignIn(app, `sam@${domain}`);
      expect(run.res.status).toBe(303);
      expect((await http(app, 'GET', '/dashboard', { cookie: run.jar.header(app.baseUrl) })).status).toBe(200);
    });

    it('answers an address no connection covers on the SSO form', async () => {
      const res = await http(app, 'POST', '/login/sso', { form: { email: `nobody@${domainFor('uncovered')}` } });
      expect(res.status).toBe(400);
      expect(res.text).toContain('No single sign-on is set up for');
    });
  });

  describe('require SSO', () => {
    it("refuses the password form for the connection's domains, with a pointer to single sign-on; others still log in with a password", async () => {
      const { domain, owner } = await ssoAccount('required', { require_sso: 'on' });
      const refused = await http(app, 'POST', '/login', { form: { email: owner.account.email, password: PASSWORD } });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('set-cookie')).toBeNull();
      expect(refused.text).toContain(`People at ${domain} sign in through their organization's single sign-on`);
      expect(refused.text).toContain('action="/login/sso"');
      // A wrong password gets the same answer: the password is not looked at.
      expect((await http(app, 'POST', '/login', { form: { email: `anyone@${domain}`, password: 'wrong' } })).status).toBe(403);

      const outsider = await app.createAccount({ email: `owner@${domainFor('password')}` });
      const session = await ownerSession(app, outsider);
      expect(session.cookie).toContain('spa_session=');
      // Through the issuer, the owner still signs in.
      const sso = await ssoSignIn(app, owner.account.email);
      expect(sso.res.status).toBe(303);
    });
  });

  describe('answers that are refused, with the reason, and nothing signed in', () => {
    const nothingSignedIn = async (run: { res: Response; text: string; jar: { header(url: string): string } }, words: string) => {
      expect(run.res.status).toBe(400);
      expect(run.text).toContain('Single sign-on did not complete');
      expect(run.text).toContain(words);
      expect(run.text).toContain('Nothing was signed in.');
      expect(run.jar.header(app.baseUrl)).not.toContain('spa_session=');
    };

    it('a tampered state', async () => {
      const { domain, owner } = await ssoAccount('state');
      const email = `eve@${domain}`;
      const run = await ssoSignIn(app, email, { tamper: (callback) => callback.searchParams.set('state', 'not-the-state-we-sent') });
      await nothingSignedIn(run, 'its state does not match');
      expect(await memberOf(owner.account.id, email)).toBeNull();
    });

    it('a replayed callback, and a code used again in another sign-in', async () => {
      const { domain } = await ssoAccount('replay');
      const email = `bob@${domain}`;
      const done = await ssoSignIn(app, email, { stopAtCallback: true });
      const attemptCookie = done.jar.header(app.baseUrl);
      const first = await fetch(done.callback, { headers: { cookie: attemptCookie }, redirect: 'manual' });
      expect(first.status).toBe(303);
      // The same answer again, with the same cookie: the sign-in it belonged to is used up.
      const replay = await fetch(done.callback, { headers: { cookie: attemptCookie }, redirect: 'manual' });
      await nothingSignedIn({ res: replay, text: await replay.text(), jar: { header: () => replay.headers.get('set-cookie') ?? '' } }, 'it was already used');

      // Its code inside a fresh sign-in's answer (that sign-in's own state): the provider refuses the used code.
      const code = new URL(done.callback).searchParams.get('code')!;
      const reused = await ssoSignIn(app, email, { tamper: (callback) => callback.searchParams.set('code', code) });
      await nothingSignedIn(reused, 'it was already used, or has expired');
    });

    it('an answer that names another issuer', async () => {
      const { domain } = await ssoAccount('issuer');
      const run = await ssoSignIn(app, `mallory@${domain}`, { tamper: (callback) => callback.searchParams.set('iss', other.issuer) });
      await nothingSignedIn(run, 'the answer comes from another issuer than this account&#39;s provider');
    });

    it('a sign-in older than 10 minutes', async () => {
      const { domain } = await ssoAccount('expired');
      const run = await ssoSignIn(app, `late@${domain}`, { stopAtCallback: true });
      await app.orm.em.fork().getConnection().execute(`update sso_attempts set expires_at = now() - interval '1 second'`);
      const res = await run.jar.fetch(run.callback);
      await nothingSignedIn({ res, text: await res.text(), jar: run.jar }, 'This sign-in expired');
    });

    it('an answer the browser did not ask for (no sign-in of its own)', async () => {
      const { domain } = await ssoAccount('foreign');
      const run = await ssoSignIn(app, `victim@${domain}`, { stopAtCallback: true });
      const res = await fetch(run.callback, { redirect: 'manual' });
      await nothingSignedIn(
        { res, text: await res.text(), jar: { header: () => res.headers.get('set-cookie') ?? '' } },
        'This sign-in is not one this browser started',
      );
    });
  });
});

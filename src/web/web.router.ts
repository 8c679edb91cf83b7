import path from 'node:path';
import { existsSync } from 'node:fs';
import express, { Router } from 'express';
import { clientAddress } from '../http/client-address';
import { consume, peek } from '../limits/counters';
import type { Account } from '../modules/accounts/account.entity';
import { User } from '../modules/accounts/user.entity';
import { ActorType } from '../events/acting';
import { recordSecurityEvent } from '../modules/security/security-log';
import { verifyPassword } from '../modules/accounts/password';
import { TEST_MODE_LIMITS } from '../modules/accounts/plan';
import { html, page, RETURN_PAGES } from './html';
import { navFor } from './keys-page';
import { createKeysRouter } from './keys.router';
import { createWelcomeRouter } from './welcome.router';
import { systemResolver } from '../http/address-guard';
import { ssoConnectionFor } from '../modules/sso/sso.service';
import { afterPassword } from './sign-in';
import { ssoFormHeaders, ssoRequiredPage } from './sso-pages';
import { createSsoRouter } from './sso.router';
import { createTwoFactorRouter } from './two-factor.router';
import { createGuards, TWO_FACTOR_SETUP_PAGE } from './web-guards';
import { clearSessionCookie, cookieValue, sameOrigin, SESSION_COOKIE, signedIn } from './web-auth';
import { sendPage, webErrorHandler, webHeaders } from './web-errors';
import { authPage, waitWords } from './web-forms';
import { WebSessionService } from './web-session.service';
import { createWorkspaceRouter } from './workspace.router';
import type { WebDependencies } from './web-dependencies';

export type { WebDependencies };

/** Sign-in attempts per address and e-mail in 15 minutes, and per address alone. */
const LOGIN_LIMITS = { perEmail: 10, perAddress: 100, windowS: 900 };
/** The same words whatever failed, so the form does not reveal which e-mails have accounts. */
const BAD_LOGIN = 'Email or password is incorrect.';

function assetsDir(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return path.join(dir, 'src', 'web', 'assets');
}

/** The web application: sign up, log in, API keys, plan and usage, and the pipeline dashboard. */
export function createWebRouter(deps: WebDependencies): Router {
  const router = Router();
  const encryptionKey = deps.config.encryptionKey;
  if (!encryptionKey) throw new Error('config.encryptionKey is not set: the web app keeps new keys encrypted until they are shown');
  const forms = express.urlencoded({ extended: false, limit: '16kb' });
  router.use('/assets', express.static(assetsDir(), { maxAge: '1h', index: false }));
  router.use(['/signup', '/login', '/logout', '/dashboard', '/settings', '/welcome', '/sso'], (_req, res, next) => {
    webHeaders(res);
    next();
  });

  const guards = createGuards(deps.orm);
  const { withSession, checkedPost, resendButton } = guards;

  router.get('/', async (req, res) => res.redirect(303, (await signedIn(deps.orm, req)) ? '/dashboard' : '/login'));

  router.get('/signup', (_req, res) => res.send(authPage('signup')));
  // POST /signup is in account.router.ts: it answers the same for a taken address as for a new one.

  router.get('/login', async (req, res) => {
    // A session its account holds at the set-up of two-step sign-in is sent there, not asked to sign in again.
    const who = await signedIn(deps.orm, req, { twoFactorSetup: true });
    if (who?.twoFactorSetupNeeded) return void res.redirect(303, TWO_FACTOR_SETUP_PAGE);
    res.send(authPage('login'));
  });
  router.post('/login', sameOrigin, forms, async (req, res) => {
    const { email = '', password = '' } = req.body as Record<string, string>;
    const address = clientAddress(req);
    const normalized = email.trim().toLowerCase();
    // Failed attempts are counted (a person who signs in often is never locked out); once either
    // allowance is used up, even the right password waits for the window to end.
    const limits = [
      { limiter: deps.counters.limiter('login-email', LOGIN_LIMITS.windowS), key: `${address}|${normalized}`, limit: LOGIN_LIMITS.perEmail },
      { limiter: deps.counters.limiter('login-address', LOGIN_LIMITS.windowS), key: address, limit: LOGIN_LIMITS.perAddress },
    ];
    const used = await Promise.all(limits.map(({ limiter, key, limit }) => peek(limiter, key, limit)));
    const blocked = used.filter((window) => window && window.remaining === 0);
    if (blocked.length) {
      const retryAfter = Math.max(1, Math.min(...blocked.map((w) => w!.resetAt)) - Math.ceil(Date.now() / 1000));
      res.set('Retry-After', String(retryAfter));
      const error = { message: `Too many attempts. Wait about ${waitWords(retryAfter)}, then try again.`, fields: [] };
      return void res.status(429).send(authPage('login', error, { email }));
    }
    const em = deps.orm.em.fork();
    // A domain whose account requires single sign-on: the password is not even looked at.
    if ((await ssoConnectionFor(em, normalized))?.requireSso) {
      ssoFormHeaders(res, deps.config);
      return void res.status(403).send(ssoRequiredPage(normalized));
    }
    const user = await em.findOne(User, { email: normalized }, { populate: ['passwordHash'] });
    // Verify even without a person, so the answer takes as long either way.
    const ok = await verifyPassword(password, user?.passwordHash ?? 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
    const sessions = new WebSessionService(em);
    // The account used last, among those the person is an active member of.
    const [membership] = user && ok ? await sessions.accountsOf(user.id) : [];
    // An unverified address cannot sign in yet, with the same answer: otherwise whoever signed up with
    // someone else's address could tell (by signing in) whether it was new or taken. Nor can a person
    // with no active membership left (deactivated everywhere).
    const from = { address, userAgent: req.get('user-agent') ?? null };
    if (!user || !user.passwordHash || !ok || !user.emailVerifiedAt || !membership) {
      await Promise.all(limits.map(({ limiter, key, limit }) => consume(limiter, key, limit)));
      // A person who exists: each account they work in learns of the failed attempt (their security log).
      if (user) {
        for (const place of await sessions.accountsOf(user.id)) {
          recordSecurityEvent(em, place.account.id, { type: 'sign_in.failed', actor: { type: ActorType.member, id: user.id }, memberId: user.id, ...from });
        }
        await em.flush();
      }
      // The message names no field (that would tell which part was right); both are tied to it.
      return void res.status(401).send(authPage('login', { message: BAD_LOGIN, fields: ['email', 'password'] }, { email }));
    }
    // A session now (sign_in.succeeded is logged as it starts: src/web/sign-in.ts), or first the code
    // of two-step sign-in; a first sign-in (no key, no data yet) lands on the getting-started steps,
    // later ones on the dashboard.
    await afterPassword(req, res, em, deps.config, { user, account: membership.account.getEntity() as Account });
  });

  router.post('/logout', sameOrigin, forms, async (req, res) => {
    const who = await checkedPost(req, res, resendButton('/logout', 'Log out'), { twoFactorSetup: true });
    if (!who) return;
    await new WebSessionService(deps.orm.em.fork()).end(cookieValue(req, SESSION_COOKIE));
    clearSessionCookie(req, res, deps.config);
    res.redirect(303, '/login');
  });

  router.post('/settings/mode', sameOrigin, forms, async (req, res) => {
    const body = req.body as Record<string, string>;
    const live = body.mode === 'live';
    const who = await checkedPost(req, res, resendButton('/settings/mode', `Switch to ${live ? 'live' : 'test'}`, ['mode', 'return_to']));
    if (!who) return;
    const em = deps.orm.em.fork();
    const session = await em.merge(who.session);
    await new WebSessionService(em).setMode(session, live);
    // Back to the page the switch was on; only one of ours, so the form cannot redirect elsewhere.
    res.redirect(303, RETURN_PAGES.includes(body.return_to) ? body.return_to : '/dashboard');
  });

  // The header's account switcher (a person in several accounts): the session moves, in test mode, to the other account's dashboard.
  router.post('/settings/account', sameOrigin, forms, async (req, res) => {
    const who = await checkedPost(req, res, resendButton('/settings/account', 'Switch account', ['account_id']));
    if (!who) return;
    const accountId = String((req.body as Record<string, unknown>).account_id ?? '');
    if (!(await new WebSessionService(deps.orm.em.fork()).switchAccount(who.session, accountId))) {
      return void sendPage(res, 403, {
        title: 'Not one of your accounts',
        nav: navFor(who, ''),
        body: html`<section class="card"><p role="alert">Nothing was changed: you are not an active member of that account, so this session cannot move to it. You are still in ${who.account.name}.</p>
<p>To join an account, ask one of its owners or admins to invite you (Settings, Members).</p></section>`,
      });
    }
    res.redirect(303, '/dashboard');
  });

  router.get('/dashboard', async (req, res) => {
    const who = await withSession(req, res);
    if (!who) return;
    const live = who.session.livemode;
    // What to do when a table is empty (dashboard.js shows these): demo data is a test-mode thing.
    const start = live
      ? html`create them with a live key (see the <a href="/docs">API reference</a>).`
      : html`<a href="/welcome">load demo data</a> or create them with the API (see the <a href="/docs">API reference</a>).`;
    res.send(
      page({
        title: `${who.account.name}: pipeline`,
        nav: navFor(who, '/dashboard'),
        scripts: ['/assets/dashboard.js'],
        body: html`<p class="muted" id="status" role="status" aria-live="polite">Loading…</p>
<section class="card" aria-labelledby="pipeline-title">
  <h2 id="pipeline-title">Pipeline by stage (${live ? 'live' : 'test'} data)</h2>
  <svg id="chart" class="chart" viewBox="0 0 760 20" height="20" role="img" aria-label="Total deal value per stage"></svg>
  <table id="pipeline" class="stack"><thead><tr><th>Stage</th><th>Deals</th><th>Value</th><th>Weighted value</th><th>Probability</th></tr></thead><tbody></tbody></table>
  <p id="pipeline-empty" class="empty" hidden>No ${live ? 'live ' : ''}deals yet. To see your pipeline here, ${start}</p>
</section>
<section class="card" aria-labelledby="leads-title">
  <h2 id="leads-title">Recent leads</h2>
  <table id="leads" class="stack"><thead><tr><th>Company</th><th>Contact</th><th>Score</th><th>Label</th><th>Created</th></tr></thead><tbody></tbody></table>
  <p id="leads-empty" class="empty" hidden>No ${live ? 'live ' : ''}leads yet. To see them scored here, ${start}</p>
</section>`,
      }),
    );
  });

  router.get('/settings/plan', async (req, res) => {
    const who = await withSession(req, res);
    if (!who) return;
    const live = who.account.liveLimits();
    const [liveUsage, testUsage] = await Promise.all([
      deps.quota.usage({ account: who.account, livemode: true }),
      deps.quota.usage({ account: who.account, livemode: false }),
    ]);
    const n = (value: number | null) => (value === null ? 'no cap' : value.toLocaleString('en-US'));
    // Each cell names its column, for the stacked layout of narrow screens.
    const columns = ['Keys', 'Per minute', 'Used this minute', 'Per day (UTC)', 'Used today'];
    const row = (cells: string[]) => cells.map((text, i) => html`<td data-label="${columns[i]}">${text}</td>`);
    res.send(
      page({
        title: 'Plan and usage',
        nav: navFor(who, '/settings/plan'),
        body: html`<section class="card">
  <h2>Plan: ${who.account.plan}</h2>
  <table aria-label="Limits and usage" class="stack">
    <thead><tr><th>Keys</th><th>Per minute</th><th>Used this minute</th><th>Per day (UTC)</th><th>Used today</th></tr></thead>
    <tbody>
      <tr>${row(['Live (sk_live_)', n(live.perMinute), n(liveUsage.minute), n(live.perDay), live.perDay === null ? '—' : n(liveUsage.day)])}</tr>
      <tr>${row(['Test (sk_test_)', n(TEST_MODE_LIMITS.perMinute), n(testUsage.minute), n(TEST_MODE_LIMITS.perDay), '—'])}</tr>
    </tbody>
  </table>
  <p class="muted">Plans: Starter 60/min and 10,000/day, Professional 300/min and 100,000/day, Enterprise 1,000/min with no daily cap. Test keys allow 100/min on every plan.</p>
</section>
<section class="card">
  <h2>Account</h2>
  <p><a href="/settings/password">Change your password</a></p>
  <p><a href="/settings/two-factor">Two-step sign-in</a> (${who.user.totpEnabledAt ? 'on' : 'off'}${who.account.requireTwoFactor ? ', required in this account' : ''})</p>
  ${['owner', 'admin'].includes(who.member.role) ? html`<p><a href="/settings/sso">Single sign-on</a> for the people of ${who.account.name}</p>` : ''}
</section>`,
      }),
    );
  });
  router.use(createKeysRouter({ orm: deps.orm, encryptionKey, guards }));
  router.use(createTwoFactorRouter({ orm: deps.orm, config: deps.config, counters: deps.counters, encryptionKey, guards }));
  router.use(createSsoRouter({ ...deps, encryptionKey, resolveHost: deps.resolveHost ?? systemResolver, guards }));
  router.use(createWelcomeRouter({ orm: deps.orm, encryptionKey, guards, servicesFor: deps.servicesFor }));
  router.use(createWorkspaceRouter(deps)); // the Preact workspace: /pipeline
  router.use(webErrorHandler(deps.logger));
  return router;
}

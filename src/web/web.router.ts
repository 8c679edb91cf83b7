import path from 'node:path';
import { existsSync } from 'node:fs';
import { MikroORM } from '@mikro-orm/postgresql';
import express, { Request, Response, Router } from 'express';
import type { Config } from '../config';
import { ApiError } from '../common/api-error';
import { clientAddress } from '../http/client-address';
import { consume, Counters, peek } from '../limits/counters';
import type { Quota } from '../limits/quota';
import type { Logger } from '../logger';
import type { ServiceFactory } from '../modules/module';
import { Account } from '../modules/accounts/account.entity';
import { KeyType } from '../modules/accounts/api-key.entity';
import { ApiKeyService } from '../modules/accounts/api-key.service';
import { verifyPassword } from '../modules/accounts/password';
import { TEST_MODE_LIMITS } from '../modules/accounts/plan';
import { html, page, RETURN_PAGES, SafeHtml } from './html';
import { keyForm, keysPage, KeysPageState, navFor } from './keys-page';
import { clearSessionCookie, cookieValue, sameOrigin, sameToken, SESSION_COOKIE, setSessionCookie, signedIn } from './web-auth';
import { sendPage, webErrorHandler, webHeaders } from './web-errors';
import { authPage, FormError, waitWords } from './web-forms';
import type { SignedIn } from './web-session.service';
import { WebSessionService } from './web-session.service';
import { createWorkspaceRouter } from './workspace.router';

export interface WebDependencies {
  orm: MikroORM;
  config: Config;
  counters: Counters;
  quota: Quota;
  logger: Logger;
  /** Services over a tenant-scoped EntityManager: the session's downloads use the API's own (proposal PDFs). */
  servicesFor: ServiceFactory;
}

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
  router.use(['/signup', '/login', '/logout', '/dashboard', '/settings'], (_req, res, next) => {
    webHeaders(res);
    next();
  });

  const withSession = async (req: Request, res: Response): Promise<SignedIn | null> => {
    const who = await signedIn(deps.orm, req);
    if (!who) res.redirect(303, '/login');
    return who;
  };
  /**
   * Posts of signed-in pages carry the session's token in `_csrf`. A form loaded before the last
   * sign-in (another tab, logged out and in) carries an old one: it is never acted on, but answered
   * with a page that says so and shows the form again, filled in, with the fresh token.
   */
  const checkedPost = async (req: Request, res: Response, resend: (who: SignedIn, body: Record<string, string>) => SafeHtml): Promise<SignedIn | null> => {
    const who = await withSession(req, res);
    const body = (req.body ?? {}) as Record<string, string>;
    if (who && !sameToken(body._csrf, who.session.csrfToken)) {
      sendPage(res, 403, {
        title: 'This form was out of date',
        nav: navFor(who, ''),
        scripts: ['/assets/app.js'], // the revoke form's confirmation
        body: html`<p class="error" role="alert">Nothing was changed. This form was loaded before you last signed in (perhaps in another tab), so it could not be trusted to come from you.</p>
<p>Here it is again with what you entered. Check it and send it once more.</p>
${resend(who, body)}`,
      });
      return null;
    }
    return who;
  };
  /** The same little form again (logout, mode switch, revoke): its visible fields were buttons only. */
  const resendButton =
    (action: string, label: string, fields: string[] = [], confirm?: string) =>
    (who: SignedIn, body: Record<string, string>) =>
      html`<form method="post" action="${action}" class="card" ${confirm ? html`data-confirm="${confirm}"` : ''}>
  <input type="hidden" name="_csrf" value="${who.session.csrfToken}">
  ${fields.map((name) => (typeof body[name] === 'string' ? html`<input type="hidden" name="${name}" value="${body[name]}">` : ''))}
  <p><button type="submit">${label}</button></p>
</form>`;

  router.get('/', async (req, res) => res.redirect(303, (await signedIn(deps.orm, req)) ? '/dashboard' : '/login'));

  router.get('/signup', (_req, res) => res.send(authPage('signup')));
  // POST /signup is in account.router.ts: it answers the same for a taken address as for a new one.

  router.get('/login', (_req, res) => res.send(authPage('login')));
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
    const account = await em.findOne(Account, { email: normalized }, { populate: ['passwordHash'] });
    // Verify even without an account, so the answer takes as long either way.
    const ok = await verifyPassword(
      password,
      account?.passwordHash ?? 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
    );
    // An unverified account cannot sign in yet, with the same answer: otherwise whoever signed up with
    // someone else's address could tell (by signing in) whether it was new or taken.
    if (!account || !account.passwordHash || !ok || !account.emailVerifiedAt) {
      await Promise.all(limits.map(({ limiter, key, limit }) => consume(limiter, key, limit)));
      // The message names no field (that would tell which part was right); both are tied to it.
      return void res.status(401).send(authPage('login', { message: BAD_LOGIN, fields: ['email', 'password'] }, { email }));
    }
    const { token } = await new WebSessionService(em).start(account);
    setSessionCookie(req, res, deps.config, token);
    res.redirect(303, '/dashboard');
  });

  router.post('/logout', sameOrigin, forms, async (req, res) => {
    const who = await checkedPost(req, res, resendButton('/logout', 'Log out'));
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

  router.get('/dashboard', async (req, res) => {
    const who = await withSession(req, res);
    if (!who) return;
    res.send(
      page({
        title: `${who.account.name}: pipeline`,
        nav: navFor(who, '/dashboard'),
        scripts: ['/assets/dashboard.js'],
        body: html`<p class="muted" id="status" role="status" aria-live="polite">Loading…</p>
<section class="card" aria-labelledby="pipeline-title">
  <h2 id="pipeline-title">Pipeline by stage (${who.session.livemode ? 'live' : 'test'} data)</h2>
  <svg id="chart" class="chart" viewBox="0 0 760 20" height="20" role="img" aria-label="Total deal value per stage"></svg>
  <table id="pipeline" class="stack"><thead><tr><th>Stage</th><th>Deals</th><th>Value</th><th>Weighted value</th><th>Probability</th></tr></thead><tbody></tbody></table>
  <p id="pipeline-empty" class="muted" hidden>No deals yet. Create some with the API.</p>
</section>
<section class="card" aria-labelledby="leads-title">
  <h2 id="leads-title">Recent leads</h2>
  <table id="leads" class="stack"><thead><tr><th>Company</th><th>Contact</th><th>Score</th><th>Label</th><th>Created</th></tr></thead><tbody></tbody></table>
  <p id="leads-empty" class="muted" hidden>No leads yet.</p>
</section>`,
      }),
    );
  });

  const showKeys = async (who: SignedIn, state?: KeysPageState) => keysPage(who, await new ApiKeyService(deps.orm.em.fork()).list(who.account), state);

  router.get('/settings/api-keys', async (req, res) => {
    const who = await withSession(req, res);
    if (!who) return;
    const created = await new WebSessionService(deps.orm.em.fork()).takeNewKey(who.session, encryptionKey);
    res.send(await showKeys(who, { created }));
  });
  router.post('/settings/api-keys', sameOrigin, forms, async (req, res) => {
    const who = await checkedPost(req, res, (fresh, body) => keyForm(fresh.session.csrfToken, { name: body.name, type: body.type }));
    if (!who) return;
    const { name = '', type = '' } = req.body as Record<string, string>;
    const refuse = async (error: FormError) => res.status(400).send(await showKeys(who, { error, values: { name, type } }));
    if (type !== KeyType.test && type !== KeyType.live) return void (await refuse({ message: 'Choose a test or live key.', fields: ['type'] }));
    try {
      const em = deps.orm.em.fork();
      const { secret } = await new ApiKeyService(em).create(who.account, type, name);
      await new WebSessionService(em).stashNewKey(who.session, { secret, name: name.trim() }, encryptionKey);
      res.redirect(303, '/settings/api-keys');
    } catch (error) {
      if (error instanceof ApiError) return void (await refuse({ message: `The key was not created: ${error.message}.`, fields: ['name'] }));
      throw error;
    }
  });
  router.post('/settings/api-keys/:id/revoke', sameOrigin, forms, async (req, res) => {
    const who = await checkedPost(
      req,
      res,
      resendButton(
        `/settings/api-keys/${encodeURIComponent(String(req.params.id))}/revoke`,
        'Revoke the key',
        [],
        'Revoke this key? Requests using it will fail at once.',
      ),
    );
    if (!who) return;
    try {
      await new ApiKeyService(deps.orm.em.fork()).revoke(String(req.params.id), who.account);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
    res.redirect(303, '/settings/api-keys');
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
</section>`,
      }),
    );
  });
  router.use(createWorkspaceRouter(deps)); // the Preact workspace: /pipeline
  router.use(webErrorHandler(deps.logger));
  return router;
}

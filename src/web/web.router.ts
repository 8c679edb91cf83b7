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
import { Account } from '../modules/accounts/account.entity';
import { KeyType } from '../modules/accounts/api-key.entity';
import { ApiKeyService } from '../modules/accounts/api-key.service';
import { verifyPassword } from '../modules/accounts/password';
import { TEST_MODE_LIMITS } from '../modules/accounts/plan';
import { html, page, SafeHtml } from './html';
import { clearSessionCookie, cookieValue, sameOrigin, sameToken, SESSION_COOKIE, setSessionCookie, signedIn } from './web-auth';
import type { SignedIn } from './web-session.service';
import { WebSessionService } from './web-session.service';

export interface WebDependencies {
  orm: MikroORM;
  config: Config;
  counters: Counters;
  quota: Quota;
  logger: Logger;
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

const field = (name: string, label: string, type: string, extra: SafeHtml | string = '') =>
  html`<label for="${name}">${label}</label><input id="${name}" name="${name}" type="${type}" ${extra} required>`;

const errorBox = (message?: string) => (message ? html`<p class="error" role="alert">${message}</p>` : '');

export function authPage(kind: 'signup' | 'login', message?: string, values: Record<string, string> = {}): string {
  const signup = kind === 'signup';
  return page({
    title: signup ? 'Create your account' : 'Log in',
    body: html`${errorBox(message)}
<form method="post" action="/${kind}" class="card">
  ${signup ? field('name', 'Company or team name', 'text', html`value="${values.name ?? ''}" autocomplete="organization"`) : ''}
  ${field('email', 'Email', 'email', html`value="${values.email ?? ''}" autocomplete="email"`)}
  ${field('password', 'Password', 'password', html`autocomplete="${signup ? 'new-password' : 'current-password'}" ${signup ? html`minlength="10"` : ''}`)}
  ${signup ? html`<p class="muted">At least 10 characters.</p>` : ''}
  <p><button type="submit">${signup ? 'Create account' : 'Log in'}</button></p>
</form>
<p>${signup ? html`Already have an account? <a href="/login">Log in</a>` : html`New here? <a href="/signup">Create an account</a>`}</p>
${signup ? '' : html`<p><a href="/forgot-password">Forgot your password?</a> Signed up but not verified yet? Open the link we e-mailed you first.</p>`}`,
  });
}

const navFor = (who: SignedIn, current: string) => ({
  accountName: who.account.name,
  livemode: who.session.livemode,
  csrfToken: who.session.csrfToken,
  current,
});

const fmt = (date: Date | null | undefined) => (date ? date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—');

/** The web application: sign up, log in, API keys, plan and usage, and the pipeline dashboard. */
export function createWebRouter(deps: WebDependencies): Router {
  const router = Router();
  const encryptionKey = deps.config.encryptionKey;
  if (!encryptionKey) throw new Error('config.encryptionKey is not set: the web app keeps new keys encrypted until they are shown');
  const forms = express.urlencoded({ extended: false, limit: '16kb' });
  router.use('/assets', express.static(assetsDir(), { maxAge: '1h', index: false }));
  router.use(['/signup', '/login', '/logout', '/dashboard', '/settings'], (_req, res, next) => {
    // Pages load only our own scripts and styles; nothing inline, no frames.
    res.set('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'");
    res.set('Cache-Control', 'no-store');
    next();
  });

  const withSession = async (req: Request, res: Response): Promise<SignedIn | null> => {
    const who = await signedIn(deps.orm, req);
    if (!who) res.redirect(303, '/login');
    return who;
  };
  /** Posts of signed-in pages carry the session's token in `_csrf`. */
  const checkedPost = async (req: Request, res: Response): Promise<SignedIn | null> => {
    const who = await withSession(req, res);
    if (who && !sameToken((req.body as Record<string, string>)?._csrf, who.session.csrfToken)) {
      res.status(403).type('text/plain').send('The form expired; go back, reload the page and try again.');
      return null;
    }
    return who;
  };

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
      res.set('Retry-After', String(Math.max(1, Math.min(...blocked.map((w) => w!.resetAt)) - Math.ceil(Date.now() / 1000))));
      return void res.status(429).send(authPage('login', 'Too many attempts. Wait a few minutes, then try again.', { email }));
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
      return void res.status(401).send(authPage('login', BAD_LOGIN, { email }));
    }
    const { token } = await new WebSessionService(em).start(account);
    setSessionCookie(req, res, deps.config, token);
    res.redirect(303, '/dashboard');
  });

  router.post('/logout', sameOrigin, forms, async (req, res) => {
    const who = await checkedPost(req, res);
    if (!who) return;
    await new WebSessionService(deps.orm.em.fork()).end(cookieValue(req, SESSION_COOKIE));
    clearSessionCookie(req, res, deps.config);
    res.redirect(303, '/login');
  });

  router.post('/settings/mode', sameOrigin, forms, async (req, res) => {
    const who = await checkedPost(req, res);
    if (!who) return;
    const em = deps.orm.em.fork();
    const session = await em.merge(who.session);
    await new WebSessionService(em).setMode(session, (req.body as Record<string, string>).mode === 'live');
    res.redirect(303, req.get('referer')?.includes('/settings') ? '/settings/plan' : '/dashboard');
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
  <svg id="chart" class="chart" width="760" height="20" role="img" aria-label="Total deal value per stage"></svg>
  <table id="pipeline"><thead><tr><th>Stage</th><th>Deals</th><th>Value</th><th>Weighted value</th><th>Probability</th></tr></thead><tbody></tbody></table>
  <p id="pipeline-empty" class="muted" hidden>No deals yet. Create some with the API.</p>
</section>
<section class="card" aria-labelledby="leads-title">
  <h2 id="leads-title">Recent leads</h2>
  <table id="leads"><thead><tr><th>Company</th><th>Contact</th><th>Score</th><th>Label</th><th>Created</th></tr></thead><tbody></tbody></table>
  <p id="leads-empty" class="muted" hidden>No leads yet.</p>
</section>`,
      }),
    );
  });

  const keysPage = async (who: SignedIn, created?: { secret: string; name: string }, message?: string) => {
    const keys = await new ApiKeyService(deps.orm.em.fork()).list(who.account);
    return page({
      title: 'API keys',
      nav: navFor(who, '/settings/api-keys'),
      scripts: ['/assets/app.js'],
      body: html`${errorBox(message)}
${
  created
    ? html`<section class="card notice" aria-labelledby="new-key">
  <h2 id="new-key">Your new key “${created.name}”</h2>
  <p><strong>Copy it now: it is shown only once.</strong> We keep only a hash and cannot show it again.</p>
  <p class="secret" id="new-secret">${created.secret}</p>
  <button type="button" data-copy="new-secret">Copy key</button>
</section>`
    : ''
}
<form method="post" action="/settings/api-keys" class="card">
  <h2>Generate a new key</h2>
  <input type="hidden" name="_csrf" value="${who.session.csrfToken}">
  <label for="key-name">Name (what will use it)</label>
  <input id="key-name" name="name" type="text" maxlength="100" required placeholder="e.g. CRM sync">
  <label for="key-type">Type</label>
  <select id="key-type" name="type"><option value="test">Test (sk_test_, sandbox data)</option><option value="live">Live (sk_live_, real data)</option></select>
  <p><button type="submit">Generate key</button></p>
</form>
<table aria-label="API keys">
  <thead><tr><th>Name</th><th>Type</th><th>Key</th><th>Created</th><th>Last used</th><th>Status</th><th></th></tr></thead>
  <tbody>${keys.map(
    (key) => html`<tr>
    <td>${key.name}</td><td>${key.type}</td><td><code>${key.prefix}…${key.last4}</code></td><td>${fmt(key.createdAt)}</td><td>${fmt(key.lastUsedAt)}</td>
    <td>${key.revokedAt ? `Revoked ${fmt(key.revokedAt)}` : 'Active'}</td>
    <td>${
      key.revokedAt
        ? ''
        : html`<form method="post" action="/settings/api-keys/${key.id}/revoke" data-confirm="Revoke “${key.name}”? Requests using it will fail at once.">
      <input type="hidden" name="_csrf" value="${who.session.csrfToken}"><button type="submit" class="danger" aria-label="Revoke ${key.name}">Revoke</button></form>`
    }</td></tr>`,
  )}</tbody>
</table>`,
    });
  };

  router.get('/settings/api-keys', async (req, res) => {
    const who = await withSession(req, res);
    if (!who) return;
    const created = await new WebSessionService(deps.orm.em.fork()).takeNewKey(who.session, encryptionKey);
    res.send(await keysPage(who, created));
  });
  router.post('/settings/api-keys', sameOrigin, forms, async (req, res) => {
    const who = await checkedPost(req, res);
    if (!who) return;
    const { name = '', type = '' } = req.body as Record<string, string>;
    if (type !== KeyType.test && type !== KeyType.live) return void res.status(400).send(await keysPage(who, undefined, 'Choose a test or live key.'));
    try {
      const em = deps.orm.em.fork();
      const { secret } = await new ApiKeyService(em).create(who.account, type, name);
      await new WebSessionService(em).stashNewKey(who.session, { secret, name: name.trim() }, encryptionKey);
      res.redirect(303, '/settings/api-keys');
    } catch (error) {
      if (error instanceof ApiError) return void res.status(400).send(await keysPage(who, undefined, `The key was not created: ${error.message}.`));
      throw error;
    }
  });
  router.post('/settings/api-keys/:id/revoke', sameOrigin, forms, async (req, res) => {
    const who = await checkedPost(req, res);
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
    res.send(
      page({
        title: 'Plan and usage',
        nav: navFor(who, '/settings/plan'),
        body: html`<section class="card">
  <h2>Plan: ${who.account.plan}</h2>
  <table aria-label="Limits and usage">
    <thead><tr><th>Keys</th><th>Per minute</th><th>Used this minute</th><th>Per day (UTC)</th><th>Used today</th></tr></thead>
    <tbody>
      <tr><td>Live (sk_live_)</td><td>${n(live.perMinute)}</td><td>${n(liveUsage.minute)}</td><td>${n(live.perDay)}</td><td>${live.perDay === null ? '—' : n(liveUsage.day)}</td></tr>
      <tr><td>Test (sk_test_)</td><td>${n(TEST_MODE_LIMITS.perMinute)}</td><td>${n(testUsage.minute)}</td><td>${n(TEST_MODE_LIMITS.perDay)}</td><td>—</td></tr>
    </tbody>
  </table>
  <p class="muted">Plans: Starter 60/min and 10,000/day, Professional 300/min and 100,000/day, Enterprise 1,000/min with no daily cap. Test keys allow 100/min on every plan.</p>
</section>`,
      }),
    );
  });
  return router;
}

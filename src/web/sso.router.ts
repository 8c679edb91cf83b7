import { createHash, randomBytes } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import { logFromSession } from './web-session.service';
import express, { Request, Response, Router } from 'express';
import { ApiError } from '../common/api-error';
import { decryptJson, encryptJson } from '../common/crypto';
import type { HostResolver } from '../http/address-guard';
import { clientAddress } from '../http/client-address';
import { consume, Counters } from '../limits/counters';
import type { Logger } from '../logger';
import type { ServiceFactory } from '../modules/module';
import { AttemptSecrets, authorizationAnswer, authorizationRequest, discover, explain } from '../modules/sso/oidc-client';
import { SsoConnection } from '../modules/sso/sso-connection.entity';
import { ssoConnectionFor, SsoService } from '../modules/sso/sso.service';
import type { Config } from '../config';
import { startSession } from './sign-in';
import { SsoAttempt } from './sso-attempt.entity';
import { ssoForm, ssoFormHeaders, SsoFormValues, ssoRefusedPage, ssoSettingsPage, SsoSettingsState, ssoStartPage } from './sso-pages';
import { cookieValue, sameOrigin } from './web-auth';
import { waitWords } from './web-forms';
import type { Guards } from './web-guards';
import type { SignedIn } from './web-session.service';

/** The cookie of a single sign-on under way, sent back only to /sso (the callback). */
const ATTEMPT_COOKIE = 'spa_sso';
const ATTEMPT_MS = 10 * 60_000;
/** Sign-ins started per client address in 15 minutes: each one makes the service read an issuer's documents. */
const START_LIMITS = { perAddress: 30, windowS: 900 };
const hash = (token: string) => createHash('sha256').update(token).digest('hex');

export interface SsoRouterDependencies {
  orm: MikroORM;
  config: Config;
  counters: Counters;
  logger: Logger;
  encryptionKey: Buffer;
  resolveHost: HostResolver;
  servicesFor: ServiceFactory;
  guards: Guards;
}

/**
 * Single sign-on: /login/sso finds the account's connection by the address's domain and sends the
 * browser to its issuer (PKCE, state and nonce kept server-side, behind a short-lived cookie);
 * /sso/callback takes the answer once, has openid-client check it, and signs the person in to that
 * account (a member with the default role on their first sign-in). /settings/sso is the owners' and
 * admins' page of the connection.
 */
export function createSsoRouter(deps: SsoRouterDependencies): Router {
  const router = Router();
  const { orm, config, guards } = deps;
  const forms = express.urlencoded({ extended: false, limit: '16kb' });
  const oidcSettings = { allowPrivateUrls: config.sso.allowPrivateUrls, resolveHost: deps.resolveHost, timeoutMs: config.sso.timeoutMs };
  const service = (em = orm.em.fork()) => new SsoService(em, { ...oidcSettings, encryptionKey: deps.encryptionKey });
  const redirectUri = `${config.publicUrl}/sso/callback`;
  const attemptCookie = (req: Request) => ({ httpOnly: true, sameSite: 'lax' as const, secure: req.secure || config.isProduction, path: '/sso' });

  router.get('/login/sso', (req, res) => {
    ssoFormHeaders(res, config);
    res.send(ssoStartPage(typeof req.query.email === 'string' ? req.query.email : ''));
  });

  router.post('/login/sso', sameOrigin, forms, async (req, res) => {
    ssoFormHeaders(res, config);
    const email = String((req.body as Record<string, string>).email ?? '').trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
      return void res.status(400).send(ssoStartPage(email, { message: 'Enter a valid email address.', fields: ['email'] }));
    const window = await consume(deps.counters.limiter('sso-start-address', START_LIMITS.windowS), clientAddress(req), START_LIMITS.perAddress);
    if (!window.allowed) {
      const retryAfter = Math.max(1, window.resetAt - Math.ceil(Date.now() / 1000));
      res.set('Retry-After', String(retryAfter));
      return void res
        .status(429)
        .send(ssoStartPage(email, { message: `Too many sign-ins started. Wait about ${waitWords(retryAfter)}, then try again.`, fields: [] }));
    }
    const em = orm.em.fork();
    const connection = await ssoConnectionFor(em, email);
    if (!connection) {
      const message = `No single sign-on is set up for ${email.split('@').pop()}. Log in with your password instead.`;
      return void res.status(400).send(ssoStartPage(email, { message, fields: ['email'] }));
    }
    let request;
    try {
      request = await authorizationRequest(await discover(await service(em).clientOf(connection), oidcSettings), { redirectUri, loginHint: email });
    } catch (error) {
      deps.logger.warn({ connection: connection.id, reason: explain(error) }, 'single sign-on could not start');
      return void res.status(502).send(ssoRefusedPage(`Your organization's identity provider could not be used: ${explain(error)}`));
    }
    const token = randomBytes(32).toString('base64url');
    // The connection's sign-ins that ran out are swept as a new one begins (nothing else reads them).
    await em.nativeDelete(SsoAttempt, { connection: connection.id, expiresAt: { $lte: new Date() } });
    em.create(SsoAttempt, {
      tokenHash: hash(token),
      connection,
      secretsEncrypted: encryptJson(request.secrets, deps.encryptionKey),
      createdAt: new Date(),
      expiresAt: new Date(Date.now() + ATTEMPT_MS),
    });
    await em.flush();
    res.cookie(ATTEMPT_COOKIE, token, { ...attemptCookie(req), maxAge: ATTEMPT_MS });
    res.redirect(303, request.url.href);
  });

  router.get('/sso/callback', async (req, res) => {
    const refuse = (status: number, reason: string) => {
      deps.logger.info({ reason }, 'single sign-on refused');
      res.status(status).send(ssoRefusedPage(reason));
    };
    const token = cookieValue(req, ATTEMPT_COOKIE);
    res.clearCookie(ATTEMPT_COOKIE, attemptCookie(req));
    const em = orm.em.fork();
    // Taken as it is read: a second answer (a replayed callback, a reused code) finds nothing.
    const [attempt] = token
      ? await em
          .getConnection()
          .execute<Array<{ connection_id: string; secrets_encrypted: string; expires_at: Date }>>(
            'delete from "sso_attempts" where "token_hash" = ? returning "connection_id", "secrets_encrypted", "expires_at"',
            [hash(token)],
          )
      : [];
    if (!attempt) {
      return refuse(400, 'This sign-in is not one this browser started, or it was already used: an answer from the identity provider counts once.');
    }
    if (new Date(attempt.expires_at).getTime() <= Date.now()) return refuse(400, 'This sign-in expired: it must be finished within 10 minutes.');
    const connection = await em.findOne(SsoConnection, { id: attempt.connection_id }, { populate: ['domains', 'account'] });
    if (!connection) return refuse(400, 'Single sign-on was removed from this account while you were signing in.');
    // The address the issuer sent the browser to, as registered: PUBLIC_URL's, whatever Host this request came through.
    const callbackUrl = new URL(`${redirectUri}${new URL(req.originalUrl, redirectUri).search}`);
    let claims;
    try {
      const issuer = await discover(await service(em).clientOf(connection), oidcSettings);
      claims = await authorizationAnswer(issuer, callbackUrl, decryptJson<AttemptSecrets>(attempt.secrets_encrypted, deps.encryptionKey));
    } catch (error) {
      return refuse(400, `The answer of your organization's identity provider was refused: ${explain(error)}.`);
    }
    const admitted = await service(em).admit(connection, claims, (scoped) => deps.servicesFor(scoped).members);
    if ('refused' in admitted) return refuse(403, admitted.refused);
    await startSession(req, res, em, config, { ...admitted, ssoConnectionId: connection.id });
  });

  const allowed = (res: Response, who: SignedIn) => guards.allowedRole(res, who, ['owner', 'admin'], 'Setting up single sign-on');
  const show = async (res: Response, who: SignedIn, state: Partial<SsoSettingsState> = {}, status = 200) => {
    const connection = await service().ofAccount(who.account.id);
    res.status(status).send(ssoSettingsPage(who, { connection, redirectUri, ...state }));
  };
  const valuesOf = (body: Record<string, string>): SsoFormValues => ({
    issuer_url: body.issuer_url,
    client_id: body.client_id,
    domains: body.domains,
    default_role: body.default_role,
    require_sso: body.require_sso === 'on' ? 'on' : '',
  });

  router.get('/settings/sso', async (req, res) => {
    const who = await guards.withSession(req, res);
    if (!who || !allowed(res, who)) return;
    const notice = req.query.saved === '1' ? 'Single sign-on saved.' : req.query.removed === '1' ? 'Single sign-on removed.' : undefined;
    await show(res, who, { notice });
  });

  router.post('/settings/sso', sameOrigin, forms, async (req, res) => {
    const body = req.body as Record<string, string>;
    const resend = (fresh: SignedIn, sent: Record<string, string>) => ssoForm(fresh.session.csrfToken, valuesOf(sent), undefined, true);
    const who = await guards.checkedPost(req, res, resend);
    if (!who || !allowed(res, who)) return;
    try {
      await service().save(who.account.id, {
        issuerUrl: body.issuer_url ?? '',
        clientId: body.client_id ?? '',
        clientSecret: body.client_secret ?? '',
        domains: body.domains ?? '',
        defaultRole: body.default_role ?? '',
        requireSso: body.require_sso === 'on',
      });
    } catch (error) {
      if (!(error instanceof ApiError) || !error.param) throw error;
      return show(res, who, { values: valuesOf(body), error: { message: error.message, fields: [error.param] } }, 400);
    }
    await logFromSession(orm, who, req, clientAddress(req), {
      type: 'sso.changed',
      details: { change: 'saved', issuerUrl: body.issuer_url ?? '', domains: body.domains ?? '', requireSso: body.require_sso === 'on' },
    });
    res.redirect(303, '/settings/sso?saved=1');
  });

  router.post('/settings/sso/remove', sameOrigin, forms, async (req, res) => {
    const who = await guards.checkedPost(req, res, guards.resendButton('/settings/sso/remove', 'Remove single sign-on'));
    if (!who || !allowed(res, who)) return;
    if (await service().remove(who.account.id))
      await logFromSession(orm, who, req, clientAddress(req), { type: 'sso.changed', details: { change: 'removed' } });
    res.redirect(303, '/settings/sso?removed=1');
  });

  return router;
}

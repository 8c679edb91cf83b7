import { MikroORM } from '@mikro-orm/postgresql';
import express, { NextFunction, Request, Response, Router } from 'express';
import type { Config } from '../config';
import { ApiError } from '../common/api-error';
import { clientAddress } from '../http/client-address';
import { consume, Counters, WindowResult } from '../limits/counters';
import type { Quota } from '../limits/quota';
import type { Logger } from '../logger';
import { createMailer, Mailer } from '../mail/mailer';
import { AccountEmailService } from '../modules/accounts/account-email.service';
import { Account } from '../modules/accounts/account.entity';
import { InvitationService } from '../modules/members/invitation.service';
import {
  changePasswordPage,
  forgotPasswordPage,
  forgotPasswordSentPage,
  mailUnavailablePage,
  resetLinkBrokenPage,
  resetPasswordPage,
  acceptInvitationPage,
  invitationBrokenPage,
  signUpSentPage,
  verifiedPage,
} from './account-pages';
import { afterPassword } from './sign-in';
import { sameOrigin, sameToken, signedIn } from './web-auth';
import { WebSession } from './web-session.entity';
import { SignedIn, WebSessionService } from './web-session.service';
import { authPage, waitWords } from './web-forms';

export interface AccountRouterDependencies {
  orm: MikroORM;
  config: Config;
  counters: Counters;
  quota: Quota;
  logger: Logger;
  /** The app's mailer; by default one over config.mail (SMTP_URL, or the development log). */
  mailer?: Mailer;
}

/**
 * Messages one inbox can be sent per hour, by sign-up and by reset requests each, whoever asks
 * (so the forms cannot flood someone's mailbox), and reset requests per client address per hour
 * (sign-ups per address are the quota's `signupsPerHour`).
 */
export const ACCOUNT_MAIL_LIMITS = { perEmail: 3, perAddress: 20, windowS: 3600 };

const PAGES = ['/signup', '/verify-email', '/forgot-password', '/reset-password', '/settings/password', '/invitations'];

/**
 * The account's e-mail flows: sign-up that answers the same for a taken address as for a new one,
 * e-mail verification, a forgotten password's reset, and a password change.
 */
export function createAccountRouter(deps: AccountRouterDependencies): Router {
  const router = Router();
  const mailer = deps.mailer ?? createMailer(deps.config.mail, deps.logger, deps.config.isProduction);
  if (!mailer.configured) deps.logger.warn('SMTP_URL is not set: the web app cannot send e-mail, so sign-up and password reset are off');
  const forms = express.urlencoded({ extended: false, limit: '16kb' });
  const emailService = (em = deps.orm.em.fork()) => new AccountEmailService(em, { mailer, publicUrl: deps.config.publicUrl, logger: deps.logger });

  router.use(PAGES, (_req: Request, res: Response, next: NextFunction) => {
    // As the other pages: only our own scripts and styles. (Referrer-Policy is the app's `same-origin`,
    // so the links' tokens never leave in a Referer, and forms keep their Origin header.)
    res.set('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'");
    res.set('Cache-Control', 'no-store');
    next();
  });

  /**
   * Counts one request against the e-mail's hourly window (and the client address's, where no other
   * limit counts it); the refusal, if any.
   */
  const overLimit = async (kind: string, req: Request, email: string, perAddress: boolean): Promise<WindowResult | undefined> => {
    const { windowS } = ACCOUNT_MAIL_LIMITS;
    const windows = await Promise.all([
      consume(deps.counters.limiter(`${kind}-email`, windowS), email.trim().toLowerCase(), ACCOUNT_MAIL_LIMITS.perEmail),
      ...(perAddress ? [consume(deps.counters.limiter(`${kind}-address`, windowS), clientAddress(req), ACCOUNT_MAIL_LIMITS.perAddress)] : []),
    ]);
    return windows.find((window) => !window.allowed);
  };
  const retryAfter = (res: Response, window: WindowResult) => res.set('Retry-After', String(Math.max(1, window.resetAt - Math.ceil(Date.now() / 1000))));

  router.post('/signup', sameOrigin, forms, async (req, res) => {
    const { name = '', email = '', password = '' } = req.body as Record<string, string>;
    const attempts = await deps.quota.consumeSignup(clientAddress(req));
    if (!attempts.allowed) {
      res.set('Retry-After', String(attempts.retryAfterS));
      const message = `Too many sign-ups from this network. Wait about ${waitWords(attempts.retryAfterS)}, then try again.`;
      return void res.status(429).send(authPage('signup', { message, fields: [] }, { name, email }));
    }
    if (!mailer.configured) return void res.status(503).send(mailUnavailablePage());
    const refuse = (message: string, field: string) => res.status(400).send(authPage('signup', { message, fields: [field] }, { name, email }));
    if (password.length < 10) return void refuse('Choose a password of at least 10 characters.', 'password');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) return void refuse('Enter a valid email address.', 'email');
    // Counted per e-mail before anything is looked up, so the limit answers alike for taken and new addresses.
    // (Per address, sign-ups are already counted by the quota above.)
    const limited = await overLimit('signup', req, email, false);
    if (limited) {
      retryAfter(res, limited);
      return void res
        .status(429)
        .send(authPage('signup', { message: 'Too many sign-ups for this address. Wait an hour, then try again.', fields: [] }, { name, email }));
    }
    try {
      await emailService().signUp({ name, email, password });
    } catch (error) {
      if (error instanceof ApiError && error.param === 'name') return void refuse('Enter a name.', 'name');
      if (error instanceof ApiError && error.param === 'email') return void refuse('Enter a valid email address.', 'email');
      throw error;
    }
    // No session here: signing a new address in would tell a taken one apart. The owner verifies, then logs in.
    res.redirect(303, '/signup/sent');
  });
  router.get('/signup/sent', (_req, res) => res.send(signUpSentPage()));

  router.get('/verify-email', async (req, res) => {
    const ok = await emailService().verifyEmail(typeof req.query.token === 'string' ? req.query.token : undefined);
    res.status(ok ? 200 : 400).send(verifiedPage(ok));
  });

  router.get('/forgot-password', (_req, res) => res.send(forgotPasswordPage()));
  router.post('/forgot-password', sameOrigin, forms, async (req, res) => {
    const { email = '' } = req.body as Record<string, string>;
    if (!mailer.configured) return void res.status(503).send(mailUnavailablePage());
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) return void res.status(400).send(forgotPasswordPage('Enter a valid email address.', email));
    const limited = await overLimit('forgot', req, email, true);
    if (limited) {
      retryAfter(res, limited);
      return void res.status(429).send(forgotPasswordPage('Too many requests for this address. Wait an hour, then try again.', email));
    }
    await emailService().requestPasswordReset(email);
    res.redirect(303, '/forgot-password/sent');
  });
  router.get('/forgot-password/sent', (_req, res) => res.send(forgotPasswordSentPage()));

  router.get('/reset-password', async (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    if (!(await emailService().resetLinkWorks(token))) return void res.status(400).send(resetLinkBrokenPage());
    res.send(resetPasswordPage(token));
  });
  router.post('/reset-password', sameOrigin, forms, async (req, res) => {
    const { token = '', password = '' } = req.body as Record<string, string>;
    const em = deps.orm.em.fork();
    let user;
    try {
      user = await emailService(em).resetPassword(token, password);
    } catch (error) {
      if (error instanceof ApiError && error.param === 'password') {
        return void res.status(400).send(resetPasswordPage(token, 'Choose a password of at least 10 characters.'));
      }
      throw error;
    }
    if (!user) return void res.status(400).send(resetLinkBrokenPage());
    // Whoever knew the old password is logged out everywhere; this browser is signed in afresh.
    await em.nativeDelete(WebSession, { user });
    const [membership] = await new WebSessionService(em).accountsOf(user.id);
    if (!membership) return void res.redirect(303, '/login');
    // The link proved the mailbox, as a password does: a second step, when the person has one, still follows.
    await afterPassword(req, res, em, deps.config, { user, account: membership.account.getEntity() as Account, landing: '/dashboard' });
  });

  // An invitation (POST /v1/members, the Members page, the CLI): choose a password, or confirm yours, and join.
  router.get('/invitations/accept', async (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const opened = await new InvitationService(deps.orm.em.fork()).open(token);
    if ('refused' in opened) return void res.status(400).send(invitationBrokenPage(opened.refused));
    res.send(acceptInvitationPage({ token, ...opened }));
  });
  router.post('/invitations/accept', sameOrigin, forms, async (req, res) => {
    const { token = '', password = '' } = req.body as Record<string, string>;
    const em = deps.orm.em.fork();
    const invitations = new InvitationService(em);
    let accepted;
    try {
      accepted = await invitations.accept(token, password);
    } catch (error) {
      if (!(error instanceof ApiError) || error.param !== 'password') throw error;
      const opened = await invitations.open(token);
      if ('refused' in opened) return void res.status(400).send(invitationBrokenPage(opened.refused));
      return void res.status(400).send(acceptInvitationPage({ token, ...opened }, error.message));
    }
    if ('refused' in accepted) return void res.status(400).send(invitationBrokenPage(accepted.refused));
    const account = await em.findOneOrFail(Account, { id: accepted.accountId });
    await afterPassword(req, res, em, deps.config, { user: accepted.user, account, landing: '/dashboard' });
  });

  const withSession = async (req: Request, res: Response): Promise<SignedIn | null> => {
    const who = await signedIn(deps.orm, req);
    if (!who) res.redirect(303, '/login');
    return who;
  };

  router.get('/settings/password', async (req, res) => {
    const who = await withSession(req, res);
    if (!who) return;
    res.send(changePasswordPage(who, { changed: req.query.changed === '1' }));
  });
  router.post('/settings/password', sameOrigin, forms, async (req, res) => {
    const who = await withSession(req, res);
    if (!who) return;
    const { _csrf, current_password: current = '', new_password: next = '' } = req.body as Record<string, string>;
    if (!sameToken(_csrf, who.session.csrfToken)) {
      return void res.status(403).type('text/plain').send('The form expired; go back, reload the page and try again.');
    }
    const em = deps.orm.em.fork();
    try {
      await emailService(em).changePassword(who.user.id, current, next);
    } catch (error) {
      if (error instanceof ApiError && (error.param === 'current_password' || error.param === 'new_password')) {
        const message = error.param === 'current_password' ? 'The current password is incorrect.' : 'Choose a new password of at least 10 characters.';
        return void res.status(400).send(changePasswordPage(who, { errors: { [error.param]: message } }));
      }
      throw error;
    }
    // Every other browser signed in to this account is logged out; this one stays.
    await em.nativeDelete(WebSession, { user: who.user.id, tokenHash: { $ne: who.session.tokenHash } });
    res.redirect(303, '/settings/password?changed=1');
  });

  return router;
}

import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request, Response } from 'express';
import type { Config } from '../config';
import type { Account } from '../modules/accounts/account.entity';
import type { User } from '../modules/accounts/user.entity';
import { ssoConnectionFor } from '../modules/sso/sso.service';
import { isNewAccount } from './onboarding';
import { SignInChallenge } from './sign-in-challenge.entity';
import { ssoFormHeaders, ssoRequiredPage } from './sso-pages';
import { cookieValue, setSessionCookie } from './web-auth';
import { WebSessionService } from './web-session.service';
import { ActorType } from '../events/acting';
import { clientAddress } from '../http/client-address';
import { recordSecurityEvent } from '../modules/security/security-log';

/** The cookie of a sign-in waiting for its second step (only on /login paths). */
export const CHALLENGE_COOKIE = 'spa_sign_in';
/** How long the code step waits, and how many wrong codes it takes before the sign-in starts over. */
export const CHALLENGE_MS = 5 * 60_000;
export const CHALLENGE_ATTEMPTS = 5;
export const TWO_FACTOR_STEP_PAGE = '/login/two-factor';

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/** Where a new session lands: the getting-started steps for an account with nothing in it yet, else the dashboard. */
export async function landingOf(em: EntityManager, account: Account): Promise<string> {
  return (await isNewAccount(em, account)) ? '/welcome' : '/dashboard';
}

/** Starts a session of `user` in `account`, sets its cookie and sends the browser on. */
export async function startSession(
  req: Request,
  res: Response,
  em: EntityManager,
  config: Config,
  signIn: { user: User; account: Account; landing?: string; ssoConnectionId?: string },
): Promise<void> {
  recordSecurityEvent(em, signIn.account.id, {
    type: 'sign_in.succeeded',
    actor: { type: ActorType.member, id: signIn.user.id },
    memberId: signIn.user.id,
    address: clientAddress(req),
    userAgent: req.get('user-agent') ?? null,
    details: { method: signIn.ssoConnectionId ? 'sso' : 'password' },
  });
  const { token } = await new WebSessionService(em).start(signIn.user, signIn.account, { ssoConnectionId: signIn.ssoConnectionId });
  setSessionCookie(req, res, config, token);
  res.redirect(303, signIn.landing ?? (await landingOf(em, signIn.account)));
}

/**
 * After the password was right (at /login, or set by a reset or invitation link): the second step
 * when the person has two-step sign-in on (a pending sign-in, its token in a short-lived cookie),
 * otherwise the session at once; a pointer to single sign-on where the person's domain requires it.
 */
export async function afterPassword(
  req: Request,
  res: Response,
  em: EntityManager,
  config: Config,
  signIn: { user: User; account: Account; landing?: string },
): Promise<void> {
  // The password of an address whose domain must use single sign-on opens nothing (a reset or an
  // invitation link included): the person is pointed there instead.
  if ((await ssoConnectionFor(em, signIn.user.email))?.requireSso) {
    ssoFormHeaders(res, config);
    return void res.status(403).send(ssoRequiredPage(signIn.user.email));
  }
  if (!signIn.user.totpEnabledAt) return startSession(req, res, em, config, signIn);
  const token = randomBytes(32).toString('base64url');
  // The person's pending sign-ins that ran out are swept as a new one begins (nothing else reads them).
  await em.nativeDelete(SignInChallenge, { user: signIn.user.id, expiresAt: { $lte: new Date() } });
  em.create(SignInChallenge, {
    tokenHash: hash(token),
    user: signIn.user,
    account: signIn.account,
    attempts: 0,
    createdAt: new Date(),
    expiresAt: new Date(Date.now() + CHALLENGE_MS),
  });
  await em.flush();
  res.cookie(CHALLENGE_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure: req.secure || config.isProduction, path: '/login', maxAge: CHALLENGE_MS });
  res.redirect(303, TWO_FACTOR_STEP_PAGE);
}

export function clearChallengeCookie(req: Request, res: Response, config: Config): void {
  res.clearCookie(CHALLENGE_COOKIE, { httpOnly: true, sameSite: 'lax', secure: req.secure || config.isProduction, path: '/login' });
}

/** The sign-ins waiting for their second step. */
export class SignInChallenges {
  constructor(private readonly em: EntityManager) {}

  /** The request's pending sign-in, while it lasts. */
  async of(req: Request): Promise<SignInChallenge | null> {
    const token = cookieValue(req, CHALLENGE_COOKIE);
    if (!token || token.length > 100) return null;
    return this.em.findOne(SignInChallenge, { tokenHash: hash(token), expiresAt: { $gt: new Date() } }, { populate: ['user', 'account'] });
  }

  /**
   * Counts a code against the sign-in before it is checked (so parallel guesses are counted too):
   * the attempts now, or null when none is left and the sign-in is over.
   */
  async countAttempt(challenge: SignInChallenge): Promise<number | null> {
    const rows = await this.em
      .getConnection()
      .execute<Array<{ attempts: number }>>(
        'update "sign_in_challenges" set "attempts" = "attempts" + 1 where "token_hash" = ? and "attempts" < ? and "expires_at" > now() returning "attempts"',
        [challenge.tokenHash, CHALLENGE_ATTEMPTS],
      );
    if (rows.length) return rows[0].attempts;
    await this.end(challenge);
    return null;
  }

  /** Ends the pending sign-in; true for the one call that ended it (a session starts once). */
  async end(challenge: SignInChallenge): Promise<boolean> {
    return (await this.em.nativeDelete(SignInChallenge, { tokenHash: challenge.tokenHash })) === 1;
  }
}

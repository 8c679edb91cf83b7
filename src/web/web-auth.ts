import { timingSafeEqual } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../config';
import { sendErrorPage } from './web-errors';
import { SESSION_DAYS, SignedIn, WebSessionService } from './web-session.service';

export const SESSION_COOKIE = 'spa_session';

export function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) {
      try {
        return decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site POSTs), Secure behind HTTPS. */
export function setSessionCookie(req: Request, res: Response, config: Config, token: string): void {
  res.cookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: req.secure || config.isProduction,
    path: '/',
    maxAge: SESSION_DAYS * 86_400_000,
  });
}

export function clearSessionCookie(req: Request, res: Response, config: Config): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure: req.secure || config.isProduction, path: '/' });
}

export function sameToken(a: string | undefined, b: string): boolean {
  if (typeof a !== 'string') return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The signed-in session of this request, or null. A session that must set up two-step sign-in
 * first counts as none (every page, /graphql and the PDFs refuse it), unless `twoFactorSetup` says
 * the caller is the set-up page or lets it through to send it there (web-guards.ts).
 */
export async function signedIn(orm: MikroORM, req: Request, options: { twoFactorSetup?: boolean } = {}): Promise<SignedIn | null> {
  const who = await new WebSessionService(orm.em.fork()).resolve(cookieValue(req, SESSION_COOKIE));
  return who && (!who.twoFactorSetupNeeded || options.twoFactorSetup) ? who : null;
}

/**
 * Form posts must come from our own pages: the Origin (or, failing that, the Referer) must be
 * this host. With SameSite cookies and per-session tokens this closes cross-site request forgery.
 */
export function sameOrigin(req: Request, res: Response, next: NextFunction): void {
  const source = req.get('origin') ?? req.get('referer');
  let host: string | undefined;
  try {
    host = source ? new URL(source).host : undefined;
  } catch {
    host = undefined;
  }
  if (host && host === req.get('host')) return next();
  sendErrorPage(res, 403, 'Form refused', 'This form must be sent from this site. Nothing was changed: open the page here and send it from there.');
}

import { MikroORM } from '@mikro-orm/postgresql';
import type { Request, Response } from 'express';
import { html, SafeHtml } from './html';
import { navFor } from './keys-page';
import { sameToken, signedIn } from './web-auth';
import { sendPage } from './web-errors';
import type { Role } from '../modules/accounts/key-permissions';
import type { SignedIn } from './web-session.service';

/** What a signed-in page's form re-renders when its token was stale: the form again, filled in. */
export type Resend = (who: SignedIn, body: Record<string, string>) => SafeHtml;

/** Where a session goes while its account requires two-step sign-in and its person has not set it up. */
export const TWO_FACTOR_SETUP_PAGE = '/settings/two-factor';

/** What a page lets through: `twoFactorSetup`, a session that must set up two-step sign-in first (the set-up page itself, logging out). */
export interface SessionOptions {
  twoFactorSetup?: boolean;
}

/** The checks every signed-in page and form of the web routers share. */
export function createGuards(orm: MikroORM) {
  const withSession = async (req: Request, res: Response, options: SessionOptions = {}): Promise<SignedIn | null> => {
    const who = await signedIn(orm, req, { twoFactorSetup: true });
    // Before anything else works, a person sets up what their account requires.
    const to = !who ? '/login' : who.twoFactorSetupNeeded && !options.twoFactorSetup ? TWO_FACTOR_SETUP_PAGE : null;
    if (to) res.redirect(303, to);
    return to ? null : who;
  };
  /**
   * Posts of signed-in pages carry the session's token in `_csrf`. A form loaded before the last
   * sign-in (another tab, logged out and in) carries an old one: it is never acted on, but answered
   * with a page that says so and shows the form again, filled in, with the fresh token.
   */
  const checkedPost = async (req: Request, res: Response, resend: Resend, options: SessionOptions = {}): Promise<SignedIn | null> => {
    const who = await withSession(req, res, options);
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
  /** The same little form again (logout, mode switch, revoke, roll, demo data): its visible fields were buttons or choices only. */
  const resendButton =
    (action: string, label: string, fields: string[] = [], confirm?: string): Resend =>
    (who, body) =>
      html`<form method="post" action="${action}" class="card" ${confirm ? html`data-confirm="${confirm}"` : ''}>
  <input type="hidden" name="_csrf" value="${who.session.csrfToken}">
  ${fields.map((name) => (typeof body[name] === 'string' ? html`<input type="hidden" name="${name}" value="${body[name]}">` : ''))}
  <p><button type="submit">${label}</button></p>
</form>`;
  /**
   * Whether the signed-in member's role may use a page (API keys: owners and admins); when not, a
   * 403 page that says what is missing and who can help, instead of an error.
   */
  const allowedRole = (res: Response, who: SignedIn, roles: readonly Role[], what: string): boolean => {
    if (roles.includes(who.member.role)) return true;
    sendPage(res, 403, {
      title: 'Not available to your role',
      nav: navFor(who, ''),
      body: html`<section class="card"><p role="alert">${what} needs the ${roles.join(' or ')} role. You are a${/^[aeiou]/.test(who.member.role) ? 'n' : ''} ${who.member.role} of ${who.account.name}.</p>
<p>Ask an owner or admin of the account to do it for you, or to change your role (Settings, Members).</p></section>`,
    });
    return false;
  };
  return { withSession, checkedPost, resendButton, allowedRole };
}

export type Guards = ReturnType<typeof createGuards>;

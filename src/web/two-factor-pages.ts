import { RECOVERY_CODE_COUNT, TotpSetup } from '../modules/two-factor/two-factor.service';
import { html, page, SafeHtml } from './html';
import { navFor } from './keys-page';
import { errorBox, fieldState, FormError } from './web-forms';
import type { SignedIn } from './web-session.service';

/** The pages of two-step sign-in: the code step of a sign-in, and the person's settings. */

/** A field for a code from the app (or a recovery code, where `recovery`), its error tied to it. */
function codeField(id: string, label: string, error?: FormError, recovery = false, autofocus = false): SafeHtml {
  const hint = `${id}-hint`;
  return html`<label for="${id}">${label}</label>
  <input id="${id}" name="code" type="text" inputmode="${recovery ? 'text' : 'numeric'}" autocomplete="one-time-code" spellcheck="false" required
    ${fieldState(id, error, hint)} ${autofocus && !error ? html`autofocus` : ''}>
  <p class="muted" id="${hint}">${recovery ? 'The 6 digits your authenticator app shows now, or one of your recovery codes (xxxx-xxxx-xxxx-xxxx).' : 'The 6 digits your authenticator app shows now.'}</p>`;
}

/** The second step of a sign-in, after the password. */
export const twoFactorStepPage = (error?: FormError) =>
  page({
    title: 'Two-step sign-in',
    body: html`${errorBox(error)}
<form method="post" action="/login/two-factor" class="card">
  <p>Your password was right. Now enter a code from your authenticator app to finish signing in.</p>
  ${codeField('code', 'Code', error, true, true)}
  <p><button type="submit">Sign in</button></p>
</form>
<p><a href="/login">Start over</a></p>`,
  });

/** Why the code step cannot go on: it expired, or took too many wrong codes. */
export const twoFactorStepOverPage = (reason: string) =>
  page({
    title: 'Sign in again',
    body: html`<section class="card"><p role="alert">${reason}</p><p>Nothing was signed in.</p></section>
<p><a href="/login">Log in</a></p>`,
  });

export interface TwoFactorSettingsState {
  /** The secret being set up (not yet confirmed). */
  setup: TotpSetup | null;
  /** Recovery codes just made: shown on this page only. */
  codes?: string[];
  remaining: number;
  /** The accounts that require two-step sign-in of this person (they cannot turn it off). */
  requiredBy: string[];
  error?: FormError;
  /** Which form `error` belongs to. */
  errorIn?: 'confirm' | 'regenerate' | 'disable';
  notice?: string;
}

export function twoFactorSettingsPage(who: SignedIn, state: TwoFactorSettingsState): string {
  const csrf = html`<input type="hidden" name="_csrf" value="${who.session.csrfToken}">`;
  const errorFor = (form: TwoFactorSettingsState['errorIn']) => (state.errorIn === form ? state.error : undefined);
  const on = Boolean(who.user.totpEnabledAt);
  return page({
    title: 'Two-step sign-in',
    nav: navFor(who, '/settings/two-factor'),
    body: html`${errorBox(state.error)}
${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
${
  who.twoFactorSetupNeeded
    ? html`<p class="notice" role="status">${who.account.name} requires two-step sign-in. Set it up here to go on: nothing else opens until you do.</p>`
    : ''
}
${state.codes ? recoveryCodesSection(state.codes) : ''}
${
  on
    ? html`<section class="card" aria-labelledby="status-title">
  <h2 id="status-title">On</h2>
  <p>Signing in asks for a code from your authenticator app after your password. You have ${state.remaining} unused recovery ${state.remaining === 1 ? 'code' : 'codes'} left.</p>
</section>
<form method="post" action="/settings/two-factor/recovery-codes" class="card">
  <h2>New recovery codes</h2>
  <p>Makes ${RECOVERY_CODE_COUNT} new codes and stops the old ones working.</p>
  ${csrf}
  ${codeField('regenerate-code', 'Code from your app', errorFor('regenerate'))}
  <p><button type="submit">Make new recovery codes</button></p>
</form>
${
  state.requiredBy.length
    ? html`<section class="card"><h2>Turn off</h2><p>You cannot turn two-step sign-in off: ${state.requiredBy.join(', ')} ${state.requiredBy.length === 1 ? 'requires' : 'require'} it.</p></section>`
    : html`<form method="post" action="/settings/two-factor/disable" class="card">
  <h2>Turn off</h2>
  <p>Signing in will ask for your password only. Your recovery codes stop working.</p>
  ${csrf}
  ${codeField('disable-code', 'Code from your app, or a recovery code', errorFor('disable'), true)}
  <p><button type="submit" class="danger">Turn off two-step sign-in</button></p>
</form>`
}`
    : state.setup
      ? setupForm(who, state.setup, errorFor('confirm'))
      : html`<form method="post" action="/settings/two-factor/setup" class="card">
  <h2>Off</h2>
  <p>With two-step sign-in, signing in asks for your password and then a code from an authenticator app on your phone (such as Google Authenticator, Microsoft Authenticator or 1Password), so a stolen password alone is not enough.</p>
  ${csrf}
  <p><button type="submit">Set up two-step sign-in</button></p>
</form>`
}
${who.member.role === 'owner' ? requireForm(who) : ''}`,
  });
}

function setupForm(who: SignedIn, setup: TotpSetup, error?: FormError): SafeHtml {
  const grouped = setup.secret.match(/.{1,4}/g)!.join(' ');
  return html`<section class="card" aria-labelledby="setup-title">
  <h2 id="setup-title">1. Add it to your authenticator app</h2>
  <p>In the app, add an account by entering this setup key (time-based):</p>
  <p class="secret" id="totp-secret">${grouped}</p>
  <p>Or, on the phone with the app, <a href="${setup.uri}">open this link</a>, which some apps import as it is:</p>
  <p class="secret" id="totp-uri">${setup.uri}</p>
</section>
<form method="post" action="/settings/two-factor/confirm" class="card">
  <h2>2. Confirm with a code</h2>
  <input type="hidden" name="_csrf" value="${who.session.csrfToken}">
  ${codeField('confirm-code', 'Code from your app', error)}
  <p><button type="submit">Turn on two-step sign-in</button></p>
</form>`;
}

function recoveryCodesSection(codes: string[]): SafeHtml {
  return html`<section class="card notice" aria-labelledby="codes-title">
  <h2 id="codes-title">Your recovery codes</h2>
  <p>If you lose your phone, sign in with one of these instead of a code. Each works once. Keep them somewhere safe: they are shown only now, and we keep no copy we could show again.</p>
  <ol class="secret" id="recovery-codes">${codes.map((code) => html`<li><code>${code}</code></li>`)}</ol>
  <p><a href="/dashboard">Continue to the dashboard</a></p>
</section>`;
}

function requireForm(who: SignedIn): SafeHtml {
  const required = who.account.requireTwoFactor;
  return html`<form method="post" action="/settings/two-factor/require" class="card">
  <h2>For everyone in ${who.account.name}</h2>
  <p>${
    required
      ? 'Two-step sign-in is required: members without it are sent to set it up after their password, before anything else works.'
      : 'Require two-step sign-in of every member: those without it set it up after their password, before anything else works. People who sign in through single sign-on use their provider’s own second step.'
  }</p>
  <input type="hidden" name="_csrf" value="${who.session.csrfToken}">
  <input type="hidden" name="require" value="${required ? 'off' : 'on'}">
  <p><button type="submit" class="${required ? 'secondary' : ''}">${required ? 'Stop requiring it' : 'Require two-step sign-in'}</button></p>
</form>`;
}

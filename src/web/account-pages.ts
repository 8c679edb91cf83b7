import { html, page, SafeHtml } from './html';
import { navFor } from './keys-page';
import type { SignedIn } from './web-session.service';

/** The pages of the account's e-mail flows; server-rendered like the rest of the web app. */

const notice = (message: string, role: 'alert' | 'status' = 'status') =>
  html`<p class="${role === 'alert' ? 'error' : 'notice'}" role="${role}">${message}</p>`;

/** A password input whose error (when given) is tied to it for screen readers. */
function passwordField(name: string, label: string, autocomplete: string, error?: string, hint?: string): SafeHtml {
  const errorId = `${name}-error`;
  const hintId = `${name}-hint`;
  const describedBy = [error ? errorId : '', hint ? hintId : ''].filter(Boolean).join(' ');
  return html`<label for="${name}">${label}</label>
  <input id="${name}" name="${name}" type="password" autocomplete="${autocomplete}" required ${name === 'current_password' ? '' : html`minlength="10"`}
    ${error ? html`aria-invalid="true"` : ''} ${describedBy ? html`aria-describedby="${describedBy}"` : ''}>
  ${hint ? html`<p class="muted" id="${hintId}">${hint}</p>` : ''}
  ${error ? html`<p class="error" id="${errorId}">${error}</p>` : ''}`;
}

/** The one answer to every accepted sign-up, whether the address was new or taken. */
export const signUpSentPage = () =>
  page({
    title: 'Check your inbox',
    body: html`<section class="card">
  <p>We sent a message to the address you gave. Open its link to verify your address (it works for 7 days), then log in.</p>
  <p class="muted">No message after a few minutes? Look in your spam folder, or <a href="/forgot-password">ask for a new link</a>.</p>
</section>
<p><a href="/login">Log in</a></p>`,
  });

export const verifiedPage = (ok: boolean) =>
  page({
    title: ok ? 'Address verified' : 'This link no longer works',
    body: ok
      ? html`<section class="card"><p role="status">Your e-mail address is verified. You can log in now.</p></section><p><a href="/login">Log in</a></p>`
      : html`<section class="card"><p>The link has expired or was already used. If you verified your address already, just log in; otherwise <a href="/forgot-password">ask for a new link</a>.</p></section>
<p><a href="/login">Log in</a></p>`,
  });

export const forgotPasswordPage = (message?: string, email = '') =>
  page({
    title: 'Reset your password',
    body: html`${message ? notice(message, 'alert') : ''}
<form method="post" action="/forgot-password" class="card">
  <p>Give the address of your account; we will e-mail it a link to choose a new password.</p>
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="email" required value="${email}">
  <p><button type="submit">Send the link</button></p>
</form>
<p><a href="/login">Back to log in</a></p>`,
  });

/** The one answer to every accepted reset request, whether the address has an account or not. */
export const forgotPasswordSentPage = () =>
  page({
    title: 'Check your inbox',
    body: html`<section class="card">
  <p>If an account uses that address, we sent it a link to choose a new password. The link works for 1 hour.</p>
</section>
<p><a href="/login">Back to log in</a></p>`,
  });

export const resetPasswordPage = (token: string, error?: string) =>
  page({
    title: 'Choose a new password',
    body: html`<form method="post" action="/reset-password" class="card">
  <input type="hidden" name="token" value="${token}">
  ${passwordField('password', 'New password', 'new-password', error, 'At least 10 characters.')}
  <p><button type="submit">Set the new password</button></p>
</form>`,
  });

export const resetLinkBrokenPage = () =>
  page({
    title: 'This link no longer works',
    body: html`<section class="card"><p>The link has expired or was already used. Reset links work once, for 1 hour.</p></section>
<p><a href="/forgot-password">Ask for a new link</a></p>`,
  });

export const mailUnavailablePage = () =>
  page({
    title: 'E-mail is not set up',
    body: html`<section class="card"><p>This server cannot send e-mail (its operator has not configured SMTP_URL), so accounts cannot be created or reset here. Ask the operator.</p></section>
<p><a href="/login">Log in</a></p>`,
  });

export interface PasswordFormState {
  errors?: { current_password?: string; new_password?: string };
  changed?: boolean;
}

export const changePasswordPage = (who: SignedIn, state: PasswordFormState = {}) =>
  page({
    title: 'Password',
    nav: navFor(who, '/settings/password'),
    body: html`${state.changed ? notice('Your password was changed. Every other session of this account was logged out.') : ''}
<form method="post" action="/settings/password" class="card">
  <h2>Change your password</h2>
  <input type="hidden" name="_csrf" value="${who.session.csrfToken}">
  ${passwordField('current_password', 'Current password', 'current-password', state.errors?.current_password)}
  ${passwordField('new_password', 'New password', 'new-password', state.errors?.new_password, 'At least 10 characters.')}
  <p><button type="submit">Change password</button></p>
</form>`,
  });

/** An invitation's form: a person without a password chooses one; one who signs in already confirms with theirs. */
export const acceptInvitationPage = (invitation: { token: string; accountName: string; email: string; hasPassword: boolean }, error?: string) =>
  page({
    title: `Join ${invitation.accountName}`,
    body: html`<form method="post" action="/invitations/accept" class="card">
  <p>You were invited to <strong>${invitation.accountName}</strong> as <strong>${invitation.email}</strong>.</p>
  <input type="hidden" name="token" value="${invitation.token}">
  ${
    invitation.hasPassword
      ? passwordField('password', 'Your password', 'current-password', error, 'You sign in here already: confirm with your password.')
      : passwordField('password', 'Choose a password', 'new-password', error, 'At least 10 characters.')
  }
  <p><button type="submit">Join ${invitation.accountName}</button></p>
</form>`,
  });

/** Why an invitation link does nothing (the reasons a person can act on). */
export const invitationBrokenPage = (reason: string) =>
  page({
    title: 'This invitation no longer works',
    body: html`<section class="card"><p role="alert">${reason}</p><p>Ask an owner or admin of the account to invite you again.</p></section>
<p><a href="/login">Log in</a></p>`,
  });

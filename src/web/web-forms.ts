import { html, page, SafeHtml } from './html';

/** An error to show above a form, and the fields it is about (marked invalid and described by it). */
export interface FormError {
  message: string;
  fields: string[];
}

export const ERROR_ID = 'form-error';

/** The error summary; `role="alert"` so it is read out, and the fields it names point at it. */
export const errorBox = (error?: FormError) => (error ? html`<p class="error" id="${ERROR_ID}" role="alert">${error.message}</p>` : '');

/**
 * The attributes that tie a field to the form's error (aria-invalid, aria-describedby) and put the
 * focus on the first invalid field when the page loads, so a keyboard or screen-reader user lands
 * where the fix is instead of on the page body. `hint` is the id of the field's own help text.
 */
export function fieldState(name: string, error?: FormError, hint?: string): SafeHtml {
  const invalid = !!error?.fields.includes(name);
  const describedBy = [invalid ? ERROR_ID : '', hint ?? ''].filter(Boolean).join(' ');
  return html`${invalid ? html`aria-invalid="true"` : ''} ${describedBy ? html`aria-describedby="${describedBy}"` : ''} ${
    invalid && error?.fields[0] === name ? html`autofocus` : ''
  }`;
}

const field = (name: string, label: string, type: string, extra: SafeHtml, error?: FormError, hint?: string) =>
  html`<label for="${name}">${label}</label><input id="${name}" name="${name}" type="${type}" ${extra} ${fieldState(name, error, hint)} required>`;

export function authPage(kind: 'signup' | 'login', error?: FormError, values: Record<string, string> = {}): string {
  const signup = kind === 'signup';
  return page({
    title: signup ? 'Create your account' : 'Log in',
    body: html`${errorBox(error)}
<form method="post" action="/${kind}" class="card">
  ${signup ? field('name', 'Company or team name', 'text', html`value="${values.name ?? ''}" autocomplete="organization"`, error) : ''}
  ${field('email', 'Email', 'email', html`value="${values.email ?? ''}" autocomplete="email"`, error)}
  ${field(
    'password',
    'Password',
    'password',
    html`autocomplete="${signup ? 'new-password' : 'current-password'}" ${signup ? html`minlength="10"` : ''}`,
    error,
    signup ? 'password-hint' : undefined,
  )}
  ${signup ? html`<p class="muted" id="password-hint">At least 10 characters.</p>` : ''}
  <p><button type="submit">${signup ? 'Create account' : 'Log in'}</button></p>
</form>
<p>${signup ? html`Already have an account? <a href="/login">Log in</a>` : html`New here? <a href="/signup">Create an account</a>`}</p>
${
  signup
    ? ''
    : html`<p><a href="/login/sso">Sign in with SSO</a> (your organization's identity provider)</p>
<p><a href="/forgot-password">Forgot your password?</a> Signed up but not verified yet? Open the link we e-mailed you first.</p>`
}`,
  });
}

/** "Wait about 12 minutes": the Retry-After of a limit, in words. */
export function waitWords(seconds: number): string {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} seconds`;
  return `${Math.round(seconds / 60)} minutes`;
}

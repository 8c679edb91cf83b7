import type { Response } from 'express';
import type { Config } from '../config';
import type { SsoConnection } from '../modules/sso/sso-connection.entity';
import { SSO_DEFAULT_ROLES } from '../modules/sso/sso.service';
import { html, page, SafeHtml } from './html';
import { navFor } from './keys-page';
import { errorBox, fieldState, FormError } from './web-forms';
import type { SignedIn } from './web-session.service';

/** The pages of single sign-on: starting it from the login page, its refusals, and the account's settings. */

/**
 * The pages that start single sign-on send the browser on to the issuer: their forms' redirects
 * must be allowed to leave (CSP form-action applies to where a form's answer redirects), to https
 * issuers, and to http ones where private issuers are allowed (local development, tests).
 */
export function ssoFormHeaders(res: Response, config: Config): void {
  const targets = config.sso.allowPrivateUrls ? "'self' https: http:" : "'self' https:";
  res.set('Content-Security-Policy', `default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action ${targets}; base-uri 'none'`);
  res.set('Cache-Control', 'no-store');
}

/** The form that starts a sign-in: the address picks the account's issuer. */
function startForm(email: string, error?: FormError): SafeHtml {
  return html`<form method="post" action="/login/sso" class="card">
  <p>Enter your work e-mail address: if your organization signs in through its identity provider (Microsoft Entra ID, Google Workspace, Okta…), you continue there.</p>
  <label for="email">Work email</label>
  <input id="email" name="email" type="email" autocomplete="email" required value="${email}" ${fieldState('email', error)}>
  <p><button type="submit">Continue</button></p>
</form>`;
}

export const ssoStartPage = (email = '', error?: FormError) =>
  page({
    title: 'Sign in with SSO',
    body: html`${errorBox(error)}
${startForm(email, error)}
<p><a href="/login">Log in with a password instead</a></p>`,
  });

/** The password form's answer for an address whose domain must sign in through single sign-on. */
export const ssoRequiredPage = (email: string) =>
  page({
    title: 'Sign in with SSO',
    body: html`<p class="notice" role="alert">People at ${email.split('@').pop()} sign in through their organization's single sign-on: the password form is off for them. Nothing was checked.</p>
<form method="post" action="/login/sso" class="card">
  <input type="hidden" name="email" value="${email}">
  <p>Continue as <strong>${email}</strong> at your organization's identity provider.</p>
  <p><button type="submit">Continue with single sign-on</button></p>
</form>`,
  });

/** A sign-in that did not complete, and why; nothing was signed in. */
export const ssoRefusedPage = (reason: string) =>
  page({
    title: 'Single sign-on did not complete',
    body: html`<section class="card">
  <p role="alert">${reason}</p>
  <p>Nothing was signed in.</p>
</section>
<p><a href="/login/sso">Start again</a> or <a href="/login">log in with a password</a>.</p>`,
  });

export interface SsoFormValues {
  issuer_url?: string;
  client_id?: string;
  domains?: string;
  default_role?: string;
  require_sso?: string;
}

export const ssoFormValues = (connection: SsoConnection | null): SsoFormValues =>
  connection
    ? {
        issuer_url: connection.issuerUrl,
        client_id: connection.clientId,
        domains: connection.domains
          .getItems()
          .map((entry) => entry.domain)
          .join(', '),
        default_role: connection.defaultRole,
        require_sso: connection.requireSso ? 'on' : '',
      }
    : { default_role: 'member' };

const textField = (
  name: string,
  label: string,
  type: string,
  value: string | undefined,
  error: FormError | undefined,
  hint: string,
  extra: SafeHtml = html``,
) =>
  html`<label for="${name}">${label}</label>
  <input id="${name}" name="${name}" type="${type}" value="${value ?? ''}" ${extra} ${fieldState(name, error, `${name}-hint`)}>
  <p class="muted" id="${name}-hint">${hint}</p>`;

/** The connection's form; the client secret is never filled in (it is never shown again). */
export function ssoForm(csrfToken: string, values: SsoFormValues, error: FormError | undefined, saved: boolean): SafeHtml {
  return html`<form method="post" action="/settings/sso" class="card">
  <h2>${saved ? 'Change the connection' : 'Connect your identity provider'}</h2>
  <input type="hidden" name="_csrf" value="${csrfToken}">
  ${textField(
    'issuer_url',
    'Issuer URL',
    'url',
    values.issuer_url,
    error,
    'As the provider names it, e.g. https://login.microsoftonline.com/{tenant ID}/v2.0, https://accounts.google.com or https://{your org}.okta.com.',
    html`required autocomplete="off" spellcheck="false"`,
  )}
  ${textField('client_id', 'Client ID', 'text', values.client_id, error, 'The application (client) ID the provider gave this app.', html`required autocomplete="off" spellcheck="false"`)}
  ${textField(
    'client_secret',
    'Client secret',
    'password',
    '',
    error,
    saved ? 'Stored encrypted and never shown again. Leave empty to keep the one saved.' : 'Stored encrypted and never shown again.',
    html`autocomplete="new-password" ${saved ? '' : html`required`}`,
  )}
  ${textField(
    'domains',
    'E-mail domains',
    'text',
    values.domains,
    error,
    'Comma-separated, e.g. acme.com, acme.co.uk. People with addresses there sign in through this provider. Each must be the domain of a verified address of an active member of this account.',
    html`required autocomplete="off" spellcheck="false"`,
  )}
  <label for="default_role">Role of people who sign in for the first time</label>
  <select id="default_role" name="default_role" ${fieldState('default_role', error)}>
    ${SSO_DEFAULT_ROLES.map((role) => html`<option value="${role}" ${values.default_role === role ? html`selected` : ''}>${role}</option>`)}
  </select>
  <label class="choice"><input type="checkbox" name="require_sso" value="on" ${values.require_sso === 'on' ? html`checked` : ''}> Require single sign-on: people of these domains cannot log in with a password</label>
  <p><button type="submit">Save</button></p>
</form>`;
}

export interface SsoSettingsState {
  connection: SsoConnection | null;
  /** Where the issuer sends people back: to register with the provider. */
  redirectUri: string;
  values?: SsoFormValues;
  error?: FormError;
  notice?: string;
}

export function ssoSettingsPage(who: SignedIn, state: SsoSettingsState): string {
  const { connection } = state;
  return page({
    title: 'Single sign-on',
    nav: navFor(who, '/settings/sso'),
    scripts: ['/assets/app.js'], // the remove form's confirmation
    body: html`${errorBox(state.error)}
${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
<section class="card" aria-labelledby="about-title">
  <h2 id="about-title">${connection ? `On for ${ssoFormValues(connection).domains}` : 'Off'}</h2>
  <p>People of ${who.account.name} sign in through your organization's OpenID Connect provider (Microsoft Entra ID, Google Workspace, Okta or another). Whoever signs in for the first time becomes a member with the role chosen below, as long as the plan has a seat.</p>
  <p>Register this redirect URI with the provider (as a web application using the authorization code flow):</p>
  <p class="secret" id="redirect-uri">${state.redirectUri}</p>
</section>
${ssoForm(who.session.csrfToken, state.values ?? ssoFormValues(connection), state.error, Boolean(connection))}
${
  connection
    ? html`<form method="post" action="/settings/sso/remove" class="card" data-confirm="Remove single sign-on? People who signed in through it are logged out.">
  <h2>Remove</h2>
  <p>People who signed in through it are logged out; those without a password set one with “Forgot your password?”.</p>
  <input type="hidden" name="_csrf" value="${who.session.csrfToken}">
  <p><button type="submit" class="danger">Remove single sign-on</button></p>
</form>`
    : ''
}`,
  });
}

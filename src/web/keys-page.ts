import type { ApiKey } from '../modules/accounts/api-key.entity';
import { describePermissions } from '../modules/accounts/key-permissions';
import { html, page, SafeHtml } from './html';
import { fmt, keyForm, KeyFormValues, ROLL_EXPIRY_CHOICES, ShownKey, shownKeySection } from './key-views';
import { errorBox, FormError } from './web-forms';
import type { SignedIn } from './web-session.service';

export { fmt, keyForm } from './key-views';

/** What every signed-in page's header shows of the session (src/web/html.ts, `page`). */
export const navFor = (who: SignedIn, current: string) => ({
  accountName: who.account.name,
  accountId: who.account.id,
  // By name, so the switcher's list keeps one order whichever account is in use.
  accounts: who.accounts.map(({ id, name }) => ({ id, name })).sort((a, b) => a.name.localeCompare(b.name)),
  livemode: who.session.livemode,
  csrfToken: who.session.csrfToken,
  current,
});

export const modeOf = (who: SignedIn): 'test' | 'live' => (who.session.livemode ? 'live' : 'test');

export interface KeysPageState {
  /** A value to show once, with the curl line built on `origin`. */
  created?: ShownKey;
  /** The address this request reached the service at, for the curl line (e.g. https://api.example.com). */
  origin: string;
  error?: FormError;
  values?: KeyFormValues;
}

/** "Active", "Revoked …", or after a roll whose old value still works, when that value stops. */
function status(key: ApiKey): string {
  if (key.revokedAt) return `Revoked ${fmt(key.revokedAt)}`;
  const old = key.previousSecretExpiresAt;
  return old && old.getTime() > Date.now() ? `Active · old value expires at ${fmt(old)}` : 'Active';
}

/**
 * Developers → API keys, as in Stripe: the keys of the session's mode only (switch mode for the
 * others), generated in that mode; each can be rolled or revoked. Key management is a signed-in
 * person's only: no API route creates, rolls or revokes keys.
 */
export function keysPage(who: SignedIn, keys: ApiKey[], { created, origin, error, values }: KeysPageState): string {
  const token = who.session.csrfToken;
  const mode = modeOf(who);
  const other = mode === 'test' ? 'live' : 'test';
  return page({
    title: 'API keys',
    nav: navFor(who, '/settings/api-keys'),
    scripts: ['/assets/app.js'],
    body: html`${errorBox(error)}
${created ? shownKeySection(created, origin) : ''}
${keyForm(token, mode, values, error)}
<h2 id="keys-title">Your ${mode} keys</h2>
<p class="muted">${mode === 'test' ? 'Test keys see only test data.' : 'Live keys see real data.'} Switch to ${other} (at the top) to see and manage ${other} keys.</p>
${
  keys.length
    ? html`<table aria-label="API keys" class="stack keys">
  <thead><tr><th>Name</th><th>Type</th><th>Permissions</th><th>Key</th><th>Created</th><th>Last used</th><th>Status</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${keys.map((key) => keyRow(key, token))}</tbody>
</table>`
    : html`<p class="empty" id="no-keys">No ${mode} keys yet. Generate one above${mode === 'test' ? html`, or follow the <a href="/welcome">getting-started steps</a>` : ''}.</p>`
}`,
  });
}

function keyRow(key: ApiKey, token: string): SafeHtml {
  return html`<tr>
    <td data-label="Name">${key.name}</td><td data-label="Type">${key.permissions ? 'restricted' : 'secret'}</td><td data-label="Permissions">${describePermissions(key.permissions)}</td><td data-label="Key"><code>${key.prefix}…${key.last4}</code></td><td data-label="Created">${fmt(key.createdAt)}</td><td data-label="Last used">${fmt(key.lastUsedAt)}</td>
    <td data-label="Status">${status(key)}</td>
    <td class="actions">${
      key.revokedAt
        ? ''
        : html`<a class="button-link" href="/settings/api-keys/${key.id}/roll" aria-label="Roll ${key.name}">Roll</a>
      <form method="post" action="/settings/api-keys/${key.id}/revoke" data-confirm="Revoke “${key.name}”? Requests using it will fail at once.">
      <input type="hidden" name="_csrf" value="${token}"><button type="submit" class="danger" aria-label="Revoke ${key.name}">Revoke</button></form>`
    }</td></tr>`;
}

/** The roll form of one key: when its current value stops working. */
export function rollForm(csrfToken: string, key: Pick<ApiKey, 'id' | 'name'>, hours?: string): SafeHtml {
  const chosen = hours ?? '0';
  return html`<form method="post" action="/settings/api-keys/${key.id}/roll" class="card">
  <input type="hidden" name="_csrf" value="${csrfToken}">
  <fieldset>
    <legend>When should the current value stop working?</legend>
    ${ROLL_EXPIRY_CHOICES.map(
      ({ hours: value, label }) =>
        html`<label class="choice"><input type="radio" name="expires_in_hours" value="${value}" ${String(value) === chosen ? html`checked` : ''}> ${label}</label>`,
    )}
  </fieldset>
  <p><button type="submit">Roll key</button> <a href="/settings/api-keys">Cancel</a></p>
</form>`;
}

/** Roll a key: a new value shown once; the old one keeps working as long as chosen (as in Stripe). */
export function rollPage(who: SignedIn, key: ApiKey, error?: FormError, hours?: string): string {
  return page({
    title: `Roll “${key.name}”`,
    nav: navFor(who, `/settings/api-keys/${key.id}/roll`),
    body: html`${errorBox(error)}
<section class="card">
  <p>Rolling gives <strong>${key.name}</strong> (<code>${key.prefix}…${key.last4}</code>, ${describePermissions(key.permissions)}) a new value, shown once. Its name, type and permissions stay. Choose how long the current value keeps working, so your integrations can move to the new one.</p>
</section>
${rollForm(who.session.csrfToken, key, hours)}`,
  });
}

import type { ApiKey } from '../modules/accounts/api-key.entity';
import { html, page, SafeHtml } from './html';
import { errorBox, fieldState, FormError } from './web-forms';
import type { SignedIn } from './web-session.service';

export const fmt = (date: Date | null | undefined) => (date ? date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—');

export const navFor = (who: SignedIn, current: string) => ({
  accountName: who.account.name,
  livemode: who.session.livemode,
  csrfToken: who.session.csrfToken,
  current,
});

/** The "generate a key" form, filled with what was typed when it comes back (an error, or a stale token). */
export function keyForm(csrfToken: string, values: { name?: string; type?: string } = {}, error?: FormError): SafeHtml {
  const option = (value: string, label: string) => html`<option value="${value}" ${values.type === value ? html`selected` : ''}>${label}</option>`;
  return html`<form method="post" action="/settings/api-keys" class="card">
  <h2>Generate a new key</h2>
  <input type="hidden" name="_csrf" value="${csrfToken}">
  <label for="key-name">Name (what will use it)</label>
  <input id="key-name" name="name" type="text" maxlength="100" required placeholder="e.g. CRM sync" value="${values.name ?? ''}" ${fieldState('name', error)}>
  <label for="key-type">Type</label>
  <select id="key-type" name="type" ${fieldState('type', error)}>${option('test', 'Test (sk_test_, sandbox data)')}${option('live', 'Live (sk_live_, real data)')}</select>
  <p><button type="submit">Generate key</button></p>
</form>`;
}

export interface KeysPageState {
  created?: { secret: string; name: string };
  error?: FormError;
  values?: { name?: string; type?: string };
}

/**
 * Settings → API keys. A key just generated is shown in a section that takes the focus when the
 * page loads (app.js), so a keyboard or screen-reader user is taken to it rather than left at the top.
 */
export function keysPage(who: SignedIn, keys: ApiKey[], { created, error, values }: KeysPageState = {}): string {
  const token = who.session.csrfToken;
  return page({
    title: 'API keys',
    nav: navFor(who, '/settings/api-keys'),
    scripts: ['/assets/app.js'],
    body: html`${errorBox(error)}
${
  created
    ? html`<section class="card notice" id="new-key-section" tabindex="-1" data-focus aria-labelledby="new-key">
  <h2 id="new-key">Your new key “${created.name}”</h2>
  <p><strong>Copy it now: it is shown only once.</strong> We keep only a hash and cannot show it again.</p>
  <p class="secret" id="new-secret">${created.secret}</p>
  <button type="button" data-copy="new-secret">Copy key</button>
</section>`
    : ''
}
${keyForm(token, values, error)}
<table aria-label="API keys" class="stack">
  <thead><tr><th>Name</th><th>Type</th><th>Key</th><th>Created</th><th>Last used</th><th>Status</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${keys.map(
    (key) => html`<tr>
    <td data-label="Name">${key.name}</td><td data-label="Type">${key.type}</td><td data-label="Key"><code>${key.prefix}…${key.last4}</code></td><td data-label="Created">${fmt(key.createdAt)}</td><td data-label="Last used">${fmt(key.lastUsedAt)}</td>
    <td data-label="Status">${key.revokedAt ? `Revoked ${fmt(key.revokedAt)}` : 'Active'}</td>
    <td class="actions">${
      key.revokedAt
        ? ''
        : html`<form method="post" action="/settings/api-keys/${key.id}/revoke" data-confirm="Revoke “${key.name}”? Requests using it will fail at once.">
      <input type="hidden" name="_csrf" value="${token}"><button type="submit" class="danger" aria-label="Revoke ${key.name}">Revoke</button></form>`
    }</td></tr>`,
  )}</tbody>
</table>`,
  });
}

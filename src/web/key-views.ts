import { RESOURCES } from '../modules/accounts/key-permissions';
import { html, SafeHtml } from './html';
import { fieldState, FormError } from './web-forms';

/**
 * A key value to show once (just generated, or rolled), as stashed encrypted in the session between
 * the post and the page after its redirect. `oldExpiresAt` only after a roll: when its old value
 * stops working (ISO), at once when it is in the past.
 */
export type ShownKey = {
  secret: string;
  name: string;
  rolled?: boolean;
  oldExpiresAt?: string;
};

/** What the generate form was sent with, so it comes back filled in after an error or a stale token. */
export interface KeyFormValues {
  name?: string;
  /** The key's mode: the page's, in a hidden field (a form from a test-mode page makes a test key). */
  type?: string;
  /** `secret` (full access, sk_) or `restricted` (rk_, a level per resource). */
  kind?: string;
  permissions?: Partial<Record<string, string>>;
}

/** How long a rolled key's old value keeps working, as Stripe's dashboard offers (within the service's 0–168 hours). */
export const ROLL_EXPIRY_CHOICES = [
  { hours: 0, label: 'Now' },
  { hours: 1, label: 'In 1 hour' },
  { hours: 24, label: 'In 24 hours' },
  { hours: 168, label: 'In 7 days' },
];

const LEVEL_LABELS = { none: 'None', read: 'Read', write: 'Write' } as const;
const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The values of a posted generate form. */
export function keyFormValues(body: Record<string, string>): KeyFormValues {
  return {
    name: body.name,
    type: body.type,
    kind: body.kind,
    permissions: Object.fromEntries(RESOURCES.map((resource) => [resource, body[`perm_${resource}`]])),
  };
}

/**
 * The "generate a key" form for one mode. Without scripts the permissions are always shown (and
 * ignored for a secret key); app.js hides them while "Secret key" is chosen.
 */
export function keyForm(
  csrfToken: string,
  mode: 'test' | 'live',
  values: KeyFormValues = {},
  error?: FormError,
  options: { action?: string; heading?: string | null; restrictable?: boolean } = {},
): SafeHtml {
  const restrictable = options.restrictable ?? true;
  const kind = values.kind === 'restricted' ? 'restricted' : 'secret';
  const radio = (value: string, label: string, hint: string) =>
    html`<label class="choice"><input type="radio" name="kind" value="${value}" id="kind-${value}" ${kind === value ? html`checked` : ''} ${fieldState('kind', error)}> ${label} <span class="muted">${hint}</span></label>`;
  const level = (resource: string) => {
    const chosen = values.permissions?.[resource] ?? 'none';
    return html`<div class="permission"><label for="perm-${resource}">${capital(resource)}</label><select id="perm-${resource}" name="perm_${resource}" ${fieldState(`perm_${resource}`, error)}>${Object.entries(
      LEVEL_LABELS,
    ).map(([value, label]) => html`<option value="${value}" ${chosen === value ? html`selected` : ''}>${label}</option>`)}</select></div>`;
  };
  return html`<form method="post" action="${options.action ?? '/settings/api-keys'}" class="card key-form">
  ${options.heading === null ? '' : html`<h2>${options.heading ?? `Generate a new ${mode} key`}</h2>`}
  <input type="hidden" name="_csrf" value="${csrfToken}">
  <input type="hidden" name="type" value="${mode}">
  <label for="key-name">Name (what will use it)</label>
  <input id="key-name" name="name" type="text" maxlength="100" required placeholder="e.g. CRM sync" value="${values.name ?? ''}" ${fieldState('name', error)}>
  ${
    restrictable
      ? html`<fieldset class="kinds">
    <legend>Kind of key</legend>
    ${radio('secret', 'Secret key', `(${mode === 'live' ? 'sk_live_' : 'sk_test_'}, full access)`)}
    ${radio('restricted', 'Restricted key', `(${mode === 'live' ? 'rk_live_' : 'rk_test_'}, only what you allow)`)}
  </fieldset>
  <fieldset class="permissions" id="key-permissions" data-kind="restricted">
    <legend>Permissions of a restricted key</legend>
    <p class="muted" id="permissions-hint">Write includes read. Resources left at None are refused with a permission error.</p>
    <div class="permission-grid">${RESOURCES.map(level)}</div>
  </fieldset>`
      : html`<input type="hidden" name="kind" value="secret">`
  }
  <p><button type="submit">Generate key</button></p>
</form>`;
}

/**
 * The ready command that uses a key, at the service's own address as this request reached it. The
 * key goes in a Bearer header, the only form the API accepts (spec part 5): curl's `-u key:` would
 * send it as Basic credentials, which are refused.
 */
export const curlLine = (origin: string, secret: string) => `curl ${origin}/v1/leads -H "Authorization: Bearer ${secret}"`;

/**
 * A key value shown once: the value, a copy button, and a curl line that uses it. The section takes
 * the focus when the page loads (app.js), so a keyboard or screen-reader user is taken to it.
 */
export function shownKeySection(shown: ShownKey, origin: string): SafeHtml {
  const expires = shown.oldExpiresAt ? new Date(shown.oldExpiresAt) : undefined;
  const oldValue = !shown.rolled
    ? ''
    : expires && expires.getTime() > Date.now()
      ? html`<p>The old value keeps working until <strong>${fmt(expires)}</strong>; move your integrations to the new one before then.</p>`
      : html`<p>The old value no longer works.</p>`;
  return html`<section class="card notice" id="new-key-section" tabindex="-1" data-focus aria-labelledby="new-key">
  <h2 id="new-key">${shown.rolled ? `New value of “${shown.name}”` : `Your new key “${shown.name}”`}</h2>
  <p><strong>Copy it now: it is shown only once.</strong> We keep only a hash and cannot show it again.</p>
  ${oldValue}
  <p class="secret" id="new-secret">${shown.secret}</p>
  <p><button type="button" data-copy="new-secret">Copy key</button></p>
  <p>Try it: list your leads with curl.</p>
  <pre class="secret curl"><code id="curl-line">${curlLine(origin, shown.secret)}</code></pre>
  <p><button type="button" data-copy="curl-line" class="secondary">Copy curl command</button></p>
</section>`;
}

export const fmt = (date: Date | null | undefined) => (date ? date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—');

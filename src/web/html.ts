/** HTML that is already safe to send; produced only by `html` below. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** A template tag that escapes every interpolated value unless it is itself `html`. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  return new SafeHtml(strings.reduce((out, text, i) => out + text + (i < values.length ? render(values[i]) : ''), ''));
}

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** Signed-in pages show the navigation, the account switcher, the mode switch and the CSRF token for scripts. */
  nav?: {
    accountName: string;
    accountId: string;
    /** The accounts the person may switch to (this one too); the switcher shows when there are several. */
    accounts: Array<{ id: string; name: string }>;
    livemode: boolean;
    csrfToken: string;
    current: string;
  };
  scripts?: string[];
}

/** The Developers section's pages, as tabs under the navigation (as in Stripe's dashboard). */
export const DEVELOPER_PAGES = [
  { href: '/settings/api-keys', label: 'API keys' },
  { href: '/developers/webhooks', label: 'Webhooks' },
  { href: '/developers/events', label: 'Events' },
  { href: '/developers/logs', label: 'Request logs' },
];

/** The Team section's pages (its people, their history, the fields they work with), as tabs under the navigation. */
export const TEAM_PAGES = [
  { href: '/settings/members', label: 'Members' },
  { href: '/settings/security', label: 'Security log' },
  { href: '/settings/fields', label: 'Fields' },
];

/** The sections whose pages show as tabs under the navigation. */
const SECTIONS = [
  { label: 'Developers', pages: DEVELOPER_PAGES },
  { label: 'Team', pages: TEAM_PAGES },
];

/** The main navigation; a link is current on its own page and on the pages under it (`also`). */
const MAIN_LINKS = [
  { href: '/dashboard', label: 'Dashboard', also: ['/welcome'] },
  { href: '/pipeline', label: 'Board', also: ['/deals'] },
  { href: '/leads', label: 'Leads', also: [] },
  { href: '/agents', label: 'Agents', also: [] },
  { href: '/integrations', label: 'Integrations', also: [] },
  { href: '/settings/api-keys', label: 'Developers', also: ['/developers'] },
  { href: '/settings/members', label: 'Members', also: ['/settings/security', '/settings/fields'] },
  { href: '/settings/plan', label: 'Plan', also: ['/settings/password', '/settings/two-factor', '/settings/sso'] },
];
const under = (current: string, href: string) => current === href || current.startsWith(`${href}/`);

/**
 * Where the mode switch may send the browser back to: our own pages only, never a URL from the form
 * (no open redirect). A record's own page returns to its list (the record is not in the other mode).
 */
export const RETURN_PAGES = [
  '/dashboard',
  '/welcome',
  '/pipeline',
  '/leads',
  '/agents',
  '/integrations',
  '/settings/api-keys',
  '/settings/plan',
  '/settings/members',
  '/settings/security',
  '/settings/fields',
  '/developers/webhooks',
  '/developers/events',
  '/developers/logs',
];

/** The page the mode switch returns to: the page itself, or the list a record's page belongs to. */
export const returnTo = (current: string): string | undefined =>
  RETURN_PAGES.includes(current) ? current : RETURN_PAGES.find((path) => path !== '/dashboard' && under(current, path));

/** A person in several accounts moves the session to another (POST /settings/account, to its dashboard). */
const accountSwitcher = (nav: NonNullable<PageOptions['nav']>) =>
  html`<form method="post" action="/settings/account" class="switcher">
    <input type="hidden" name="_csrf" value="${nav.csrfToken}">
    <label for="account-switch" class="visually-hidden">Account</label>
    <select id="account-switch" name="account_id">${nav.accounts.map(
      ({ id, name }) => html`<option value="${id}" ${id === nav.accountId ? html`selected` : ''}>${name}</option>`,
    )}</select>
    <button type="submit" class="header-button">Switch account</button>
  </form>`;

export function page({ title, body, nav, scripts = [] }: PageOptions): string {
  const current = nav?.current ?? '';
  const link = ({ href, label, also }: (typeof MAIN_LINKS)[number]) =>
    html`<a href="${href}" ${[href, ...also].some((path) => under(current, path)) ? html`aria-current="${current === href ? 'page' : 'true'}"` : ''}>${label}</a>`;
  const section = SECTIONS.find(({ pages }) => pages.some(({ href }) => under(current, href)));
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Sales Pipeline</title>
${nav ? html`<meta name="csrf-token" content="${nav.csrfToken}">` : ''}
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
  <strong class="brand">Sales Pipeline</strong>
  ${
    nav
      ? html`${nav.accounts.length > 1 ? accountSwitcher(nav) : ''}
  <nav aria-label="Main">${MAIN_LINKS.map((entry) => html`${link(entry)} `)}</nav>
  <form method="post" action="/settings/mode" class="mode">
    <input type="hidden" name="_csrf" value="${nav.csrfToken}">
    <input type="hidden" name="mode" value="${nav.livemode ? 'test' : 'live'}">
    ${returnTo(nav.current) ? html`<input type="hidden" name="return_to" value="${returnTo(nav.current)}">` : ''}
    <span class="badge ${nav.livemode ? 'live' : 'test'}">${nav.livemode ? 'Live data' : 'Test data'}</span>
    <button type="submit" class="header-button">Switch to ${nav.livemode ? 'test' : 'live'}</button>
  </form>
  <form method="post" action="/logout" class="logout"><input type="hidden" name="_csrf" value="${nav.csrfToken}"><button type="submit" class="header-button">Log out</button></form>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${
  section
    ? html`<nav aria-label="${section.label}" class="tabs">${section.pages.map(
        ({ href, label }) => html`<a href="${href}" ${under(current, href) ? html`aria-current="${current === href ? 'page' : 'true'}"` : ''}>${label}</a>`,
      )}</nav>`
    : ''
}
${body}
</main>
${scripts.map((src) => html`<script src="${src}" defer></script>`)}
</body>
</html>`.value;
}

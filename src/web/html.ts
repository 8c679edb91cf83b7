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
  /** Signed-in pages show the navigation, the mode switch and the CSRF token for scripts. */
  nav?: { accountName: string; livemode: boolean; csrfToken: string; current: string };
  scripts?: string[];
}

/** Where the mode switch may send the browser back to: our own pages only, never a URL from the form (no open redirect). */
export const RETURN_PAGES = ['/dashboard', '/pipeline', '/settings/api-keys', '/settings/plan'];

export function page({ title, body, nav, scripts = [] }: PageOptions): string {
  const link = (href: string, label: string) => html`<a href="${href}" ${nav?.current === href ? html`aria-current="page"` : ''}>${label}</a>`;
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
      ? html`<nav aria-label="Main">${link('/dashboard', 'Dashboard')} ${link('/pipeline', 'Board')} ${link('/settings/api-keys', 'API keys')} ${link('/settings/plan', 'Plan')}</nav>
  <form method="post" action="/settings/mode" class="mode">
    <input type="hidden" name="_csrf" value="${nav.csrfToken}">
    <input type="hidden" name="mode" value="${nav.livemode ? 'test' : 'live'}">
    ${RETURN_PAGES.includes(nav.current) ? html`<input type="hidden" name="return_to" value="${nav.current}">` : ''}
    <span class="badge ${nav.livemode ? 'live' : 'test'}">${nav.livemode ? 'Live data' : 'Test data'}</span>
    <button type="submit" class="header-button">Switch to ${nav.livemode ? 'test' : 'live'}</button>
  </form>
  <form method="post" action="/logout" class="logout"><input type="hidden" name="_csrf" value="${nav.csrfToken}"><button type="submit" class="header-button">Log out</button></form>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${body}
</main>
${scripts.map((src) => html`<script src="${src}" defer></script>`)}
</body>
</html>`.value;
}

import { User } from '../../src/modules/accounts/user.entity';
import os from 'node:os';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { HttpResponse, TestApp } from './app';

/** Helpers of the web app's browser and HTTP tests (test/integration/web-app.test.ts, web-pages.test.ts). */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomCell {
  textContent: string | null;
  querySelectorAll(selector: string): ArrayLike<DomCell>;
}

/**
 * docs/screenshots is refreshed only when asked (UPDATE_SCREENSHOTS=1 npm test), so an ordinary
 * run leaves the committed pictures alone; otherwise the pictures go to a temporary folder.
 */
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(__dirname, '..', '..', 'docs', 'screenshots')
  : path.join(os.tmpdir(), `spa-screenshots-${process.pid}`);
export const BAD_LOGIN = 'Email or password is incorrect.';
export const PASSWORD = 'correct horse battery staple';

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const final = path.join(SCREENSHOTS, `${name}.png`);
  const temporary = path.join(SCREENSHOTS, `.${name}.${process.pid}.tmp.png`);
  try {
    await page.screenshot({ path: temporary, fullPage: true, animations: 'disabled', caret: 'hide' });
    renameSync(temporary, final);
  } finally {
    rmSync(temporary, { force: true });
  }
}

export const money = (value: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(value);

/** The cells of each body row of a table, as the user reads them. */
export async function tableRows(page: Page, selector: string): Promise<string[][]> {
  return page
    .locator(`${selector} tbody tr`)
    .evaluateAll((rows: DomCell[]) => rows.map((row) => Array.from(row.querySelectorAll('td')).map((cell) => (cell.textContent ?? '').trim())));
}

/** Form posts and page loads without a browser: redirects not followed, cookies passed by hand. */
export async function http(
  app: TestApp,
  method: string,
  pathname: string,
  options: { cookie?: string; form?: Record<string, string>; headers?: Record<string, string>; origin?: string | null } = {},
): Promise<HttpResponse<string>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.cookie) headers.cookie = options.cookie;
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  if (method !== 'GET' && options.origin !== null) headers.origin ??= options.origin ?? app.baseUrl;
  const response = await fetch(`${app.baseUrl}${pathname}`, { method, headers, body, redirect: 'manual' });
  return { status: response.status, headers: response.headers, body: '', text: await response.text() };
}

/** `spa_session=…` from a response's Set-Cookie, as a Cookie header. */
export function sessionCookie(res: HttpResponse): string {
  const match = /(?:^|,\s*)(spa_session=[^;]+)/.exec(res.headers.get('set-cookie') ?? '');
  if (!match) throw new Error(`no session cookie in ${res.status}: ${res.headers.get('set-cookie')}`);
  return match[1];
}

export const csrfOf = (pageHtml: string): string => {
  const match = /<meta name="csrf-token" content="([^"]+)">/.exec(pageHtml);
  if (!match) throw new Error('no csrf-token meta on the page');
  return match[1];
};

let emailCounter = 0;
export const uniqueEmail = (who = 'user') => `${who}-${Date.now()}-${++emailCounter}@example.test`;

/**
 * Sign-up signs no one in (it answers a taken address the same way); the e-mailed verification
 * link is web-account.test.ts's subject, so here the address is marked verified directly.
 */
export async function markVerified(app: TestApp, email: string): Promise<void> {
  await app.orm.em.fork().nativeUpdate(User, { email }, { emailVerifiedAt: new Date() });
}

/** Signs up, verifies and logs in over HTTP; returns the session cookie and the session's CSRF token. */
export async function signUp(app: TestApp, email = uniqueEmail()): Promise<{ email: string; cookie: string; csrf: string }> {
  const res = await http(app, 'POST', '/signup', { form: { name: 'HTTP Co', email, password: PASSWORD } });
  expect(res.status).toBe(303);
  await markVerified(app, email);
  const cookie = sessionCookie(await http(app, 'POST', '/login', { form: { email, password: PASSWORD } }));
  const keys = await http(app, 'GET', '/settings/api-keys', { cookie });
  expect(keys.status).toBe(200);
  return { email, cookie, csrf: csrfOf(keys.text) };
}

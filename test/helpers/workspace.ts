import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestApp } from './app';
import { BROWSER_STEP_TIMEOUT_MS } from './timeouts';
import { http, signUp } from './web';

/**
 * Helpers of the workspace's browser tests (web-*.test.ts): a signed-in person with a test key,
 * a browser page at a viewport that records every script error and failed load, the API as that
 * person's key sees it, and the checks every page passes (no sideways scrolling, axe).
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
declare const document: { documentElement: { scrollWidth: number; clientWidth: number } };
declare const axe: { run(options: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> };

export const VIEWPORTS = [
  { label: 'desktop', width: 1366, height: 900 },
  { label: 'mobile', width: 390, height: 844 },
] as const;
export type Viewport = (typeof VIEWPORTS)[number];

export interface Person {
  email: string;
  cookie: string;
  csrf: string;
  /** A test-mode secret key of the account, for the API calls a test makes beside the browser. */
  key: string;
}

/** Signs up (verified), logs in and generates a test key through the web app, as a new user does. */
export async function newPerson(app: TestApp, who = 'person'): Promise<Person> {
  const person = await signUp(app, `${who}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.test`);
  const made = await http(app, 'POST', '/settings/api-keys', { cookie: person.cookie, form: { _csrf: person.csrf, name: `${who} test`, type: 'test' } });
  expect(made.status).toBe(303);
  const shown = await http(app, 'GET', '/settings/api-keys', { cookie: person.cookie });
  const key = /(sk_test_[A-Za-z0-9_]+)/.exec(shown.text)![1];
  return { ...person, key };
}

/** The API as a person's key sees it: throws on anything but 2xx, with the answer in the message. */
export function restAs(app: TestApp, key: string) {
  return async <T = Record<string, unknown>>(method: string, pathname: string, body?: unknown): Promise<T> => {
    const res = await app.request<T>(method, pathname, { key, body });
    if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
}

export interface OpenPage {
  context: BrowserContext;
  page: Page;
  /** Script errors and failed loads of ours seen so far (expect it to stay empty). */
  errors: string[];
}

/** A browser page at `viewport`, signed in as `person`, recording errors. Close `context` after. */
export async function openAs(browser: Browser, app: TestApp, person: Pick<Person, 'cookie'>, viewport: Pick<Viewport, 'width' | 'height'>): Promise<OpenPage> {
  const open = await openSignedOut(browser, viewport);
  await open.context.addCookies([{ name: 'spa_session', value: person.cookie.split('=')[1], url: app.baseUrl }]);
  return open;
}

/** A browser page at `viewport` with no session yet (a person following an e-mailed link), recording errors. */
export async function openSignedOut(browser: Browser, viewport: Pick<Viewport, 'width' | 'height'>): Promise<OpenPage> {
  const context = await browser.newContext({
    viewport: { width: viewport.width, height: viewport.height },
    deviceScaleFactor: 1,
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) errors.push(`${response.status()} ${response.url()}`);
  });
  return { context, page, errors };
}

export async function expectNoHorizontalOverflow(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}

/** axe-core over the page as it is now: no violation of serious or critical impact. */
export async function expectNoSeriousAxeViolations(page: Page): Promise<void> {
  // Evaluated over the DevTools protocol: the page's CSP (no inline scripts) stays in force for the page itself.
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const { violations } = await page.evaluate(() => axe.run({ resultTypes: ['violations'] }));
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

/** What every page must be at every size: fits the screen, nothing serious for axe, no errors so far. */
export async function expectSoundPage(open: OpenPage): Promise<void> {
  await expectNoHorizontalOverflow(open.page);
  await expectNoSeriousAxeViolations(open.page);
  expect(open.errors).toEqual([]);
}

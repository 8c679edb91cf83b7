import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestApp } from './app';
import type { SmtpInbox } from './fakes/smtp-inbox';
import { BROWSER_STEP_TIMEOUT_MS } from './timeouts';
import { waitFor } from './wait';
import { http, PASSWORD, sessionCookie, signUp } from './web';

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

/** The path (/invitations/accept?token=…) of the first invitation e-mailed to `email`, once it has arrived. */
export async function invitationPath(inbox: SmtpInbox, email: string): Promise<string> {
  const link = /https?:\/\/[^/\s]+(\/invitations\/accept\?token=[A-Za-z0-9_-]{43})\b/;
  const [, path] = await waitFor(`an invitation for ${email}`, () =>
    inbox
      .for(email)
      .map((mail) => link.exec(mail.text))
      .find((match): match is RegExpExecArray => match !== null),
  );
  return path;
}

/** The token of that invitation. */
export const invitationToken = async (inbox: SmtpInbox, email: string): Promise<string> =>
  new URLSearchParams((await invitationPath(inbox, email)).split('?')[1]).get('token')!;

/**
 * A colleague in `key`'s account: invited over the API with `role`, joined through the e-mailed
 * link with PASSWORD, as the invited person does. Answers their member id and session cookie.
 */
export async function joinedColleague(
  app: TestApp,
  inbox: SmtpInbox,
  key: string,
  colleague: { email: string; name: string; role: string },
): Promise<{ id: string; cookie: string }> {
  const invited = await app.request<{ id: string }>('POST', '/v1/members', { key, body: colleague });
  expect(invited.status).toBe(201);
  const accepted = await http(app, 'POST', '/invitations/accept', { form: { token: await invitationToken(inbox, colleague.email), password: PASSWORD } });
  expect(accepted.status).toBe(303);
  return { id: invited.body.id, cookie: sessionCookie(accepted) };
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

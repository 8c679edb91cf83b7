import type { TestApp } from './app';
import { CookieJar } from './oidc-provider';
import { http } from './web';

/** Helpers of the single sign-on tests (web-sso.test.ts, web-sign-in-pages.test.ts). */

/** The client the test app is registered as at the loopback provider. */
export const SSO_CLIENT = { client_id: 'sales-pipeline-test', client_secret: 'a client secret only the test provider knows' };

/** The settings form, as an owner or admin sends it. */
export function ssoForm(issuer: string, domains: string, extra: Record<string, string> = {}): Record<string, string> {
  return { issuer_url: issuer, client_id: SSO_CLIENT.client_id, client_secret: SSO_CLIENT.client_secret, domains, default_role: 'member', ...extra };
}

/** Saves the account's connection through /settings/sso; the answer. */
export function saveSso(app: TestApp, session: { cookie: string; csrf: string }, form: Record<string, string>) {
  return http(app, 'POST', '/settings/sso', { cookie: session.cookie, form: { _csrf: session.csrf, ...form } });
}

export interface SsoRun {
  /** The answer of /sso/callback (or of the step that stopped). */
  res: Response;
  text: string;
  /** The callback URL the provider sent the browser to, as it was followed (after `tamper`). */
  callback: string;
  jar: CookieJar;
}

/**
 * A browser's single sign-on, redirects followed by hand with fetch and a cookie jar: the login
 * page's SSO form, the app's redirect to the provider, the provider's own redirects (it signs in
 * the login_hint at once), and its redirect back to the app's callback, which `tamper` may change
 * before it is followed (the app's PUBLIC_URL must be its own address, where the redirect URI points).
 */
export async function ssoSignIn(
  app: TestApp,
  email: string,
  options: { tamper?: (callback: URL) => void; jar?: CookieJar; stopAtCallback?: boolean } = {},
): Promise<SsoRun> {
  const jar = options.jar ?? new CookieJar();
  const start = await jar.fetch(`${app.baseUrl}/login/sso`, {
    method: 'POST',
    headers: { origin: app.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email }).toString(),
  });
  if (start.status !== 303) return { res: start, text: await start.text(), callback: '', jar };
  let next = new URL(start.headers.get('location')!);
  for (let hops = 0; !next.href.startsWith(`${app.config.publicUrl}/sso/callback`); hops++) {
    if (hops > 10) throw new Error(`no redirect back to the app after 10 hops (at ${next.href})`);
    const res = await jar.fetch(next.href);
    const location = res.headers.get('location');
    if (!location) throw new Error(`the provider stopped at ${next.href} with ${res.status}: ${await res.text()}`);
    next = new URL(location, next);
  }
  options.tamper?.(next);
  if (options.stopAtCallback) return { res: new Response(null), text: '', callback: next.href, jar };
  const res = await jar.fetch(next.href);
  return { res, text: await res.text(), callback: next.href, jar };
}

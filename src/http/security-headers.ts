import type { NextFunction, Request, Response } from 'express';
import helmet, { HelmetOptions } from 'helmet';

/**
 * API answers (JSON, PDFs, files) are never documents to render: if a browser ever shows one, it
 * may load nothing, run nothing and be framed by nobody. The web app's pages and /docs replace it
 * with their own policy (src/web/web.router.ts, src/rest/docs.ts).
 */
const API_POLICY = {
  defaultSrc: ["'none'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
};

/**
 * Apollo Sandbox's landing page brings its own policy in a <meta> tag (per-render nonces for its
 * inline script and styles, scripts and styles from Apollo's CDN, Google Fonts, its iframe). A
 * header policy is enforced beside it, so this one names only what the meta leaves open or cannot
 * say: the page talks to this server alone (the embed's relay fetches the endpoint on the
 * frame's behalf) and may not be framed.
 */
const SANDBOX_LANDING_PAGE_POLICY = {
  // helmet wants a default-src; one here would also close what Apollo's meta leaves open (the
  // font files Google Fonts' stylesheet names), so the meta alone governs fetches of resources.
  defaultSrc: helmet.contentSecurityPolicy.dangerouslyDisableDefaultSrc,
  connectSrc: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  objectSrc: ["'none'"],
  formAction: ["'none'"],
} as const;

const COMMON: HelmetOptions = {
  // The web app's forms rely on the browser's Origin header, which `no-referrer` (helmet's
  // default) turns into "null" on POSTs; `same-origin` keeps it and still tells other sites nothing.
  referrerPolicy: { policy: 'same-origin' },
  xFrameOptions: { action: 'deny' },
  // Sent only over HTTPS, below: a browser ignores it on plain HTTP.
  strictTransportSecurity: false,
};

/** One year; without includeSubDomains, which only the owner of the whole domain can decide. */
const HSTS = 'max-age=31536000';

/**
 * helmet's headers on every response: a Content-Security-Policy, nosniff, no framing, no referrer
 * to other sites, cross-origin isolation of responses, and Strict-Transport-Security on requests
 * that came over HTTPS (directly, or through a proxy trusted with TRUST_PROXY that says so in
 * X-Forwarded-Proto). No CORS headers are sent anywhere: secret keys never belong in a browser,
 * and the web app is same-origin.
 */
export function securityHeaders(options: { isSandboxLandingPage: (req: Request) => boolean }) {
  const api = apiSecurityHeaders();
  const sandbox = headersOf(
    helmet({
      ...COMMON,
      contentSecurityPolicy: { useDefaults: false, directives: SANDBOX_LANDING_PAGE_POLICY },
      // Sandbox opens OAuth windows for preflight scripts and hears back from them.
      crossOriginOpenerPolicy: { policy: 'same-origin-allow-popups' },
    }),
  );
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.secure) res.setHeader('Strict-Transport-Security', HSTS);
    for (const [name, value] of options.isSandboxLandingPage(req) ? sandbox : api) res.setHeader(name, value);
    next();
  };
}

let apiHeaders: Array<[string, string]> | undefined;

/** The headers of every API answer, also for those written before express sees a request (src/http/server.ts). */
export function apiSecurityHeaders(): Array<[string, string]> {
  return (apiHeaders ??= headersOf(helmet({ ...COMMON, contentSecurityPolicy: { useDefaults: false, directives: API_POLICY } })));
}

/**
 * The headers a helmet middleware sets, read once at start. With static policies (no nonces, no
 * per-request directives) they are the same on every response, so each request sets the list
 * instead of running helmet's dozen nested middlewares.
 */
function headersOf(middleware: ReturnType<typeof helmet>): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const recorder = {
    setHeader: (name: string, value: string | number) => headers.push([name, String(value)]),
    removeHeader: () => undefined,
  };
  let done = false;
  middleware({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error;
    done = true;
  });
  if (!done) throw new Error('helmet did not set its headers synchronously');
  return headers;
}

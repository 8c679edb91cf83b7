import path from 'node:path';
import { RequestHandler, Router } from 'express';
import type { GraphQLSchema } from 'graphql';
import type { RestRoute } from './routes';
import { methodNotAllowed } from '../http/error-handler';
import { buildOpenApi, OpenApiOptions } from './openapi';

/** Swagger UI's files, served from the swagger-ui-dist package (no CDN). */
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const SWAGGER_UI_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png'];

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sales Pipeline API: REST reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui" data-spec-url="/v1/openapi.json"></div>
  <noscript>The OpenAPI document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: document.getElementById('swagger-ui').dataset.specUrl,
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'BaseLayout',
  });
});
`;

/**
 * Swagger UI styles elements inline and draws icons from data: URIs; scripts are only our own
 * files; "Try it out" calls the document's server (PUBLIC_URL).
 */
const docsCsp = (serverUrl: string) =>
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  `connect-src 'self' ${new URL(serverUrl).origin}; frame-ancestors 'none'; form-action 'self'; base-uri 'none'`;

export interface DocsOptions extends OpenApiOptions {
  /** Counts the document and the page per client address (src/auth/authenticate.ts limitByAddress). */
  limit?: RequestHandler;
  /**
   * The document requested with a key: `authenticate` judges the key as /v1 does (a bad one is
   * 401), then `build` answers the account's own document (undefined: the generic one).
   */
  accountDocument?: { authenticate: RequestHandler; build(auth: unknown, generic: Record<string, unknown>): Promise<Record<string, unknown> | undefined> };
}

/**
 * GET /v1/openapi.json (the OpenAPI 3.1 document of the route table, public like any API
 * reference) and GET /docs (Swagger UI over it). Mounted before /v1 authentication. The document
 * and the page are limited per client address; Swagger UI's own files are not, like the web app's
 * (browsers keep them for an hour).
 */
/** Every path createDocsRouter serves (/v1/openapi.json, /docs and its files), so the app sends it nothing else. */
export const DOCS_PATH = /^\/(?:v1\/openapi\.json|docs)(?:\/|$)/i;

export function createDocsRouter(schema: GraphQLSchema, routes: readonly RestRoute[], options: DocsOptions): Router {
  const router = Router();
  const limit: RequestHandler = options.limit ?? ((_req, _res, next) => next());
  const csp = docsCsp(options.serverUrl);
  const generic = buildOpenApi(schema, routes, { version: options.version, serverUrl: options.serverUrl, events: options.events });
  const document = JSON.stringify(generic, null, 2);
  const sendGeneric: RequestHandler = (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('application/json').send(document);
  };
  const account = options.accountDocument;
  const sendOwn: RequestHandler = async (req, res, next) => {
    try {
      const own = await account!.build(res.locals.auth, generic as unknown as Record<string, unknown>);
      if (!own) {
        sendGeneric(req, res, next);
        return;
      }
      res
        .set({ 'Cache-Control': 'private, no-store', Vary: 'Authorization' })
        .type('application/json')
        .send(JSON.stringify(own, null, 2));
    } catch (error) {
      next(error);
    }
  };
  // With a key, the account's own document (its custom fields); without one, the public generic document.
  router.get('/v1/openapi.json', (req, res, next) =>
    account && req.get('authorization')
      ? account.authenticate(req, res, (error?: unknown) => (error ? next(error) : sendOwn(req, res, next)))
      : limit(req, res, () => sendGeneric(req, res, next)),
  );
  router.get(['/docs', '/docs/'], limit, (_req, res) => {
    res.set({ 'Content-Security-Policy': csp, 'Cache-Control': 'no-cache' }).type('html').send(PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('text/javascript').send(INIT);
  });
  router.get('/docs/assets/:file', (req, res, next) => {
    if (!SWAGGER_UI_FILES.includes(req.params.file)) return next();
    res.sendFile(req.params.file, { root: SWAGGER_UI_DIR, maxAge: '1h' });
  });
  router.all(['/v1/openapi.json', '/docs', '/docs/'], methodNotAllowed(['GET', 'HEAD']));
  return router;
}

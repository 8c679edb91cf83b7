import 'reflect-metadata';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageLocalDefault, ApolloServerPluginLandingPageProductionDefault } from '@apollo/server/plugin/landingPage/default';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { Express, NextFunction, Request, Response } from 'express';
import { GraphQLSchema } from 'graphql';
import { AppDependencies, createContextFactory, createServiceFactory, ServiceFactory } from './app/composition';
import { authenticate, limitByAddress } from './auth/authenticate';
import { KeyCache } from './auth/key-cache';
import { graphqlRequestRefusal, permissionPlugin } from './auth/permission';
import { depthLimitRule } from './graphql/checks/depth-limit';
import { MAX_DOCUMENT_TOKENS } from './graphql/checks/cost-limit';
import { RequestContext, requestInfoOf } from './graphql/context';
import { compiledExecution } from './graphql/compiled-execution';
import { createFormatError } from './graphql/format-error';
import { operationChecks, operationChecksPlugin } from './graphql/operation-checks';
import { createSchema } from './app/schema';
import { accessLog } from './http/access-log';
import { compose } from './http/compose';
import { errorHandler, methodNotAllowed, routeNotFound } from './http/error-handler';
import { jsonBody } from './http/json-body';
import { Metrics, RouteLabels } from './http/metrics';
import { requestId } from './http/request-id';
import { securityHeaders } from './http/security-headers';
import { graphqlErrors, restErrors } from './http/send-error';
import { idempotency } from './idempotency/idempotency.middleware';
import { AccountGate } from './limits/account-gate';
import { DEFAULT_QUOTA_SETTINGS, Quota } from './limits/quota';
import { checkDatabase } from './modules/health/health.resolver';
import { ProposalPdfPool } from './modules/proposals/proposal-pdf.pool';
import { ProposalPdfService } from './modules/proposals/proposal-pdf.service';
import { RequestLogWriter } from './modules/request-logs/request-log-writer';
import { createRestRouter } from './rest/adapter';
import { createDocsRouter, DOCS_PATH } from './rest/docs';
import { documentFor } from './modules/fields/field-document';
import type { Authenticated } from './modules/accounts/api-key.service';
import { CONFLICTS, EVENTS, ROUTES } from './app/modules';
import { sessionGraphQLAuth } from './web/session-graphql';
import { webNotFound } from './web/web-errors';
import { createWebRouter } from './web/web.router';
import { createAccountRouter } from './web/account.router';
import { createMailer } from './mail/mailer';

export interface App {
  app: Express;
  apollo: ApolloServer<RequestContext>;
  schema: GraphQLSchema;
  /** Services over a tenant-scoped EntityManager, for background work (agents) outside requests. */
  servicesFor: ServiceFactory;
  /** This instance's Prometheus metrics (GET /metrics); give it to the webhook dispatcher and agent runner. */
  metrics: Metrics;
  /** Stores the accounts' request logs off the request path; absent with REQUEST_LOGS=off. */
  requestLogs?: RequestLogWriter;
  stop(): Promise<void>;
}

/**
 * A GET of /graphql from a browser: Apollo Sandbox's landing page, which needs no key. The same
 * rule as Apollo's own (HTML preferred to every GraphQL answer type): a client that accepts
 * anything and sends no `query` would otherwise pass the gate without a key, and fail in the
 * context factory (500).
 */
const isLandingPage = (req: Request): boolean =>
  req.method === 'GET' &&
  req.accepts(['application/json', 'application/graphql-response+json', 'multipart/mixed', 'text/html']) === 'text/html' &&
  !req.query.query;

/** Builds the express application (without listening), so tests can boot it on any port. */
export async function createApp(deps: AppDependencies): Promise<App> {
  const { config, logger, orm } = deps;
  const metrics = deps.metrics ?? new Metrics();
  metrics.watchPool(orm);
  const pdfPool = new ProposalPdfPool(deps.pdfPoolBounds, metrics, (error) => logger.error({ err: error }, 'PDF worker pool failed'));
  metrics.watchPdfPool(pdfPool);
  const proposalPdfs = new ProposalPdfService(pdfPool, metrics);
  const routes = new RouteLabels(ROUTES);
  const schema = await createSchema();
  // One mailer: the web app's links and the members' invitations.
  const mailer = deps.mailer ?? createMailer(config.mail, logger, config.isProduction);
  const servicesFor = createServiceFactory({ config, scorer: deps.scorer, resolveHost: deps.resolveHost, proposalPdfs, mailer, logger }, schema);
  // What one account may hold of this instance at once: requests after authentication, root fields in execution.
  // Alone on the instance, an account may use the whole database pool.
  const poolSize = orm.config.get('pool')?.max ?? config.accountGate.rootFields;
  const accountGate = deps.accountGate ?? new AccountGate({ ...config.accountGate, rootFields: Math.max(config.accountGate.sharedRootFields, poolSize) });
  const createContext = createContextFactory({ ...deps, metrics, accountGate }, servicesFor);
  const quota = new Quota(deps.counters, deps.quotaSettings ?? DEFAULT_QUOTA_SETTINGS, config.rateLimits);
  const rejected = metrics.rateLimitRejected.bind(metrics);
  const prepared = { checks: operationChecks(schema, quota, rejected), formatError: createFormatError(logger, CONFLICTS) };
  // Execution compiled for documents run again, inside Apollo and in front of it (graphql/compiled-execution.ts).
  const compiled = compiledExecution(schema);
  const apollo = new ApolloServer<RequestContext>({
    gateway: compiled.gateway,
    formatError: prepared.formatError,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    // Parsing stops at this many tokens, so no document is big enough to make validation slow.
    parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS },
    validationRules: [depthLimitRule()],
    // main.ts owns shutdown (HTTP, then Apollo, then the pool, then PostgreSQL), in that order.
    stopOnTerminationSignals: false,
    plugins: [
      // On by default, it wraps every field's resolver to compute cache hints nobody reads (no CDN
      // caches this API): most of the time of a 50-row list went there.
      ApolloServerPluginCacheControlDisabled(),
      operationChecksPlugin(prepared.checks),
      permissionPlugin(),
      config.isProduction
        ? ApolloServerPluginLandingPageProductionDefault({ footer: false })
        : ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: true }),
    ],
  });
  await apollo.start();

  const app = express();
  app.disable('x-powered-by');
  // No ETag on JSON answers (Stripe sends none; clients do not revalidate API reads), which saves
  // hashing every body; file downloads set their own.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  // Security headers first, so every answer carries them, errors included. No CORS middleware, on
  // purpose: secret keys never live in browsers, and the web app calls /graphql from its own origin.
  const requestLogs = config.requestLogs
    ? new RequestLogWriter({ em: orm.em, logger: logger.child({ component: 'request-logs' }), metrics, ...deps.requestLogs })
    : undefined;
  requestLogs?.start();
  app.use(
    compose(
      securityHeaders({ isSandboxLandingPage: (req) => /^\/graphql\/?$/.test(req.path) && isLandingPage(req) }),
      requestId,
      accessLog(logger, routes, { requestLogs, metrics }),
    ),
  );

  // Keys found valid are answered from memory while Redis's stamp is unchanged; not without Redis.
  const keys = deps.counters.redis
    ? new KeyCache(deps.counters.redis, deps.counters.namespace, (error) =>
        logger.error({ err: error }, 'could not renew the API key stamp in Redis'),
      ).register()
    : undefined;
  const graphqlAuth = authenticate(orm, quota, graphqlErrors, rejected, keys);
  const sessionAuth = sessionGraphQLAuth(orm, quota, graphqlErrors, rejected);
  app.use(
    '/graphql',
    compose(
      (req: Request, res: Response, next: NextFunction) =>
        isLandingPage(req) ? next() : req.get('authorization') ? graphqlAuth(req, res, next) : sessionAuth(req, res, () => graphqlAuth(req, res, next), next),
      accountGate.admit(graphqlErrors),
      jsonBody(graphqlErrors, { emptyBody: true }),
      idempotency(orm, graphqlErrors, logger, { encryptionKey: config.encryptionKey, authorize: graphqlRequestRefusal(schema, MAX_DOCUMENT_TOKENS) }),
      // A document Apollo has validated and compiled before skips its per-request pipeline, with the same checks.
      compiled.repeatedDocuments({ ...prepared, createContext, onAnswered: () => metrics.graphqlRepeatedDocument() }),
      expressMiddleware(apollo, {
        context: async ({ res }) => createContext(requestInfoOf(res)),
      }),
    ),
  );

  // The OpenAPI document and its Swagger UI are public, like any API reference, and limited per client address.
  const docsLimit = limitByAddress(quota, restErrors, rejected);
  const docs = createDocsRouter(schema, ROUTES, {
    version: config.version,
    serverUrl: config.publicUrl,
    events: EVENTS,
    limit: docsLimit,
    accountDocument: {
      authenticate: authenticate(orm, quota, restErrors, rejected, keys),
      build: (auth, generic) => documentFor(orm.em, auth as Authenticated, generic),
    },
  });
  // Only the documents' own paths enter their router, so an API request does not walk its routes.
  app.use((req: Request, res: Response, next: NextFunction) => (DOCS_PATH.test(req.path) ? docs(req, res, next) : next()));
  app.use(
    '/v1',
    compose(
      authenticate(orm, quota, restErrors, rejected, keys),
      accountGate.admit(restErrors),
      jsonBody(restErrors),
      // The route is found and its permissions judged first; its Idempotency-Key is looked at just before it runs.
      createRestRouter(ROUTES, {
        schema,
        checks: prepared,
        createContext,
        beforeRun: idempotency(orm, restErrors, logger, { encryptionKey: config.encryptionKey }),
      }),
      routeNotFound,
    ),
  );
  // The probes and /metrics after the API too (their paths are outside /v1 and /graphql).
  const ping = () => orm.em.getConnection().execute('select 1');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const database = await checkDatabase(ping);
    res.status(database === 'ok' ? 200 : 503).json({ status: database === 'ok' ? 'ready' : 'unavailable', database });
  });
  // Prometheus: METRICS_TOKEN as a bearer token when set, else loopback clients only.
  app.get('/metrics', metrics.handler(config.metricsToken));
  for (const path of ['/healthz', '/readyz', '/metrics']) app.all(path, methodNotAllowed(['GET', 'HEAD']));

  // The web app's pages after the API, so an API request does not walk every page's route first.
  app.use(createAccountRouter({ orm, config: deps.config, counters: deps.counters, quota, logger, mailer }));
  app.use(
    createWebRouter({
      orm: orm,
      config: deps.config,
      counters: deps.counters,
      quota,
      logger: logger,
      servicesFor,
      events: EVENTS,
      resolveHost: deps.resolveHost,
    }),
  );
  // A browser asking for a page that does not exist gets the web app's 404 page; API clients (and
  // /v1, /graphql, /healthz…, whatever they accept) keep the JSON one.
  app.use(webNotFound);
  app.use(routeNotFound);
  app.use(errorHandler(logger, CONFLICTS));

  const stop = async () => {
    keys?.unregister();
    await apollo.stop();
    // After the HTTP server (callers close it first), so no request is left waiting on a thread.
    await proposalPdfs.close();
    // Also after the HTTP server: every answered request's log is written before the pool closes.
    await requestLogs?.stop();
  };
  return { app, apollo, schema, servicesFor, metrics, requestLogs, stop };
}

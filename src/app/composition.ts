import type { MikroORM } from '@mikro-orm/postgresql';
import type { GraphQLSchema } from 'graphql';
import type { Config } from '../config';
import { tenantFork } from '../db/tenant';
import { type Acting, ActorType } from '../events/acting';
import { EventRecorder } from '../events/event-recorder';
import type { RequestContext, RequestInfo } from '../graphql/context';
import type { Metrics } from '../http/metrics';
import type { AccountGate } from '../limits/account-gate';
import type { Counters } from '../limits/counters';
import { OperationLimiter, type OperationLimits } from '../limits/operation-limit';
import type { QuotaSettings } from '../limits/quota';
import { createLogger, type Logger } from '../logger';
import { createMailer, type Mailer } from '../mail/mailer';
import { EVENTS, MODULES } from './modules';
import type { ServiceFactory, ServiceScope, Services, ServiceSettings } from '../modules/module';
import { PdfPoolBounds, ProposalPdfPool } from '../modules/proposals/proposal-pdf.pool';
import { ProposalPdfService } from '../modules/proposals/proposal-pdf.service';
import type { LeadScorer } from '../modules/scoring/lead-scorer';
import { HostResolver, systemResolver } from '../http/address-guard';
import { RestSerializer } from '../rest/serialize';
import { providerSettingsOf } from '../modules/integrations/providers/crm-clients';
import type { RequestLogBounds } from '../modules/request-logs/request-log-writer';

/**
 * The composition root: the one place that knows every dependency and wires them, for requests
 * (the context factory), background work (agents, training) and the command line.
 */
export interface AppDependencies {
  orm: MikroORM;
  config: Config;
  logger: Logger;
  /** The prior model: scores until an account has enough closed deals to learn its own. */
  scorer: LeadScorer;
  /** Shared counters for quotas and per-operation limits (Redis when configured). */
  counters: Counters;
  /** Test-mode and unauthenticated allowances; tests that send many requests raise them. */
  quotaSettings?: QuotaSettings;
  /** Per-operation limits; defaults to each limited operation's own. */
  operationLimits?: Partial<OperationLimits>;
  /** How webhook URLs' hosts resolve (the system's DNS unless a test supplies names). */
  resolveHost?: HostResolver;
  /** This instance's Prometheus metrics; createApp makes one when none is given. */
  metrics?: Metrics;
  /** Bounds of the PDF worker pool; defaultPdfPoolBounds() when not given. */
  pdfPoolBounds?: PdfPoolBounds;
  /** How the request log writer batches and bounds its buffer (its defaults when not given); off with REQUEST_LOGS=off. */
  requestLogs?: RequestLogBounds;
  /** What one account may hold of this instance at once; config.accountGate's bounds when not given. */
  accountGate?: AccountGate;
  /** The app's mailer; by default one over config.mail (SMTP_URL, or the development log). */
  mailer?: Mailer;
}

/**
 * Every module's service factories, by service name: each module declares its services' types
 * (`Services`, by declaration merging) beside these factories in its `*.module.ts`. Two modules
 * naming one service would silently replace one another, so that stops start-up instead.
 */
const FACTORIES = {} as Record<keyof Services, (scope: ServiceScope) => unknown>;
for (const module of MODULES) {
  for (const [name, factory] of Object.entries(module.services ?? {})) {
    if (name in FACTORIES) throw new Error(`two modules provide the service "${name}" (the second: ${module.name})`);
    (FACTORIES as Record<string, unknown>)[name] = factory;
  }
}

/**
 * Services over one EntityManager, each built when first used (a request that reads leads builds
 * no webhook service), and then the same object for the rest of the request: services ask each
 * other for what they need through `scope.services`.
 */
export function createServiceFactory(
  settings: Pick<ServiceSettings, 'config' | 'scorer'> & Partial<Pick<ServiceSettings, 'resolveHost' | 'proposalPdfs' | 'mailer' | 'logger'>>,
  schema: GraphQLSchema,
): ServiceFactory {
  // Checked once at start: a missing key would otherwise surface as a 500 on the first connect.
  const encryptionKey = settings.config.encryptionKey;
  if (!encryptionKey) throw new Error('config.encryptionKey is not set: set ENCRYPTION_KEY (main.ts generates one outside production)');
  const serializer = new RestSerializer(schema);
  const resolveHost = settings.resolveHost ?? systemResolver;
  const complete: ServiceSettings = {
    ...settings,
    encryptionKey,
    resolveHost,
    // Once for the process: every request that touched a deal or an integration spread it anew.
    providers: providerSettingsOf(settings.config, resolveHost),
    events: EVENTS,
    // Callers outside the app (the command line's seed) render no PDF; the pool starts no thread until one does.
    proposalPdfs: settings.proposalPdfs ?? new ProposalPdfService(new ProposalPdfPool()),
    // Callers outside the app (the command line) get one over the configuration: SMTP_URL, or the development log.
    mailer: settings.mailer ?? createMailer(settings.config.mail, settings.logger ?? createLogger('silent'), settings.config.isProduction),
  };
  // Each service is a getter on one prototype, made once (not a property defined on every
  // request's object): built on first use, then kept in the object's own `built`.
  class LazyServices {
    readonly built: Record<string, unknown> = {};
    scope!: ServiceScope;
  }
  for (const [name, factory] of Object.entries(FACTORIES)) {
    Object.defineProperty(LazyServices.prototype, name, {
      enumerable: true,
      get(this: LazyServices) {
        return (this.built[name] ??= factory(this.scope));
      },
    });
  }
  const servicesFor: ServiceFactory = (em, acting) => {
    const lazy = new LazyServices();
    const services = lazy as unknown as Services;
    lazy.scope = { em, events: new EventRecorder(em, serializer, acting), settings: complete, services, servicesFor };
    return services;
  };
  return servicesFor;
}

/** The one context factory: a fresh, tenant-scoped EntityManager per request, and services over it. */
export function createContextFactory(
  deps: Pick<AppDependencies, 'orm' | 'config' | 'logger' | 'counters' | 'operationLimits' | 'metrics'> & { accountGate: AccountGate },
  servicesFor: ServiceFactory,
): (request: RequestInfo) => RequestContext {
  const operationLimiter = new OperationLimiter(
    deps.counters,
    deps.operationLimits,
    () => deps.metrics?.rateLimitRejected('operation'),
    deps.config.rateLimits,
  );
  return ({ auth, requestId, em: given, signal, idempotencyKey, client }) => {
    const em = given ?? tenantFork(deps.orm.em, { accountId: auth.account.id, livemode: auth.livemode });
    // Who acts, on every event the request's services record: its key or the session's member, and the request itself.
    const actor = auth.key ? { type: ActorType.api_key, id: auth.key.id } : { type: ActorType.member, id: auth.member?.id ?? null };
    const acting: Acting = { actor, request: { id: requestId, idempotencyKey: idempotencyKey ?? null }, client };
    return new Context(em, auth, requestId, deps.config, servicesFor(em, acting), operationLimiter, deps.accountGate, deps.logger, signal);
  };
}

/** A request's context (RequestContext). */
class Context implements RequestContext {
  private madeLogger?: Logger;

  constructor(
    readonly em: RequestContext['em'],
    readonly auth: RequestContext['auth'],
    readonly requestId: string,
    readonly config: Config,
    readonly services: Services,
    readonly operationLimiter: OperationLimiter,
    readonly accountGate: AccountGate,
    private readonly rootLogger: Logger,
    readonly signal?: AbortSignal,
  ) {}

  /**
   * Made when first used: most requests log nothing past the access log. A getter of the class,
   * not of the object, so Apollo's copy of the context for each operation (own properties only)
   * does not make one.
   */
  get logger(): Logger {
    return (this.madeLogger ??= this.rootLogger.child({ requestId: this.requestId, accountId: this.auth.account.id }));
  }
}

export type { ServiceFactory };

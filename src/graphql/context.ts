import { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { GraphQLSchema } from 'graphql';
import type { Config } from '../config';
import { scopeTo } from '../db/tenant';
import type { Metrics } from '../http/metrics';
import type { Logger } from '../logger';
import type { Authenticated } from '../modules/accounts/api-key.service';
import { LeadService } from '../modules/leads/lead.service';
import { DealService } from '../modules/deals/deal.service';
import { IntegrationService } from '../modules/integrations/integration.service';
import type { LeadScorer } from '../modules/scoring/lead-scorer';
import type { Counters } from '../limits/counters';
import { OperationLimiter, type OperationLimits } from '../limits/operation-limit';
import type { QuotaSettings } from '../limits/quota';
import { EventRecorder } from '../events/event-recorder';
import { EventService } from '../events/event.service';
import { WebhookService } from '../modules/webhooks/webhook.service';
import { ProposalService } from '../modules/proposals/proposal.service';
import { PdfPoolBounds, ProposalPdfPool } from '../modules/proposals/proposal-pdf.pool';
import { ProposalPdfService } from '../modules/proposals/proposal-pdf.service';
import { AgentService } from '../modules/agents/agent.service';
import { ScoringService } from '../modules/scoring/scoring.service';
import { HostResolver, systemResolver } from '../modules/webhooks/url-guard';
import { RestSerializer } from '../rest/serialize';

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
  /** Per-operation limits; defaults to OPERATION_LIMITS. */
  operationLimits?: OperationLimits;
  /** How webhook URLs' hosts resolve (the system's DNS unless a test supplies names). */
  resolveHost?: HostResolver;
  /** This instance's Prometheus metrics; createApp makes one when none is given. */
  metrics?: Metrics;
  /** Bounds of the PDF worker pool; defaultPdfPoolBounds() when not given. */
  pdfPoolBounds?: PdfPoolBounds;
}

export interface Services {
  leads: LeadService;
  deals: DealService;
  integrations: IntegrationService;
  webhooks: WebhookService;
  events: EventService;
  proposals: ProposalService;
  agents: AgentService;
  scoring: ScoringService;
  /** Records events on the same EntityManager (agents record their runs' agent.action). */
  recorder: EventRecorder;
}

/** What every resolver sees, for GraphQL and for the REST adapter alike. */
export interface RequestContext {
  /** A fork of the ORM's EntityManager for this request only, scoped to the caller's tenant. */
  em: EntityManager;
  auth: Authenticated;
  requestId: string;
  logger: Logger;
  config: Config;
  services: Services;
  operationLimiter: OperationLimiter;
}

export interface RequestInfo {
  auth: Authenticated;
  requestId: string;
  /**
   * The request's EntityManager when a middleware already opened one, scoped to `auth`: a POST
   * with an Idempotency-Key runs in the transaction that records its answer (`res.locals.em`).
   */
  em?: EntityManager;
}

/** The services of one tenant-scoped EntityManager: for a request's context, or an agent's run. */
export type ServiceFactory = (em: EntityManager) => Services;

/** What the service factory needs: the app's PDF service (createApp makes and stops it) when it has one. */
type ServiceDependencies = Pick<AppDependencies, 'config' | 'scorer' | 'resolveHost'> & { proposalPdfs?: ProposalPdfService };

export function createServiceFactory(deps: ServiceDependencies, schema: GraphQLSchema): ServiceFactory {
  // Checked once at start: a missing key would otherwise surface as a 500 on the first connect.
  const encryptionKey = deps.config.encryptionKey;
  if (!encryptionKey) throw new Error('config.encryptionKey is not set: set ENCRYPTION_KEY (main.ts generates one outside production)');
  const serializer = new RestSerializer(schema);
  // Callers outside the app (the CLI's seed) render no PDF; the pool starts no thread until one does.
  const pdfs = deps.proposalPdfs ?? new ProposalPdfService(new ProposalPdfPool());
  const webhookSettings = {
    allowPrivateUrls: deps.config.webhookAllowPrivateUrls,
    resolveHost: deps.resolveHost ?? systemResolver,
    encryptionKey,
  };
  return (em) => {
    const events = new EventRecorder(em, serializer);
    const integrations = new IntegrationService(em, encryptionKey, events);
    const scoring = new ScoringService(em, deps.scorer);
    return {
      scoring,
      leads: new LeadService(em, scoring, events),
      deals: new DealService(em, integrations, events),
      integrations,
      webhooks: new WebhookService(em, webhookSettings),
      events: new EventService(em),
      proposals: new ProposalService(em, events, deps.config.publicUrl, pdfs),
      agents: new AgentService(em, events),
      recorder: events,
    };
  };
}

/** The one context factory: a fresh, tenant-scoped EntityManager per request, and services over it. */
export function createContextFactory(deps: AppDependencies & ServiceDependencies, schema: GraphQLSchema): (request: RequestInfo) => RequestContext {
  const operationLimiter = new OperationLimiter(deps.counters, deps.operationLimits, () => deps.metrics?.rateLimitRejected('operation'), deps.config.rateLimits);
  const servicesFor = createServiceFactory(deps, schema);
  return ({ auth, requestId, em: given }) => {
    const em = given ?? scopeTo(deps.orm.em.fork(), { accountId: auth.account.id, livemode: auth.livemode });
    let logger: Logger | undefined;
    return {
      em,
      auth,
      requestId,
      // Made when first used: most requests log nothing past the access log.
      get logger() {
        return (logger ??= deps.logger.child({ requestId, accountId: auth.account.id }));
      },
      config: deps.config,
      services: servicesFor(em),
      operationLimiter,
    };
  };
}

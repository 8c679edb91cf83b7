import { timingSafeEqual } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Request, Response } from 'express';
import ipaddr from 'ipaddr.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { bearerToken } from './bearer';

/** Which limit turned a request away with 429. */
export type RateLimitKind = 'plan_quota' | 'unauthenticated_address' | 'operation';
/** What became of one webhook attempt. */
export type WebhookOutcome = 'succeeded' | 'failed' | 'retry_scheduled' | 'gone';

/** The label of requests that matched no route (bounded: never the raw path). */
export const UNMATCHED = 'unmatched';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const WEBHOOK_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];

/** Why a PDF request was turned away before rendering. */
export type PdfRefusal = 'account_busy' | 'queue_full';

interface PdfPool {
  stats(): { admitted: number; waitingForAccount: number };
}

interface Pool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/**
 * Prometheus metrics of one app instance, in a registry of its own (not prom-client's global one,
 * so several apps in one process, as in tests, each count only their own work). Labels are
 * bounded: routes are patterns (`/v1/leads/:id`), never paths with ids.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly rateLimitRejections: Counter<'kind'>;
  private readonly webhookDeliveries: Counter<'outcome'>;
  private readonly webhookDuration: Histogram<'outcome'>;
  private readonly agentRuns: Counter<'type' | 'outcome'>;
  private readonly pdfRenders: Counter;
  private readonly pdfStoredHits: Counter;
  private readonly pdfRefusals: Counter<'reason'>;
  private readonly requestLogsWritten: Counter;
  private readonly requestLogsDropped: Counter<'reason'>;
  private readonly graphqlRepeated: Counter;
  private pool?: () => Pool | undefined;
  private pdfPool?: PdfPool;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer HTTP requests, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rateLimitRejections = new Counter({
      name: 'rate_limit_rejections_total',
      help: 'Requests refused with 429, by limit: plan_quota, unauthenticated_address or operation.',
      labelNames: ['kind'],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome: succeeded, failed (no retries left), retry_scheduled, gone (410).',
      labelNames: ['outcome'],
      registers,
    });
    this.webhookDuration = new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Time of one webhook delivery attempt (the HTTP request to the receiver), by outcome.',
      labelNames: ['outcome'],
      buckets: WEBHOOK_BUCKETS,
      registers,
    });
    this.agentRuns = new Counter({
      name: 'agent_runs_total',
      help: 'Agent runs, by agent type and outcome (acted, no_action, error).',
      labelNames: ['type', 'outcome'],
      registers,
    });
    this.pdfRenders = new Counter({
      name: 'proposal_pdf_renders_total',
      help: 'Proposal PDFs rendered (in the worker threads); each proposal renders once, then its stored bytes are sent.',
      registers,
    });
    this.pdfStoredHits = new Counter({
      name: 'proposal_pdf_stored_hits_total',
      help: 'Proposal PDF requests answered from the stored bytes, without rendering.',
      registers,
    });
    this.pdfRefusals = new Counter({
      name: 'proposal_pdf_refusals_total',
      help: 'Proposal PDF renders refused: account_busy (429, the account has too many under way) or queue_full (503, the instance is at capacity).',
      labelNames: ['reason'],
      registers,
    });
    this.requestLogsWritten = new Counter({
      name: 'request_logs_written_total',
      help: "Request log rows stored (the accounts' request logs, written off the request path in batches).",
      registers,
    });
    this.requestLogsDropped = new Counter({
      name: 'request_logs_dropped_total',
      help: 'Request log rows given up: buffer_full (the oldest, while the database was slower than the requests) or write_failed (a batch insert failed).',
      labelNames: ['reason'],
      registers,
    });
    this.graphqlRepeated = new Counter({
      name: 'graphql_repeated_documents_total',
      help: "POST /graphql operations answered from a document Apollo had validated and compiled before, without Apollo's per-request pipeline.",
      registers,
    });
    // The gauges' collect() runs with the gauge as `this`; these read the instance's sources.
    const pdfStats = () => this.pdfPool?.stats();
    const dbPool = () => this.pool?.();
    new Gauge({
      name: 'proposal_pdf_renders_in_progress',
      help: "Proposal PDF renders read at scrape time: admitted (running in a worker thread or queued for one), and waiting behind their account's bound.",
      labelNames: ['state'],
      registers,
      collect() {
        const stats = pdfStats();
        if (!stats) return;
        this.set({ state: 'admitted' }, stats.admitted);
        this.set({ state: 'waiting_for_account' }, stats.waitingForAccount);
      },
    });
    new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections, read at scrape time: used, free, and pending (acquires waiting).',
      labelNames: ['state'],
      registers,
      collect() {
        const pool = dbPool();
        if (!pool) return;
        this.set({ state: 'used' }, pool.numUsed());
        this.set({ state: 'free' }, pool.numFree());
        this.set({ state: 'pending' }, pool.numPendingAcquires());
      },
    });
  }

  /** Reads the ORM's connection pool (knex / tarn) at each scrape. */
  watchPool(orm: MikroORM): void {
    this.pool = () => {
      try {
        return (orm.em.getKnex().client as { pool?: Pool }).pool ?? undefined;
      } catch {
        return undefined; // closed or not connected: no gauge values this scrape
      }
    };
  }

  /** Reads the PDF worker pool's queues at each scrape. */
  watchPdfPool(pool: PdfPool): void {
    this.pdfPool = pool;
  }

  pdfRendered(): void {
    this.pdfRenders.inc();
  }

  pdfStoredHit(): void {
    this.pdfStoredHits.inc();
  }

  pdfRefused(reason: PdfRefusal): void {
    this.pdfRefusals.inc({ reason });
  }

  requestLogsStored(count: number): void {
    this.requestLogsWritten.inc(count);
  }

  requestLogsGivenUp(reason: 'buffer_full' | 'write_failed', count: number): void {
    this.requestLogsDropped.inc({ reason }, count);
  }

  graphqlRepeatedDocument(): void {
    this.graphqlRepeated.inc();
  }

  /** One answered request under its route pattern (see RouteLabels); called by the access log's listener (access-log.ts). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  rateLimitRejected(kind: RateLimitKind): void {
    this.rateLimitRejections.inc({ kind });
  }

  webhookDelivery(outcome: WebhookOutcome, seconds: number): void {
    this.webhookDeliveries.inc({ outcome });
    this.webhookDuration.observe({ outcome }, seconds);
  }

  agentRun(type: string, outcome: string): void {
    this.agentRuns.inc({ type, outcome });
  }

  /**
   * GET /metrics in the Prometheus text format. With `token` (METRICS_TOKEN), only
   * `Authorization: Bearer <token>` may read it (401 otherwise); without, only loopback clients
   * (403 otherwise), so it is not exposed by accident.
   */
  handler(token: string | undefined) {
    return async (req: Request, res: Response): Promise<void> => {
      res.setHeader('Cache-Control', 'no-store');
      if (token !== undefined) {
        if (!bearerMatches(req.get('authorization'), token)) {
          res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
          res.status(401).type('text/plain').send('401 Unauthorized: send Authorization: Bearer <METRICS_TOKEN>\n');
          return;
        }
      } else if (!isLoopback(req.socket.remoteAddress) || !isLoopback(req.ip)) {
        res.status(403).type('text/plain').send('403 Forbidden: /metrics answers loopback clients only unless METRICS_TOKEN is set\n');
        return;
      }
      res.setHeader('Content-Type', this.registry.contentType);
      res.send(await this.registry.metrics());
    };
  }
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const presented = bearerToken(header);
  if (presented === undefined) return false;
  const given = Buffer.from(presented);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** 127.0.0.0/8, ::1, and their IPv4-mapped IPv6 forms. */
export function isLoopback(address: string | undefined): boolean {
  if (!address || !ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'loopback';
}

interface RoutePattern {
  method: string | null;
  pattern: string;
  regex: RegExp;
}

/**
 * The route pattern of a request, for labels and logs: the REST table's path (`/v1/leads/:id`),
 * `/graphql`, another route express matched, or `unmatched`. Worked out from the method and path
 * (not from where routing stopped), so requests refused at a gate (401, 429) still get their route.
 */
export class RouteLabels {
  private readonly patterns: RoutePattern[];

  constructor(routes: ReadonlyArray<{ method: string; path: string }>) {
    this.patterns = routes.map((route) => ({ method: route.method.toUpperCase(), pattern: route.path, regex: toRegex(route.path) }));
  }

  /** The pattern of a request; asked once per request, by the access log's listener (access-log.ts). */
  of(req: Request): string {
    const path = (req.originalUrl || req.url).split('?')[0];
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    for (const { method: wanted, pattern, regex } of this.patterns) {
      if ((wanted === null || wanted === method) && regex.test(path)) return pattern;
    }
    if (/^\/graphql(\/|$)/i.test(path)) return '/graphql';
    if (/^\/assets\//.test(path)) return '/assets/*';
    // Other routes express matched (/healthz, /metrics, web pages); their path is a declared pattern.
    const route = (req as Request & { route?: { path?: unknown } }).route;
    if (typeof route?.path === 'string') return `${req.baseUrl ?? ''}${route.path}` || '/';
    return UNMATCHED;
  }
}

function toRegex(pattern: string): RegExp {
  const source = pattern
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  // As express matches: case-insensitively, with an optional trailing slash.
  return new RegExp(`^${source}/?$`, 'i');
}

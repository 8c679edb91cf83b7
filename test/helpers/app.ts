import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MikroORM } from '@mikro-orm/postgresql';
import { createApp } from '../../src/app';
import { createWorkers } from '../../src/app/workers';
import { createHttpServer, ServerTimeouts } from '../../src/http/server';
import { Config, loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { Account } from '../../src/modules/accounts/account.entity';
import { AccountService } from '../../src/modules/accounts/account.service';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { Plan } from '../../src/modules/accounts/plan';
import { PriorLeadScorer } from '../../src/modules/scoring/prior-model';
import { truncateAll, workerOrm } from './database';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { Counters, createRedis, redisReady } from '../../src/limits/counters';
import type { OperationLimits } from '../../src/limits/operation-limit';
import type { QuotaSettings } from '../../src/limits/quota';
import type { DestinationStream } from 'pino';
import { DispatcherOptions, WebhookDispatcher } from '../../src/modules/webhooks/webhook-dispatcher';
import type { HostResolver } from '../../src/http/address-guard';
import { RestSerializer } from '../../src/rest/serialize';
import { AgentRunner, AgentRunnerOptions } from '../../src/modules/agents/agent-runner';
import type { CrmClientOptions } from '../../src/modules/integrations/providers/crm-client';
import { SyncWorker, SyncWorkerOptions } from '../../src/modules/integrations/sync/sync-worker';
import { CoSellWorker, CoSellWorkerOptions } from '../../src/modules/deals/co-sell-worker';
import { ModelTrainer, ModelTrainerOptions } from '../../src/modules/scoring/model-trainer';
import type { PdfPoolBounds } from '../../src/modules/proposals/proposal-pdf.pool';
import type { ServiceFactory } from '../../src/modules/module';
import type { RequestLogBounds } from '../../src/modules/request-logs/request-log-writer';
import { FakeCrms, startFakeCrms } from './fakes';

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Real limits for rate-limit tests; by default tests get room for thousands of requests. */
  quotaSettings?: QuotaSettings;
  operationLimits?: OperationLimits;
  /** Count in Redis (REDIS_URL, as CI sets it) under this namespace; instances given the same one share counts. */
  redisNamespace?: string;
  /** Where log lines go (with env LOG_LEVEL), so a test can read what the app logged. */
  logStream?: DestinationStream;
  /** Runs a webhook dispatcher beside the app, as main.ts does, with these settings (fast polls and endpoint backoff by default). */
  webhooks?: Partial<
    Pick<
      DispatcherOptions,
      | 'timeoutMs'
      | 'pollIntervalMs'
      | 'concurrency'
      | 'leaseMs'
      | 'retrySchedule'
      | 'perEndpointConcurrency'
      | 'perAccountConcurrency'
      | 'backoffBaseMs'
      | 'backoffMaxMs'
    >
  >;
  /** Runs the agent runner beside the app, as main.ts does (fast polls by default; a clock tests can move). */
  agents?: Partial<Pick<AgentRunnerOptions, 'clock' | 'pollIntervalMs' | 'scanIntervalMs' | 'concurrency' | 'leaseMs'>>;
  /** How webhook URL hosts resolve, for the app and its dispatcher (system DNS by default). */
  resolveHost?: HostResolver;
  /** The HTTP server's timeouts (SERVER_TIMEOUTS by default); slow-client tests shorten them. */
  serverTimeouts?: ServerTimeouts;
  /** Options of the lead-score trainer (`app.trainer`), such as a small rescoring batch. */
  trainer?: Pick<ModelTrainerOptions, 'rescoreBatchSize'>;
  /** Bounds of the PDF worker pool (the instance's defaults when not given). */
  pdfPoolBounds?: PdfPoolBounds;
  /**
   * The loopback HubSpot and Salesforce the app verifies CRM credentials with (test/helpers/fakes),
   * started and kept by the test. When not given, the app gets its own that accept any credentials
   * (for tests that connect CRMs with made-up ones) and closes them with the app.
   */
  crms?: FakeCrms;
  /** Starts the CRM sync worker (fast polling; tests may shorten the schedule and lease). */
  sync?: Partial<Pick<SyncWorkerOptions, 'intervalMs' | 'pollIntervalMs' | 'concurrency' | 'leaseMs' | 'retryDelayMs'>> & { clientOptions?: CrmClientOptions };
  /**
   * Starts the co-sell worker, as main.ts does (fast polling; the referral poll interval is
   * CO_SELL_POLL_INTERVAL_MS from `env`, or what is given here; short retries by default).
   */
  coSell?: Partial<Pick<CoSellWorkerOptions, 'referralPollIntervalMs' | 'pollIntervalMs' | 'concurrency' | 'leaseMs' | 'retryDelayMs'>>;
  /** How the request log writer batches and bounds its buffer (a small buffer for the tests of dropping). */
  requestLogs?: RequestLogBounds;
  /** The loopback port to listen on (a free one by default): for a PUBLIC_URL known before the app starts (single sign-on's redirect URI). */
  port?: number;
}

/** The fixed ENCRYPTION_KEY of test apps (64 hex digits), so tests can decrypt what the app stored. */
export const TEST_ENCRYPTION_KEY_HEX = '6b1f0e3d9c2a48576e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d';

/**
 * The address guard off, as a local developer sets it (WEBHOOK_ALLOW_PRIVATE_URLS defaults to
 * false everywhere): for tests whose webhooks go to loopback receivers or to names no DNS here
 * answers. Tests of the guard itself leave it on.
 */
export const LOCAL_RECEIVERS = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } as const;

/** Generous allowances so functional tests are never throttled; rate-limit tests pass the real ones. */
export const ROOMY_QUOTA: QuotaSettings = { testMode: { perMinute: 1_000_000, perDay: null }, unauthenticatedPerMinute: 1_000_000, signupsPerHour: 1_000_000 };

/** REDIS_URL when set (CI), for tests that need several instances to agree. */
export function testRedisUrl(): string | undefined {
  return process.env.REDIS_URL;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as-is (not JSON-encoded) when a string is wanted verbatim. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestAccount {
  account: Account;
  testKey: string;
  liveKey: string;
}

export interface TestApp {
  baseUrl: string;
  orm: MikroORM;
  config: Config;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  graphql<T = any>(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<HttpResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  createAccount(options?: { email?: string; name?: string; plan?: Plan }): Promise<TestAccount>;
  reset(): Promise<void>;
  close(): Promise<void>;
  /** Present when started with `webhooks`. */
  dispatcher?: WebhookDispatcher;
  /** Present when started with `agents`. */
  agentRunner?: AgentRunner;
  /** The lead-score trainer over this app's database; not started: tests call `runOnce()`. */
  trainer: ModelTrainer;
  /** Present when started with `sync`. */
  syncWorker?: SyncWorker;
  /** Present when started with `coSell`. */
  coSellWorker?: CoSellWorker;
  /** The fake CRMs this app reaches (options.crms, or its own permissive ones). */
  crms: FakeCrms;
  /** The app's own services over an EntityManager (scope it with tenantFork), for set-ups the API has no route for. */
  servicesFor: ServiceFactory;
}

let accountCounter = 0;

/**
 * Boots the real application on this worker's database, listening on a free loopback port, so
 * integration tests go through real HTTP, real Apollo and real PostgreSQL.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const crms = options.crms ?? (await startFakeCrms({ acceptAny: true }));
  const ownCrms = options.crms === undefined;
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', PORT: '0', ENCRYPTION_KEY: TEST_ENCRYPTION_KEY_HEX, ...crms.env, ...options.env });
  const orm = await workerOrm(config.databaseTimeouts);
  const logger = createLogger(config.logLevel, options.logStream);
  let redis: Redis | undefined;
  if (options.redisNamespace) {
    const url = testRedisUrl();
    if (!url) throw new Error('this test needs Redis: set REDIS_URL (CI sets redis://127.0.0.1:6379)');
    redis = createRedis(url);
    if (!(await redisReady(redis, 10_000))) throw new Error(`Redis at ${url} did not become ready within 10 s`);
  }
  const counters = new Counters(redis, options.redisNamespace ?? `test-${randomUUID()}`);
  const { app, stop, schema, servicesFor, metrics } = await createApp({
    orm,
    config,
    logger,
    scorer: new PriorLeadScorer(),
    counters,
    quotaSettings: options.quotaSettings ?? ROOMY_QUOTA,
    operationLimits: options.operationLimits,
    resolveHost: options.resolveHost,
    pdfPoolBounds: options.pdfPoolBounds,
    requestLogs: options.requestLogs,
  });
  // The workers a test asks for, as main.ts builds them (src/app/workers.ts), with fast polls.
  const chosen: Record<string, object> = {};
  if (options.webhooks) {
    // Short backoff, so tests of retry schedules measured in fractions of a second are not held up by it.
    chosen.webhooks = { userAgent: 'sales-pipeline-api-webhooks/test', pollIntervalMs: 100, backoffBaseMs: 50, backoffMaxMs: 1_000, ...options.webhooks };
  }
  if (options.agents) chosen.agents = { pollIntervalMs: 100, ...options.agents };
  if (options.sync) chosen.sync = { pollIntervalMs: 100, ...options.sync };
  if (options.coSell) chosen.coSell = { pollIntervalMs: 100, retryDelayMs: 100, ...options.coSell };
  const context = { orm, config, logger, servicesFor, serializer: new RestSerializer(schema), metrics, resolveHost: options.resolveHost };
  const workers = createWorkers(context, chosen);
  workers.start();
  const server: Server = await new Promise((resolve) => {
    const listening = createHttpServer(app, options.serverTimeouts).listen(options.port ?? 0, '127.0.0.1', () => resolve(listening));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const request: TestApp['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed as never, text };
  };

  return {
    baseUrl,
    orm,
    config,
    request,
    graphql: (query, variables, key) => request('POST', '/graphql', { key, body: { query, variables } }),
    async createAccount(options = {}) {
      const em = orm.em.fork();
      accountCounter += 1;
      const account = await new AccountService(em).create({
        email: options.email ?? `owner${accountCounter}-${Date.now()}@example.test`,
        name: options.name ?? `Account ${accountCounter}`,
        plan: options.plan,
      });
      const keys = new ApiKeyService(em);
      const testKey = (await keys.create(account, KeyType.test, 'test key')).secret;
      const liveKey = (await keys.create(account, KeyType.live, 'live key')).secret;
      return { account, testKey, liveKey };
    },
    dispatcher: workers.get<WebhookDispatcher>('webhooks'),
    agentRunner: workers.get<AgentRunner>('agents'),
    syncWorker: workers.get<SyncWorker>('sync'),
    coSellWorker: workers.get<CoSellWorker>('coSell'),
    crms,
    servicesFor,
    // Built, not started: tests run its passes themselves.
    trainer: createWorkers(context, { trainer: { ...options.trainer } }).get<ModelTrainer>('trainer')!,
    reset: () => truncateAll(orm),
    async close() {
      await workers.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stop();
      await orm.close();
      redis?.disconnect();
      if (ownCrms) await crms.close();
    },
  };
}

import 'reflect-metadata';
import { createApp } from './app';
import { createHttpServer } from './http/server';
import { Config, ConfigError, ensureEncryptionKey, loadConfig } from './config';
import { resolveDatabase } from './db/database-url';
import { initOrm } from './db/orm';
import { createLogger } from './logger';
import { Counters, createRedis, redisReady } from './limits/counters';
import { PriorLeadScorer } from './modules/scoring/prior-model';
import { WebhookDispatcher } from './modules/webhooks/webhook-dispatcher';
import { AgentRunner } from './modules/agents/agent-runner';
import { ModelTrainer } from './modules/scoring/model-trainer';
import { RestSerializer } from './rest/serialize';

/** How long start-up waits for Redis before serving with per-instance counting. */
const REDIS_CONNECT_TIMEOUT_MS = 5_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  ensureEncryptionKey(config);
  if (!config.rateLimits) logger.warn('RATE_LIMITS=off: plan quotas and per-operation limits are not enforced (meant for benchmarks)');

  const database = await resolveDatabase(config, (message) => logger.debug({ component: 'embedded-postgres' }, message));
  const orm = await initOrm({ clientUrl: database.url, timeouts: config.databaseTimeouts, log: (message) => logger.info({ component: 'mikro-orm' }, message) });
  const redis = config.redisUrl ? createRedis(config.redisUrl) : undefined;
  redis?.on('error', (error) => logger.warn({ err: error.message }, 'redis unavailable: counting in memory until it is back'));
  if (redis && !(await redisReady(redis, REDIS_CONNECT_TIMEOUT_MS))) {
    logger.warn({ timeoutMs: REDIS_CONNECT_TIMEOUT_MS }, 'redis not reachable at start: serving, counting in memory until it connects');
  }
  const counters = new Counters(redis, 'spa');
  const { app, stop, schema, servicesFor, metrics } = await createApp({ orm, config, logger, scorer: new PriorLeadScorer(), counters });
  const dispatcher = new WebhookDispatcher({
    orm,
    logger: logger.child({ component: 'webhooks' }),
    serializer: new RestSerializer(schema),
    encryptionKey: config.encryptionKey!,
    retrySchedule: config.webhookRetrySchedule,
    allowPrivateUrls: config.webhookAllowPrivateUrls,
    userAgent: `sales-pipeline-api-webhooks/${config.version}`,
    metrics,
  });
  const agents = new AgentRunner({
    orm,
    logger: logger.child({ component: 'agents' }),
    servicesFor,
    webhookRetrySchedule: config.webhookRetrySchedule,
    metrics,
  });
  const trainer = new ModelTrainer({ orm, logger: logger.child({ component: 'scoring' }), servicesFor });

  const server = createHttpServer(app).listen(config.port, () => {
    logger.info(
      { port: config.port, database: config.databaseUrl ? 'DATABASE_URL' : `embedded (${config.dataDir})`, version: config.version },
      `sales-pipeline-api listening on ${config.publicUrl} (REST /v1, GraphQL /graphql)`,
    );
    dispatcher.start();
    agents.start();
    trainer.start();
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    logger.debug('http server closed');
    // Attempts under way finish (each within its 15 s deadline); what is left is sent after restart.
    await Promise.all([dispatcher.stop(), agents.stop(), trainer.stop()]);
    logger.debug('webhook dispatcher, agent runner and model trainer stopped');
    await stop();
    logger.debug('graphql server and PDF worker threads stopped');
    await orm.close();
    redis?.disconnect();
    logger.debug('database pool closed');
    await database.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

import 'reflect-metadata';
import { createApp } from './app';
import { createHttpServer } from './http/server';
import { Config, ConfigError, ensureEncryptionKey, loadConfig } from './config';
import { resolveDatabase } from './db/database-url';
import { initAppOrm } from './app/orm';
import { createWorkers } from './app/workers';
import { createLogger, Logger } from './logger';
import { Counters, createRedis, redisReady, SERVICE_NAMESPACE } from './limits/counters';
import { PriorLeadScorer } from './modules/scoring/prior-model';
import { RestSerializer } from './rest/serialize';

/** How long start-up waits for Redis before serving with per-instance counting. */
const REDIS_CONNECT_TIMEOUT_MS = 5_000;

/** Start-up's slow steps as plain lines on stderr, so a first start (about a minute) is not silent. */
const progress = (message: string) => process.stderr.write(`[start] ${message}\n`);

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
  if (!config.requestLogs) logger.warn("REQUEST_LOGS=off: the accounts' request logs are not stored (meant for benchmarks)");
  if (!config.rateLimits) logger.warn('RATE_LIMITS=off: plan quotas and per-operation limits are not enforced (meant for benchmarks)');

  // From here on a signal must not kill the process at once: the embedded PostgreSQL would be
  // left running without it. Until the server listens, it stops start-up after the current step.
  let shutdown: ((signal: string) => Promise<void>) | undefined;
  let signalled: string | undefined;
  const onSignal = (signal: string) => {
    if (shutdown) return void shutdown(signal);
    if (signalled) return;
    signalled = signal;
    progress(`${signal}: stopping once the current start-up step is done`);
  };
  // SIGHUP too: a closed terminal sends it to every process of `npm start`, and without a handler
  // the service would die at once and leave its PostgreSQL running (which takes SIGHUP as a reload).
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => onSignal(signal));

  const database = await resolveDatabase(config, (message) => logger.debug({ component: 'embedded-postgres' }, message), progress);
  if (signalled) return stopDuringStartup(signalled, logger, [database.stop]);
  const orm = await initAppOrm({
    clientUrl: database.url,
    timeouts: config.databaseTimeouts,
    preparedStatements: config.databasePreparedStatements,
    log: (message) => logger.info({ component: 'mikro-orm' }, message),
    progress,
  });
  if (signalled) return stopDuringStartup(signalled, logger, [() => orm.close(), database.stop]);
  const redis = config.redisUrl ? createRedis(config.redisUrl) : undefined;
  redis?.on('error', (error) => logger.warn({ err: error.message }, 'redis unavailable: counting in memory until it is back'));
  if (redis && !(await redisReady(redis, REDIS_CONNECT_TIMEOUT_MS))) {
    logger.warn({ timeoutMs: REDIS_CONNECT_TIMEOUT_MS }, 'redis not reachable at start: serving, counting in memory until it connects');
  }
  const counters = new Counters(redis, SERVICE_NAMESPACE);
  const { app, stop, schema, servicesFor, metrics } = await createApp({ orm, config, logger, scorer: new PriorLeadScorer(), counters });
  const workers = createWorkers({ orm, config, logger, servicesFor, serializer: new RestSerializer(schema), metrics });
  const workerNames = [...workers.byName.keys()].join(', ');

  let stopping = false;
  const stopInOrder = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    logger.debug('http server closed');
    // Attempts under way finish (each within its 15 s deadline); what is left is sent after restart.
    await workers.stop();
    logger.debug({ workers: workerNames }, 'background workers stopped');
    await stop();
    logger.debug('graphql server, PDF worker threads and request log writer stopped (its buffer written)');
    await orm.close();
    redis?.disconnect();
    logger.debug('database pool closed');
    await database.stop();
    logger.info('stopped');
    process.exit(0);
  };

  const server = createHttpServer(app).listen(config.port, () => {
    logger.info(
      { port: config.port, database: config.databaseUrl ? 'DATABASE_URL' : `embedded (${config.dataDir})`, version: config.version },
      `sales-pipeline-api listening on ${config.publicUrl} (REST /v1, GraphQL /graphql)`,
    );
    workers.start();
    // Everything is running, so a signal now stops it in order; one that came while the app was
    // being built does so at once.
    shutdown = stopInOrder;
    if (signalled) void shutdown(signalled);
  });
}

/** Stops what start-up has opened so far, newest first, then exits as a shutdown does. */
async function stopDuringStartup(signal: string, logger: Logger, stops: Array<() => Promise<void>>): Promise<void> {
  logger.info({ signal }, 'stopping during start-up');
  for (const stop of stops) await stop();
  logger.info('stopped');
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

import 'reflect-metadata';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createApp } from './app';
import { Config, ConfigError, loadConfig } from './config';
import { resolveDatabase } from './db/database-url';
import { initOrm } from './db/orm';
import { createLogger } from './logger';
import { Counters, createRedis } from './limits/counters';
import { PriorLeadScorer } from './modules/scoring/prior-model';

/** Outside production, a missing ENCRYPTION_KEY is generated once and kept in the data folder. */
function ensureEncryptionKey(config: Config): void {
  if (config.encryptionKey) return;
  const file = path.join(config.dataDir, 'encryption-key');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  config.encryptionKey = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

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

  const database = await resolveDatabase(config, (message) => logger.debug({ component: 'embedded-postgres' }, message));
  const orm = await initOrm({ clientUrl: database.url, log: (message) => logger.info({ component: 'mikro-orm' }, message) });
  const redis = config.redisUrl ? createRedis(config.redisUrl) : undefined;
  redis?.on('error', (error) => logger.warn({ err: error.message }, 'redis unavailable: counting in memory until it is back'));
  const counters = new Counters(redis, 'spa');
  const { app, stop } = await createApp({ orm, config, logger, scorer: new PriorLeadScorer(), counters });

  const server = app.listen(config.port, () => {
    logger.info(
      { port: config.port, database: config.databaseUrl ? 'DATABASE_URL' : `embedded (${config.dataDir})`, version: config.version },
      `sales-pipeline-api listening on ${config.publicUrl} (REST /v1, GraphQL /graphql)`,
    );
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    logger.debug('http server closed');
    await stop();
    logger.debug('graphql server stopped');
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

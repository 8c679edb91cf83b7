import { Client } from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { DatabaseTimeouts } from '../../src/db/orm';
import { initAppOrm } from '../../src/app/orm';

/** The server every test talks to (set by global-setup when not given). */
export function serverUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    throw new Error(
      'TEST_DATABASE_URL is not set: run this test through `npm test` (`npm run test:unit` has no database; tests that need one belong in test/integration)',
    );
  }
  return url;
}

/**
 * Databases of one `npm test` run share a prefix with the run's id (set by global-setup), so two
 * runs on one server (two checkouts, CI beside a developer) never empty each other's tables.
 */
export function runPrefix(): string {
  return `spa_test_${process.env.SPA_TEST_RUN ?? 'local'}_`;
}

/** A database of this worker's own on the test server, so workers never see each other's rows. */
export async function workerDatabaseUrl(suffix = ''): Promise<string> {
  const name = `${runPrefix()}w${process.env.JEST_WORKER_ID ?? '0'}${suffix}`;
  const admin = new Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error;
      });
    }
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** Connects to this worker's database and applies the migrations, as the service does on start (with its timeouts when given). */
export async function workerOrm(timeouts?: DatabaseTimeouts): Promise<MikroORM> {
  return initAppOrm({ clientUrl: await workerDatabaseUrl(), poolMax: 5, timeouts });
}

/**
 * Empties every table (between tests), keeping the schema and the migration log.
 *
 * A dispatcher or agent runner polling beside the app holds row locks on a few of these tables
 * while TRUNCATE takes its exclusive locks one table at a time, so PostgreSQL may pick the
 * TRUNCATE as a deadlock victim (40P01); the workers' next poll finds nothing, so trying again wins.
 */
export async function truncateAll(orm: MikroORM): Promise<void> {
  const tables = Object.values(orm.getMetadata().getAll())
    // Embeddables (a deal's co-sell registration) live in their owner's table.
    .filter((meta) => !meta.abstract && !meta.embeddable && meta.tableName)
    .map((meta) => `"${meta.tableName}"`);
  const statement = `TRUNCATE ${[...new Set(tables)].join(', ')} CASCADE`;
  for (let attempt = 1; ; attempt += 1) {
    try {
      await orm.em.getConnection().execute(statement);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt === 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

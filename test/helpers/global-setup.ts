import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { ensureBuilt } from './dist';

/**
 * Tests use TEST_DATABASE_URL when it is set (CI points it at the machine's PostgreSQL); otherwise
 * they start the embedded PostgreSQL under .data/test, so `npm test` needs no database server.
 * Each worker then makes its own database on that server (test/helpers/database.ts).
 */
export default async function globalSetup(): Promise<void> {
  // Workers inherit it: every database this run makes carries it (test/helpers/database.ts).
  process.env.SPA_TEST_RUN = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  ensureBuilt();
  if (process.env.TEST_DATABASE_URL) return;
  process.stderr.write('\n[test] TEST_DATABASE_URL is not set: starting the embedded PostgreSQL under .data/test\n');
  const database = await startEmbeddedPostgres({
    dataDir: path.resolve(__dirname, '../../.data/test'),
    database: 'postgres',
  });
  process.env.TEST_DATABASE_URL = database.url;
  (globalThis as { __embeddedDatabase__?: typeof database }).__embeddedDatabase__ = database;
}

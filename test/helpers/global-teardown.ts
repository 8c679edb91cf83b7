import { Client } from 'pg';
import { runPrefix, serverUrl } from './database';

/** Drops the databases this run made, then stops the embedded PostgreSQL when global-setup started one. */
export default async function globalTeardown(): Promise<void> {
  const admin = new Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    const made = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [runPrefix()]);
    for (const { datname } of made.rows) {
      await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(datname)} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
  const database = (globalThis as { __embeddedDatabase__?: { stop(): Promise<void> } }).__embeddedDatabase__;
  await database?.stop();
}

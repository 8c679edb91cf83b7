import type { Config } from '../config';
import { EmbeddedDatabase, startEmbeddedPostgres } from './embedded-postgres';

export const EMBEDDED_DATABASE_NAME = 'sales_pipeline';

/**
 * `DATABASE_URL` when set; otherwise the embedded PostgreSQL under the data folder (`log` takes its
 * output, `progress` a line per slow step).
 */
export async function resolveDatabase(config: Config, log: (message: string) => void, progress?: (message: string) => void): Promise<EmbeddedDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => undefined };
  return startEmbeddedPostgres({ dataDir: config.dataDir, database: EMBEDDED_DATABASE_NAME, log, progress });
}

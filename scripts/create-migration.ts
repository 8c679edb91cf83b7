/**
 * Writes a migration for the difference between the entities and a scratch database brought up to
 * date with the existing migrations. Usage: npm run migration:create (uses DATABASE_URL, else the
 * embedded PostgreSQL). src/db/migrations/index.ts finds the new file by itself.
 */
import 'reflect-metadata';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { loadConfig } from '../src/config';
import { resolveDatabase } from '../src/db/database-url';
import { appOrmConfig } from '../src/app/orm';

async function main(): Promise<void> {
  const config = loadConfig();
  const database = await resolveDatabase(config, (message) => console.error(message));
  const base = appOrmConfig({ clientUrl: database.url });
  const orm = await MikroORM.init({
    ...base,
    migrations: { ...base.migrations, path: path.resolve(__dirname, '../../src/db/migrations') },
  });
  try {
    await orm.getMigrator().up();
    const result = await orm.getMigrator().createMigration();
    console.log(result.fileName ? `created ${result.fileName}` : 'no changes: no migration needed');
  } finally {
    await orm.close();
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config';
import { mapDatabaseError } from '../db/database-errors';
import { resolveDatabase } from '../db/database-url';
import { CONFLICTS } from '../app/modules';
import { initAppOrm } from '../app/orm';
import { KEY_CACHE_TTL_MS, KeyCache } from '../auth/key-cache';
import { createRedis, redisReady, SERVICE_NAMESPACE } from '../limits/counters';
import { COMMANDS, Options, UsageError } from './commands';

const HELP = `Operator command line (same configuration as the server: DATABASE_URL, or the embedded database).

${Object.values(COMMANDS)
  .map((command) => `  npm run cli -- ${command.usage}`)
  .join('\n')}
`;

/** How long a command waits for Redis to accept commands before it goes on without renewing the key stamp. */
const REDIS_WAIT_MS = 5_000;

/** Parses and runs one command. Returns the exit code; results on stdout, everything else on stderr. */
export async function run(argv: string[]): Promise<number> {
  const [group, verb, ...rest] = argv;
  if (!group || group === '--help' || group === 'help') {
    process.stdout.write(HELP);
    return group ? 0 : 2;
  }
  const command = COMMANDS[`${group} ${verb ?? ''}`.trim()];
  if (!command) {
    console.error(`error: unknown command "${[group, verb].filter(Boolean).join(' ')}"; run with --help to list commands`);
    return 2;
  }
  let options: Options;
  try {
    options = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false }).values as Options;
  } catch (error) {
    console.error(`error: ${(error as Error).message.split('\n')[0]}\nusage: npm run cli -- ${command.usage}`);
    return 2;
  }

  const config = loadConfig();
  if (!config.databaseUrl) console.error('[cli] using the embedded PostgreSQL in', config.dataDir);
  const database = await resolveDatabase(
    config,
    () => undefined,
    (message) => console.error(`[cli] ${message}`),
  );
  const orm = await initAppOrm({ clientUrl: database.url, poolMax: 2 });
  // A change of a key or an account renews the stamp in Redis, so running instances stop answering
  // the keys they keep in memory at once (src/auth/key-cache.ts); without it, within KEY_CACHE_TTL_MS.
  const redis = config.redisUrl ? createRedis(config.redisUrl) : undefined;
  redis?.on('error', () => undefined);
  if (redis && !(await redisReady(redis, REDIS_WAIT_MS))) {
    console.error(`[cli] Redis at REDIS_URL is not reachable: running instances may accept a changed key for up to ${KEY_CACHE_TTL_MS / 1000} s`);
  }
  const keys = redis
    ? new KeyCache(redis, SERVICE_NAMESPACE, (error) =>
        console.error(`[cli] could not renew the API key stamp in Redis: ${(error as Error).message}`),
      ).register()
    : undefined;
  try {
    await command.run(orm.em.fork(), options, {
      out: (line) => process.stdout.write(`${line}\n`),
      info: (line) => console.error(line),
    });
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`error: ${error.message}\nusage: npm run cli -- ${command.usage}`);
      return 2;
    }
    // Known failures (a duplicate email is a unique violation) as their one-line API message, never SQL.
    const known = mapDatabaseError(error, CONFLICTS);
    if (known) {
      console.error(`error: ${known.message}`);
      return 1;
    }
    throw error;
  } finally {
    keys?.unregister();
    redis?.disconnect();
    await orm.close();
    await database.stop();
  }
}

if (require.main === module) {
  run(process.argv.slice(2))
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      console.error(`error: ${error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    });
}

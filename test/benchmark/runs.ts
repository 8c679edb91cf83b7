/**
 * What the benchmark's two commands share: `npm run bench` (bench.ts) and the side-by-side runs of
 * builds (side-by-side.ts). Where the database and Redis come from, how a server is readied before
 * it is measured (prime), how each run starts on a quiet database (settle), and the order of runs.
 */
import path from 'node:path';
import { parseArgs, ParseArgsConfig } from 'node:util';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { benchFetch, ROOT, Server } from './processes';

export const log = (message: string) => process.stdout.write(`[bench] ${message}\n`);

/** `list` in the order of round `round` (1, 2, …): each round starts one further along, so each takes every position in turn. */
export const turned = <T>(list: readonly T[], round: number): T[] => list.map((_, turn) => list[(turn + round - 1) % list.length]);

/**
 * The command line parsed by node's parseArgs (its `options` must include `help`): `--help` prints
 * `usage` and exits 0; an unknown option or a misplaced value prints the problem and the usage, and
 * exits 2, instead of a stack trace.
 */
export function parseCommandLine<T extends ParseArgsConfig>(usage: string, config: T): ReturnType<typeof parseArgs<T>> {
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    process.exit(2);
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return parsed;
}

/** A number given on the command line, or `fallback`; anything else ends the command with its usage's exit code. */
export function numberArg(value: string | undefined, fallback: number, command = 'bench'): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) {
    console.error(`${command}: expected a number, got "${value}"`);
    process.exit(2);
  }
  return parsed;
}

export async function redisUrl(): Promise<string> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  try {
    await redis.connect();
    await redis.ping();
    return url;
  } catch {
    console.error(`bench: the benchmark measures rate limiting in Redis, and none answers at ${url}; start Redis or set REDIS_URL`);
    process.exit(1);
  } finally {
    redis.disconnect();
  }
}

/**
 * Connections the bench's embedded PostgreSQL accepts. Every process the full run starts opens a
 * few at its start (migrations, workers, its pool's first queries): with three processes of each
 * switch copy, 14 servers reached the default 100 before the first round (twenty-sixth pass).
 */
export const BENCH_MAX_CONNECTIONS = 250;

/** PostgreSQL at DATABASE_URL, else the embedded one whose data stays in .data/bench between runs (the seeded leads with it). */
export async function benchDatabase(): Promise<{ url: string; label: string; stop(): Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, label: 'DATABASE_URL', stop: async () => undefined };
  const embedded = await startEmbeddedPostgres({
    dataDir: path.join(ROOT, '.data/bench'),
    database: 'bench',
    log: () => undefined,
    maxConnections: BENCH_MAX_CONNECTIONS,
  });
  return { url: embedded.url, label: 'embedded PostgreSQL in .data/bench', stop: () => embedded.stop() };
}

/**
 * One write through a service process before it is measured, as every instance in production has
 * written: a deal, whose create is an `em.flush()` (a lead's is a lean insert, which is not). A
 * process's first flush starts MikroORM's context storages; on Node 20 those cost every promise of
 * every later request until src/db/async-context.ts turns them off again. Before that change, a copy
 * that had only read was measured in a state no instance stays in, and each switch row counted the
 * difference as the switch's cost (docs/benchmark.md, seventh and eighth passes).
 */
export async function prime(server: Server, key: string): Promise<void> {
  const tag = `${Date.now().toString(36)}-${server.url.split(':').pop()}`;
  const response = await benchFetch(`${server.url}/v1/deals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `Bench prime ${tag}`, value: 1000 }),
  });
  if (response.status !== 201) throw new Error(`${server.name}: POST /v1/deals answered ${response.status}: ${await response.text()}`);
}

/**
 * Waits until the database is quiet before a run is measured: every event written before fanned
 * out, and no autovacuum worker running. A create run leaves thousands of events behind (the
 * baseline's too, which the service's workers fan out, since both write the same tables) and tables
 * that autovacuum visits; whichever server was measured next paid for that work on the same two
 * cores, and the order of the servers turns each round, so it fell on each in turn
 * (docs/benchmark.md, twelfth pass).
 * A condition, polled, with a deadline; a deadline passed is told, not hidden.
 */
export async function settle(db: Client, deadlineMs = 60_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    const { rows } = await db.query<{ events: number; vacuums: number }>(
      `select (select count(*)::int from event_fan_outs) as events,
              (select count(*)::int from pg_stat_activity where backend_type = 'autovacuum worker' and datname = current_database()) as vacuums`,
    );
    const { events, vacuums } = rows[0];
    if (events === 0 && vacuums === 0) break;
    if (Date.now() - started > deadlineMs) {
      log(`settle: still ${events} events to fan out and ${vacuums} autovacuum workers after ${deadlineMs / 1000} s; measuring anyway`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const waited = Date.now() - started;
  if (waited >= 1_000) log(`settle: the database was quiet after ${(waited / 1000).toFixed(1)} s`);
}

/**
 * Unmeasured requests a server answers after it is resumed and before its run is measured, in
 * seconds. A server paused longer than its pool's idle timeout (30 s, src/db/orm.ts) closes its
 * database connections on waking and opens them again for its first requests, and its other
 * time-bound state (the key cache's 10 s) has lapsed too: the first half-second after a pause that
 * renewed the connections cost 652–854 µs of CPU a read, the half-seconds after it 302–509
 * (docs/benchmark.md, twenty-ninth pass). A switch copy waits through eleven other copies' slices
 * between two of its own, and paid that in most of them; a deployment serving requests never does.
 */
export const REWARM_S = 0.5;

/**
 * Runs `measure` while every server of `servers` but `measured` is paused (Server.pause), and
 * resumes them after, however it ends. A run's other servers sit idle but are not free: each
 * service polls PostgreSQL for queued work every second and its metrics sample the event loop a
 * hundred times a second, and sixteen idle servers kept a quarter of the two cores busy, the same
 * machine the measured server, PostgreSQL and the load generator share (docs/benchmark.md,
 * twenty-eighth pass). Paused, they take nothing: each run has the machine a deployment would give it.
 */
export async function alone<T>(servers: readonly Server[], measured: Server | undefined, measure: () => Promise<T>): Promise<T> {
  const others = servers.filter((server) => server !== measured);
  for (const server of others) server.pause();
  try {
    return await measure();
  } finally {
    for (const server of others) server.resume();
  }
}

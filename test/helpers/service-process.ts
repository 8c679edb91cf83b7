import { ChildProcess, spawn, spawnSync, SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { initAppOrm } from '../../src/app/orm';
import { AccountService } from '../../src/modules/accounts/account.service';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { Plan } from '../../src/modules/accounts/plan';
import { TEST_ENCRYPTION_KEY_HEX } from './app';
import { ROOT } from './dist';
import { CONDITION_TIMEOUT_MS } from './timeouts';

/**
 * The real service as a process (`node dist/src/main.js`, as the Docker image runs it) and the
 * command line, for tests that stop, kill or multiply instances. dist/ is compiled by the global
 * setup (test/helpers/dist.ts).
 */
export const MAIN = path.join(ROOT, 'dist/src/main.js');
export const CLI = path.join(ROOT, 'dist/src/cli/main.js');

/** A port free on loopback right now (the service is then told to listen on it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A temporary DATA_DIR (the service keeps nothing there when DATABASE_URL and ENCRYPTION_KEY are given). */
export function temporaryDataDir(name: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `spa-${name}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The environment of a service or CLI process on `databaseUrl`: nothing inherited but PATH and HOME. */
export function serviceEnv(databaseUrl: string, dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY_HEX,
    ...extra,
  };
}

/** Runs the command line (`accounts create`, `keys create`…) to completion. */
export function runCli(env: Record<string, string>, ...args: string[]): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', env, timeout: 60_000 });
}

export interface ServiceProcessOptions {
  env: Record<string, string>;
  /** Default: a free port. */
  port?: number;
  /** How long to wait for /readyz (default 60 s: the machine may be busy). */
  readyTimeoutMs?: number;
}

/** One running instance of the service. */
export class ServiceProcess {
  /** Everything it wrote to stdout and stderr (JSON log lines), for assertions and failure messages. */
  log = '';
  /** Resolves with the exit code (null when a signal ended it) once the process has exited. */
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  private constructor(
    readonly port: number,
    env: Record<string, string>,
  ) {
    this.child = spawn(process.execPath, [MAIN], { cwd: ROOT, env: { ...env, PORT: String(port) } });
    this.child.stdout!.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** Starts an instance and waits until it answers /readyz. */
  static async start(options: ServiceProcessOptions): Promise<ServiceProcess> {
    const service = new ServiceProcess(options.port ?? (await freePort()), options.env);
    try {
      await service.waitReady(options.readyTimeoutMs ?? CONDITION_TIMEOUT_MS);
    } catch (error) {
      service.kill('SIGKILL');
      throw error;
    }
    return service;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`the service exited before it was ready:\n${this.log.slice(-2000)}`);
      if (
        await fetch(`${this.baseUrl}/readyz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the service was not ready within ${timeoutMs} ms:\n${this.log.slice(-2000)}`);
  }

  kill(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** kill -9, then waits until the process is gone. */
  async crash(): Promise<void> {
    this.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (an orderly shutdown), then SIGKILL if it has not exited within `graceMs`. For afterAll. */
  async stop(graceMs = 20_000): Promise<void> {
    if (!this.running) return;
    this.kill('SIGTERM');
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/** A live key of a new account made directly in the database (faster than two CLI runs). */
export interface ProcessAccount {
  accountId: string;
  email: string;
  liveKey: string;
}

let accounts = 0;

/**
 * Creates an Enterprise account (1,000 requests a minute, no daily cap) with a live key, and
 * contract-specific limits when given (what `accounts set-limits` stores).
 */
export async function createAccount(orm: MikroORM, options: { perMinute?: number; name?: string } = {}): Promise<ProcessAccount> {
  const em = orm.em.fork();
  accounts += 1;
  const email = `process-${process.pid}-${accounts}-${Date.now()}@example.test`;
  const service = new AccountService(em);
  const account = await service.create({ email, name: options.name ?? `Process account ${accounts}`, plan: Plan.enterprise });
  if (options.perMinute !== undefined) await service.setLimits(email, { perMinute: options.perMinute });
  const { secret } = await new ApiKeyService(em).create(account, KeyType.live, 'process test');
  return { accountId: account.id, email, liveKey: secret };
}

/**
 * Connects to `databaseUrl` and applies the migrations before any instance starts: instances
 * started together on an empty database would each try to apply them (docs/OPERATIONS.md: start one first).
 */
export function migratedOrm(databaseUrl: string): Promise<MikroORM> {
  return initAppOrm({ clientUrl: databaseUrl, poolMax: 3 });
}

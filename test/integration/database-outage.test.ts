import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { ROOMY_QUOTA, TEST_ENCRYPTION_KEY_HEX } from '../helpers/app';
import { initAppOrm } from '../../src/app/orm';
import { Counters } from '../../src/limits/counters';
import { createLogger } from '../../src/logger';
import { AccountService } from '../../src/modules/accounts/account.service';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { PriorLeadScorer } from '../../src/modules/scoring/prior-model';
import { waitFor } from '../helpers/wait';
import { CONDITION_TIMEOUT_MS } from '../helpers/timeouts';

/** Starts PostgreSQL in a child process (test/helpers/postgres-process.js); resolves with its URL. */
function startPostgres(dataDir: string, port: number): Promise<{ url: string; process: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, '../helpers/postgres-process.js'), dataDir, String(port)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /READY (\S+)/.exec(output);
      if (ready) resolve({ url: ready[1], process: child });
    });
    child.on('exit', (code) => reject(new Error(`postgres process exited with ${code}`)));
  });
}

function stopPostgres(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * A PostgreSQL of this test's own, stopped under a running service and started again: the service
 * answers 503 in the contract's shape meanwhile and recovers without a restart.
 */
describe('database outage', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'spa-outage-'));
  let postgres: ChildProcess;
  let orm: MikroORM;
  let server: Server;
  let stopApp: () => Promise<void>;
  let base: string;
  let key: string;
  const port = 20000 + Math.floor(Math.random() * 20000);

  const get = async (route: string, withKey = true) => {
    const response = await fetch(`${base}${route}`, { headers: withKey ? { authorization: `Bearer ${key}` } : {} });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };

  beforeAll(async () => {
    chmodSync(dataDir, 0o755); // the postgres user must reach it when tests run as root
    const started = await startPostgres(dataDir, port);
    postgres = started.process;
    orm = await initAppOrm({ clientUrl: started.url, poolMax: 3 });
    const account = await new AccountService(orm.em.fork()).create({ email: 'outage@example.test', name: 'Outage' });
    key = (await new ApiKeyService(orm.em.fork()).create(account, KeyType.test, 'outage')).secret;
    const built = await createApp({
      orm,
      config: loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', PORT: '0', ENCRYPTION_KEY: TEST_ENCRYPTION_KEY_HEX }),
      logger: createLogger('silent'),
      scorer: new PriorLeadScorer(),
      counters: new Counters(undefined, 'outage'),
      quotaSettings: ROOMY_QUOTA,
    });
    stopApp = built.stop;
    server = await new Promise((resolve) => {
      const listening = built.app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await stopApp();
    await orm.close(true);
    await stopPostgres(postgres);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 while PostgreSQL is down and recovers by itself when it is back', async () => {
    expect((await get('/v1/health')).body).toMatchObject({ status: 'ok', database: 'ok' });

    // Load through the whole outage: 6 clients reading and creating leads, at most 3,000 requests.
    const outcomes: Array<{ status: number; code?: string; type?: string; retryAfter: string | null; id?: string }> = [];
    let running = true;
    let sent = 0;
    const client = async () => {
      while (running && sent < 3000) {
        const i = sent++;
        const write = i % 3 === 0;
        const response = await fetch(`${base}/v1/leads${write ? '' : '?limit=5'}`, {
          method: write ? 'POST' : 'GET',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: write ? JSON.stringify({ company: `Load ${i}`, contact_email: `load${i}@example.test` }) : undefined,
        });
        const body = (await response.json()) as { id?: string; error?: { code: string; type: string } };
        outcomes.push({
          status: response.status,
          code: body.error?.code,
          type: body.error?.type,
          retryAfter: response.headers.get('retry-after'),
          id: response.status === 201 ? body.id : undefined,
        });
      }
    };
    const load = Array.from({ length: 6 }, client);
    const until = (what: string, condition: () => boolean) => waitFor(what, condition, CONDITION_TIMEOUT_MS, 50);
    await until('answers before the outage', () => outcomes.filter((o) => o.status === 201).length >= 5);

    await stopPostgres(postgres);
    const before = outcomes.length;
    await until('503s under load', () => outcomes.slice(before).filter((o) => o.status === 503).length >= 10);

    const health = await get('/v1/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'degraded', database: 'unavailable', api_version: 'v1' });

    const leads = await get('/v1/leads');
    expect(leads.status).toBe(503);
    expect(leads.body.error).toMatchObject({ type: 'api_error', code: 'service_unavailable' });
    expect(Number(leads.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(JSON.stringify(leads.body)).not.toMatch(/ECONNREFUSED|select|knex|at /i);

    const ready = await get('/readyz', false);
    expect(ready.status).toBe(503);

    postgres = (await startPostgres(dataDir, port)).process;
    let recovered = false;
    for (let attempt = 0; attempt < 50 && !recovered; attempt++) {
      recovered = (await get('/readyz', false)).status === 200;
      if (!recovered) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(recovered).toBe(true);
    expect((await get('/v1/health')).body).toMatchObject({ status: 'ok', database: 'ok' });
    expect((await get('/v1/leads')).status).toBe(200);

    // The load recovers too, without a restart.
    const back = outcomes.length;
    await until('writes after recovery', () => outcomes.slice(back).filter((o) => o.status === 201).length >= 5);
    running = false;
    await Promise.all(load);
    // Every answer was a success or the contract's 503 with Retry-After; never another error.
    const unexpected = outcomes.filter((o) => ![200, 201, 503].includes(o.status));
    expect(unexpected).toEqual([]);
    for (const refused of outcomes.filter((o) => o.status === 503)) {
      expect(refused).toMatchObject({ code: 'service_unavailable', type: 'api_error' });
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    }
    // Every acknowledged write is there.
    const acknowledged = outcomes.filter((o) => o.status === 201).map((o) => o.id!);
    for (const id of acknowledged) expect([id, (await get(`/v1/leads/${id}`)).status]).toEqual([id, 200]);
  });
});

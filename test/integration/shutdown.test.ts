import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { TEST_ENCRYPTION_KEY_HEX } from '../helpers/app';
import { workerDatabaseUrl } from '../helpers/database';
import { ROOT } from '../helpers/dist';

const MAIN = path.join(ROOT, 'dist/src/main.js');
const CLI = path.join(ROOT, 'dist/src/cli/main.js');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * The real service as a process (node dist/src/main.js, as the Docker image runs it), stopped with
 * SIGTERM in the middle of a burst of writes: every write it acknowledged is in the database
 * afterwards, nothing answers 5xx, and it exits 0 after shutting down in order.
 */
describe('SIGTERM during a burst of writes', () => {
  let databaseUrl: string;
  let dataDir: string;
  let service: ChildProcess | undefined;

  beforeAll(async () => {
    databaseUrl = await workerDatabaseUrl('_shutdown');
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'spa-shutdown-'));
  });
  afterAll(() => {
    if (service && service.exitCode === null) service.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged write and exits cleanly', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'test', DATABASE_URL: databaseUrl, DATA_DIR: dataDir, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY_HEX };
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', env, timeout: 60_000 });
    const email = `burst-${Date.now()}@acme.test`;
    expect(cli('accounts', 'create', '--email', email, '--name', 'Burst', '--plan', 'enterprise').status).toBe(0);
    const key = cli('keys', 'create', '--email', email, '--type', 'live', '--name', 'burst').stdout.trim();
    expect(key).toMatch(/^sk_live_/);

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    let log = '';
    service = spawn(process.execPath, [MAIN], { cwd: ROOT, env: { ...env, PORT: String(port), LOG_LEVEL: 'info' } });
    service.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    service.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => service!.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 100; i++) {
      if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const acknowledged: string[] = [];
    const statuses: number[] = [];
    let signalled = false;
    let sent = 0;
    const worker = async () => {
      while (sent < 400) {
        const n = sent++;
        try {
          const response = await fetch(`${base}/v1/leads`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ company: `Burst ${n}`, contact_email: `buyer${n}@burst.example` }),
          });
          statuses.push(response.status);
          if (response.status === 201) acknowledged.push(((await response.json()) as { id: string }).id);
          else await response.text();
        } catch {
          // refused after the server stopped listening: never acknowledged, so nothing is owed
        }
        if (!signalled && acknowledged.length >= 60) {
          signalled = true;
          service!.kill('SIGTERM');
        }
        if (signalled && service!.exitCode !== null) return;
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));
    expect(signalled).toBe(true);
    expect(await exited).toBe(0);
    expect(log).toMatch(/"msg":"stopped"/);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);

    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const stored = await db.query('select id from leads where id = any($1)', [acknowledged]);
      expect(stored.rowCount).toBe(acknowledged.length);
      // Every acknowledged lead also has its lead.created event (the outbox committed with it).
      const events = await db.query(`select count(*)::int as n from events where type = 'lead.created' and data->'object'->>'id' = any($1)`, [acknowledged]);
      expect(events.rows[0].n).toBe(acknowledged.length);
    } finally {
      await db.end();
    }
  }, 120_000);
});

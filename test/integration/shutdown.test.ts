import { Client } from 'pg';
import { workerDatabaseUrl } from '../helpers/database';
import { runCli, serviceEnv, ServiceProcess, temporaryDataDir } from '../helpers/service-process';

/**
 * The real service as a process (node dist/src/main.js, as the Docker image runs it), stopped with
 * SIGTERM in the middle of a burst of writes: every write it acknowledged is in the database
 * afterwards, nothing answers 5xx, and it exits 0 after shutting down in order.
 */
describe('SIGTERM during a burst of writes', () => {
  let databaseUrl: string;
  const dataDir = temporaryDataDir('shutdown');
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    databaseUrl = await workerDatabaseUrl('_shutdown');
  });
  afterAll(() => {
    service?.kill('SIGKILL');
    dataDir.remove();
  });

  it('keeps every acknowledged write and exits cleanly', async () => {
    const env = serviceEnv(databaseUrl, dataDir.dir);
    const cli = (...args: string[]) => runCli(env, ...args);
    const email = `burst-${Date.now()}@acme.test`;
    expect(cli('accounts', 'create', '--email', email, '--name', 'Burst', '--plan', 'enterprise').status).toBe(0);
    const key = cli('keys', 'create', '--email', email, '--type', 'live', '--name', 'burst').stdout.trim();
    expect(key).toMatch(/^sk_live_/);

    service = await ServiceProcess.start({ env: { ...env, LOG_LEVEL: 'info' } });
    const base = service.baseUrl;

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
        if (signalled && !service!.running) return;
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));
    expect(signalled).toBe(true);
    expect(await service.exited).toBe(0);
    expect(service.log).toMatch(/"msg":"stopped"/);
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
  });
});

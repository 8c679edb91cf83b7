import { MikroORM } from '@mikro-orm/postgresql';
import { workerDatabaseUrl } from '../helpers/database';
import { FakeHubSpot } from '../helpers/fakes';
import type { FakeAnswer, SeenRequest } from '../helpers/fakes/fake-provider';
import { createAccount, migratedOrm, ProcessAccount, serviceEnv, ServiceProcess, temporaryDataDir } from '../helpers/service-process';
import { waitFor } from '../helpers/wait';

/**
 * The sync engine as deployed: instances of the service as processes (node dist/src/main.js) on one
 * PostgreSQL, a loopback HubSpot. An instance killed (SIGKILL) in the middle of a run, right after
 * HubSpot applied a batch it never acknowledged, loses and duplicates nothing: another instance
 * takes the run over when its lease lapses and finishes it. Two instances never work one
 * integration's runs at once.
 */

const TOKEN = 'pat-na1-instances-0001';
const LEADS = 250;
/** Under syncIntegration's own limit of 10 a minute per key and instance. */
const ROUNDS = 8;

/** A HubSpot that runs `onFirstUpsert` once, after applying the first contacts upsert and before answering it. */
class InterruptingHubSpot extends FakeHubSpot {
  onFirstUpsert?: () => void;

  protected override answer(request: SeenRequest): FakeAnswer {
    const answer = super.answer(request);
    if (this.onFirstUpsert && request.path.startsWith('/crm/v3/objects/contacts/batch/upsert')) {
      const interrupt = this.onFirstUpsert;
      this.onFirstUpsert = undefined;
      interrupt();
    }
    return answer;
  }
}

describe('sync runs across instances', () => {
  const dataDir = temporaryDataDir('sync-instances');
  const hubspot = new InterruptingHubSpot();
  const services: ServiceProcess[] = [];
  let orm: MikroORM;
  let env: Record<string, string>;

  const sql = <T = Record<string, unknown>>(query: string, params: unknown[] = []) => orm.em.getConnection().execute<T[]>(query, params);
  const start = async () => {
    const service = await ServiceProcess.start({ env });
    services.push(service);
    return service;
  };
  const call = async (service: ServiceProcess, account: ProcessAccount, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${account.liveKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : {} };
  };
  const runsOf = (integrationId: string) =>
    sql<{ id: string; status: string; trigger: string; claims: number; pushed: number; started_at: Date; finished_at: Date | null }>(
      'select id, status, trigger, claims, pushed, started_at, finished_at from integration_sync_runs where integration_id = ? order by started_at, id',
      [integrationId],
    );

  beforeAll(async () => {
    const databaseUrl = await workerDatabaseUrl('_sync_instances');
    orm = await migratedOrm(databaseUrl);
    await hubspot.start();
    hubspot.accept(TOKEN);
    env = serviceEnv(databaseUrl, dataDir.dir, {
      LOG_LEVEL: 'warn',
      HUBSPOT_API_URL: hubspot.url,
      INTEGRATION_ALLOW_PRIVATE_URLS: 'true',
      SYNC_LEASE_MS: '2000',
    });
  });

  afterAll(async () => {
    for (const service of services) service.kill('SIGKILL');
    await Promise.all(services.map((service) => service.exited));
    await hubspot.close();
    await orm?.close();
    dataDir.remove();
  });

  it('an instance killed mid-run, after HubSpot applied a batch it never acknowledged: another finishes the run, nothing lost or duplicated', async () => {
    const first = await start();
    const account = await createAccount(orm, { perMinute: 100_000 });
    for (let start = 0; start < LEADS; start += 25) {
      const batch = Array.from({ length: Math.min(25, LEADS - start) }, (_, i) => start + i);
      const made = await Promise.all(
        batch.map((i) => call(first, account, 'POST', '/v1/leads', { company: `Crash Co ${i % 40}`, contact_email: `crash-${i}@crash.test` })),
      );
      expect(made.map((answer) => answer.status)).toEqual(batch.map(() => 201));
    }
    // The first contacts batch is applied at HubSpot, then the instance dies before it hears the answer.
    hubspot.onFirstUpsert = () => first.kill('SIGKILL');
    const connected = await call(first, account, 'POST', '/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: TOKEN } });
    expect(connected.status).toBe(201);
    await first.exited;
    const integrationId = connected.body.id as string;
    expect(hubspot.objects('contacts').length).toBeGreaterThan(0);
    expect((await runsOf(integrationId)).map((run) => run.status)).toEqual(['running']);

    await start();
    const [run] = await waitFor('the run finished by the second instance', async () => {
      const runs = await runsOf(integrationId);
      return runs[0].status !== 'running' ? runs : undefined;
    });
    expect(run).toMatchObject({ trigger: 'connect', status: 'succeeded', claims: 2 });

    const contacts = hubspot.objects('contacts');
    expect(contacts).toHaveLength(LEADS);
    expect(new Set(contacts.map((contact) => contact.properties.sales_pipeline_id)).size).toBe(LEADS);
    expect(new Set(contacts.map((contact) => contact.properties.email)).size).toBe(LEADS);
    // Leads of one company share its company record.
    expect(hubspot.objects('companies')).toHaveLength(40);
    const [{ links }] = await sql<{ links: number }>('select count(*)::int as links from integration_links where integration_id = ?', [integrationId]);
    expect(links).toBe(LEADS);
    const [{ owed }] = await sql<{ owed: number }>('select count(*)::int as owed from integration_pending_changes where integration_id = ?', [integrationId]);
    expect(owed).toBe(0);
  });

  it("two instances never work one integration's runs at once", async () => {
    hubspot.latencyMs = 20;
    hubspot.resetPeak();
    while (services.filter((service) => service.running).length < 2) await start();
    const instances = services.filter((service) => service.running);
    const second = instances[1];
    const account = await createAccount(orm, { perMinute: 100_000 });
    // A token of its own, so the first test's integration's calls are not counted with this one's.
    const token = `${TOKEN}-both`;
    hubspot.accept(token);
    const connected = await call(second, account, 'POST', '/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: token } });
    expect(connected.status).toBe(201);
    const integrationId = connected.body.id as string;
    const settledRuns = () => waitFor('no run running', async () => (await runsOf(integrationId)).every((run) => run.status !== 'running'));
    // Rounds of changes and manual syncs through both instances at once; each round's runs end before the next.
    let conflicts = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await settledRuns();
      const answers = await Promise.all(
        instances.flatMap((service, i) => [
          call(service, account, 'POST', `/v1/integrations/${integrationId}/sync`),
          call(service, account, 'POST', '/v1/leads', { company: `Both ${round}`, contact_email: `both-${round}-${i}@both.test` }),
        ]),
      );
      for (const answer of answers) expect([200, 201, 202, 409]).toContain(answer.status);
      conflicts += answers.filter((answer) => answer.status === 409).length;
    }
    const runs = await waitFor('every run to end', async () => {
      const all = await runsOf(integrationId);
      return all.every((run) => run.status !== 'running') ? all : undefined;
    });
    expect(runs.length).toBeGreaterThan(1);
    // A run's calls are one after another; HubSpot (answering slowly) never had two of this integration's in flight at once.
    expect(hubspot.peakInFlight(token)).toBe(1);
    expect(runs.every((run) => run.status === 'succeeded' && run.claims === 1)).toBe(true);
    expect(conflicts).toBeGreaterThan(0);
    await waitFor(
      'every lead at HubSpot',
      () => hubspot.objects('contacts').filter((contact) => String(contact.properties.email).endsWith('@both.test')).length === ROUNDS * 2,
    );
  });
});

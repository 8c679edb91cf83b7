import { Client } from 'pg';
import { FakeHubSpot } from '../helpers/fakes/fake-hubspot';
import type { FakeAnswer, SeenRequest } from '../helpers/fakes/fake-provider';
import { waitFor } from '../helpers/wait';
import { Server, startServer } from './processes';
import { seed } from './seed';

/**
 * HubSpot's documented limits for a private app (Free and Starter accounts: 100 requests per rolling
 * 10 seconds, 5 searches a second), which the fake enforces with 429 and Retry-After. The client
 * paces itself to the same 100 unless HubSpot's headers say less.
 */
const REQUESTS_PER_10S = 100;
const SEARCHES_PER_SECOND = 5;
const TOKEN = 'pat-na1-bench-sync-0001';
/** At the limit a push needs 2 ms per lead (two counted calls, contacts and companies, per 100 leads); the deadline allows ten times that. */
const DEADLINE_MS_PER_LEAD = 20;
const DEADLINE_BASE_MS = 60_000;

export interface SyncPushFigures {
  /** Leads in the account, all owed to HubSpot by the connect's backfill. */
  leads: number;
  /** What the run says it pushed and failed to push. */
  pushed: number;
  failed: number;
  /** The run's own start (the connect) to its end. */
  seconds: number;
  leadsPerSecond: number;
  /** Every request the fake received (the connect's check, property setup, searches, batches, associations). */
  requests: number;
  /** The most requests counted by the ten-secondly limit that arrived within any 10 seconds (429s included), and that limit. */
  peakPer10s: number;
  limitPer10s: number;
  /** 429s the fake answered (either limit). */
  rateLimited: number;
  /** Each lead is exactly one live contact at the fake: nothing lost, nothing duplicated. */
  allArrived: boolean;
  /** The run's error when it failed, else null. */
  error: string | null;
}

interface RunBody {
  status: 'running' | 'succeeded' | 'failed';
  trigger: string;
  started_at: string;
  finished_at: string | null;
  pushed: number;
  failed: number;
  to_push: number;
  error: string | null;
}

/** The fake HubSpot, counting the 429s it answers (its limits are HubSpot's; nothing here changes how it applies them). */
class CountingHubSpot extends FakeHubSpot {
  rateLimited = 0;

  protected override answer(request: SeenRequest): FakeAnswer {
    const answer = super.answer(request);
    if (answer.status === 429) this.rateLimited += 1;
    return answer;
  }
}

export interface SyncPushOptions {
  /** The bench's database: the row makes a database of its own beside it (see measureSyncPush). */
  databaseUrl: string;
  /** The bench service's environment (Redis, encryption key, log level). */
  serviceEnv: Record<string, string>;
  leads: number;
  /** The bench's servers, so an interrupted run kills this row's service too. */
  servers: Server[];
  log: (message: string) => void;
}

/**
 * The sync engine pushing `leads` leads to a loopback HubSpot the way the product does it: an
 * instance of the service (node dist/src/main.js) whose sync worker takes the run, an account with
 * the leads, and HubSpot connected through POST /v1/integrations, whose backfill run owes HubSpot
 * every lead; measured from the run's start to its end, as GET …/sync_runs shows it.
 *
 * In a database of its own (`<bench database>_sync_push`, made here and dropped after): every
 * instance of the service runs the sync worker, and the bench's own instances, in production,
 * reach HubSpot only at its real address; on the bench's database any of them could take the run.
 * For the same reason this row's instance is not in production: production refuses a
 * HUBSPOT_API_URL other than HubSpot's own (config.ts). Nothing else on the sync path reads
 * NODE_ENV but the address guard, which INTEGRATION_ALLOW_PRIVATE_URLS (loopback fakes) turns off.
 */
export async function measureSyncPush(options: SyncPushOptions): Promise<SyncPushFigures> {
  const hubspot = new CountingHubSpot();
  hubspot.limitPer10s = REQUESTS_PER_10S;
  hubspot.searchLimitPerSecond = SEARCHES_PER_SECOND;
  await hubspot.start();
  hubspot.accept(TOKEN);
  const admin = new Client({ connectionString: options.databaseUrl });
  await admin.connect();
  const databaseUrl = new URL(options.databaseUrl);
  const name = `${decodeURIComponent(databaseUrl.pathname.slice(1))}_sync_push`;
  databaseUrl.pathname = `/${encodeURIComponent(name)}`;
  // Left behind by an interrupted run: started over.
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.query(`create database "${name}"`);
  let service: Server | undefined;
  try {
    service = await startServer('service for the sync row', 'dist/src/main.js', {
      ...options.serviceEnv,
      DATABASE_URL: databaseUrl.toString(),
      NODE_ENV: 'development',
      HUBSPOT_API_URL: hubspot.url,
      INTEGRATION_ALLOW_PRIVATE_URLS: 'true',
    });
    options.servers.push(service);
    options.log(`sync row: ${options.leads} leads to a loopback HubSpot (${REQUESTS_PER_10S} requests per 10 s), service ${service.url}, database ${name}`);
    // The bench's own seed (the migrations are applied by the service, started first): an account with the leads and no deals.
    const account = await seed(databaseUrl.toString(), { leads: options.leads, deals: 0, serviceUrl: service.url });
    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${service!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${account.liveKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    const connected = await api('POST', '/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: TOKEN } });
    if (connected.status !== 201) throw new Error(`connecting HubSpot answered ${connected.status}: ${JSON.stringify(connected.body)}`);
    const integrationId = connected.body.id as string;
    let last: RunBody | undefined;
    const deadlineMs = DEADLINE_BASE_MS + options.leads * DEADLINE_MS_PER_LEAD;
    const run = await waitFor(
      `the sync run pushing ${options.leads} leads to end`,
      async () => {
        const runs = (await api('GET', `/v1/integrations/${integrationId}/sync_runs?limit=10`)).body.data as RunBody[];
        last = runs.find((one) => one.trigger === 'connect');
        return last && last.status !== 'running' ? last : undefined;
      },
      deadlineMs,
      250,
    ).catch((error: unknown) => {
      throw new Error(`sync row: ${(error as Error).message}; the run had pushed ${last?.pushed ?? 0}, ${last?.to_push ?? '?'} still owed`);
    });

    const seconds = (Date.parse(run.finished_at!) - Date.parse(run.started_at)) / 1000;
    return {
      leads: options.leads,
      pushed: run.pushed,
      failed: run.failed,
      seconds,
      leadsPerSecond: run.pushed / seconds,
      requests: hubspot.requests.length,
      peakPer10s: hubspot.maxRequestsIn10s(),
      limitPer10s: hubspot.limitPer10s,
      rateLimited: hubspot.rateLimited,
      allArrived: await allArrived(databaseUrl.toString(), hubspot),
      error: run.status === 'failed' ? (run.error ?? 'failed') : null,
    };
  } finally {
    await service?.stop();
    await hubspot.close();
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

/** Every lead of the database is one live contact at HubSpot (by `sales_pipeline_id`), and there are no others. */
async function allArrived(databaseUrl: string, hubspot: FakeHubSpot): Promise<boolean> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const leads = (await db.query<{ id: string }>('select id from leads')).rows.map((row) => row.id);
    const contacts = hubspot.objects('contacts');
    const arrived = new Set(contacts.map((contact) => contact.properties.sales_pipeline_id));
    return contacts.length === leads.length && leads.every((id) => arrived.has(id));
  } finally {
    await db.end();
  }
}

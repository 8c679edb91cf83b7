import { randomUUID } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import { workerDatabaseUrl } from '../helpers/database';
import { eventually, WebhookReceiver } from '../helpers/receiver';
import { createAccount, migratedOrm, ProcessAccount, serviceEnv, ServiceProcess, temporaryDataDir } from '../helpers/service-process';
import { CONDITION_TIMEOUT_MS } from '../helpers/timeouts';

/**
 * kill -9 in the middle of a burst of idempotent writes (CONTRACT §10, §12), with the real service
 * as a process on real PostgreSQL (and Redis when REDIS_URL is set): eight clients POST leads and
 * deals, each with its own Idempotency-Key; the process is killed without warning while requests
 * are under way; a new process starts on the same database; every client retries, with the same
 * key and body, each request that got no answer.
 *
 * What a client relies on: every write acknowledged before the crash is there; every key made
 * exactly one object (a deal name and a lead's email mark them), whether its first answer was lost
 * before or after the write committed; asking again replays the same object; and every event of
 * those writes reaches a subscribed receiver. A webhook is sent at least once: an attempt cut off
 * by the crash may be sent again, never more often than it was claimed.
 */

/** 200 writes, one in five a deal: with the retries and replays, about 350 requests. */
const JOBS = 200;
const DEAL_EVERY = 5;
const CLIENTS = 8;
/** Acknowledged writes after which the process is killed: about a third of the burst. */
const KILL_AFTER = 60;
/** Deliveries one dispatcher has under way at most (its default concurrency): all the crash can cut off. */
const DISPATCHER_CONCURRENCY = 8;
/** Every request is sent with a deadline, so a stuck server fails the test instead of hanging it. */
const REQUEST_TIMEOUT_MS = 20_000;

type Json = Record<string, unknown>;

interface Job {
  kind: 'lead' | 'deal';
  path: string;
  key: string;
  body: Json;
  /** What marks this job's object in the database: the lead's contact_email, the deal's name. */
  marker: string;
  /** The object id of the first 2xx answer. */
  id?: string;
  /** Status of the first answer before the crash (a request cut off by it has none). */
  statusBeforeCrash?: number;
  answeredBeforeCrash: boolean;
}

interface Answer {
  status: number;
  replayed: boolean;
  body: Json;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(baseUrl: string, apiKey: string, job: Job): Promise<Answer> {
  const response = await fetch(`${baseUrl}${job.path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': job.key },
    body: JSON.stringify(job.body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  return { status: response.status, replayed: response.headers.get('idempotent-replayed') === 'true', body: text ? (JSON.parse(text) as Json) : {} };
}

describe('kill -9 during a burst of idempotent writes', () => {
  const dataDir = temporaryDataDir('crash');
  const receiver = new WebhookReceiver();
  let orm: MikroORM;
  let account: ProcessAccount;
  let env: Record<string, string>;
  const services: ServiceProcess[] = [];

  const sql = <T = Json>(query: string, params: unknown[] = []) => orm.em.getConnection().execute<T[]>(query, params);

  beforeAll(async () => {
    const databaseUrl = await workerDatabaseUrl('_crash');
    orm = await migratedOrm(databaseUrl);
    // Room for the burst, the retries and the replays in one minute.
    account = await createAccount(orm, { perMinute: 100_000 });
    await receiver.start();
    env = serviceEnv(databaseUrl, dataDir.dir, {
      LOG_LEVEL: 'warn',
      // A quick retry for an attempt that failed (the crash may cut one off mid-way).
      WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    });
  });

  afterAll(async () => {
    for (const service of services) service.kill('SIGKILL');
    await Promise.all(services.map((service) => service.exited));
    await receiver.stop();
    await orm?.close();
    dataDir.remove();
  });

  it('keeps every acknowledged write, makes one object per key, and delivers every event', async () => {
    const first = await ServiceProcess.start({ env });
    services.push(first);
    const subscription = await fetch(`${first.baseUrl}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url(), events: ['*'] }),
    });
    expect(subscription.status).toBe(201);

    const run = randomUUID().slice(0, 8);
    const jobs: Job[] = [];
    for (let i = 0; i < JOBS; i++) {
      // Deals among the leads, so the crash cuts both kinds.
      const kind = i % DEAL_EVERY === DEAL_EVERY - 1 ? 'deal' : 'lead';
      const marker = kind === 'lead' ? `crash-${run}-${i}@crash-${run}.test` : `Crash ${run} deal ${i}`;
      jobs.push({
        kind,
        path: kind === 'lead' ? '/v1/leads' : '/v1/deals',
        key: `crash-${run}-${i}`,
        body:
          kind === 'lead'
            ? { company: `Crash ${run} ${i}`, contact_email: marker, industry: 'Software', employees: 250 }
            : { name: marker, value: 1000 + i, stage: 'prospecting' },
        marker,
        answeredBeforeCrash: false,
      });
    }
    const leadJobs = jobs.filter((job) => job.kind === 'lead');
    const dealJobs = jobs.filter((job) => job.kind === 'deal');

    // The burst: eight clients take the jobs in turn; once KILL_AFTER writes are acknowledged the
    // process is killed, and the clients stop at their first request without an answer.
    let nextJob = 0;
    let acknowledged = 0;
    let killed = false;
    let inFlight = 0;
    let inFlightAtKill = 0;
    const client = async () => {
      while (nextJob < jobs.length && !killed) {
        const job = jobs[nextJob++];
        try {
          inFlight += 1;
          const answer = await post(first.baseUrl, account.liveKey, job).finally(() => (inFlight -= 1));
          job.answeredBeforeCrash = true;
          job.statusBeforeCrash = answer.status;
          if (answer.status >= 200 && answer.status < 300) {
            job.id = answer.body.id as string;
            acknowledged += 1;
          }
        } catch {
          return; // no answer: the process is gone (retried below)
        }
        if (!killed && acknowledged >= KILL_AFTER) {
          killed = true;
          inFlightAtKill = inFlight;
          first.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    expect(killed).toBe(true);
    expect(inFlightAtKill).toBeGreaterThan(0); // killed with requests under way, not between them
    expect(await first.exited).toBeNull(); // ended by the signal
    const answered = jobs.filter((job) => job.answeredBeforeCrash);
    // Everything answered before the crash was a success: nothing failed on its own.
    expect(answered.filter((job) => job.statusBeforeCrash !== 201)).toEqual([]);
    const unanswered = jobs.filter((job) => !job.answeredBeforeCrash);
    expect(unanswered.length).toBeGreaterThan(0);

    // Deliveries the killed process had claimed stay leased for 45 s (the 15 s attempt deadline
    // plus 30 s) before any dispatcher may take them again; webhooks.test.ts shows that expiry.
    // With no process running, every pending delivery due later is such a lease or a retry: the
    // test makes them due now instead of waiting, as the clock would after 45 s.
    await sql("update webhook_deliveries set next_attempt_at = now() where status = 'pending' and next_attempt_at > now()");

    const second = await ServiceProcess.start({ env });
    services.push(second);

    // Every client retries what got no answer, same key and body, until it gets one: a 201, new
    // (the write had not committed) or replayed (it had, and only its answer was lost). While
    // PostgreSQL has not yet ended a killed connection's transaction, its key answers 409
    // idempotency_in_progress, which a client retries too; nothing else may come back.
    const retryDeadline = Date.now() + 60_000;
    const retryQueue = [...unanswered];
    const unexpected: string[] = [];
    const retrier = async () => {
      for (let job = retryQueue.shift(); job; job = retryQueue.shift()) {
        for (;;) {
          if (Date.now() > retryDeadline) throw new Error(`no answer for ${job.key} after retrying for 60 s`);
          const answer = await post(second.baseUrl, account.liveKey, job).catch(() => null);
          if (answer?.status === 201) {
            job.id = answer.body.id as string;
            break;
          }
          const inProgress = answer?.status === 409 && (answer.body.error as Json).code === 'idempotency_in_progress';
          if (answer && !inProgress) {
            unexpected.push(`${job.key}: ${answer.status} ${JSON.stringify(answer.body)}`);
            break;
          }
          await sleep(100);
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, retrier));
    expect(unexpected).toEqual([]);

    // The answers given before the crash were stored with their writes: asking again replays them.
    const acknowledgedJobs = answered.slice();
    const replays: Array<{ job: Job; answer: Answer }> = [];
    const replayer = async () => {
      for (let job = acknowledgedJobs.shift(); job; job = acknowledgedJobs.shift())
        replays.push({ job, answer: await post(second.baseUrl, account.liveKey, job) });
    };
    await Promise.all(Array.from({ length: CLIENTS }, replayer));
    expect(replays).toHaveLength(answered.length);
    const mismatched = replays.filter(({ job, answer }) => answer.status !== 201 || !answer.replayed || answer.body.id !== job.id);
    expect(mismatched.map(({ job, answer }) => ({ key: job.key, id: job.id, status: answer.status, replayed: answer.replayed, got: answer.body.id }))).toEqual(
      [],
    );

    // In the database: every acknowledged write, and one object per key, named by its marker.
    const leads = await sql<{ id: string; contact_email: string }>('select id, contact_email from leads where account_id = ?', [account.accountId]);
    const deals = await sql<{ id: string; name: string }>('select id, name from deals where account_id = ?', [account.accountId]);
    const byMarker = new Map<string, string[]>();
    for (const row of leads) byMarker.set(row.contact_email, [...(byMarker.get(row.contact_email) ?? []), row.id]);
    for (const row of deals) byMarker.set(row.name, [...(byMarker.get(row.name) ?? []), row.id]);
    expect(
      jobs.filter((job) => JSON.stringify(byMarker.get(job.marker)) !== JSON.stringify([job.id])).map((job) => [job.key, job.id, byMarker.get(job.marker)]),
    ).toEqual([]);
    expect(leads).toHaveLength(leadJobs.length);
    expect(deals).toHaveLength(dealJobs.length);

    // One creation event per object: no write ran twice, not even in part.
    const created = await sql<{ object_id: string; n: number }>(
      `select data->'object'->>'id' as object_id, count(*)::int as n from events
        where account_id = ? and type in ('lead.created', 'deal.created') group by 1`,
      [account.accountId],
    );
    expect(created.filter((row) => row.n !== 1)).toEqual([]);
    expect(new Set(created.map((row) => row.object_id))).toEqual(new Set(jobs.map((job) => job.id)));

    // The webhook backlog drains: every event of these writes reaches the receiver, ...
    const events = await sql<{ id: string }>('select id from events where account_id = ?', [account.accountId]);
    expect(events.length).toBeGreaterThanOrEqual(2 * leadJobs.length + dealJobs.length);
    const received = () => receiver.events().reduce((counts, event) => counts.set(event.id, (counts.get(event.id) ?? 0) + 1), new Map<string, number>());
    await eventually(
      () => {
        const counts = received();
        expect(events.filter((event) => !counts.has(event.id)).map((event) => event.id)).toEqual([]);
      },
      45_000 + CONDITION_TIMEOUT_MS, // the killed process's claims hold for 45 s first
      200,
    );
    // ... each delivery finished (its status is written just after the receiver answers, so wait for
    // it), and sent no more often than it was claimed (once, unless the crash cut its attempt off).
    const loadDeliveries = () =>
      sql<{ event_id: string; status: string; attempt_count: number }>('select event_id, status, attempt_count from webhook_deliveries where account_id = ?', [
        account.accountId,
      ]);
    let deliveries = await loadDeliveries();
    await eventually(
      async () => {
        deliveries = await loadDeliveries();
        expect(deliveries).toHaveLength(events.length);
        expect(deliveries.filter((delivery) => delivery.status !== 'succeeded')).toEqual([]);
      },
      CONDITION_TIMEOUT_MS,
      200,
    );
    const counts = received();
    expect(deliveries.filter((delivery) => counts.get(delivery.event_id)! > delivery.attempt_count)).toEqual([]);
    expect(deliveries.filter((delivery) => delivery.attempt_count > 1).length).toBeLessThanOrEqual(DISPATCHER_CONCURRENCY);
  });
});

import { MikroORM } from '@mikro-orm/postgresql';
import { WebhookReceiver } from '../helpers/receiver';
import { workerDatabaseUrl } from '../helpers/database';
import { createAccount, migratedOrm, ProcessAccount, serviceEnv, ServiceProcess, temporaryDataDir } from '../helpers/service-process';
import { waitFor } from '../helpers/wait';
import { AccountService } from '../../src/modules/accounts/account.service';
import { measureNoisyNeighbour, NOISY_TARGETS, prepareNoisyAccount } from '../benchmark/noisy-neighbour';

/**
 * One tenant cannot hurt another. The real service runs as its own process; while account B sends
 * the worst it can for a bounded time (alias and introspection bombs, fragments spread into each
 * other, PDF storms over 500-line proposals, webhooks to receivers that hang, floods of wrong keys
 * from the address it shares with A), account A reads, /healthz answers, and A's webhooks are
 * delivered. Bounds are generous (a busy 2-core machine must pass); the figures measured are
 * printed for docs/RELIABILITY.md and docs/benchmark.md.
 */

const NOISE_MS = Number(process.env.NOISY_NEIGHBOUR_MS ?? 15_000);
/** How long B, within its quota, makes noise (issue 64); its quota runs out within seconds. */
const NOISY_MS = Number(process.env.NOISY_QUOTA_MS ?? 20_000);
const ENTERPRISE = 100_000; // B's allowance: the quota is not what should protect A here

interface Timed {
  status: number;
  ms: number;
}

async function timed(url: string, init: RequestInit = {}): Promise<Timed> {
  const started = performance.now();
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
};
const summary = (values: number[]) => ({
  n: values.length,
  p50: Math.round(percentile(values, 50)),
  p95: Math.round(percentile(values, 95)),
  max: Math.round(Math.max(...values)),
});

/** Event-loop delay of the service since the last scrape (prom-client resets its histogram on each), in ms. */
async function eventLoopDelay(service: ServiceProcess): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { p99: Math.round(value('nodejs_eventloop_lag_p99_seconds')), max: Math.round(value('nodejs_eventloop_lag_max_seconds')) };
}

describe('a noisy neighbour', () => {
  const dataDir = temporaryDataDir('noisy');
  const quiet = new WebhookReceiver();
  const hanging = new WebhookReceiver();
  let orm: MikroORM;
  let service: ServiceProcess;
  let a: ProcessAccount;
  let b: ProcessAccount;

  const api = (account: ProcessAccount, path: string, init: RequestInit & { json?: unknown } = {}) =>
    timed(`${service.baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${account.liveKey}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
      body: init.json === undefined ? init.body : JSON.stringify(init.json),
    });
  const post = async (account: ProcessAccount, path: string, json: unknown) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    const body = (await response.json()) as { id: string };
    if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(body)}`);
    return body.id;
  };

  /** Time from A's create to its delivery at A's receiver. */
  async function deliveryToA(label: string): Promise<number> {
    const before = quiet.requests.length;
    const started = performance.now();
    await post(a, '/v1/leads', { company: `A ${label}`, contact_email: `a-${label}-${Date.now()}@a.test` });
    await waitFor(`A's delivery (${label})`, () => quiet.requests.length > before, 60_000);
    return performance.now() - started;
  }

  /** A's view while `during` runs: reads, /healthz and webhook deliveries, timed. */
  async function measureA(during: Promise<unknown>) {
    const reads: number[] = [];
    const health: number[] = [];
    const deliveries: number[] = [];
    const statuses = new Map<number, number>();
    let running = true;
    void during.finally(() => (running = false));
    await Promise.all([
      (async () => {
        while (running) {
          const read = await api(a, '/v1/leads?limit=1');
          statuses.set(read.status, (statuses.get(read.status) ?? 0) + 1);
          reads.push(read.ms);
        }
      })(),
      (async () => {
        while (running) health.push((await timed(`${service.baseUrl}/healthz`)).ms);
      })(),
      (async () => {
        let i = 0;
        while (running) deliveries.push(await deliveryToA(`d${i++}`));
      })(),
    ]);
    return { reads: summary(reads), health: summary(health), deliveries: summary(deliveries), statuses: Object.fromEntries(statuses) };
  }

  beforeAll(async () => {
    const databaseUrl = await workerDatabaseUrl('_noisy');
    orm = await migratedOrm(databaseUrl);
    // A reads as fast as it can: its own quota is not what is measured (with B held to its share, A read past 1,000 a minute).
    a = await createAccount(orm, { name: 'Quiet A', perMinute: 1_000_000 });
    b = await createAccount(orm, { name: 'Noisy B', perMinute: ENTERPRISE });
    await quiet.start();
    await hanging.start();
    hanging.answer = () => ({ status: 200, delayMs: 60_000 });
    service = await ServiceProcess.start({
      env: serviceEnv(databaseUrl, dataDir.dir, {
        LOG_LEVEL: 'error',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      }),
    });
    await post(a, '/v1/webhooks', { url: quiet.url('/a'), events: ['lead.created'] });
    for (let i = 0; i < 16; i++) await post(b, '/v1/webhooks', { url: hanging.url(`/b${i}`), events: ['*'] });
  });

  afterAll(async () => {
    await service?.stop();
    await Promise.all([quiet.stop(), hanging.stop()]);
    await orm?.close();
    dataDir.remove();
  });

  it(
    `keeps A's reads, /healthz and webhook deliveries fast while B sends the worst it can for ${NOISE_MS / 1000} s`,
    async () => {
      // B's ammunition: proposals of 500 lines, whose PDFs take seconds each to render.
      const deal = await post(b, '/v1/deals', { name: 'Big deal', value: 5000 });
      const lines = Array.from({ length: 500 }, (_, i) => ({ description: `Line ${i} ${'detail '.repeat(8)}`, quantity: 1 + (i % 7), unit_price: 10 + i }));
      const proposals: string[] = [];
      for (let i = 0; i < 4; i++) proposals.push(await post(b, '/v1/proposals', { deal_id: deal, line_items: lines }));

      // Quiet: what A sees with nobody else around.
      await eventLoopDelay(service);
      let calm = false;
      const quietPhase = measureA(new Promise<void>((resolve) => setTimeout(() => ((calm = true), resolve()), 3_000)));
      const quietFigures = { ...(await quietPhase), eventLoop: await eventLoopDelay(service) };
      expect(calm).toBe(true);

      // Noisy: B's attack, bounded in time and in requests.
      const graphql = (query: string) => api(b, '/graphql', { method: 'POST', json: { query } });
      const bStatuses = new Map<string, number>();
      const count = (what: string, status: number) => bStatuses.set(`${what} ${status}`, (bStatuses.get(`${what} ${status}`) ?? 0) + 1);
      const deadline = Date.now() + NOISE_MS;
      const loop = async (what: string, send: () => Promise<Timed>, maxRequests: number) => {
        for (let i = 0; i < maxRequests && Date.now() < deadline; i++) count(what, (await send()).status);
      };
      const aliasBomb = `{ ${Array.from({ length: 3_400 }, (_, i) => `l${i}: leads(filter: {limit: 100}) { data { id } }`).join(' ')} }`;
      const schemaBomb = `{ ${Array.from({ length: 3_000 }, (_, i) => `s${i}: __schema { types { name fields { name } } }`).join(' ')} }`;
      const fragmentBomb = `query { ...F0 } ${Array.from({ length: 12 }, (_, i) => `fragment F${i} on Query { ${i < 11 ? `...F${i + 1} `.repeat(6) : 'leads { data { id } }'} }`).join(' ')}`;
      const wideOk = `{ ${Array.from({ length: 25 }, (_, i) => `p${i}: pipelineSummary { stage count }`).join(' ')} }`;
      const noise = Promise.all([
        loop('alias bomb', () => graphql(aliasBomb), 400),
        loop('introspection bomb', () => graphql(schemaBomb), 400),
        loop('fragment bomb', () => graphql(fragmentBomb), 400),
        loop('25 aggregates', () => graphql(wideOk), 400),
        ...proposals.map((id, i) => loop(`pdf ${i}`, () => api(b, `/v1/proposals/${id}/pdf`), 200)),
        loop('pdf storm', () => api(b, `/v1/proposals/${proposals[0]}/pdf`), 400),
        loop(
          'leads to hanging receivers',
          async () => api(b, '/v1/leads', { method: 'POST', json: { company: 'B', contact_email: `b-${Math.random()}@b.test` } }),
          60,
        ),
        // Wrong keys go on past the deadline until the address is refused (the limit is a count, not a time).
        (async () => {
          for (let i = 0; i < 2_000 && !(Date.now() >= deadline && bStatuses.get('wrong keys 429')); i++) {
            count('wrong keys', (await timed(`${service.baseUrl}/v1/leads`, { headers: { authorization: `Bearer sk_live_${'W'.repeat(32)}` } })).status);
          }
        })(),
      ]);
      const noisyFigures = { ...(await measureA(noise)), eventLoop: await eventLoopDelay(service) };
      const bFigures = Object.fromEntries([...bStatuses].sort());

      console.log(JSON.stringify({ noiseSeconds: NOISE_MS / 1000, quiet: quietFigures, noisy: noisyFigures, noisyNeighbourStatuses: bFigures }, null, 2));

      // B got nothing past the limits: bombs refused (400), PDFs served, queued or refused (200, 429, 503), keys refused.
      for (const key of bStatuses.keys()) expect(key).toMatch(/ (200|201|400|401|429|503)$/);
      expect(bStatuses.get('alias bomb 400')).toBeGreaterThan(0);
      expect(bStatuses.get('introspection bomb 400')).toBeGreaterThan(0);
      expect(bStatuses.get('fragment bomb 400')).toBeGreaterThan(0);
      expect(bStatuses.get('wrong keys 429')).toBeGreaterThan(0);
      // Hanging receivers saw B's deliveries, and were still hanging when A's arrived.
      expect(hanging.requests.length).toBeGreaterThan(0);

      // A never noticed: its valid key was never refused by B's wrong-key flood from the same address.
      expect(Object.keys(noisyFigures.statuses)).toEqual(['200']);
      expect(noisyFigures.reads.n).toBeGreaterThan(5);
      // Bounds that catch a stall (before the fixes: reads 52 s, deliveries over 100 s, /healthz 5 s
      // behind each PDF), not slowness: a machine busy with other work (two CPU-bound processes
      // beside the suite) saw reads p95 1.3 s, /healthz 1 s, deliveries 4.9 s, event loop 0.5 s.
      // The figures of an idle machine are in docs/benchmark.md.
      expect(noisyFigures.reads.p95).toBeLessThan(5_000);
      expect(noisyFigures.health.max).toBeLessThan(5_000);
      expect(noisyFigures.deliveries.n).toBeGreaterThan(0);
      expect(noisyFigures.deliveries.max).toBeLessThan(10_000);
      expect(noisyFigures.eventLoop.max).toBeLessThan(2_000);
    },
    NOISE_MS + 180_000,
  );
});

/**
 * Issue 64: a neighbour within its rights. B, Enterprise with its plan's quota, sends from 16
 * connections the heaviest documents it is allowed (25 root fields of 30-day agent metrics,
 * pipeline summaries, 100-row lead searches, proposal lists) and PDFs of 500-line proposals; A
 * reads ten leads at a time. A's p50 and p99, while B is served and while B is refused, are
 * compared with A's own idle ones and printed (docs/RELIABILITY.md); the targets (p50 within
 * 1.5×, p99 within 3×) are reported, not asserted, on a shared 2-core machine. What is asserted:
 * A was never refused, B got only 200s, 429s and 503s, and B's quota did run out.
 */
describe('a noisy neighbour within its quota', () => {
  const dataDir = temporaryDataDir('noisy-quota');
  let orm: MikroORM;
  let service: ServiceProcess;
  let a: ProcessAccount;
  let b: ProcessAccount;

  beforeAll(async () => {
    const databaseUrl = await workerDatabaseUrl('_noisy_quota');
    orm = await migratedOrm(databaseUrl);
    // A reads as fast as it can, one at a time: its own quota is not what is measured.
    a = await createAccount(orm, { name: 'Quiet A', perMinute: 1_000_000 });
    // Room to write B's data first; then B goes back to its plan's 1,000 a minute.
    b = await createAccount(orm, { name: 'Noisy B', perMinute: 100_000 });
    service = await ServiceProcess.start({
      env: serviceEnv(databaseUrl, dataDir.dir, { LOG_LEVEL: 'error', ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) }),
    });
  });

  afterAll(async () => {
    await service?.stop();
    await orm?.close();
    dataDir.remove();
  });

  it(
    `keeps A's reads near their idle latency while B spends its quota and is refused (${NOISY_MS / 1000} s)`,
    async () => {
      const noisy = await prepareNoisyAccount(service.baseUrl, b.liveKey);
      for (let i = 0; i < 20; i++) {
        const response = await fetch(`${service.baseUrl}/v1/leads`, {
          method: 'POST',
          headers: { authorization: `Bearer ${a.liveKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ company: `Quiet ${i}`, contact_email: `q${i}@quiet.example` }),
        });
        expect(response.status).toBe(201);
      }
      await new AccountService(orm.em.fork()).setLimits(b.email, 'reset');
      // A key the service keeps in memory carries its limits until the stamp or its 10 s run out: wait
      // until B is counted against its plan, in a window of its own (writing its data used the last one).
      const bQuota = async () => {
        const response = await fetch(`${service.baseUrl}/v1/health`, { headers: { authorization: `Bearer ${b.liveKey}` } });
        return { limit: response.headers.get('x-ratelimit-limit'), remaining: Number(response.headers.get('x-ratelimit-remaining')) };
      };
      await waitFor(
        "B's plan quota in force, in a new window",
        async () => {
          const quota = await bQuota();
          return quota.limit === '1000' && quota.remaining >= 990;
        },
        90_000,
        1_000,
      );
      // What the bench's settle waits for: the events fanned out and no autovacuum at work.
      const quiet = () =>
        waitFor(
          'a quiet database',
          async () => {
            const [row] = await orm.em
              .getConnection()
              .execute<Array<{ busy: number }>>(
                `select (select count(*)::int from event_fan_outs) + (select count(*)::int from pg_stat_activity where backend_type = 'autovacuum worker' and datname = current_database()) as busy`,
              );
            return row.busy === 0;
          },
          120_000,
          200,
        ).then(() => undefined);
      const figures = await measureNoisyNeighbour({
        baseUrl: service.baseUrl,
        quietKey: a.liveKey,
        noisyKey: b.liveKey,
        noisy,
        noiseS: NOISY_MS / 1000,
        quiet,
      });
      console.log(JSON.stringify({ issue64NoisyNeighbour: figures, targets: NOISY_TARGETS }, null, 2));

      // B hangs up on what is still running at the end of each of its slices (noisy-neighbour.ts).
      for (const key of Object.keys(figures.noisy)) expect(key).toMatch(/ (200|429|503|hung up)$/);
      expect(Object.keys(figures.noisy).some((key) => key.endsWith(' 429'))).toBe(true);
      expect(figures.quotaPhase.n).toBeGreaterThan(10);
      expect(figures.refusedPhase.n).toBeGreaterThan(10);
      expect(figures.idle.n).toBeGreaterThan(10);
      // B's refusals are paced (a few a second per connection), not answered as fast as it asks: before, about 1,000 a second.
      expect(figures.noisyRate).toBeLessThan(200);
      // A stall, not slowness, fails it: the targets are reported above.
      expect(figures.refusedPhase.max).toBeLessThan(5_000);
    },
    NOISY_MS + 300_000,
  );
});

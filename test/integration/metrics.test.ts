import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { HttpResponse, LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { eventually, WebhookReceiver } from '../helpers/receiver';

/**
 * GET /metrics (Prometheus) through real HTTP: request counts and latency histograms by route
 * pattern and status, 429s by limit, webhook attempts by outcome, agent runs, the database pool,
 * the METRICS_TOKEN / loopback protection; and the access log's fields.
 */

const MISSING_LEAD = '/v1/leads/lead_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const TOKEN = 'metrics-token-0123456789abcdef';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format's samples (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`unparsable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key] = value;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

class Scrape {
  readonly samples: Sample[];
  constructor(readonly text: string) {
    this.samples = parse(text);
  }

  /** The sum of the samples named so whose labels include `labels` (0 when there are none). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.matching(name, labels).reduce((sum, s) => sum + s.value, 0);
  }

  matching(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }
}

async function scrape(app: TestApp, headers: Record<string, string> = {}): Promise<Scrape> {
  const response = await app.request('GET', '/metrics', { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Scrape(response.text);
}

const leadBody = (n: string) => ({ company: `Metrics ${n}`, contact_email: `buyer-${n}-${Date.now()}@metrics.test` });

describe('GET /metrics: HTTP requests and rate limits', () => {
  let app: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    app = await startTestApp({
      quotaSettings: { testMode: { perMinute: 8, perDay: null }, unauthenticatedPerMinute: 2, signupsPerHour: 1_000 },
      operationLimits: { ...OPERATION_LIMITS, leadScore: { windowS: 60, max: 1 } },
    });
    await app.reset();
    owner = await app.createAccount();
  });
  afterAll(() => app.close());

  it('counts exactly the requests made, by method, route pattern and status, with latency histograms and 429s by kind', async () => {
    const before = await scrape(app);
    const key = owner.testKey;
    const statuses: number[] = [];
    const send = async (method: string, path: string, options: Parameters<TestApp['request']>[2] = {}): Promise<HttpResponse> => {
      const response = await app.request(method, path, options);
      statuses.push(response.status);
      return response;
    };

    const created = await send('POST', '/v1/leads', { key, body: leadBody('a') });
    expect(created.status).toBe(201);
    const leadId = created.body.id as string;
    expect((await send('GET', `/v1/leads/${leadId}`, { key })).status).toBe(200);
    expect((await send('GET', MISSING_LEAD, { key })).status).toBe(404);
    expect((await send('GET', `/v1/no-such-route/${leadId}`, { key })).status).toBe(404);
    const gql = await send('POST', '/graphql', { key, body: { query: 'query ($id: ID!) { lead(id: $id) { id company } }', variables: { id: leadId } } });
    expect(gql.status).toBe(200);
    expect(gql.body.data.lead.id).toBe(leadId);
    expect((await send('GET', `/v1/leads/${leadId}/score`, { key })).status).toBe(200);
    expect((await send('GET', `/v1/leads/${leadId}/score`, { key })).status).toBe(429); // per-operation limit (1)
    expect((await send('GET', '/v1/leads', { key })).status).toBe(200); // the 8th of the plan's 8
    expect((await send('GET', '/v1/leads', { key })).status).toBe(429); // plan quota
    // Without a key, last: once the address is over its allowance every request from it is refused.
    expect((await send('GET', '/v1/deals')).status).toBe(401);
    expect((await send('GET', '/v1/deals', { key: 'sk_test_not_a_real_key' })).status).toBe(401);
    expect((await send('GET', '/v1/deals')).status).toBe(429); // unauthenticated address

    const after = await scrape(app);
    const moved = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    const requests = (method: string, route: string, status: number) => moved('http_requests_total', { method, route, status: String(status) });

    expect(requests('POST', '/v1/leads', 201)).toBe(1);
    expect(requests('GET', '/v1/leads/:id', 200)).toBe(1);
    expect(requests('GET', '/v1/leads/:id', 404)).toBe(1);
    expect(requests('GET', 'unmatched', 404)).toBe(1);
    expect(requests('POST', '/graphql', 200)).toBe(1);
    expect(requests('GET', '/v1/leads/:id/score', 200)).toBe(1);
    expect(requests('GET', '/v1/leads/:id/score', 429)).toBe(1);
    expect(requests('GET', '/v1/leads', 200)).toBe(1);
    expect(requests('GET', '/v1/leads', 429)).toBe(1);
    expect(requests('GET', '/v1/deals', 401)).toBe(2);
    expect(requests('GET', '/v1/deals', 429)).toBe(1);
    // Nothing else moved but the scrape before: every request made is counted once, and only once.
    const apiRequests = (s: Scrape) =>
      s
        .matching('http_requests_total')
        .filter((x) => x.labels.route !== '/metrics')
        .reduce((sum, x) => sum + x.value, 0);
    expect(apiRequests(after) - apiRequests(before)).toBe(statuses.length);
    expect(moved('http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(1);

    // Per status class, the counts are those of the answers received.
    for (const status of new Set(statuses)) {
      expect(moved('http_requests_total', { status: String(status) }) - (status === 200 ? 1 : 0)).toBe(statuses.filter((s) => s === status).length);
    }

    // Histograms: a count, a sum and buckets ending at +Inf for each series, agreeing with the counter.
    const series = { method: 'GET', route: '/v1/leads/:id', status: '404' };
    expect(moved('http_request_duration_seconds_count', series)).toBe(1);
    expect(after.value('http_request_duration_seconds_sum', series)).toBeGreaterThan(0);
    const buckets = after.matching('http_request_duration_seconds_bucket', series);
    expect(buckets.length).toBeGreaterThan(5);
    expect(buckets.find((b) => b.labels.le === '+Inf')?.value).toBe(after.value('http_requests_total', series));
    expect(after.text).toMatch(/# TYPE http_request_duration_seconds histogram/);

    // 429s by the limit that refused them.
    expect(moved('rate_limit_rejections_total', { kind: 'plan_quota' })).toBe(1);
    expect(moved('rate_limit_rejections_total', { kind: 'operation' })).toBe(1);
    expect(moved('rate_limit_rejections_total', { kind: 'unauthenticated_address' })).toBe(1);

    // Route labels are patterns: no id of any kind, nor the unknown path, reaches a label.
    const routes = new Set(after.matching('http_requests_total').map((s) => s.labels.route));
    for (const route of routes) expect(route).not.toMatch(/lead_|no-such-route|sk_test/);
    expect(after.text).not.toContain(leadId);
    expect(after.text).not.toContain(key);
  });

  it('reports the database pool and the default process metrics, per app', async () => {
    await app.request('GET', '/readyz');
    const now = await scrape(app);
    for (const state of ['used', 'free', 'pending']) {
      const [sample] = now.matching('db_pool_connections', { state });
      expect(sample).toBeDefined();
      expect(Number.isInteger(sample.value) && sample.value >= 0).toBe(true);
    }
    expect(now.value('db_pool_connections', { state: 'used' }) + now.value('db_pool_connections', { state: 'free' })).toBeGreaterThanOrEqual(1);
    expect(now.matching('process_cpu_user_seconds_total')).toHaveLength(1);
    expect(now.matching('nodejs_eventloop_lag_seconds')).toHaveLength(1);
  });
});

describe('GET /metrics: webhook deliveries and agent runs', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;
  let owner: TestAccount;

  beforeAll(async () => {
    // Two attempts in all, no wait between them: a 500 is retried once, then the delivery fails.
    app = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: [0, 0], timeoutMs: 2_000 }, agents: {} });
    await app.reset();
    owner = await app.createAccount();
    receiver = await new WebhookReceiver().start();
    receiver.answer = (request) => (request.path === '/fail' ? { status: 500 } : request.path === '/gone' ? { status: 410 } : { status: 200, body: 'ok' });
  });
  afterAll(async () => {
    await app.close();
    await receiver.stop();
  });

  it('counts webhook attempts by outcome and agent runs by type and outcome', async () => {
    const key = owner.testKey;
    const before = await scrape(app);
    for (const path of ['/ok', '/fail', '/gone']) {
      const sub = await app.request('POST', '/v1/webhooks', { key, body: { url: receiver.url(path), events: ['lead.created'] } });
      expect(sub.status).toBe(201);
    }
    const agent = await app.request('POST', '/v1/agents', { key, body: { name: 'Qualifier', type: 'lead_qualifier' } });
    expect(agent.status).toBe(201);
    expect((await app.request('POST', `/v1/agents/${agent.body.id}/deploy`, { key })).status).toBe(200);

    // A hot lead (docs/API.md, "The lead score": Software, 201–1000 employees, a company address → 75): the qualifier acts.
    const lead = await app.request('POST', '/v1/leads', { key, body: { ...leadBody('hot'), industry: 'Software', employees: 500 } });
    expect(lead.status).toBe(201);

    const after = await eventually(async () => {
      const now = await scrape(app);
      const moved = (name: string, labels: Record<string, string>) => now.value(name, labels) - before.value(name, labels);
      expect(moved('webhook_deliveries_total', { outcome: 'succeeded' })).toBe(1);
      expect(moved('webhook_deliveries_total', { outcome: 'retry_scheduled' })).toBe(1);
      expect(moved('webhook_deliveries_total', { outcome: 'failed' })).toBe(1);
      expect(moved('webhook_deliveries_total', { outcome: 'gone' })).toBe(1);
      expect(moved('agent_runs_total', { type: 'lead_qualifier', outcome: 'acted' })).toBe(1);
      return now;
    });
    expect(receiver.requests.map((r) => r.path).sort()).toEqual(['/fail', '/fail', '/gone', '/ok']);
    for (const outcome of ['succeeded', 'retry_scheduled', 'failed', 'gone']) {
      expect(after.value('webhook_delivery_duration_seconds_count', { outcome })).toBe(after.value('webhook_deliveries_total', { outcome }));
    }
    expect(after.text).toMatch(/# TYPE webhook_delivery_duration_seconds histogram/);

    // The agent's runs, as the API counts them, are those the metric counted.
    const runs = await app.request('GET', `/v1/agents/${agent.body.id}/metrics`, { key });
    expect(runs.status).toBe(200);
    expect(after.value('agent_runs_total', { type: 'lead_qualifier' }) - before.value('agent_runs_total', { type: 'lead_qualifier' })).toBe(runs.body.runs);
    expect(after.value('agent_runs_total', { outcome: 'error' })).toBe(0);
  });
});

describe('GET /metrics: protection', () => {
  it('with METRICS_TOKEN, answers only Authorization: Bearer <token> (401 without it or with another)', async () => {
    const app = await startTestApp({ env: { METRICS_TOKEN: TOKEN } });
    try {
      const without = await app.request('GET', '/metrics');
      expect(without.status).toBe(401);
      expect(without.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(without.text).not.toContain('http_requests_total');
      expect((await app.request('GET', '/metrics', { key: `${TOKEN}x` })).status).toBe(401);
      expect((await app.request('GET', '/metrics', { key: 'metrics-token-0123456789abcdeF' })).status).toBe(401);
      expect((await app.request('GET', '/metrics', { headers: { authorization: TOKEN } })).status).toBe(401);
      const ok = await scrape(app, { authorization: `Bearer ${TOKEN}` });
      expect(ok.value('http_requests_total', { route: '/metrics', status: '401' })).toBe(4);
    } finally {
      await app.close();
    }
  });

  it('without METRICS_TOKEN, answers loopback clients only (403 for another client address)', async () => {
    // TRUST_PROXY=loopback makes X-Forwarded-For the client address: a request relayed for someone else.
    const app = await startTestApp({ env: { TRUST_PROXY: 'loopback' } });
    try {
      await scrape(app);
      const relayed = await app.request('GET', '/metrics', { headers: { 'x-forwarded-for': '203.0.113.7' } });
      expect(relayed.status).toBe(403);
      expect(relayed.text).not.toContain('http_requests_total');
      expect((await app.request('GET', '/metrics', { headers: { 'x-forwarded-for': '127.0.0.1' } })).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('access log', () => {
  it('logs request id, account id, route pattern, status and latency for every request, and no key material', async () => {
    const lines: string[] = [];
    const app = await startTestApp({ logStream: { write: (line: string) => void lines.push(line) }, env: { LOG_LEVEL: 'info' } });
    try {
      await app.reset();
      const owner = await app.createAccount();
      const found = await app.request('GET', MISSING_LEAD, { key: owner.testKey, headers: { cookie: 'spa_session=secret-cookie-value' } });
      expect(found.status).toBe(404);
      const anonymous = await app.request('GET', '/v1/leads', { key: 'sk_test_wrong0123456789' });
      expect(anonymous.status).toBe(401);

      const entries = await eventually(() => {
        const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'request');
        expect(parsed.length).toBeGreaterThanOrEqual(2);
        return parsed;
      });
      const of = (response: HttpResponse) => entries.find((entry) => entry.requestId === response.headers.get('x-request-id'));
      expect(of(found)).toMatchObject({
        level: 30,
        requestId: expect.stringMatching(/^req_/),
        accountId: owner.account.id,
        livemode: false,
        method: 'GET',
        route: '/v1/leads/:id',
        status: 404,
        latencyMs: expect.any(Number),
      });
      expect(of(found)!.latencyMs as number).toBeGreaterThan(0);
      expect(of(anonymous)).toMatchObject({ route: '/v1/leads', status: 401, latencyMs: expect.any(Number) });
      expect(of(anonymous)!.accountId).toBeUndefined();

      const all = lines.join('\n');
      expect(all).not.toContain(owner.testKey);
      expect(all).not.toContain(owner.testKey.slice(-16));
      expect(all).not.toContain('sk_test_wrong0123456789');
      expect(all).not.toContain('secret-cookie-value');
      expect(all).not.toMatch(/bearer/i);
      expect(all).not.toContain('lead_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    } finally {
      await app.close();
    }
  });

  it('redacts authorization, cookies, tokens, passwords, secrets and credentials wherever a log object carries them', () => {
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write: (chunk, _enc, done) => void (lines.push(String(chunk)), done()) }) as never);
    logger.info({
      authorization: 'Bearer sk_test_a',
      headers: { authorization: 'Bearer sk_test_b', cookie: 'c=1' },
      req: { headers: { authorization: 'Bearer sk_test_c', cookie: 'c=2' } },
      password: 'p1',
      input: { password: 'p2', credentials: { apiKey: 'k' }, token: 't1' },
      secret: 's1',
      token: 't2',
      apiKey: 'k2',
      credentials: { x: 1 },
      variables: { input: { credentials: { y: 2 } } },
    });
    const entry = JSON.parse(lines[0]) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(lines[0]).not.toMatch(/sk_test|p1|p2|s1|t1|t2|"k"|k2|c=1|c=2/);
    expect(entry.headers.authorization).toBe('[redacted]');
    expect(entry.req.headers.cookie).toBe('[redacted]');
    expect(entry.variables.input.credentials).toBe('[redacted]');
  });
});

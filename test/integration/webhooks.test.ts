import { Webhook as StandardWebhook } from 'standardwebhooks';
import { LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { eventually, settled, WebhookReceiver } from '../helpers/receiver';

/** Fast retries so a test sees several attempts in well under a second each. */
const FAST_RETRIES = [0, 0.2, 0.2, 0.2, 0.2];

const leadBody = (n: number | string) => ({ company: `Acme ${n}`, contact_email: `buyer${n}-${Date.now()}@acme.test` });

interface Subscription {
  id: string;
  secret: string;
}

async function subscribe(app: TestApp, key: string, url: string, events: string[] = ['*']): Promise<Subscription> {
  const response = await app.request('POST', '/v1/webhooks', { key, body: { url, events } });
  expect(response.status).toBe(201);
  return response.body;
}

async function createLead(app: TestApp, key: string, n: number | string = 1): Promise<{ id: string }> {
  const response = await app.request('POST', '/v1/leads', { key, body: leadBody(n) });
  expect(response.status).toBe(201);
  return response.body;
}

async function attemptsOf(app: TestApp, key: string, webhookId: string) {
  const response = await app.graphql(
    `query ($id: ID!) { webhook(id: $id) { status disabledReason
        attempts(filter: { limit: 100 }) { data { attemptNumber responseStatus latencyMs error responseSnippet succeeded eventId deliveryId url } } } }`,
    { id: webhookId },
    key,
  );
  expect(response.body.errors).toBeUndefined();
  return response.body.data.webhook as {
    status: string;
    disabledReason: string | null;
    attempts: {
      data: Array<{
        attemptNumber: number;
        responseStatus: number | null;
        latencyMs: number;
        error: string | null;
        responseSnippet: string | null;
        succeeded: boolean;
        eventId: string;
        deliveryId: string;
        url: string;
      }>;
    };
  };
}

async function deliveryRows(app: TestApp, webhookId: string) {
  return app.orm.em
    .getConnection()
    .execute<Array<{ event_id: string; status: string; attempt_count: number }>>(
      'select event_id, status, attempt_count from webhook_deliveries where webhook_id = ? order by created_at',
      [webhookId],
    );
}

describe('webhooks', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;
  let owner: TestAccount;

  beforeAll(async () => {
    app = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: FAST_RETRIES, timeoutMs: 2_000 } });
  });
  afterAll(() => app.close());
  beforeEach(async () => {
    await app.reset();
    owner = await app.createAccount();
    receiver = await new WebhookReceiver().start();
  });
  afterEach(() => receiver?.stop());

  describe('subscriptions (CRUD)', () => {
    it('creates a subscription and shows its whsec_ secret only in the create response', async () => {
      const created = await app.request('POST', '/v1/webhooks', {
        key: owner.testKey,
        body: { url: receiver.url(), events: ['lead.created', 'deal.won'], description: 'CRM sync' },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        object: 'webhook',
        url: receiver.url(),
        events: ['lead.created', 'deal.won'],
        description: 'CRM sync',
        status: 'enabled',
        livemode: false,
      });
      expect(created.body.id).toMatch(/^wh_[0-9A-Z]{26}$/);
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      const list = await app.request('GET', '/v1/webhooks', { key: owner.testKey });
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0]).not.toHaveProperty('secret');
      expect(list.text).not.toContain(created.body.secret);
      // The stored secret is encrypted, not the value shown.
      const [row] = await app.orm.em.getConnection().execute('select secret_encrypted from webhooks where id = ?', [created.body.id]);
      expect(row.secret_encrypted).not.toContain(created.body.secret.slice(6));
    });

    it('refuses unknown event names, empty or repeated lists, bad URLs and unknown fields with 400', async () => {
      const post = (body: unknown) => app.request('POST', '/v1/webhooks', { key: owner.testKey, body });
      const unknown = await post({ url: receiver.url(), events: ['lead.created', 'lead.exploded'] });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'events' });
      expect(unknown.body.error.message).toMatch(/lead\.created/);
      expect((await post({ url: receiver.url(), events: [] })).body.error).toMatchObject({ code: 'parameter_invalid', param: 'events' });
      expect((await post({ url: receiver.url(), events: ['lead.created', 'lead.created'] })).body.error).toMatchObject({ param: 'events' });
      expect((await post({ url: 'ftp://example.com/x', events: ['*'] })).body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
      expect((await post({ url: 'not a url', events: ['*'] })).body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
      expect((await post({ events: ['*'] })).status).toBe(400);
      expect((await post({ url: receiver.url(), events: ['*'], secret: 'whsec_mine' })).body.error).toMatchObject({
        code: 'parameter_unknown',
        param: 'secret',
      });
      const list = await app.request('GET', '/v1/webhooks', { key: owner.testKey });
      expect(list.body.data).toEqual([]);
    });

    it('"*" stands alone: listing other names beside it keeps only "*"', async () => {
      const created = await app.request('POST', '/v1/webhooks', { key: owner.testKey, body: { url: receiver.url(), events: ['lead.created', '*'] } });
      expect(created.body.events).toEqual(['*']);
    });

    it('updates the URL, events, description or status; only the fields sent change', async () => {
      const sub = await subscribe(app, owner.testKey, receiver.url(), ['lead.created']);
      const moved = await app.request('PUT', `/v1/webhooks/${sub.id}`, { key: owner.testKey, body: { url: receiver.url('/v2') } });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({ url: receiver.url('/v2'), events: ['lead.created'], status: 'enabled' });
      expect(moved.body).not.toHaveProperty('secret');
      const events = await app.request('PUT', `/v1/webhooks/${sub.id}`, { key: owner.testKey, body: { events: ['deal.created'], status: 'disabled' } });
      expect(events.body).toMatchObject({ url: receiver.url('/v2'), events: ['deal.created'], status: 'disabled' });
      const bad = await app.request('PUT', `/v1/webhooks/${sub.id}`, { key: owner.testKey, body: { events: ['nope'] } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.param).toBe('events');
      const status = await app.request('PUT', `/v1/webhooks/${sub.id}`, { key: owner.testKey, body: { status: 'paused' } });
      expect(status.status).toBe(400);
      const unchanged = await app.request('GET', '/v1/webhooks', { key: owner.testKey });
      expect(unchanged.body.data[0]).toMatchObject({ events: ['deal.created'], status: 'disabled' });
    });

    it('deletes in the DELETE shape; afterwards the subscription is 404 and receives nothing', async () => {
      const sub = await subscribe(app, owner.testKey, receiver.url());
      const deleted = await app.request('DELETE', `/v1/webhooks/${sub.id}`, { key: owner.testKey });
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ id: sub.id, object: 'webhook', deleted: true });
      expect((await app.request('PUT', `/v1/webhooks/${sub.id}`, { key: owner.testKey, body: { status: 'enabled' } })).status).toBe(404);
      expect((await app.request('DELETE', `/v1/webhooks/${sub.id}`, { key: owner.testKey })).status).toBe(404);
      await createLead(app, owner.testKey);
      await settled(app); // the event was fanned out, and owed to no subscription
      expect(receiver.requests).toHaveLength(0);
    });

    it("keeps modes and accounts apart: another mode's or account's subscription is 404", async () => {
      const other = await app.createAccount();
      const live = await subscribe(app, owner.liveKey, receiver.url());
      const theirs = await subscribe(app, other.testKey, receiver.url());
      for (const id of [live.id, theirs.id]) {
        expect((await app.request('PUT', `/v1/webhooks/${id}`, { key: owner.testKey, body: { status: 'disabled' } })).status).toBe(404);
        expect((await app.request('DELETE', `/v1/webhooks/${id}`, { key: owner.testKey })).status).toBe(404);
      }
      expect((await app.request('GET', '/v1/webhooks', { key: owner.testKey })).body.data).toEqual([]);
      expect((await app.request('GET', '/v1/webhooks', { key: owner.liveKey })).body.data.map((w: { id: string }) => w.id)).toEqual([live.id]);
    });
  });

  describe('delivery', () => {
    it("POSTs the event, signed per Standard Webhooks; the library's own verifier accepts it", async () => {
      const sub = await subscribe(app, owner.testKey, receiver.url(), ['lead.created']);
      const lead = await createLead(app, owner.testKey);
      await eventually(() => expect(receiver.requests).toHaveLength(1));
      const [request] = receiver.requests;
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hook');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['user-agent']).toMatch(/^sales-pipeline-api-webhooks\//);

      const verified = new StandardWebhook(sub.secret).verify(request.body, request.headers as Record<string, string>) as Record<string, unknown>;
      const event = JSON.parse(request.body);
      expect(verified).toEqual(event);
      expect(request.headers['webhook-id']).toBe(event.id);
      expect(Number(request.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);

      expect(event).toMatchObject({ object: 'event', type: 'lead.created', api_version: 'v1', livemode: false });
      expect(event.id).toMatch(/^evt_[0-9A-Z]{26}$/);
      expect(event.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const current = await app.request('GET', `/v1/leads/${lead.id}`, { key: owner.testKey });
      expect(event.data).toEqual({ object: current.body, previous_attributes: {} });
      // GET /v1/events/{id} answers the very object that was delivered.
      expect((await app.request('GET', `/v1/events/${event.id}`, { key: owner.testKey })).body).toStrictEqual(event);

      // A forged or altered delivery fails the same verifier.
      const other = await subscribe(app, owner.testKey, receiver.url('/other'), ['deal.won']);
      expect(() => new StandardWebhook(other.secret).verify(request.body, request.headers as Record<string, string>)).toThrow();
      expect(() => new StandardWebhook(sub.secret).verify(request.body.replace('Acme', 'Evil'), request.headers as Record<string, string>)).toThrow();
    });

    it('sends each subscription only the events it names ("*" gets all)', async () => {
      const deals = await subscribe(app, owner.testKey, receiver.url('/deals'), ['deal.created']);
      const all = await subscribe(app, owner.testKey, receiver.url('/all'), ['*']);
      const leads = await subscribe(app, owner.testKey, receiver.url('/leads'), ['lead.created']);
      await createLead(app, owner.testKey);
      expect((await app.request('POST', '/v1/deals', { key: owner.testKey, body: { name: 'Big', value: 5000 } })).status).toBe(201);
      await eventually(() => expect(receiver.requests).toHaveLength(5));
      await settled(app); // nothing more is owed: nothing more arrives
      const typesAt = (path: string) =>
        receiver.requests
          .filter((r) => r.path === path)
          .map((r) => JSON.parse(r.body).type)
          .sort();
      expect(typesAt('/deals')).toEqual(['deal.created']);
      expect(typesAt('/leads')).toEqual(['lead.created']);
      expect(typesAt('/all')).toEqual(['deal.created', 'lead.created', 'lead.scored']);
      expect(new Set([deals.id, all.id, leads.id]).size).toBe(3);
    });

    it('sends test-mode events to test-mode subscriptions only, and live to live, never across accounts', async () => {
      const other = await app.createAccount();
      await subscribe(app, owner.testKey, receiver.url('/test'));
      await subscribe(app, owner.liveKey, receiver.url('/live'));
      await subscribe(app, other.testKey, receiver.url('/other'));
      const testLead = await createLead(app, owner.testKey, 'test');
      const liveLead = await createLead(app, owner.liveKey, 'live');
      await eventually(() => expect(receiver.requests).toHaveLength(4));
      await settled(app);
      const at = (path: string) => receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.body));
      expect(at('/test').map((e) => [e.livemode, e.data.object.id])).toEqual([
        [false, testLead.id],
        [false, testLead.id],
      ]);
      expect(at('/live').map((e) => [e.livemode, e.data.object.id])).toEqual([
        [true, liveLead.id],
        [true, liveLead.id],
      ]);
      expect(at('/other')).toEqual([]);
    });

    it('retries a failing endpoint on the schedule until it succeeds; every attempt is recorded', async () => {
      receiver.answer = (_request, index) => (index < 2 ? { status: 500, body: `boom ${index}` } : { status: 200, body: 'thanks' });
      const sub = await subscribe(app, owner.testKey, receiver.url(), ['lead.created']);
      await createLead(app, owner.testKey);
      await eventually(async () => expect((await deliveryRows(app, sub.id))[0]?.status).toBe('succeeded'));
      expect(receiver.requests).toHaveLength(3);
      expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
      const [delivery] = await deliveryRows(app, sub.id);
      expect(delivery.attempt_count).toBe(3);

      const { attempts } = await attemptsOf(app, owner.testKey, sub.id);
      expect(attempts.data.map((a) => [a.attemptNumber, a.responseStatus, a.succeeded])).toEqual([
        [3, 200, true],
        [2, 500, false],
        [1, 500, false],
      ]);
      expect(attempts.data[2]).toMatchObject({ responseSnippet: 'boom 0', error: 'answered 500', url: receiver.url() });
      expect(attempts.data[0]).toMatchObject({ responseSnippet: 'thanks', error: null, eventId: delivery.event_id });
      for (const attempt of attempts.data) expect(attempt.latencyMs).toBeGreaterThanOrEqual(0);
    });

    it('gives up once the schedule is used up', async () => {
      receiver.answer = () => ({ status: 503 });
      const sub = await subscribe(app, owner.testKey, receiver.url(), ['lead.created']);
      await createLead(app, owner.testKey);
      await eventually(async () => expect((await deliveryRows(app, sub.id))[0]?.status).toBe('failed'));
      await settled(app);
      expect(receiver.requests).toHaveLength(FAST_RETRIES.length);
      const webhook = await attemptsOf(app, owner.testKey, sub.id);
      expect(webhook.attempts.data).toHaveLength(FAST_RETRIES.length);
      // Nothing succeeded since that delivery's first attempt: the endpoint is disabled (webhook-fairness.test.ts).
      expect(webhook.status).toBe('disabled');
      expect(webhook.disabledReason).toMatch(/used up all 5 attempts of the retry schedule/);
    });

    it('410 Gone disables the subscription: no retry, nothing more sent until it is enabled again', async () => {
      receiver.answer = () => ({ status: 410, body: 'gone' });
      const sub = await subscribe(app, owner.testKey, receiver.url(), ['lead.created']);
      await createLead(app, owner.testKey, 1);
      await eventually(async () => expect((await attemptsOf(app, owner.testKey, sub.id)).status).toBe('disabled'));
      const disabled = await attemptsOf(app, owner.testKey, sub.id);
      expect(disabled.disabledReason).toMatch(/410/);
      expect(disabled.attempts.data).toHaveLength(1);
      await createLead(app, owner.testKey, 2);
      await settled(app);
      expect(receiver.requests).toHaveLength(1);
      const listed = await app.request('GET', '/v1/webhooks?status=disabled', { key: owner.testKey });
      expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual([sub.id]);

      receiver.answer = () => ({ status: 200 });
      const enabled = await app.request('PUT', `/v1/webhooks/${sub.id}`, { key: owner.testKey, body: { status: 'enabled' } });
      expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null });
      const third = await createLead(app, owner.testKey, 3);
      await eventually(() => expect(receiver.requests).toHaveLength(2));
      expect(JSON.parse(receiver.requests[1].body).data.object.id).toBe(third.id);
    });

    it('a receiver that is down for a while receives every event once it is back', async () => {
      const sub = await subscribe(app, owner.testKey, receiver.url(), ['lead.created']);
      await receiver.stop();
      const leads: Array<{ id: string }> = [];
      for (let i = 0; i < 5; i++) leads.push(await createLead(app, owner.testKey, i));
      // Attempts fail with connection refused meanwhile, and are recorded as such.
      await eventually(async () => {
        const { attempts } = await attemptsOf(app, owner.testKey, sub.id);
        expect(attempts.data.length).toBeGreaterThanOrEqual(5);
        expect(attempts.data.every((a) => a.responseStatus === null && /ECONNREFUSED/.test(a.error ?? ''))).toBe(true);
      });
      await receiver.start();
      await eventually(() => expect(new Set(receiver.events().map((e) => e.data.object.id))).toEqual(new Set(leads.map((l) => l.id))));
      await eventually(async () => expect((await deliveryRows(app, sub.id)).every((d) => d.status === 'succeeded')).toBe(true));
    });
  });

  describe('with a slow receiver', () => {
    let slow: TestApp;
    beforeAll(async () => {
      // Only this app's dispatcher may send here: the outer one (2 s timeout) would wait the answer out.
      await app.dispatcher!.stop();
      slow = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: [0, 0.1], timeoutMs: 300 } });
    });
    afterAll(async () => {
      await slow.close();
      app.dispatcher!.start();
    });

    it('an answer later than the timeout is a failed attempt, and the retry succeeds', async () => {
      const account = await slow.createAccount();
      receiver.answer = (_request, index) => (index === 0 ? { status: 200, delayMs: 1_000 } : { status: 200 });
      const sub = await subscribe(slow, account.testKey, receiver.url(), ['lead.created']);
      await createLead(slow, account.testKey);
      await eventually(async () => expect((await deliveryRows(slow, sub.id))[0]?.status).toBe('succeeded'));
      const { attempts } = await attemptsOf(slow, account.testKey, sub.id);
      expect(attempts.data.map((a) => a.succeeded)).toEqual([true, false]);
      expect(attempts.data[1]).toMatchObject({ responseStatus: null, error: 'timed out after 300 ms' });
      expect(attempts.data[1].latencyMs).toBeGreaterThanOrEqual(290);
      expect(attempts.data[1].latencyMs).toBeLessThan(1_000);
    });
  });
});

describe('webhook dispatchers together and across restarts', () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterEach(() => receiver?.stop());

  it('two dispatchers on one database deliver each event exactly once to a healthy receiver', async () => {
    const first = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: [0, 5], concurrency: 4, pollIntervalMs: 20 } });
    const second = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: [0, 5], concurrency: 4, pollIntervalMs: 20 } });
    try {
      await first.reset();
      const account = await first.createAccount();
      await subscribe(first, account.testKey, receiver.url(), ['lead.created']);
      const made = await Promise.all(Array.from({ length: 40 }, (_, i) => createLead(i % 2 ? first : second, account.testKey, i)));
      await eventually(() => expect(receiver.requests.length).toBeGreaterThanOrEqual(40));
      await settled(first); // nothing more is owed: no duplicate trails in
      const ids = receiver.requests.map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
      expect(new Set(receiver.events().map((e) => e.data.object.id))).toEqual(new Set(made.map((l) => l.id)));
      await eventually(async () => {
        const rows = await first.orm.em
          .getConnection()
          .execute<Array<{ status: string; attempt_count: number }>>('select status, attempt_count from webhook_deliveries');
        expect(rows).toHaveLength(40);
        expect(rows.every((row) => row.status === 'succeeded' && row.attempt_count === 1)).toBe(true);
      });
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('stopping mid-delivery loses nothing: what was not sent goes out after restart', async () => {
    receiver.answer = () => ({ status: 200, delayMs: 150 });
    const before = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: [0, 5], concurrency: 1 } });
    await before.reset();
    const account = await before.createAccount();
    await subscribe(before, account.testKey, receiver.url(), ['lead.created']);
    const made: Array<{ id: string }> = [];
    for (let i = 0; i < 8; i++) made.push(await createLead(before, account.testKey, i));
    await eventually(() => expect(receiver.requests.length).toBeGreaterThanOrEqual(1));
    await before.close(); // waits for the attempt under way, sends nothing more
    const sentBefore = receiver.requests.length;
    expect(sentBefore).toBeLessThan(8);

    const after = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: [0, 5], concurrency: 4 } });
    try {
      await eventually(() => expect(new Set(receiver.events().map((e) => e.data.object.id))).toEqual(new Set(made.map((l) => l.id))));
      await settled(after);
      expect(receiver.requests).toHaveLength(8); // the restart re-sent nothing already delivered
    } finally {
      await after.close();
    }
  });

  it('a claim held by a dispatcher that died expires, and another dispatcher sends it', async () => {
    const app = await startTestApp({ env: LOCAL_RECEIVERS });
    await app.reset();
    const account = await app.createAccount();
    await subscribe(app, account.testKey, receiver.url(), ['lead.created']);
    const lead = await createLead(app, account.testKey);
    await app.close();
    // A real dispatcher fans the event out (with no room to send), then stops.
    const fanOutOnly = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { concurrency: 0 } });
    const knex = fanOutOnly.orm.em.getKnex();
    await eventually(async () => expect(await knex('webhook_deliveries').select('status')).toEqual([{ status: 'pending' }]));
    await fanOutOnly.close();
    // The claim a dispatcher with a 1 s lease makes before sending; then it dies without sending.
    const dead = await startTestApp({ env: LOCAL_RECEIVERS });
    const claimed = await dead.orm.em.getKnex().raw<{ rows: Array<{ lease_ends_ms: string }> }>(
      `update webhook_deliveries set attempt_count = attempt_count + 1, leased_at = now(), next_attempt_at = now() + interval '1 second'
       returning extract(epoch from next_attempt_at) * 1000 as lease_ends_ms`,
    );
    const leaseEnds = Number(claimed.rows[0].lease_ends_ms);
    await dead.close();

    const survivor = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: [0, 5] } });
    try {
      await eventually(() => expect(receiver.events().map((e) => e.data.object.id)).toEqual([lead.id]));
      // Held by the dead one's lease until it ran out (whenever the survivor started).
      expect(receiver.requests[0].receivedAt).toBeGreaterThanOrEqual(leaseEnds);
      await eventually(async () =>
        expect(await survivor.orm.em.getConnection().execute('select status, attempt_count from webhook_deliveries')).toEqual([
          { status: 'succeeded', attempt_count: 2 },
        ]),
      );
    } finally {
      await survivor.close();
    }
  });
});

describe('the address guard at delivery time', () => {
  it('refuses to send when the host has come to resolve to a private address since the subscription was made', async () => {
    const receiver = await new WebhookReceiver().start();
    const answers: Record<string, string> = { 'rebind.example': '93.184.216.34' };
    const app = await startTestApp({
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' },
      resolveHost: async (hostname) => {
        const address = answers[hostname];
        if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        return [{ address, family: address.includes(':') ? 6 : 4 }];
      },
      webhooks: { retrySchedule: [0] },
    });
    try {
      await app.reset();
      const account = await app.createAccount();
      const port = new URL(receiver.url()).port;
      const sub = await subscribe(app, account.testKey, `http://rebind.example:${port}/hook`, ['lead.created']);
      answers['rebind.example'] = '127.0.0.1'; // the DNS record now points inside
      await createLead(app, account.testKey);
      const { attempts } = await eventually(async () => {
        const webhook = await attemptsOf(app, account.testKey, sub.id);
        expect(webhook.attempts.data).toHaveLength(1);
        return webhook;
      });
      expect(attempts.data[0]).toMatchObject({ responseStatus: null, succeeded: false });
      expect(attempts.data[0].error).toMatch(/127\.0\.0\.1.*non-public/);
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await app.close();
      await receiver.stop();
    }
  });
});

import { LOCAL_RECEIVERS, startTestApp, TestApp } from '../helpers/app';
import { eventually, WebhookReceiver } from '../helpers/receiver';
import { CONDITION_TIMEOUT_MS } from '../helpers/timeouts';

/**
 * One tenant's webhooks must not delay another's (an outside penetration test held one account's
 * delivery for more than 100 s with 20 subscriptions to a receiver that sleeps): claims are bounded
 * per endpoint and per account across instances, failing endpoints back off, an endpoint that
 * fails for a whole retry schedule is disabled, and an account has at most 16 enabled
 * subscriptions per mode. Every wait below waits for a condition, with a deadline.
 */

const CAP_MESSAGE = /at most 16 enabled webhook subscriptions per account and mode/;

let leadCounter = 0;

async function subscribe(app: TestApp, key: string, url: string, events: string[] = ['lead.created']): Promise<{ id: string }> {
  const response = await app.request('POST', '/v1/webhooks', { key, body: { url, events } });
  expect(response.status).toBe(201);
  return response.body;
}

async function createLead(app: TestApp, key: string, company = 'Acme'): Promise<{ id: string }> {
  leadCounter += 1;
  const response = await app.request('POST', '/v1/leads', { key, body: { company, contact_email: `buyer${leadCounter}-${Date.now()}@acme.test` } });
  expect(response.status).toBe(201);
  return response.body;
}

function sql<T>(app: TestApp, query: string, params: unknown[] = []): Promise<T[]> {
  return app.orm.em.getConnection().execute<T[]>(query, params);
}

const endpointState = async (app: TestApp, webhookId: string) =>
  (
    await sql<{ status: string; disabled_reason: string | null; consecutive_failures: number; backoff_until: string | null }>(
      app,
      'select status, disabled_reason, consecutive_failures, backoff_until from webhooks where id = ?',
      [webhookId],
    )
  )[0];

const deliveriesOf = (app: TestApp, webhookId: string) =>
  sql<{ status: string; attempt_count: number }>(app, 'select status, attempt_count from webhook_deliveries where webhook_id = ? order by created_at, id', [
    webhookId,
  ]);

describe('fair webhook delivery', () => {
  let receiver: WebhookReceiver;
  const apps: TestApp[] = [];
  const start = async (options: Parameters<typeof startTestApp>[0]) => {
    const app = await startTestApp({ env: LOCAL_RECEIVERS, ...options });
    apps.push(app);
    return app;
  };

  beforeEach(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterEach(async () => {
    // First the receiver, which ends the requests it holds open, so the dispatchers stop at once.
    await receiver.stop();
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  /** Creates a lead in the quiet account and waits for its delivery at /quiet: how long it took, in ms. */
  async function quietDelivery(app: TestApp, key: string): Promise<number> {
    const created = Date.now();
    await createLead(app, key, 'Quiet');
    const arrived = await eventually(
      () => {
        const request = receiver.requests.find((received) => received.path === '/quiet');
        expect(request).toBeDefined();
        return request!;
      },
      CONDITION_TIMEOUT_MS,
      10,
    );
    return arrived.receivedAt - created;
  }

  it("delivers one account's event while another's endpoints hang, without waiting for their slots", async () => {
    // The production shape: 8 slots, and a timeout long enough that hanging attempts hold their slots throughout.
    const app = await start({ webhooks: { timeoutMs: 10_000, retrySchedule: [0, 60] } });
    await app.reset();
    const noisy = await app.createAccount({ name: 'Noisy' });
    const quiet = await app.createAccount({ name: 'Quiet' });
    const isNoisy = (path: string) => path.startsWith('/noisy/');
    let noisyOpenWhenQuietArrived = -1;
    let noisySentWhenQuietArrived = -1;
    receiver.answer = (request) => {
      if (isNoisy(request.path)) return { status: 200, hang: true };
      noisyOpenWhenQuietArrived = receiver.openNow(isNoisy);
      noisySentWhenQuietArrived = receiver.requests.filter((received) => isNoisy(received.path)).length;
      return { status: 204 };
    };
    for (let i = 0; i < 16; i++) await subscribe(app, noisy.testKey, receiver.url(`/noisy/${i}`), ['*']);
    await subscribe(app, quiet.testKey, receiver.url('/quiet'));
    // 3 leads, 2 events each, 16 subscriptions: 96 deliveries to endpoints that never answer.
    for (let i = 0; i < 3; i++) await createLead(app, noisy.testKey, `Noisy ${i}`);
    // The noisy account holds all the slots it may: half of the 8.
    await eventually(() => expect(receiver.openNow(isNoisy)).toBe(4));

    const latencyMs = await quietDelivery(app, quiet.testKey);
    console.log(
      `noisy neighbour: the quiet account's delivery arrived ${latencyMs} ms after its lead was created; the noisy account had ${noisyOpenWhenQuietArrived} attempts hanging at that moment`,
    );
    // It did not wait for a slot of the noisy account to free up (their attempts hang for 10 s): when
    // it arrived, the noisy account's first 4 attempts were all it had sent, and all still open.
    expect(noisySentWhenQuietArrived).toBe(4);
    expect(noisyOpenWhenQuietArrived).toBe(4);
    // Never more than the account's share, nor more than 2 at one endpoint.
    expect(receiver.peakOpen(isNoisy)).toBe(4);
    for (let i = 0; i < 16; i++) expect(receiver.peakOpen((path) => path === `/noisy/${i}`)).toBeLessThanOrEqual(2);
  });

  it("does not let one account's backlog of thousands of overdue deliveries hide another's", async () => {
    const app = await start({ webhooks: { timeoutMs: 10_000, retrySchedule: [0, 60] } });
    await app.reset();
    const noisy = await app.createAccount({ name: 'Backlogged' });
    const quiet = await app.createAccount({ name: 'Quiet' });
    let backlogSentWhenQuietArrived = -1;
    receiver.answer = (request) => {
      if (request.path === '/backlog') return { status: 200, hang: true };
      backlogSentWhenQuietArrived = receiver.requests.filter((received) => received.path === '/backlog').length;
      return { status: 204 };
    };
    const backlog = await subscribe(app, noisy.testKey, receiver.url('/backlog'));
    await subscribe(app, quiet.testKey, receiver.url('/quiet'));
    await createLead(app, noisy.testKey, 'Backlogged');
    // 3,000 more of its events owed to that endpoint, overdue by an hour: older than anything the quiet account will owe.
    const [event] = await sql<{ id: string }>(app, "select id from events where account_id = ? and type = 'lead.created'", [noisy.account.id]);
    // Written with their work (the deliveries below), so taken off the fan-out's queue in the same transaction, as a webhook.test event is.
    await app.orm.em.getKnex().transaction(async (trx) => {
      await trx.raw(
        `insert into events (id, created_at, updated_at, account_id, livemode, type, api_version, data)
         select 'evt_backlog_' || g, e.created_at, e.updated_at, e.account_id, e.livemode, e.type, e.api_version, e.data
           from events e cross join generate_series(1, 3000) g where e.id = ?`,
        [event.id],
      );
      await trx.raw(`delete from event_fan_outs where event_id like 'evt\\_backlog\\_%'`);
    });
    await sql(
      app,
      `insert into webhook_deliveries (id, created_at, updated_at, account_id, livemode, event_id, webhook_id, status, attempt_count, next_attempt_at)
       select 'whdel_backlog_' || g, now(), now(), ?, false, 'evt_backlog_' || g, ?, 'pending', 0, now() - interval '1 hour'
         from generate_series(1, 3000) g`,
      [noisy.account.id, backlog.id],
    );
    await eventually(() => expect(receiver.openNow((path) => path === '/backlog')).toBe(2));

    const latencyMs = await quietDelivery(app, quiet.testKey);
    console.log(`backlog: the quiet account's delivery arrived ${latencyMs} ms after its lead was created, behind 3,001 overdue deliveries of another account`);
    // Not behind the backlog: the endpoint's first 2 attempts (hanging for 10 s) were all it had been sent.
    expect(backlogSentWhenQuietArrived).toBe(2);
    expect(receiver.peakOpen((path) => path === '/backlog')).toBe(2);
  });

  it('keeps at most 2 attempts at one endpoint and half the slots for one account, counted across instances', async () => {
    const options = { webhooks: { timeoutMs: 1_000, retrySchedule: [0, 60] } };
    const first = await start(options);
    const second = await start(options);
    await first.reset();
    const account = await first.createAccount();
    receiver.answer = () => ({ status: 200, hang: true });
    const paths = ['/slow/1', '/slow/2', '/slow/3'];
    for (const path of paths) await subscribe(first, account.testKey, receiver.url(path));
    for (let i = 0; i < 8; i++) await createLead(i % 2 ? first : second, account.testKey, `Slow ${i}`);
    // Several rounds of attempts, each ended by the timeout, taken by both dispatchers (16 slots between them).
    await eventually(() => expect(receiver.requests.length).toBeGreaterThanOrEqual(12), CONDITION_TIMEOUT_MS, 100);
    const peaks = paths.map((path) => receiver.peakOpen((received) => received === path));
    expect(Math.max(...peaks)).toBe(2);
    expect(receiver.peakOpen()).toBe(4);
    // Each attempt was claimed once: the receiver saw as many requests as were counted.
    await eventually(async () => {
      const [{ attempts }] = await sql<{ attempts: number }>(first, 'select cast(sum(attempt_count) as int) as attempts from webhook_deliveries');
      expect(attempts).toBe(receiver.requests.length);
    });
  });

  it("backs off an endpoint that keeps failing, without using up its deliveries' attempts; a success resets it", async () => {
    const app = await start({ webhooks: { retrySchedule: [0, ...Array(9).fill(0.05)], backoffBaseMs: 400, backoffMaxMs: 1_600 } });
    await app.reset();
    const account = await app.createAccount();
    receiver.answer = () => ({ status: 503, body: 'down' });
    const sub = await subscribe(app, account.testKey, receiver.url());
    await createLead(app, account.testKey);

    await eventually(() => expect(receiver.requests.length).toBeGreaterThanOrEqual(5));
    receiver.answer = () => ({ status: 200 });
    await eventually(async () => expect((await deliveriesOf(app, sub.id))[0].status).toBe('succeeded'));
    // The schedule alone would have retried every 50 ms; the endpoint's backoff spaced the attempts
    // by 400, 800, 1600 and 1600 ms (the cap) after each failure.
    const arrivals = receiver.requests.map((request) => request.receivedAt);
    const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]);
    const failures = arrivals.length - 1;
    for (let i = 0; i < failures; i++) expect(gaps[i]).toBeGreaterThanOrEqual(Math.min(400 * 2 ** i, 1_600));
    // Waiting out a backoff used no attempt: one per request.
    expect((await deliveriesOf(app, sub.id))[0].attempt_count).toBe(arrivals.length);
    await eventually(async () => expect(await endpointState(app, sub.id)).toMatchObject({ status: 'enabled', consecutive_failures: 0, backoff_until: null }));

    // After the success, the next failure starts from the first step again.
    receiver.answer = () => ({ status: 500 });
    await createLead(app, account.testKey);
    await eventually(async () => expect((await endpointState(app, sub.id)).consecutive_failures).toBe(1));
    const [{ pause_ms }] = await sql<{ pause_ms: number }>(
      app,
      `select cast(extract(epoch from w.backoff_until - a.created_at) * 1000 as int) as pause_ms
         from webhooks w join webhook_attempts a on a.webhook_id = w.id where w.id = ? order by a.created_at desc limit 1`,
      [sub.id],
    );
    expect(pause_ms).toBeGreaterThan(300);
    expect(pause_ms).toBeLessThanOrEqual(401); // both rounded to the millisecond
  });

  it('disables an endpoint that fails for its whole retry schedule, and cancels what it was owed', async () => {
    const app = await start({ webhooks: { retrySchedule: [0, 1], backoffBaseMs: 300, backoffMaxMs: 5_000 } });
    await app.reset();
    const account = await app.createAccount();
    receiver.answer = () => ({ status: 500, body: 'down' });
    const sub = await subscribe(app, account.testKey, receiver.url());
    for (let i = 0; i < 3; i++) await createLead(app, account.testKey, `Doomed ${i}`);

    await eventually(async () => expect((await endpointState(app, sub.id)).status).toBe('disabled'));
    const listed = await app.request('GET', '/v1/webhooks', { key: account.testKey });
    expect(listed.body.data[0]).toMatchObject({ id: sub.id, status: 'disabled' });
    expect(listed.body.data[0].disabled_reason).toMatch(/no delivery .* has succeeded since .*all 2 attempts of the retry schedule.*answered 500/);
    await eventually(async () => {
      const deliveries = await deliveriesOf(app, sub.id);
      expect(deliveries.filter((delivery) => delivery.status === 'pending')).toEqual([]);
      // The first to use up its attempts disabled the endpoint; the others were canceled.
      expect(deliveries.filter((delivery) => delivery.status === 'failed')).toEqual([{ status: 'failed', attempt_count: 2 }]);
      expect(deliveries.filter((delivery) => delivery.status === 'canceled')).toHaveLength(2);
    });

    // Enabling it again clears the reason and the backoff.
    const enabled = await app.request('PUT', `/v1/webhooks/${sub.id}`, { key: account.testKey, body: { status: 'enabled' } });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null });
    expect(await endpointState(app, sub.id)).toMatchObject({ consecutive_failures: 0, backoff_until: null });
  });

  it('keeps an endpoint that failed one delivery for its whole schedule but succeeded meanwhile', async () => {
    const app = await start({ webhooks: { retrySchedule: [0, 1] } });
    await app.reset();
    const account = await app.createAccount();
    receiver.answer = (request) => (request.body.includes('"Unlucky"') ? { status: 500 } : { status: 200 });
    const sub = await subscribe(app, account.testKey, receiver.url());
    await createLead(app, account.testKey, 'Unlucky');
    await eventually(() => expect(receiver.requests).toHaveLength(1));
    await createLead(app, account.testKey, 'Lucky');
    await eventually(async () => expect((await deliveriesOf(app, sub.id)).map((delivery) => delivery.status)).toEqual(['failed', 'succeeded']));
    expect(await endpointState(app, sub.id)).toMatchObject({ status: 'enabled', disabled_reason: null });
  });
});

describe('at most 16 enabled webhook subscriptions per account and mode', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: LOCAL_RECEIVERS });
  });
  afterAll(() => app.close());
  beforeEach(() => app.reset());

  const CREATE = 'mutation ($input: WebhookCreateInput!) { createWebhook(input: $input) { id status } }';
  const UPDATE = 'mutation ($id: ID!, $input: WebhookUpdateInput!) { updateWebhook(id: $id, input: $input) { id status } }';
  const url = (i: number | string) => `http://127.0.0.1:9/hooks/${i}`;

  it('refuses a 17th on REST and GraphQL alike; a disabled one does not count, re-enabling it over the cap is refused', async () => {
    const account = await app.createAccount();
    const made: Array<{ id: string }> = [];
    for (let i = 0; i < 16; i++) made.push(await subscribe(app, account.testKey, url(i)));

    const rest = await app.request('POST', '/v1/webhooks', { key: account.testKey, body: { url: url(17), events: ['*'] } });
    expect(rest.status).toBe(400);
    expect(rest.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid' });
    expect(rest.body.error.message).toMatch(CAP_MESSAGE);
    const graphql = await app.graphql(CREATE, { input: { url: url(17), events: ['*'] } }, account.testKey);
    expect(graphql.body.data?.createWebhook ?? null).toBeNull();
    expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid' });
    expect(graphql.body.errors[0].message).toMatch(CAP_MESSAGE);
    // The other mode has its own 16.
    await subscribe(app, account.liveKey, url('live'));

    // Disabled subscriptions do not count: one disabled makes room for a new one…
    const disabled = await app.request('PUT', `/v1/webhooks/${made[0].id}`, { key: account.testKey, body: { status: 'disabled' } });
    expect(disabled.status).toBe(200);
    await subscribe(app, account.testKey, url('replacement'));
    // … and enabling it again would make 17.
    const again = await app.request('PUT', `/v1/webhooks/${made[0].id}`, { key: account.testKey, body: { status: 'enabled' } });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ code: 'parameter_invalid', param: 'status' });
    expect(again.body.error.message).toMatch(CAP_MESSAGE);
    const againGraphql = await app.graphql(UPDATE, { id: made[0].id, input: { status: 'enabled' } }, account.testKey);
    expect(againGraphql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', param: 'status' });
    expect(againGraphql.body.errors[0].message).toMatch(CAP_MESSAGE);
    // Other changes to an enabled one, and to the disabled one, are still fine.
    expect((await app.request('PUT', `/v1/webhooks/${made[1].id}`, { key: account.testKey, body: { description: 'still fine' } })).status).toBe(200);
    expect((await app.request('PUT', `/v1/webhooks/${made[0].id}`, { key: account.testKey, body: { url: url('moved') } })).body.status).toBe('disabled');

    const [{ enabled }] = await sql<{ enabled: number }>(
      app,
      "select cast(count(*) as int) as enabled from webhooks where account_id = ? and livemode = false and status = 'enabled'",
      [account.account.id],
    );
    expect(enabled).toBe(16);
  });

  it('lets no 17th through when creates race', async () => {
    const account = await app.createAccount();
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => app.request('POST', '/v1/webhooks', { key: account.testKey, body: { url: url(i), events: ['*'] } })),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(16);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(refused).toHaveLength(8);
    for (const answer of refused) expect(answer.body.error.message).toMatch(CAP_MESSAGE);
    const [{ enabled }] = await sql<{ enabled: number }>(
      app,
      "select cast(count(*) as int) as enabled from webhooks where account_id = ? and status = 'enabled'",
      [account.account.id],
    );
    expect(enabled).toBe(16);
  });
});

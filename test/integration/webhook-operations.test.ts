import { Webhook as StandardWebhook } from 'standardwebhooks';
import { LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { eventually, settled, WebhookReceiver } from '../helpers/receiver';
import type { ReceivedRequest } from '../helpers/receiver';

/** Fast retries so a failed first attempt is retried at once. */
const FAST_RETRIES = [0, 0.1, 0.1];

const verify = (secret: string, request: ReceivedRequest) => new StandardWebhook(secret).verify(request.body, request.headers as Record<string, string>);

describe('operating a webhook endpoint: attempts, test, resend, roll_secret', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;
  let owner: TestAccount;

  const post = (path: string, body?: unknown, key = owner.testKey, headers?: Record<string, string>) => app.request('POST', path, { key, body, headers });
  const get = (path: string, key = owner.testKey) => app.request('GET', path, { key });
  const subscribe = async (events: string[] = ['*'], url = receiver.url()) => {
    const response = await post('/v1/webhooks', { url, events });
    expect(response.status).toBe(201);
    return response.body as { id: string; secret: string };
  };
  const createLead = async (key = owner.testKey) => {
    const response = await post('/v1/leads', { company: 'Acme', contact_email: `buyer-${Date.now()}-${Math.random()}@acme.test` }, key);
    expect(response.status).toBe(201);
    return response.body as { id: string };
  };
  const eventAbout = async (objectId: string, key = owner.testKey) =>
    (await get(`/v1/events?type=lead.created&object_id=${objectId}`, key)).body.data[0] as { id: string; type: string };
  beforeAll(async () => {
    app = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: FAST_RETRIES, timeoutMs: 2_000 } });
  });
  // Each test has an account and a receiver of its own: nothing of one test shows in another's.
  beforeEach(async () => {
    [owner, receiver] = await Promise.all([app.createAccount(), new WebhookReceiver().start()]);
  });
  afterEach(() => receiver.stop());
  afterAll(() => app.close());

  describe('GET /v1/webhooks/{id}/attempts', () => {
    it('lists every attempt newest first in keyset pages, filtered by status, on REST and GraphQL', async () => {
      receiver.answer = (_request, index) => (index === 0 ? { status: 500, body: 'boom' } : { status: 200, body: 'thanks' });
      const hook = await subscribe(['lead.created']);
      const lead = await createLead();
      await eventually(() => expect(receiver.requests).toHaveLength(2));
      const event = await eventAbout(lead.id);
      const all = await eventually(async () => {
        const response = await get(`/v1/webhooks/${hook.id}/attempts`);
        expect(response.body.data).toHaveLength(2);
        return response;
      });
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
      const [second, first] = all.body.data;
      expect(second).toMatchObject({ object: 'webhook_attempt', event_id: event.id, attempt_number: 2, response_status: 200, error: null, succeeded: true });
      expect(second.response_snippet).toBe('thanks');
      expect(first).toMatchObject({
        event_id: event.id,
        attempt_number: 1,
        response_status: 500,
        error: 'answered 500',
        response_snippet: 'boom',
        succeeded: false,
      });
      expect(first.id).toMatch(/^whatt_/);
      expect(typeof first.latency_ms).toBe('number');
      expect(first.created_at <= second.created_at).toBe(true);

      expect((await get(`/v1/webhooks/${hook.id}/attempts?status=failed`)).body.data.map((a: { id: string }) => a.id)).toEqual([first.id]);
      expect((await get(`/v1/webhooks/${hook.id}/attempts?status=succeeded`)).body.data.map((a: { id: string }) => a.id)).toEqual([second.id]);
      const page1 = await get(`/v1/webhooks/${hook.id}/attempts?limit=1`);
      expect(page1.body).toMatchObject({ has_more: true, data: [{ id: second.id }] });
      const page2 = await get(`/v1/webhooks/${hook.id}/attempts?limit=1&cursor=${page1.body.next_cursor}`);
      expect(page2.body).toMatchObject({ has_more: false, next_cursor: null, data: [{ id: first.id }] });

      const bad = await get(`/v1/webhooks/${hook.id}/attempts?status=pending`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'status' });
      expect((await get(`/v1/webhooks/${hook.id}/attempts?limit=0`)).status).toBe(400);
      expect((await get('/v1/webhooks/wh_nope/attempts')).body.error).toMatchObject({ code: 'resource_missing' });

      const gql = await app.graphql(
        `query ($id: ID!) { webhookAttempts(id: $id, filter: { status: failed }) { object hasMore data { id eventId attemptNumber responseStatus } } }`,
        { id: hook.id },
        owner.testKey,
      );
      expect(gql.body).toEqual({
        data: { webhookAttempts: { object: 'list', hasMore: false, data: [{ id: first.id, eventId: event.id, attemptNumber: 1, responseStatus: 500 }] } },
      });
    });
  });

  describe('POST /v1/webhooks/{id}/test', () => {
    it('sends a signed webhook.test event to that endpoint only and answers with the event', async () => {
      const hook = await subscribe(['lead.created']);
      const other = await new WebhookReceiver().start();
      try {
        await subscribe(['*'], other.url());
        const sent = await post(`/v1/webhooks/${hook.id}/test`);
        expect(sent.status).toBe(200);
        expect(sent.body).toMatchObject({ object: 'event', type: 'webhook.test', livemode: false, api_version: 'v1' });
        expect(sent.body.data.object).toMatchObject({ id: hook.id, object: 'webhook' });
        expect(sent.body.data.object).not.toHaveProperty('secret');
        expect((await get(`/v1/events/${sent.body.id}`)).body).toEqual(sent.body);
        // Written with its one delivery, so never on the fan-out's queue (which its insert put it on).
        expect(await app.orm.em.getKnex()('event_fan_outs').where({ event_id: sent.body.id })).toEqual([]);

        await eventually(() => expect(receiver.requests).toHaveLength(1));
        const [request] = receiver.requests;
        expect(request.headers['webhook-id']).toBe(sent.body.id);
        expect(verify(hook.secret, request)).toEqual(sent.body);
        await settled(app);
        expect(other.requests).toEqual([]);
        const attempts = await get(`/v1/webhooks/${hook.id}/attempts`);
        expect(attempts.body.data).toMatchObject([{ event_id: sent.body.id, attempt_number: 1, succeeded: true }]);
      } finally {
        await other.stop();
      }
    });

    it('is not a type a subscription can name, refuses a disabled endpoint, and replays under an Idempotency-Key', async () => {
      const refused = await post('/v1/webhooks', { url: receiver.url(), events: ['webhook.test'] });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'parameter_invalid', param: 'events' });
      expect(refused.body.error.message).not.toContain('webhook.test');

      const hook = await subscribe();
      const headers = { 'idempotency-key': `test-${hook.id}` };
      const first = await post(`/v1/webhooks/${hook.id}/test`, undefined, owner.testKey, headers);
      const again = await post(`/v1/webhooks/${hook.id}/test`, undefined, owner.testKey, headers);
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      expect((await get('/v1/events?type=webhook.test')).body.data).toHaveLength(1);

      expect((await app.request('PUT', `/v1/webhooks/${hook.id}`, { key: owner.testKey, body: { status: 'disabled' } })).status).toBe(200);
      const disabled = await post(`/v1/webhooks/${hook.id}/test`);
      expect(disabled.status).toBe(409);
      expect(disabled.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_conflict' });

      const gql = await app.graphql(`mutation ($id: ID!) { testWebhook(id: $id) { id } }`, { id: 'wh_missing' }, owner.testKey);
      expect(gql.body.errors[0].extensions.code).toBe('NOT_FOUND');
    });
  });

  describe('POST /v1/webhooks/{id}/resend', () => {
    it('delivers the event again now: a new attempt with the same webhook-id', async () => {
      const hook = await subscribe(['lead.created']);
      const lead = await createLead();
      await eventually(() => expect(receiver.requests).toHaveLength(1));
      const event = await eventAbout(lead.id);
      const resent = await post(`/v1/webhooks/${hook.id}/resend`, { event_id: event.id });
      expect(resent.status).toBe(200);
      expect(resent.body).toMatchObject({ id: event.id, object: 'event', type: 'lead.created' });
      await eventually(() => expect(receiver.requests).toHaveLength(2));
      expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
      expect(verify(hook.secret, receiver.requests[1])).toMatchObject({ id: event.id });
      const attempts = await eventually(async () => {
        const response = await get(`/v1/webhooks/${hook.id}/attempts`);
        expect(response.body.data).toHaveLength(2);
        return response.body.data as Array<{ event_id: string; attempt_number: number }>;
      });
      expect(attempts.map((a) => [a.event_id, a.attempt_number])).toEqual([
        [event.id, 2],
        [event.id, 1],
      ]);
    });

    it('sends an older event the endpoint subscribes to, which it was never owed', async () => {
      const lead = await createLead();
      const event = await eventAbout(lead.id);
      const hook = await subscribe(['lead.created']);
      await settled(app);
      expect(receiver.requests).toEqual([]);
      const resent = await app.graphql(
        `mutation ($id: ID!, $input: WebhookResendInput!) { resendWebhookEvent(id: $id, input: $input) { id type } }`,
        { id: hook.id, input: { eventId: event.id } },
        owner.testKey,
      );
      expect(resent.body).toEqual({ data: { resendWebhookEvent: { id: event.id, type: 'lead.created' } } });
      await eventually(() => expect(receiver.requests).toHaveLength(1));
      expect(receiver.requests[0].headers['webhook-id']).toBe(event.id);
    });

    it('answers 404 for an unknown or foreign event and 400 for one the endpoint does not receive', async () => {
      const hook = await subscribe(['deal.won']);
      const own = await eventAbout((await createLead()).id);
      const stranger = await app.createAccount();
      const foreign = await eventAbout((await createLead(stranger.testKey)).id, stranger.testKey);
      const liveEvent = await eventAbout((await createLead(owner.liveKey)).id, owner.liveKey);
      for (const eventId of ['evt_missing', foreign.id, liveEvent.id, 'not an id']) {
        const response = await post(`/v1/webhooks/${hook.id}/resend`, { event_id: eventId });
        expect([eventId, response.status, response.body.error]).toEqual([
          eventId,
          404,
          expect.objectContaining({ code: 'resource_missing', param: 'event_id' }),
        ]);
      }
      const unsubscribed = await post(`/v1/webhooks/${hook.id}/resend`, { event_id: own.id });
      expect(unsubscribed.status).toBe(400);
      expect(unsubscribed.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'event_id' });
      expect(unsubscribed.body.error.message).toContain('lead.created');
      for (const body of [{}, { event_id: ['x'] }, { event_id: own.id, extra: 1 }]) {
        const response = await post(`/v1/webhooks/${hook.id}/resend`, body);
        expect([JSON.stringify(body), response.status]).toEqual([JSON.stringify(body), 400]);
      }
      await settled(app);
      expect(receiver.requests).toEqual([]);
    });
  });

  describe('POST /v1/webhooks/{id}/roll_secret', () => {
    it('signs with the new and the old secret until the old one expires', async () => {
      const hook = await subscribe(['lead.created']);
      const rolled = await post(`/v1/webhooks/${hook.id}/roll_secret`);
      expect(rolled.status).toBe(200);
      expect(rolled.body).toMatchObject({ id: hook.id, object: 'webhook' });
      expect(rolled.body.secret).toMatch(/^whsec_/);
      expect(rolled.body.secret).not.toBe(hook.secret);
      expect((await get(`/v1/webhooks/${hook.id}`)).text).not.toContain(rolled.body.secret);

      await createLead();
      await eventually(() => expect(receiver.requests).toHaveLength(1));
      const both = receiver.requests[0];
      expect(String(both.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verify(rolled.body.secret, both)).toMatchObject({ type: 'lead.created' });
      expect(verify(hook.secret, both)).toMatchObject({ type: 'lead.created' });

      // The old secret's expiry passes.
      await app.orm.em.getConnection().execute(`update webhooks set previous_secret_expires_at = now() - interval '1 second' where id = ?`, [hook.id]);
      await createLead();
      await eventually(() => expect(receiver.requests).toHaveLength(2));
      const expired = receiver.requests[1];
      expect(String(expired.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(verify(rolled.body.secret, expired)).toMatchObject({ type: 'lead.created' });
      expect(() => verify(hook.secret, expired)).toThrow();
    });

    it('with expires_in_hours 0 the old secret stops at once; bad hours are 400', async () => {
      const hook = await subscribe(['lead.created']);
      const gql = await app.graphql(
        `mutation ($id: ID!) { rollWebhookSecret(id: $id, input: { expiresInHours: 0 }) { id secret } }`,
        { id: hook.id },
        owner.testKey,
      );
      const secret = gql.body.data.rollWebhookSecret.secret as string;
      await createLead();
      await eventually(() => expect(receiver.requests).toHaveLength(1));
      expect(String(receiver.requests[0].headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(verify(secret, receiver.requests[0])).toMatchObject({ type: 'lead.created' });
      expect(() => verify(hook.secret, receiver.requests[0])).toThrow();

      for (const hours of [-1, 73, 1.5, 'soon']) {
        const response = await post(`/v1/webhooks/${hook.id}/roll_secret`, { expires_in_hours: hours });
        expect([hours, response.status, response.body.error?.param]).toEqual([hours, 400, 'expires_in_hours']);
      }
      const [row] = await app.orm.em
        .getConnection()
        .execute('select previous_secret_encrypted, previous_secret_expires_at from webhooks where id = ?', [hook.id]);
      expect(row).toEqual({ previous_secret_encrypted: null, previous_secret_expires_at: null });
      const kept = await post(`/v1/webhooks/${hook.id}/roll_secret`, { expires_in_hours: 72 });
      expect(kept.status).toBe(200);
      const [after] = await app.orm.em.getConnection().execute('select previous_secret_expires_at from webhooks where id = ?', [hook.id]);
      expect(new Date(after.previous_secret_expires_at).getTime() - Date.now()).toBeGreaterThan(71 * 3_600_000);
      // A roll with 0 ends an old secret still in its window too.
      expect((await post(`/v1/webhooks/${hook.id}/roll_secret`, { expires_in_hours: 0 })).status).toBe(200);
      const [ended] = await app.orm.em
        .getConnection()
        .execute('select previous_secret_encrypted, previous_secret_expires_at from webhooks where id = ?', [hook.id]);
      expect(ended).toEqual({ previous_secret_encrypted: null, previous_secret_expires_at: null });
    });
  });
});

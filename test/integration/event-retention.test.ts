import { createLogger } from '../../src/logger';
import { EVENT_RETENTION_DAYS, EventRetention } from '../../src/events/event-retention';
import { LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { eventually, WebhookReceiver } from '../helpers/receiver';

describe('event retention', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;
  let owner: TestAccount;
  let retention: EventRetention | undefined;

  const sql = <T = Record<string, unknown>>(text: string, bindings: unknown[] = []) => app.orm.em.getConnection().execute<T[]>(text, bindings);

  beforeAll(async () => {
    app = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: [0] } });
    owner = await app.createAccount();
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await retention?.stop();
    await receiver.stop();
    await app.close();
  });

  it(`removes events older than ${EVENT_RETENTION_DAYS} days in batches, with their deliveries and attempts, and keeps newer ones`, async () => {
    expect(EVENT_RETENTION_DAYS).toBe(30);
    const hook = await app.request('POST', '/v1/webhooks', { key: owner.testKey, body: { url: receiver.url(), events: ['lead.created'] } });
    expect(hook.status).toBe(201);
    for (let i = 0; i < 5; i++) {
      const lead = await app.request('POST', '/v1/leads', { key: owner.testKey, body: { company: `Kept ${i}`, contact_email: `kept${i}@acme.test` } });
      expect(lead.status).toBe(201);
    }
    await eventually(async () => expect(await sql(`select 1 from webhook_attempts where webhook_id = ?`, [hook.body.id])).toHaveLength(5));
    const events = await sql<{ id: string; type: string }>(`select id, type from events where account_id = ? order by id`, [owner.account.id]);
    const created = events.filter((event) => event.type === 'lead.created').map((event) => event.id);
    // Three of the five lead.created events (and every lead.scored) are made older than the period; one only just inside it.
    const expired = [...created.slice(0, 3), ...events.filter((event) => event.type !== 'lead.created').map((event) => event.id)];
    const kept = created.slice(3);
    await sql(`update events set created_at = now() - interval '31 days' where id in (?)`, [expired]);
    await sql(`update events set created_at = now() - interval '29 days' where id = ?`, [kept[0]]);

    retention = new EventRetention({ orm: app.orm, logger: createLogger('silent'), pollIntervalMs: 50, batchSize: 2 });
    retention.start();

    await eventually(async () => expect(await sql(`select id from events where id in (?)`, [expired])).toEqual([]));
    expect((await sql<{ id: string }>(`select id from events where account_id = ? order by id`, [owner.account.id])).map((row) => row.id)).toEqual(kept);
    const attempts = await sql<{ event_id: string }>(`select event_id from webhook_attempts where webhook_id = ? order by event_id`, [hook.body.id]);
    expect(attempts.map((row) => row.event_id)).toEqual(kept);
    const deliveries = await sql<{ event_id: string }>(`select event_id from webhook_deliveries where webhook_id = ? order by event_id`, [hook.body.id]);
    expect(deliveries.map((row) => row.event_id)).toEqual(kept);
    expect((await app.request('GET', `/v1/events/${expired[0]}`, { key: owner.testKey })).status).toBe(404);
    expect((await app.request('GET', `/v1/events/${kept[0]}`, { key: owner.testKey })).status).toBe(200);
  });
});

/**
 * The outbox's fan-out, called directly (no worker runs in this app): events whose account and mode
 * no consumer could owe work to are marked by one statement (markUnowed), and only the others go
 * through the consumers' transaction, which still writes what they owe.
 */
import type { Knex } from '@mikro-orm/knex';
import { outboxConsumers } from '../../src/app/workers';
import { fanOutEvents, markUnowed } from '../../src/events/outbox-fan-out';
import { LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';

const consumers = outboxConsumers({ webhookRetrySchedule: [0] });

describe('outbox fan-out', () => {
  let app: TestApp;
  let knex: Knex;

  beforeAll(async () => {
    app = await startTestApp({ env: LOCAL_RECEIVERS });
    knex = app.orm.em.getKnex();
  });
  afterAll(() => app.close());
  beforeEach(() => app.reset());

  const createLead = async (key: string, n: string) => {
    const response = await app.request('POST', '/v1/leads', { key, body: { company: `Acme ${n}`, contact_email: `buyer-${n}-${Date.now()}@acme.test` } });
    expect(response.status).toBe(201);
  };
  const subscribe = async (account: TestAccount) => {
    const response = await app.request('POST', '/v1/webhooks', { key: account.testKey, body: { url: 'http://127.0.0.1:9/hook', events: ['*'] } });
    expect(response.status).toBe(201);
    return response.body as { id: string };
  };
  /** Accounts (and modes) whose events are not yet fanned out. */
  const pending = async () =>
    (
      await knex.raw<{ rows: Array<{ account_id: string; livemode: boolean; events: number }> }>(
        'select account_id, livemode, count(*)::int as events from event_fan_outs group by 1, 2 order by 1, 2',
      )
    ).rows;

  it('marks at once the events of accounts and modes with no enabled subscription, deployed agent or connected integration', async () => {
    const quiet = await app.createAccount();
    const subscriber = await app.createAccount();
    const disabled = await app.createAccount();
    const deployed = await app.createAccount();
    const drafted = await app.createAccount();
    await subscribe(subscriber);
    const off = await subscribe(disabled);
    expect((await app.request('PUT', `/v1/webhooks/${off.id}`, { key: disabled.testKey, body: { status: 'disabled' } })).status).toBe(200);
    for (const [account, deploy] of [
      [deployed, true],
      [drafted, false],
    ] as const) {
      const agent = await app.request('POST', '/v1/agents', { key: account.testKey, body: { name: 'Qualifier', type: 'lead_qualifier' } });
      expect(agent.status).toBe(201);
      if (deploy) expect((await app.request('POST', `/v1/agents/${agent.body.id}/deploy`, { key: account.testKey })).status).toBe(200);
    }
    for (const [i, account] of [quiet, subscriber, disabled, deployed, drafted].entries()) await createLead(account.testKey, `t${i}`);
    // The subscriber's live mode has no subscription of its own.
    await createLead(subscriber.liveKey, 'live');
    const before = await pending();
    const all = before.reduce((sum, row) => sum + row.events, 0);
    expect(all).toBeGreaterThanOrEqual(12);

    const unowed = await markUnowed(knex, consumers);

    // Only the subscriber's test mode and the account with a deployed agent keep their events for the consumers.
    const left = await pending();
    expect(left).toEqual(
      [
        { account_id: subscriber.account.id, livemode: false, events: before.find((r) => r.account_id === subscriber.account.id && !r.livemode)!.events },
        { account_id: deployed.account.id, livemode: false, events: before.find((r) => r.account_id === deployed.account.id)!.events },
      ].sort((a, b) => a.account_id.localeCompare(b.account_id)),
    );
    const owedEvents = left.reduce((sum, row) => sum + row.events, 0);
    expect(unowed).toEqual({ taken: all, marked: all - owedEvents });

    // The consumers' transaction takes the rest and writes what they owe: the subscriber's deliveries, the agent's tasks.
    const owed = await fanOutEvents(knex, consumers);
    expect(owed.events).toBe(owedEvents);
    expect(await pending()).toEqual([]);
    const deliveries = await knex('webhook_deliveries')
      .select('account_id')
      .count<Array<{ account_id: string; count: string }>>('* as count')
      .groupBy('account_id');
    expect(deliveries).toEqual([{ account_id: subscriber.account.id, count: String(left.find((r) => r.account_id === subscriber.account.id)!.events) }]);
    // lead_qualifier reacts to lead.scored: one task for the deployed agent's lead.
    const tasks = await knex('agent_tasks').select('account_id');
    expect(tasks).toEqual([{ account_id: deployed.account.id }]);
    expect(owed.work).toBe(Number(deliveries[0].count) + tasks.length);
  });

  it("queues every event its insert writes, whatever wrote it, in that insert's transaction; a deleted event leaves the queue", async () => {
    const account = await app.createAccount();
    const insert = (trx: Knex.Transaction, id: string) =>
      trx.raw(
        `insert into events (id, created_at, updated_at, account_id, livemode, type, api_version, data) values (?, now(), now(), ?, true, 'lead.created', 'v1', '{}')`,
        [id, account.account.id],
      );
    await knex.transaction(async (trx) => {
      await insert(trx, 'evt_queued_1');
      await insert(trx, 'evt_queued_2');
      // Visible to its own transaction at once, to no other until it commits.
      expect((await trx('event_fan_outs').count<Array<{ count: string }>>('* as count'))[0].count).toBe('2');
      expect(await pending()).toEqual([]);
    });
    await knex
      .transaction(async (trx) => {
        await insert(trx, 'evt_rolled_back');
        await trx.rollback();
      })
      .catch(() => undefined);
    expect(await knex('event_fan_outs').select('event_id', 'account_id', 'livemode').orderBy('event_id')).toEqual([
      { event_id: 'evt_queued_1', account_id: account.account.id, livemode: true },
      { event_id: 'evt_queued_2', account_id: account.account.id, livemode: true },
    ]);
    await knex('events').where({ id: 'evt_queued_1' }).delete();
    expect(await knex('event_fan_outs').pluck('event_id')).toEqual(['evt_queued_2']);
    // And the fan-out takes it off the queue; the event itself is left as it was written.
    const [before] = await knex('events').where({ id: 'evt_queued_2' });
    expect(await fanOutEvents(knex, consumers)).toEqual({ events: 1, work: 0 });
    expect(await pending()).toEqual([]);
    expect(await knex('events').where({ id: 'evt_queued_2' })).toEqual([before]);
  });

  it('with nothing pending, takes nothing and marks nothing', async () => {
    expect(await markUnowed(knex, consumers)).toEqual({ taken: 0, marked: 0 });
    expect(await fanOutEvents(knex, consumers)).toEqual({ events: 0, work: 0 });
  });
});

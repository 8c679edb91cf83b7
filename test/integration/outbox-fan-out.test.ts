/**
 * The outbox's fan-out, called directly (no worker runs in this app): events whose account and mode
 * no consumer could owe work to are marked by one statement (markUnowed), and only the others go
 * through the consumers' transaction, which still writes what they owe.
 */
import type { Knex } from '@mikro-orm/knex';
import { outboxConsumers } from '../../src/events/outbox-consumers';
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
        'select account_id, livemode, count(*)::int as events from events where fanned_out_at is null group by 1, 2 order by 1, 2',
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

    const unowed = await markUnowed(knex, consumers, new Date());

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

  it('with nothing pending, takes nothing and marks nothing', async () => {
    expect(await markUnowed(knex, consumers, new Date())).toEqual({ taken: 0, marked: 0 });
    expect(await fanOutEvents(knex, consumers)).toEqual({ events: 0, work: 0 });
  });
});

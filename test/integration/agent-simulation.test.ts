import { randomUUID } from 'node:crypto';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { parsePermissions } from '../../src/modules/accounts/key-permissions';
import { HttpResponse, LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { settled, WebhookReceiver } from '../helpers/receiver';

/**
 * POST /v1/agents/{id}/simulate (issue 23): a window's recorded events replayed against a config
 * through real HTTP, Apollo and PostgreSQL, with a webhook dispatcher and a subscribed receiver
 * running beside the app and the account's model played by the loopback Chat Completions fake.
 * Every expectation is derived from the data the test made; after every simulation each table of
 * the database (rows and their content) and every sequence is as it was, the receiver got nothing
 * more, and the fake received at most the simulation's cap of completions.
 *
 * Lead scores (docs/API.md, the prior model): Software, 500 employees, a company e-mail → 75 (hot);
 * Non-profit, 5 employees, gmail, purchased_list → 4 (cold); neither industry nor size → 37.
 */

type Json = Record<string, unknown>;

interface Simulation {
  object: string;
  agent_id: string;
  config: Json;
  window: string;
  from: string;
  to: string;
  events_replayed: number;
  truncated: boolean;
  scans: number;
  errors: number;
  actions_total: number;
  actions_by_kind: Record<string, number>;
  sample: Json[];
  leads_affected: string[];
  deals_affected: string[];
  model_calls: number;
  generated_by: Record<string, number>;
}

const DAY_MS = 86_400_000;
/** The cap of model calls a simulation makes (src/modules/agents/agent-simulation.ts), written out here. */
const MODEL_CALL_CAP = 3;
/** Events a simulation replays at most, written out here. */
const EVENT_CAP = 500;
const unique = () => randomUUID().slice(0, 8);
const hot = () => ({ company: `Hot ${unique()}`, contact_email: `buyer@hot-${unique()}.test`, industry: 'Software', employees: 500 });
const cold = () => ({ company: `Cold ${unique()}`, contact_email: `c${unique()}@gmail.com`, industry: 'Non-profit', employees: 5, source: 'purchased_list' });
const middle = () => ({ company: `Middle ${unique()}`, contact_email: `mid@middle-${unique()}.test` });

describe('agent simulation', () => {
  let fakes: FakeCrms;
  let app: TestApp;
  let owner: TestAccount;
  let receiver: WebhookReceiver;

  const sql = <T = Json>(query: string, params: unknown[] = []) => app.orm.em.getConnection().execute<T[]>(query, params);
  const post = async (path: string, body?: unknown, key = owner.testKey) => app.request('POST', path, { key, body });
  const simulate = (id: string, body: unknown, key = owner.testKey) => post(`/v1/agents/${id}/simulate`, body, key);

  async function made(path: string, body: Json): Promise<Json> {
    const res = await post(path, body);
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    return res.body;
  }
  const agentOf = (type: string, config?: Json) => made('/v1/agents', { name: `${type} ${unique()}`, type, ...(config ? { config } : {}) });

  /**
   * Every table's rows (count and content) and every sequence of the database, to compare before and
   * after. Not request_logs: the simulate request itself is logged there, as every request is.
   */
  async function database(): Promise<Record<string, unknown>> {
    const tables = await sql<{ name: string }>(
      `select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name <> 'request_logs' order by 1`,
    );
    const state: Record<string, unknown> = {};
    for (const { name } of tables) {
      const [row] = await sql<{ n: number; digest: string }>(
        `select count(*)::int as n, md5(coalesce(string_agg(t::text, ',' order by t::text), '')) as digest from "${name}" t`,
      );
      state[name] = row;
    }
    state.sequences = await sql(`select sequencename, last_value from pg_sequences where schemaname = 'public' order by 1`);
    return state;
  }

  /** Runs `work` (simulations), then checks that nothing was written, delivered or recorded meanwhile. */
  async function withoutSideEffects<T>(work: () => Promise<T>): Promise<T> {
    await settled(app);
    const before = await database();
    const delivered = receiver.requests.length;
    const result = await work();
    await settled(app);
    expect(await database()).toEqual(before);
    expect(receiver.requests.length).toBe(delivered);
    return result;
  }

  async function simulated(id: string, body: Json): Promise<Simulation> {
    const res = await simulate(id, body);
    if (res.status !== 200) throw new Error(`simulate: ${res.status} ${res.text}`);
    return res.body;
  }

  /** Events of `types` about this account in test mode created in the last `days`, oldest first (what a simulation replays). */
  const eventsIn = (types: string[], days: number) =>
    sql<{ id: string; type: string; object_id: string }>(
      `select id, type, data->'object'->>'id' as object_id from events
        where account_id = ? and livemode = false and type in (?) and created_at >= now() - make_interval(days => ?) order by created_at, id`,
      [owner.account.id, types, days],
    );

  function expectError(res: HttpResponse, status: number, code: string, param?: string): void {
    expect({ status: res.status, code: res.body?.error?.code, param: res.body?.error?.param }).toEqual({ status, code, param });
  }

  beforeAll(async () => {
    fakes = await startFakeCrms();
    receiver = await new WebhookReceiver().start();
    app = await startTestApp({ crms: fakes, env: { ...LOCAL_RECEIVERS }, webhooks: {} });
  });
  beforeEach(async () => {
    await app.reset();
    fakes.chat.clearScript();
    fakes.chat.requests.length = 0;
    receiver.requests.length = 0;
    owner = await app.createAccount();
    await made('/v1/webhooks', { url: receiver.url(), events: ['*'] });
  });
  afterAll(async () => {
    await app.close();
    await receiver.stop();
    await fakes.close();
  });

  it('lead_qualifier: names exactly the leads of the window it would qualify or disqualify; a stricter config fewer; nothing is written', async () => {
    const hotLeads = [await made('/v1/leads', hot()), await made('/v1/leads', hot())];
    const coldLeads = [await made('/v1/leads', cold()), await made('/v1/leads', cold())];
    const between = await made('/v1/leads', middle());
    const older = await made('/v1/leads', hot());
    // The older lead's events were recorded ten days ago: in the 30-day window, not the 7-day one.
    await sql(`update events set created_at = now() - interval '10 days' where data->'object'->>'id' = ?`, [older.id]);
    expect([...hotLeads, older].map((lead) => lead.score)).toEqual([75, 75, 75]);
    expect([...coldLeads, between].map((lead) => lead.score)).toEqual([4, 4, 37]);
    const agent = await agentOf('lead_qualifier', { open_deal: true });
    await settled(app);
    const week = await eventsIn(['lead.scored'], 7);
    expect(week.map((event) => event.object_id)).toEqual([...hotLeads, ...coldLeads, between].map((lead) => lead.id));

    const [weekly, monthly, strict] = await withoutSideEffects(async () => [
      await simulated(agent.id as string, { window: '7d' }),
      await simulated(agent.id as string, { window: '30d' }),
      await simulated(agent.id as string, { window: '7d', config: { qualify_at: 80, disqualify_below: 5 } }),
    ]);

    expect(weekly).toMatchObject({ object: 'agent_simulation', agent_id: agent.id, window: '7d', events_replayed: week.length, truncated: false, scans: 0 });
    expect(weekly.config).toEqual({ qualify_at: 70, disqualify_below: 20, open_deal: true, deal_stage: 'qualification', deal_value: 0 });
    expect(Date.parse(weekly.to) - Date.parse(weekly.from)).toBe(7 * DAY_MS);
    expect(weekly.actions_by_kind).toEqual({ lead_qualified: 2, deal_opened: 2, lead_disqualified: 2 });
    expect(weekly.actions_total).toBe(6);
    expect(weekly.leads_affected).toEqual([...hotLeads, ...coldLeads].map((lead) => lead.id));
    expect(weekly.deals_affected).toEqual([]); // the deals it would open do not exist
    expect(weekly.sample[0]).toEqual({ kind: 'lead_qualified', object_id: hotLeads[0].id, score: 75, event_id: week[0].id, event_type: 'lead.scored' });
    // What would have been created has no id: nothing was.
    expect(weekly.sample[1]).toEqual({ kind: 'deal_opened', lead_id: hotLeads[0].id, event_id: week[0].id, event_type: 'lead.scored' });
    expect(weekly.sample.map((action) => action.kind)).toEqual([
      'lead_qualified',
      'deal_opened',
      'lead_qualified',
      'deal_opened',
      'lead_disqualified',
      'lead_disqualified',
    ]);
    expect(weekly).toMatchObject({ model_calls: 0, generated_by: {}, errors: 0 });

    expect(monthly.events_replayed).toBe((await eventsIn(['lead.scored'], 30)).length);
    expect(monthly.actions_by_kind).toEqual({ lead_qualified: 3, deal_opened: 3, lead_disqualified: 2 });
    expect(monthly.leads_affected).toEqual([older, ...hotLeads, ...coldLeads].map((lead) => lead.id));

    // 75 is below 80: no lead qualifies; 4 is below 5: the cold ones are still disqualified.
    expect(strict.actions_by_kind).toEqual({ lead_disqualified: 2 });
    expect(strict.leads_affected).toEqual(coldLeads.map((lead) => lead.id));
    const statuses = await sql<{ status: string }>('select distinct status from leads where account_id = ?', [owner.account.id]);
    expect(statuses).toEqual([{ status: 'new' }]);
  });

  it('proposal_drafter over deal.stage_changed: a proposal for each deal still in proposal, cover notes by the model up to the cap, then the template', async () => {
    fakes.chat.keys.add('sk-simulation-key');
    await made('/v1/integrations', { type: 'llm', provider: 'openai', credentials: { api_key: 'sk-simulation-key' } });
    const deal = (name: string, stage?: string) => made('/v1/deals', { name: `${name} ${unique()}`, value: 1000, ...(stage ? { stage } : {}) });
    const move = async (id: unknown, stage: string) =>
      expect((await app.request('PUT', `/v1/deals/${id}`, { key: owner.testKey, body: { stage } })).status).toBe(200);
    const a = await deal('A', 'proposal');
    const b = await deal('B');
    const c = await deal('C');
    const d = await deal('D', 'proposal');
    await move(b.id, 'proposal');
    await move(c.id, 'proposal');
    await move(c.id, 'negotiation'); // C has moved on: its move into proposal drafts nothing now
    const e = await deal('E', 'proposal');
    const agent = await agentOf('proposal_drafter', { cover_note: true, notes: 'Payment within 30 days.' });
    fakes.chat.answerWith(
      { kind: 'json', value: { cover_note: 'By the model, first.' } },
      { kind: 'json', value: { cover_note: 'By the model, second.' } },
      { kind: 'json', value: { cover_note: 'By the model, third.' } },
      { kind: 'json', value: { cover_note: 'Past the cap: never asked for.' } },
    );

    const result = await withoutSideEffects(() => simulated(agent.id as string, { window: '7d' }));

    const events = await eventsIn(['deal.created', 'deal.stage_changed'], 7);
    expect(events).toHaveLength(8); // five created, three moves
    expect(result.events_replayed).toBe(events.length);
    // Oldest first: A created in proposal, D created in proposal, B moved into proposal, E created in proposal.
    const expected = [a, d, b, e].map((one) => one.id);
    expect(result.deals_affected).toEqual(expected);
    expect(result.leads_affected).toEqual([]);
    expect(result.actions_by_kind).toEqual({ proposal_drafted: 4 });
    expect(result.model_calls).toBe(MODEL_CALL_CAP);
    expect(fakes.chat.chats()).toHaveLength(MODEL_CALL_CAP);
    expect(fakes.chat.chats().every((chat) => chat.body.response_format?.json_schema?.name === 'cover_note')).toBe(true);
    expect(result.generated_by).toEqual({ model: MODEL_CALL_CAP, template: 1 });
    expect(result.sample.map((action) => action.deal_id)).toEqual(expected);
    expect(result.sample.map((action) => (action.written as Json).notes)).toEqual([
      'By the model, first.\n\nPayment within 30 days.',
      'By the model, second.\n\nPayment within 30 days.',
      'By the model, third.\n\nPayment within 30 days.',
      `Dear customer,\n\nThank you for considering us for ${e.name}. Please find our proposal below; it is valid for 30 days. We look forward to working with you.\n\nPayment within 30 days.`,
    ]);
    expect(result.sample[0]).toMatchObject({
      kind: 'proposal_drafted',
      cover_note: true,
      generated_by: 'model',
      event_id: events[0].id,
      event_type: 'deal.created',
    });
    expect(result.sample[0]).not.toHaveProperty('object_id');
    expect(result.sample[0]).not.toHaveProperty('number');
    expect(result.sample[2]).toMatchObject({ generated_by: 'model', event_type: 'deal.stage_changed' });
    expect(result.sample[3]).toMatchObject({ generated_by: 'template' });
  });

  it('follow_up_writer over idle deals: one e-mail per idle deal from the template, the lead named; the integration a refused key would mark stays connected', async () => {
    const lead = await made('/v1/leads', hot());
    const idle = [
      await made('/v1/deals', { name: `Idle ${unique()}`, value: 100, lead_id: lead.id }),
      await made('/v1/deals', { name: `Idle ${unique()}`, value: 200, stage: 'proposal' }),
    ];
    const fresh = await made('/v1/deals', { name: `Fresh ${unique()}`, value: 300 });
    await sql(`update deals set stage_changed_at = now() - interval '20 days' where id = ?`, [idle[0].id]);
    await sql(`update deals set stage_changed_at = now() - interval '10 days' where id = ?`, [idle[1].id]);
    const agent = await agentOf('follow_up_writer');

    const templated = await withoutSideEffects(() => simulated(agent.id as string, { window: '7d' }));
    // The lead's lead.created is replayed too (a lead created qualified gets an e-mail): this one is new, so it gets none.
    expect(templated).toMatchObject({ scans: 1, events_replayed: 1, model_calls: 0, errors: 0 });
    expect(templated.actions_by_kind).toEqual({ follow_up_email: 2 });
    expect(templated.generated_by).toEqual({ template: 2 });
    expect(templated.deals_affected).toEqual(idle.map((deal) => deal.id)); // longest idle first; the fresh deal is not idle
    expect(templated.deals_affected).not.toContain(fresh.id);
    expect(templated.leads_affected).toEqual([lead.id]);
    expect(templated.sample[0]).toMatchObject({
      kind: 'follow_up_email',
      deal_id: idle[0].id,
      lead_id: lead.id,
      status: 'pending',
      event_id: null,
      event_type: null,
    });
    expect(templated.sample[0].written).toMatchObject({ subject: `Following up: ${idle[0].name}`, model: null, generation_error: null });
    expect((templated.sample[0].written as Json).body).toMatch(/it has been 20 days since we last moved forward/);

    // A key the provider refuses: the writer falls back to the template, and the integration is left as it is.
    fakes.chat.keys.add('sk-refused-later');
    const integration = await made('/v1/integrations', { type: 'llm', provider: 'openai', credentials: { api_key: 'sk-refused-later' } });
    fakes.chat.keys.delete('sk-refused-later');
    const refused = await withoutSideEffects(() => simulated(agent.id as string, { window: '7d' }));
    expect(refused.model_calls).toBe(1);
    expect(fakes.chat.chats()).toHaveLength(1);
    expect(refused.generated_by).toEqual({ template: 2 });
    expect((refused.sample[0].written as Json).generation_error).toMatch(/^the model gave nothing usable/);
    expect((await app.request('GET', `/v1/integrations/${integration.id}`, { key: owner.testKey })).body.status).toBe('connected');
  });

  it('replays at most 500 events, oldest first, and says truncated', async () => {
    const first = await made('/v1/leads', hot());
    const last = await made('/v1/leads', cold());
    await settled(app);
    await sql(`update events set created_at = now() - interval '2 days' where data->'object'->>'id' = ?`, [first.id]);
    await sql(`update events set created_at = now() - interval '1 hour' where data->'object'->>'id' = ?`, [last.id]);
    // The hot lead rescored 500 more times a day ago: copies of its lead.scored event, already fanned out.
    await app.orm.em.getKnex().transaction(async (trx) => {
      await trx.raw(
        `insert into events (id, account_id, livemode, type, api_version, data, created_at, updated_at)
         select 'evt_copy' || n || substr(md5(random()::text), 1, 10), account_id, livemode, type, api_version, data,
                now() - interval '1 day' + make_interval(secs => n / 1000.0), now()
           from events, generate_series(1, ?) as n where type = 'lead.scored' and data->'object'->>'id' = ?`,
        [EVENT_CAP, first.id as string],
      );
      await trx.raw(`delete from event_fan_outs where event_id like 'evt\\_copy%'`);
    });
    expect(await eventsIn(['lead.scored'], 7)).toHaveLength(EVENT_CAP + 2);
    const agent = await agentOf('lead_qualifier');
    const result = await withoutSideEffects(() => simulated(agent.id as string, { window: '7d' }));
    // The first lead.scored qualifies the hot lead; its copies find it qualified; the cold lead's, the newest, is past the cap.
    expect(result).toMatchObject({ events_replayed: EVENT_CAP, truncated: true, actions_by_kind: { lead_qualified: 1 }, leads_affected: [first.id] });
  });

  it('gives up with 503 when a row it would change is held past its lock timeout, and leaves nothing behind', async () => {
    const lead = await made('/v1/leads', hot());
    const agent = await agentOf('lead_qualifier');
    await settled(app);
    const before = await database();
    const knex = app.orm.em.getKnex();
    const holder = await knex.transaction();
    try {
      await holder.raw('select id from leads where id = ? for update', [lead.id as string]);
      const started = Date.now();
      const res = await simulate(agent.id as string, { window: '7d' });
      expectError(res, 503, 'service_unavailable');
      expect(res.body.error.message).toMatch(/being changed right now; retry shortly/);
      expect(Date.now() - started).toBeLessThan(10_000); // the lock timeout (2 s), not the statement timeout
    } finally {
      await holder.rollback();
    }
    expect(await database()).toEqual(before);
    expect((await simulated(agent.id as string, { window: '7d' })).leads_affected).toEqual([lead.id]);
  });

  it('with an Idempotency-Key: the request transaction records only its answer, and a retry gets the same answer', async () => {
    const lead = await made('/v1/leads', hot());
    const agent = await agentOf('lead_qualifier');
    await settled(app);
    const before = await database();
    const send = () =>
      app.request('POST', `/v1/agents/${agent.id}/simulate`, { key: owner.testKey, body: { window: '7d' }, headers: { 'idempotency-key': `sim-${unique()}` } });
    const key = `sim-${unique()}`;
    const again = () =>
      app.request('POST', `/v1/agents/${agent.id}/simulate`, { key: owner.testKey, body: { window: '7d' }, headers: { 'idempotency-key': key } });
    const [first, second] = [await again(), await again()];
    expect(first.status).toBe(200);
    expect(first.body.leads_affected).toEqual([lead.id]);
    expect(second.body).toEqual(first.body);
    expect((await send()).status).toBe(200);
    await settled(app);
    const after = await database();
    expect((after.idempotency_keys as { n: number }).n).toBe((before.idempotency_keys as { n: number }).n + 2);
    expect({ ...after, idempotency_keys: null }).toEqual({ ...before, idempotency_keys: null });
  });

  it('works for deployed and paused agents alike, with their working config, over REST and GraphQL', async () => {
    const lead = await made('/v1/leads', hot());
    const agent = await agentOf('lead_qualifier');
    expect((await post(`/v1/agents/${agent.id}/deploy`)).status).toBe(200);
    expect((await simulated(agent.id as string, { window: '7d' })).actions_by_kind).toEqual({ lead_qualified: 1 });
    expect((await post(`/v1/agents/${agent.id}/pause`)).status).toBe(200);
    expect((await simulated(agent.id as string, { window: '30d', config: { qualify_at: 90 } })).actions_by_kind).toEqual({});
    const res = await app.graphql(
      `mutation ($id: ID!) { simulateAgent(id: $id, input: { window: "7d" }) { object agentId window eventsReplayed actionsByKind leadsAffected modelCalls } }`,
      { id: agent.id },
      owner.testKey,
    );
    expect(res.body).toEqual({
      data: {
        simulateAgent: {
          object: 'agent_simulation',
          agentId: agent.id,
          window: '7d',
          eventsReplayed: 1,
          actionsByKind: { lead_qualified: 1 },
          leadsAffected: [lead.id],
          modelCalls: 0,
        },
      },
    });
  });

  it('refuses a config that does not hold (422), a window other than 7d or 30d (400), and agents it cannot see (404)', async () => {
    const agent = await agentOf('lead_qualifier');
    const id = agent.id as string;
    expectError(
      await simulate(id, { window: '7d', config: { qualify_at: 30, disqualify_below: 50 } }),
      422,
      'agent_config_invalid',
      'config[disqualify_below]',
    );
    expectError(await simulate(id, { window: '7d', config: { shout: true } }), 422, 'agent_config_invalid', 'config[shout]');
    expectError(await simulate(id, { window: '24h' }), 400, 'parameter_invalid', 'window');
    expectError(await simulate(id, { window: 7 }), 400, 'parameter_invalid', 'window');
    expect((await simulate(id, {})).status).toBe(400);
    expect((await simulate(id, undefined)).status).toBe(400);
    expectError(await simulate('agent_00000000000000000000000000', { window: '7d' }), 404, 'resource_missing', 'id');
    const stranger = await app.createAccount();
    expectError(await simulate(id, { window: '7d' }, stranger.testKey), 404, 'resource_missing', 'id');
    expectError(await simulate(id, { window: '7d' }, owner.liveKey), 404, 'resource_missing', 'id');
    // It writes nothing, but spends the account's model calls and holds rows a moment: a key that may only read agents may not.
    const reader = (await new ApiKeyService(app.orm.em.fork()).create(owner.account, KeyType.test, 'agents reader', parsePermissions('agents=read'))).secret;
    expectError(await simulate(id, { window: '7d' }, reader), 403, 'permission_denied');
    const writer = (await new ApiKeyService(app.orm.em.fork()).create(owner.account, KeyType.test, 'agents writer', parsePermissions('agents=write'))).secret;
    expect((await simulate(id, { window: '7d' }, writer)).status).toBe(200);
  });
});

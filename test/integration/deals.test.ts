import { randomUUID } from 'node:crypto';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * Deals (CONTRACT §1, §3, §4, §6) through real HTTP, real Apollo and real PostgreSQL: POST and PUT
 * /v1/deals, the stage machine and its history, lead conversion on a win, GET /v1/deals filters and
 * sorts, the GraphQL pipeline summary, tenant and mode isolation, and co-sell registration
 * (eligibility, modes, double and concurrent registration, the per-operation limit). Every expected
 * figure is computed here from the data the test created.
 */

interface CoSell {
  id: string;
  status: string;
  submitted_at: string;
  decided_at: string | null;
  integration_id: string;
  referral_id: string | null;
  status_reason: string | null;
}

interface Deal {
  id: string;
  object: string;
  name: string;
  lead_id: string | null;
  value: number;
  currency: string;
  stage: string;
  probability: number;
  expected_close_date: string | null;
  owner: string | null;
  metadata: Record<string, string>;
  stage_changed_at: string;
  co_sell: CoSell | null;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

interface ListBody {
  object: string;
  data: Deal[];
  has_more: boolean;
  next_cursor: string | null;
}

const DEAL_KEYS = [
  'co_sell',
  'created_at',
  'currency',
  'expected_close_date',
  'external_ids',
  'fields',
  'id',
  'lead_id',
  'livemode',
  'metadata',
  'name',
  'object',
  'owner',
  'owner_id',
  'probability',
  'stage',
  'stage_changed_at',
  'updated_at',
  'value',
];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DEAL_ID = /^deal_[0-9A-HJKMNP-TV-Z]{26}$/;
const ERROR_KEYS = ['code', 'message', 'param', 'request_id', 'type'];
/** Win probability per stage, as CONTRACT §6 / docs/API.md state them (written out here, not imported). */
const PROBABILITY: Record<string, number> = {
  prospecting: 10,
  qualification: 25,
  proposal: 50,
  negotiation: 75,
  closed_won: 100,
  closed_lost: 0,
};
const STAGES = Object.keys(PROBABILITY);
const OPEN = ['prospecting', 'qualification', 'proposal', 'negotiation'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Major units with at most 2 decimals → hundredths, via the decimal text (no float multiplication). */
const cents = (value: number): number => {
  const [whole, fraction = ''] = String(value).split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
};

let emailCounter = 0;
const uniqueEmail = () => `buyer${++emailCounter}-${Date.now()}@contoso.test`;

/** The contract's error shape (§3), its status, code, param and the X-Request-Id header. */
function expectError(res: HttpResponse, status: number, code: string, param: string | undefined, extraKeys: string[] = []): void {
  const context = `${status} ${code} ${param ?? ''}: got ${res.status} ${res.text.slice(0, 400)}`;
  expect({ context, status: res.status }).toEqual({ context, status });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['error']);
  const error = res.body.error as Record<string, unknown>;
  for (const key of Object.keys(error)) expect([...ERROR_KEYS, ...extraKeys]).toContain(key);
  expect(error.type).toBe(status === 429 ? 'rate_limit_error' : 'invalid_request_error');
  expect(error.code).toBe(code);
  expect(typeof error.message).toBe('string');
  expect((error.message as string).length).toBeGreaterThan(0);
  expect(error.message).not.toMatch(/\$input|Variable "|DealCreateInput|DealUpdateInput|DealListInput|graphql|\bat .+\(.*:\d+:\d+\)|select |insert |update "/i);
  if (param === undefined) expect(error).not.toHaveProperty('param');
  else expect(error.param).toBe(param);
  expect(typeof error.request_id).toBe('string');
  expect(res.headers.get('x-request-id')).toBe(error.request_id);
}

describe('deals', () => {
  let app: TestApp;
  let main: TestAccount;

  const post = (body: unknown, key: string = main.testKey) => app.request<Deal>('POST', '/v1/deals', { key, body });
  const put = (id: string, body: unknown, key: string = main.testKey) => app.request<Deal>('PUT', `/v1/deals/${id}`, { key, body });
  const register = (id: string, key: string = main.testKey): Promise<HttpResponse> => app.request('POST', `/v1/deals/${id}/register`, { key });
  const list = (key: string, params: Record<string, string | number> = {}) => {
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return app.request<ListBody>('GET', `/v1/deals${qs ? `?${qs}` : ''}`, { key });
  };

  async function createDeal(fields: Record<string, unknown> = {}, key: string = main.testKey): Promise<Deal> {
    const res = await post({ name: 'Deal', value: 100, ...fields }, key);
    if (res.status !== 201) throw new Error(`create deal failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async function createLead(key: string = main.testKey, fields: Record<string, unknown> = {}): Promise<{ id: string; status: string }> {
    const res = await app.request('POST', '/v1/leads', { key, body: { company: 'Contoso', contact_email: uniqueEmail(), ...fields } });
    if (res.status !== 201) throw new Error(`create lead failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async function updated(id: string, body: unknown, key: string = main.testKey): Promise<Deal> {
    const res = await put(id, body, key);
    if (res.status !== 200) throw new Error(`update failed: ${res.status} ${res.text}`);
    return res.body;
  }

  /** Every row of a list, following next_cursor; checks the envelope of each page. */
  async function walk(key: string, params: Record<string, string | number>, limit: number): Promise<{ rows: Deal[]; pages: number }> {
    const rows: Deal[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: HttpResponse<ListBody> = await list(key, { ...params, limit, ...(cursor ? { cursor } : {}) });
      if (res.status !== 200) throw new Error(`list failed: ${res.status} ${res.text}`);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object']);
      expect(res.body.object).toBe('list');
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      if (res.body.has_more) {
        expect(res.body.data).toHaveLength(limit);
        expect(typeof res.body.next_cursor).toBe('string');
      } else {
        expect(res.body.next_cursor).toBeNull();
      }
      rows.push(...res.body.data);
      cursor = res.body.next_cursor;
      pages += 1;
      if (pages > 500) throw new Error('pagination does not end');
    } while (cursor);
    return { rows, pages };
  }

  /** The deal through GraphQL, with its stage history (GraphQL only). */
  async function gqlDeal(id: string, key: string = main.testKey) {
    const res = await app.graphql(
      `query D($id: ID!) { deal(id: $id) { id name stage value leadId metadata stageChangedAt coSell { id status submittedAt decidedAt integrationId }
         history { fromStage toStage changedAt } } }`,
      { id },
      key,
    );
    expect(res.status).toBe(200);
    return res.body as {
      data: {
        deal: {
          id: string;
          name: string;
          stage: string;
          value: number;
          leadId: string | null;
          metadata: Record<string, string>;
          stageChangedAt: string;
          coSell: Record<string, unknown> | null;
          history: Array<{ fromStage: string | null; toStage: string; changedAt: string }>;
        };
      } | null;
      errors?: Array<{ message: string; extensions: Record<string, unknown> }>;
    };
  }

  const dealRow = async (id: string) => {
    const rows = await app.orm.em
      .fork()
      .getConnection()
      .execute<Array<Record<string, unknown>>>(
        'select account_id, livemode, lead_id, value_minor, currency, stage, metadata, co_sell_id, co_sell_status, co_sell_integration_id from deals where id = ?',
        [id],
      );
    return rows[0];
  };
  const countDeals = async (accountId: string): Promise<number> => {
    const rows = await app.orm.em.fork().getConnection().execute<Array<{ count: string }>>('select count(*) from deals where account_id = ?', [accountId]);
    return Number(rows[0].count);
  };

  /** Connects Microsoft 365 for an account and mode through POST /v1/integrations; returns the integration id. */
  async function connectM365(account: TestAccount, livemode: boolean): Promise<string> {
    const res = await app.request('POST', '/v1/integrations', {
      key: livemode ? account.liveKey : account.testKey,
      body: {
        type: 'm365',
        provider: 'microsoft365',
        credentials: { tenant_id: randomUUID(), client_id: randomUUID(), client_secret: `secret-${randomUUID()}`, mailbox: 'partner-sales@contoso.com' },
      },
    });
    if (res.status !== 201) throw new Error(`connect m365 failed: ${res.status} ${res.text}`);
    expect(res.body).toMatchObject({ object: 'integration', type: 'm365', provider: 'microsoft365', status: 'connected', livemode });
    return res.body.id;
  }

  /** Connects Partner Center for an account's live mode (the app's own fakes accept any credentials); returns the integration id. */
  async function connectPartnerCenter(account: TestAccount): Promise<string> {
    const res = await app.request('POST', '/v1/integrations', {
      key: account.liveKey,
      body: {
        type: 'm365',
        provider: 'partner_center',
        credentials: { tenant_id: randomUUID(), client_id: randomUUID(), client_secret: `secret-${randomUUID()}`, refresh_token: `0.AX-${randomUUID()}` },
      },
    });
    if (res.status !== 201) throw new Error(`connect partner_center failed: ${res.status} ${res.text}`);
    return res.body.id;
  }

  /**
   * A fresh account with an eligible deal (qualification, 1,000.00, linked lead, the integration of
   * the mode connected: microsoft365 in test mode; in live mode partner_center, and what a Partner
   * Center referral needs: a close date, the contact's first and last name, the country).
   */
  async function eligibleSetup(livemode = false) {
    const account = await app.createAccount();
    const key = livemode ? account.liveKey : account.testKey;
    const integrationId = livemode ? await connectPartnerCenter(account) : await connectM365(account, false);
    const lead = await createLead(key, livemode ? { contact_name: 'Ada Lovelace', country: 'GB' } : {});
    const deal = await createDeal(
      { name: 'Eligible', value: 1000, stage: 'qualification', lead_id: lead.id, ...(livemode ? { expected_close_date: '2099-06-30' } : {}) },
      key,
    );
    return { account, key, integrationId, lead, deal };
  }

  beforeAll(async () => {
    app = await startTestApp();
    main = await app.createAccount();
  });
  afterAll(() => app.close());

  describe('POST /v1/deals', () => {
    it('creates a deal and answers 201 with the full object', async () => {
      const lead = await createLead();
      const before = Date.now();
      const res = await post({
        name: 'Contoso rollout',
        lead_id: lead.id,
        value: 12500.5,
        currency: 'eur',
        expected_close_date: '2026-12-31',
        owner: 'jane@seller.test',
        metadata: { crm_id: '42', someCamelKey: 'kept' },
      });
      const after = Date.now();
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const deal = res.body;
      expect(Object.keys(deal).sort()).toEqual(DEAL_KEYS);
      expect(Object.keys(deal).slice(0, 2)).toEqual(['id', 'object']);
      expect(deal.id).toMatch(DEAL_ID);
      expect(deal).toMatchObject({
        object: 'deal',
        name: 'Contoso rollout',
        lead_id: lead.id,
        value: 12500.5,
        currency: 'EUR',
        stage: 'prospecting',
        probability: 10,
        expected_close_date: '2026-12-31',
        owner: 'jane@seller.test',
        metadata: { crm_id: '42', someCamelKey: 'kept' },
        co_sell: null,
        livemode: false,
      });
      expect(typeof deal.value).toBe('number');
      for (const field of ['created_at', 'updated_at', 'stage_changed_at'] as const) {
        expect(deal[field]).toMatch(ISO_MS);
        expect(Date.parse(deal[field])).toBeGreaterThanOrEqual(before - 1);
        expect(Date.parse(deal[field])).toBeLessThanOrEqual(after + 1);
      }
      // Stored as exact minor units, in the key's account and mode.
      const row = await dealRow(deal.id);
      expect(row).toMatchObject({ account_id: main.account.id, livemode: false, lead_id: lead.id, currency: 'EUR', stage: 'prospecting' });
      expect(Number(row.value_minor)).toBe(1_250_050);
      // The same object through GraphQL.
      const gql = await gqlDeal(deal.id);
      expect(gql.data!.deal).toMatchObject({ id: deal.id, value: 12500.5, leadId: lead.id, stageChangedAt: deal.stage_changed_at });
    });

    it('defaults currency to USD, stage to prospecting and optional fields to null; live keys make livemode deals', async () => {
      const minimal = await post({ name: 'Minimal', value: 0 });
      expect(minimal.status).toBe(201);
      expect(minimal.body).toMatchObject({
        name: 'Minimal',
        value: 0,
        currency: 'USD',
        stage: 'prospecting',
        probability: 10,
        lead_id: null,
        expected_close_date: null,
        owner: null,
        metadata: {},
        co_sell: null,
        livemode: false,
      });
      const live = await post({ name: 'Live', value: 10 }, main.liveKey);
      expect(live.status).toBe(201);
      expect(live.body.livemode).toBe(true);
      expect((await dealRow(live.body.id)).livemode).toBe(true);
    });

    it.each(STAGES)('takes stage %s on create with its probability', async (stage) => {
      const deal = await createDeal({ stage });
      expect(deal.stage).toBe(stage);
      expect(deal.probability).toBe(PROBABILITY[stage]);
    });

    it('keeps exact amounts: 0.1, 0.29, 19.99 and the maximum 10,000,000,000,000', async () => {
      for (const value of [0.1, 0.29, 19.99, 10_000_000_000_000]) {
        const deal = await createDeal({ value });
        expect(deal.value).toBe(value);
        expect(Number((await dealRow(deal.id)).value_minor)).toBe(cents(value));
      }
    });

    it('is 400 parameter_missing without name or value, and stores nothing', async () => {
      const before = await countDeals(main.account.id);
      expectError(await post({ value: 10 }), 400, 'parameter_missing', 'name');
      expectError(await post({ name: 'No value' }), 400, 'parameter_missing', 'value');
      expectError(await post({ name: 'Null value', value: null }), 400, 'parameter_missing', 'value');
      expect(await countDeals(main.account.id)).toBe(before);
    });

    it.each([
      ['3 decimals', 10.005],
      ['a negative value', -1],
      ['a negative cent', -0.01],
      ['a string', '100'],
      ['more than the maximum', 10_000_000_000_000.01],
      ['an object', { amount: 1 }],
    ])('is 400 parameter_invalid param value for %s', async (_label, value) => {
      const before = await countDeals(main.account.id);
      expectError(await post({ name: 'Bad value', value }), 400, 'parameter_invalid', 'value');
      expect(await countDeals(main.account.id)).toBe(before);
    });

    it('is 400 for a bad currency, a bad date, a blank name, bad metadata and fields a client may not set', async () => {
      const before = await countDeals(main.account.id);
      expectError(await post({ name: 'X', value: 1, currency: 'XXX1' }), 400, 'parameter_invalid', 'currency');
      expectError(await post({ name: 'X', value: 1, currency: 'ZZZ' }), 400, 'parameter_invalid', 'currency');
      expectError(await post({ name: 'X', value: 1, expected_close_date: '2026-13-01' }), 400, 'parameter_invalid', 'expected_close_date');
      expectError(await post({ name: 'X', value: 1, expected_close_date: '31/12/2026' }), 400, 'parameter_invalid', 'expected_close_date');
      expectError(await post({ name: '   ', value: 1 }), 400, 'parameter_invalid', 'name');
      expectError(await post({ name: 'X', value: 1, stage: 'won' }), 400, 'parameter_invalid', 'stage');
      expectError(await post({ name: 'X', value: 1, metadata: { k: 5 } }), 400, 'parameter_invalid', 'metadata');
      expectError(await post({ name: 'X', value: 1, metadata: { k: null } }), 400, 'parameter_invalid', 'metadata');
      for (const field of ['probability', 'id', 'co_sell', 'stage_changed_at', 'created_at', 'valueMinor', 'value_minor']) {
        expectError(await post({ name: 'X', value: 1, [field]: 1 }), 400, 'parameter_unknown', field);
      }
      expect(await countDeals(main.account.id)).toBe(before);
    });

    it('is 400 param expected_close_date for a calendar date that does not exist', async () => {
      const before = await countDeals(main.account.id);
      expectError(await post({ name: 'X', value: 1, expected_close_date: '2026-02-30' }), 400, 'parameter_invalid', 'expected_close_date');
      expectError(await post({ name: 'X', value: 1, expected_close_date: '2025-02-29' }), 400, 'parameter_invalid', 'expected_close_date');
      expect((await createDeal({ expected_close_date: '2028-02-29' })).expected_close_date).toBe('2028-02-29');
      expect(await countDeals(main.account.id)).toBe(before + 1);
    });

    it('is 404 resource_missing param lead_id for a lead of another account, of the other mode, or no lead at all', async () => {
      const other = await app.createAccount();
      const otherLead = await createLead(other.testKey);
      const liveLead = await createLead(main.liveKey);
      const before = await countDeals(main.account.id);
      for (const leadId of [otherLead.id, liveLead.id, 'lead_00000000000000000000000000', 'lead_nope', 'deal_x']) {
        expectError(await post({ name: 'X', value: 1, lead_id: leadId }), 404, 'resource_missing', 'lead_id');
      }
      expect(await countDeals(main.account.id)).toBe(before);
      // The live lead is fine with the live key.
      expect((await post({ name: 'Live', value: 1, lead_id: liveLead.id }, main.liveKey)).status).toBe(201);
    });
  });

  describe('PUT /v1/deals/{id}', () => {
    it('changes only the fields sent', async () => {
      const lead = await createLead();
      const deal = await createDeal({
        name: 'Original',
        value: 500,
        currency: 'GBP',
        owner: 'a',
        expected_close_date: '2026-05-01',
        lead_id: lead.id,
        metadata: { a: '1', b: '2' },
      });
      await sleep(5);
      const res = await put(deal.id, { value: 750.25 });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(DEAL_KEYS);
      expect(res.body).toEqual({ ...deal, value: 750.25, updated_at: res.body.updated_at });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(deal.updated_at));
      expect(Number((await dealRow(deal.id)).value_minor)).toBe(75_025);

      const renamed = await updated(deal.id, { name: 'Renamed', owner: null, currency: 'usd', expected_close_date: null });
      expect(renamed).toMatchObject({
        name: 'Renamed',
        owner: null,
        currency: 'USD',
        expected_close_date: null,
        value: 750.25,
        lead_id: lead.id,
        metadata: { a: '1', b: '2' },
      });
      // An empty body changes nothing.
      const same = await updated(deal.id, {});
      expect({ ...same, updated_at: renamed.updated_at }).toEqual(renamed);
    });

    it('merges metadata: new keys are added, a null value removes its key', async () => {
      const deal = await createDeal({ metadata: { keep: 'k', drop: 'd', change: 'old' } });
      const res = await updated(deal.id, { metadata: { drop: null, change: 'new', added: 'x', absent: null } });
      expect(res.metadata).toEqual({ keep: 'k', change: 'new', added: 'x' });
      expect((await dealRow(deal.id)).metadata).toEqual({ keep: 'k', change: 'new', added: 'x' });
      expect((await updated(deal.id, { name: 'other' })).metadata).toEqual({ keep: 'k', change: 'new', added: 'x' });
    });

    it('links, relinks and unlinks the lead (lead_id null)', async () => {
      const [first, second] = [await createLead(), await createLead()];
      const deal = await createDeal();
      expect((await updated(deal.id, { lead_id: first.id })).lead_id).toBe(first.id);
      expect((await updated(deal.id, { lead_id: second.id })).lead_id).toBe(second.id);
      expect((await dealRow(deal.id)).lead_id).toBe(second.id);
      const unlinked = await updated(deal.id, { lead_id: null });
      expect(unlinked.lead_id).toBeNull();
      expect((await dealRow(deal.id)).lead_id).toBeNull();
      // A lead of another account or mode is 404 param lead_id and leaves the deal as it was.
      const foreign = await createLead((await app.createAccount()).testKey);
      const live = await createLead(main.liveKey);
      for (const leadId of [foreign.id, live.id]) expectError(await put(deal.id, { lead_id: leadId, name: 'not saved' }), 404, 'resource_missing', 'lead_id');
      expect((await gqlDeal(deal.id)).data!.deal).toMatchObject({ leadId: null, name: deal.name });
    });

    it('validates updates like creates', async () => {
      const deal = await createDeal({ value: 5 });
      expectError(await put(deal.id, { value: 1.234 }), 400, 'parameter_invalid', 'value');
      expectError(await put(deal.id, { value: -5 }), 400, 'parameter_invalid', 'value');
      expectError(await put(deal.id, { value: 'ten' }), 400, 'parameter_invalid', 'value');
      expectError(await put(deal.id, { value: null }), 400, 'parameter_invalid', 'value');
      expectError(await put(deal.id, { name: null }), 400, 'parameter_invalid', 'name');
      expectError(await put(deal.id, { stage: null }), 400, 'parameter_invalid', 'stage');
      expectError(await put(deal.id, { stage: 'won' }), 400, 'parameter_invalid', 'stage');
      expectError(await put(deal.id, { currency: 'XXX1' }), 400, 'parameter_invalid', 'currency');
      expectError(await put(deal.id, { expected_close_date: '2026-13-01' }), 400, 'parameter_invalid', 'expected_close_date');
      expectError(await put(deal.id, { probability: 90 }), 400, 'parameter_unknown', 'probability');
      expect((await gqlDeal(deal.id)).data!.deal.value).toBe(5);
    });

    it('is 404 for an unknown or malformed deal id', async () => {
      for (const id of ['deal_00000000000000000000000000', 'deal_x', 'lead_00000000000000000000000000']) {
        expectError(await put(id, { name: 'x' }), 404, 'resource_missing', 'id');
      }
    });

    it('records every stage change in order, with its time and previous stage; stage_changed_at moves only on a stage change', async () => {
      const deal = await createDeal({ name: 'Journey', value: 300 });
      const changes: Array<{ fromStage: string | null; toStage: string; changedAt: string }> = [
        { fromStage: null, toStage: 'prospecting', changedAt: deal.stage_changed_at },
      ];
      let current = deal;

      const noMove = async (body: Record<string, unknown>) => {
        await sleep(3);
        const next = await updated(deal.id, body);
        expect(next.stage_changed_at).toBe(current.stage_changed_at);
        expect(next.stage).toBe(current.stage);
        current = next;
      };
      const move = async (stage: string) => {
        await sleep(3);
        const before = Date.now();
        const next = await updated(deal.id, { stage });
        expect(next.stage).toBe(stage);
        expect(next.probability).toBe(PROBABILITY[stage]);
        expect(Date.parse(next.stage_changed_at)).toBeGreaterThan(Date.parse(current.stage_changed_at));
        expect(Date.parse(next.stage_changed_at)).toBeGreaterThanOrEqual(before - 1);
        changes.push({ fromStage: current.stage, toStage: stage, changedAt: next.stage_changed_at });
        current = next;
      };

      await noMove({ value: 400, name: 'Journey 2' });
      await noMove({ stage: 'prospecting' }); // same stage: not a move
      await move('qualification');
      await move('proposal');
      await move('qualification'); // back
      await noMove({ metadata: { step: 'x' } });
      await move('negotiation'); // forward, skipping proposal
      await move('prospecting'); // far back
      await move('closed_lost');
      await noMove({ stage: 'closed_lost' }); // same closed stage: still not a move
      await noMove({ name: 'Lost, renamed' }); // other fields of a closed deal may still change

      const history = (await gqlDeal(deal.id)).data!.deal.history;
      expect(history).toEqual(changes);
      for (let i = 1; i < history.length; i++) {
        expect(history[i].fromStage).toBe(history[i - 1].toStage);
        expect(Date.parse(history[i].changedAt)).toBeGreaterThan(Date.parse(history[i - 1].changedAt));
      }
      const rows = await app.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ from_stage: string | null; to_stage: string; account_id: string; livemode: boolean }>>(
          'select from_stage, to_stage, account_id, livemode from deal_stage_changes where deal_id = ? order by changed_at, id',
          [deal.id],
        );
      expect(rows.map((r) => [r.from_stage, r.to_stage])).toEqual(changes.map((c) => [c.fromStage, c.toStage]));
      for (const row of rows) expect(row).toMatchObject({ account_id: main.account.id, livemode: false });
    });

    it.each(['closed_won', 'closed_lost'])('is 409 invalid_stage_transition for every move out of %s, changing nothing', async (closed) => {
      const deal = await createDeal({ stage: 'negotiation' });
      const closedDeal = await updated(deal.id, { stage: closed });
      for (const stage of STAGES.filter((s) => s !== closed)) {
        expectError(await put(deal.id, { stage, name: 'must not be saved', value: 1 }), 409, 'invalid_stage_transition', 'stage');
      }
      const after = (await gqlDeal(deal.id)).data!.deal;
      expect(after).toMatchObject({ stage: closed, name: deal.name, value: deal.value, stageChangedAt: closedDeal.stage_changed_at });
      expect(after.history.map((h) => h.toStage)).toEqual(['negotiation', closed]);
    });

    it('converts the linked lead when the deal is won, and only then', async () => {
      const wonLead = await createLead();
      const lostLead = await createLead();
      const won = await createDeal({ stage: 'negotiation', lead_id: wonLead.id });
      const lost = await createDeal({ stage: 'negotiation', lead_id: lostLead.id });
      expect(wonLead.status).toBe('new');

      await updated(lost.id, { stage: 'closed_lost' });
      expect((await app.request('GET', `/v1/leads/${lostLead.id}`, { key: main.testKey })).body.status).toBe('new');

      const res = await put(won.id, { stage: 'closed_won' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ stage: 'closed_won', probability: 100, lead_id: wonLead.id });
      const lead = await app.request('GET', `/v1/leads/${wonLead.id}`, { key: main.testKey });
      expect(lead.status).toBe(200);
      expect(lead.body.status).toBe('converted');

      // Created already won: the lead converts too.
      const directLead = await createLead();
      await createDeal({ stage: 'closed_won', lead_id: directLead.id });
      expect((await app.request('GET', `/v1/leads/${directLead.id}`, { key: main.testKey })).body.status).toBe('converted');

      // Won together with linking the lead in the same update.
      const laterLead = await createLead();
      const later = await createDeal({ stage: 'proposal' });
      await updated(later.id, { stage: 'closed_won', lead_id: laterLead.id });
      expect((await app.request('GET', `/v1/leads/${laterLead.id}`, { key: main.testKey })).body.status).toBe('converted');
    });
  });

  describe('GET /v1/deals', () => {
    let account: TestAccount;
    let deals: Deal[];
    let leadA: string;
    let leadB: string;
    let registered: string[];

    beforeAll(async () => {
      account = await app.createAccount();
      const key = account.testKey;
      leadA = (await createLead(key)).id;
      leadB = (await createLead(key)).id;
      const VALUES = [0, 999.99, 1000, 1000, 250.5, 12500, 1000.01, 75, 999.99, 40000, 0.1, 5000];
      const DATES = [null, '2026-03-01', '2026-01-15', null, '2026-03-01', '2027-07-04', '2026-12-31', null, '2026-01-15'];
      deals = [];
      for (let i = 0; i < 34; i++) {
        const spec: Record<string, unknown> = {
          name: `Deal ${i}`,
          value: VALUES[i % VALUES.length],
          stage: STAGES[i % STAGES.length],
        };
        const date = DATES[i % DATES.length];
        if (date) spec.expected_close_date = date;
        if (i % 5 === 0) spec.lead_id = leadA;
        if (i % 7 === 3) spec.lead_id = leadB;
        deals.push(await createDeal(spec, key));
        if (i % 2 === 0) {
          // A twin given the same created_at (written directly: two requests rarely share a millisecond),
          // so the created_at sorts need the id to break ties.
          const twin = await createDeal({ ...spec, name: `Deal ${i}b` }, key);
          const first = deals[deals.length - 1];
          await app.orm.em.fork().getConnection().execute('update deals set created_at = ? where id = ?', [first.created_at, twin.id]);
          deals.push({ ...twin, created_at: first.created_at });
        }
      }
      // Two registrations for the co_sell_status filter.
      await connectM365(account, false);
      const eligible = deals.filter((d) => OPEN.slice(1).includes(d.stage) && d.value >= 1000 && d.lead_id !== null).slice(0, 2);
      expect(eligible).toHaveLength(2);
      registered = [];
      for (const deal of eligible) {
        const res = await register(deal.id, key);
        expect(res.status).toBe(200);
        registered.push(deal.id);
        deals[deals.findIndex((d) => d.id === deal.id)] = res.body;
      }
      // Data in the other mode and another account, which must never show.
      await createDeal({ name: 'live', value: 1000, stage: 'proposal', lead_id: null }, account.liveKey);
      await createDeal({ name: 'other', value: 1000, stage: 'proposal' }, main.testKey);
    });

    const byIdSorted = (rows: Deal[]) => rows.map((d) => d.id).sort();

    it("lists every deal of the key's account and mode, newest first, as the full objects", async () => {
      const { rows } = await walk(account.testKey, {}, 100);
      expect(rows).toHaveLength(deals.length);
      expect(byIdSorted(rows)).toEqual(byIdSorted(deals));
      const byId = new Map(deals.map((d) => [d.id, d]));
      for (const row of rows) {
        expect(row).toEqual(byId.get(row.id));
        expect(row.livemode).toBe(false);
      }
      const first = await list(account.testKey);
      expect(first.body.data).toHaveLength(20);
      expect(first.body.has_more).toBe(true);
    });

    type Key = 'created_at' | 'value' | 'expected_close_date';
    const compare = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
    /** Expected order: by the field (nulls last in both directions), ties by id in the same direction. */
    function expectedOrder(sort: string): string[] {
      const descending = sort.startsWith('-');
      const field = (descending ? sort.slice(1) : sort) as Key;
      const sign = descending ? -1 : 1;
      const present = deals.filter((d) => d[field] !== null);
      const nulls = deals.filter((d) => d[field] === null);
      const primary = (d: Deal) => (field === 'created_at' ? Date.parse(d.created_at) : (d[field] as string | number));
      present.sort((a, b) => sign * (compare(primary(a), primary(b)) || compare(a.id, b.id)));
      nulls.sort((a, b) => sign * compare(a.id, b.id));
      return [...present, ...nulls].map((d) => d.id);
    }

    it.each(['created_at', '-created_at', 'value', '-value', 'expected_close_date', '-expected_close_date'])(
      'sort=%s walks every row exactly once, in order (limit 7 and 100)',
      async (sort) => {
        const expected = expectedOrder(sort);
        for (const limit of [7, 100]) {
          const { rows, pages } = await walk(account.testKey, { sort }, limit);
          expect(pages).toBe(Math.ceil(deals.length / limit));
          expect(new Set(rows.map((r) => r.id)).size).toBe(deals.length);
          expect(rows.map((r) => r.id)).toEqual(expected);
        }
        if (sort.endsWith('expected_close_date')) {
          const { rows } = await walk(account.testKey, { sort }, 5);
          const firstNull = rows.findIndex((r) => r.expected_close_date === null);
          expect(firstNull).toBe(deals.filter((d) => d.expected_close_date !== null).length);
        }
      },
    );

    it('the data set has ties and nulls where the sorts need them', () => {
      expect(new Set(deals.map((d) => d.created_at)).size).toBe(34);
      expect(deals).toHaveLength(51);
      expect(deals.filter((d) => d.expected_close_date === null).length).toBeGreaterThan(3);
      expect(new Set(deals.map((d) => d.value)).size).toBeLessThan(deals.length);
    });

    const filtered = async (params: Record<string, string | number>, predicate: (d: Deal) => boolean, limit = 6) => {
      const { rows } = await walk(account.testKey, params, limit);
      const expected = deals.filter(predicate);
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(deals.length);
      expect(rows.map((r) => r.id)).toEqual(expectedOrder('-created_at').filter((id) => expected.some((d) => d.id === id)));
    };

    it('filters by one stage', async () => {
      for (const stage of STAGES) await filtered({ stage }, (d) => d.stage === stage);
    });

    it('filters by a comma list of stages', async () => {
      await filtered({ stage: 'qualification,proposal' }, (d) => d.stage === 'qualification' || d.stage === 'proposal');
      await filtered({ stage: 'closed_won, closed_lost' }, (d) => d.stage === 'closed_won' || d.stage === 'closed_lost');
      await filtered({ stage: 'prospecting,qualification,proposal,negotiation' }, (d) => OPEN.includes(d.stage));
    });

    it('filters by lead_id', async () => {
      await filtered({ lead_id: leadA }, (d) => d.lead_id === leadA);
      await filtered({ lead_id: leadB }, (d) => d.lead_id === leadB);
      const unknown = await list(account.testKey, { lead_id: 'lead_00000000000000000000000000' });
      expect(unknown.status).toBe(200);
      expect(unknown.body.data).toEqual([]);
    });

    it('filters by min_value and max_value, inclusive, in exact cents', async () => {
      await filtered({ min_value: 1000 }, (d) => cents(d.value) >= 100_000);
      await filtered({ max_value: 999.99 }, (d) => cents(d.value) <= 99_999);
      await filtered({ min_value: 999.99, max_value: 1000 }, (d) => cents(d.value) >= 99_999 && cents(d.value) <= 100_000);
      await filtered({ min_value: 0.1, max_value: 0.1 }, (d) => cents(d.value) === 10);
      await filtered(
        { min_value: 1000, max_value: 40000, stage: 'negotiation,proposal' },
        (d) => d.value >= 1000 && d.value <= 40000 && ['negotiation', 'proposal'].includes(d.stage),
      );
    });

    it('filters by co_sell_status', async () => {
      await filtered({ co_sell_status: 'accepted' }, (d) => registered.includes(d.id));
      const submitted = await list(account.testKey, { co_sell_status: 'submitted' });
      expect(submitted.status).toBe(200);
      expect(submitted.body.data).toEqual([]);
      for (const id of registered) expect(deals.find((d) => d.id === id)!.co_sell!.status).toBe('accepted');
    });

    it('is 400 naming the parameter for a bad filter or sort value', async () => {
      expectError(await list(account.testKey, { stage: 'won' }), 400, 'parameter_invalid', 'stage');
      expectError(await list(account.testKey, { stage: 'qualification,bogus' }), 400, 'parameter_invalid', 'stage');
      expectError(await list(account.testKey, { min_value: 'lots' }), 400, 'parameter_invalid', 'min_value');
      expectError(await list(account.testKey, { min_value: -1 }), 400, 'parameter_invalid', 'min_value');
      expectError(await list(account.testKey, { max_value: 1.005 }), 400, 'parameter_invalid', 'max_value');
      expectError(await list(account.testKey, { co_sell_status: 'maybe' }), 400, 'parameter_invalid', 'co_sell_status');
      expectError(await list(account.testKey, { sort: 'name' }), 400, 'parameter_invalid', 'sort');
      expectError(await list(account.testKey, { sort: 'probability' }), 400, 'parameter_invalid', 'sort');
      expectError(await list(account.testKey, { limit: 0 }), 400, 'parameter_invalid', 'limit');
      expectError(await list(account.testKey, { limit: 101 }), 400, 'parameter_invalid', 'limit');
      expectError(await list(account.testKey, { owner: 'x' }), 400, 'parameter_unknown', 'owner');
    });
  });

  describe('GraphQL pipelineSummary', () => {
    it('gives count, total and weighted value per stage and currency, equal to the figures computed from the deals', async () => {
      const account = await app.createAccount();
      const specs: Array<[string, number, string]> = [
        ['prospecting', 0.29, 'USD'],
        ['prospecting', 19.99, 'USD'],
        ['prospecting', 0.05, 'USD'], // 10 % of 0.05 + 0.29 + 19.99 = 2.033 → 2.03
        ['prospecting', 100, 'EUR'],
        ['qualification', 333.33, 'USD'],
        ['qualification', 0.1, 'USD'], // 25 % of 333.43 = 83.3575 → 83.36
        ['qualification', 12500.5, 'EUR'],
        ['proposal', 0.01, 'USD'], // 50 % of 0.01 = 0.005 → 0.01 (half up)
        ['proposal', 10_000_000_000_000, 'JPY'],
        ['proposal', 10_000_000_000_000, 'JPY'],
        ['negotiation', 1234.57, 'USD'],
        ['negotiation', 0.03, 'USD'],
        ['closed_won', 999.99, 'USD'],
        ['closed_won', 0.01, 'GBP'],
        ['closed_lost', 5000, 'USD'],
        ['closed_lost', 7.77, 'USD'],
      ];
      for (const [stage, value, currency] of specs) await createDeal({ name: `${stage} ${value}`, stage, value, currency }, account.testKey);
      // A deal that moves after creation counts in its current stage only.
      const moved = await createDeal({ name: 'moves', stage: 'prospecting', value: 40, currency: 'USD' }, account.testKey);
      await updated(moved.id, { stage: 'negotiation' }, account.testKey);
      specs.push(['negotiation', 40, 'USD']);
      // Other mode and other account: never counted.
      await createDeal({ name: 'live', stage: 'prospecting', value: 1_000_000, currency: 'USD' }, account.liveKey);
      await createDeal({ name: 'other account', stage: 'prospecting', value: 1_000_000, currency: 'USD' }, main.testKey);

      const groups = new Map<string, { stage: string; currency: string; count: number; totalCents: number }>();
      for (const [stage, value, currency] of specs) {
        const key = `${stage}/${currency}`;
        const group = groups.get(key) ?? { stage, currency, count: 0, totalCents: 0 };
        group.count += 1;
        group.totalCents += cents(value);
        groups.set(key, group);
      }
      const expected = [...groups.values()]
        .sort((a, b) => STAGES.indexOf(a.stage) - STAGES.indexOf(b.stage) || compareText(a.currency, b.currency))
        .map((g) => {
          const probability = PROBABILITY[g.stage];
          // sum(value × probability %) in cents, rounded half up, in integers only.
          const weightedHundredthsOfCents = g.totalCents * probability;
          const weightedCents = Math.floor((weightedHundredthsOfCents + 50) / 100);
          return { stage: g.stage, currency: g.currency, count: g.count, totalValue: g.totalCents / 100, weightedValue: weightedCents / 100, probability };
        });
      // Hand-checked figures, so the computation above is itself tested.
      expect(expected.find((g) => g.stage === 'prospecting' && g.currency === 'USD')).toMatchObject({ count: 3, totalValue: 20.33, weightedValue: 2.03 });
      expect(expected.find((g) => g.stage === 'qualification' && g.currency === 'USD')).toMatchObject({ count: 2, totalValue: 333.43, weightedValue: 83.36 });
      expect(expected.find((g) => g.stage === 'proposal' && g.currency === 'USD')).toMatchObject({ weightedValue: 0.01 });
      expect(expected.find((g) => g.stage === 'proposal' && g.currency === 'JPY')).toMatchObject({
        totalValue: 20_000_000_000_000,
        weightedValue: 10_000_000_000_000,
      });
      expect(expected.find((g) => g.stage === 'closed_lost')).toMatchObject({ totalValue: 5007.77, weightedValue: 0 });

      const res = await app.graphql('{ pipelineSummary { stage currency count totalValue weightedValue probability } }', {}, account.testKey);
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.pipelineSummary).toEqual(expected);

      // The live mode sees its own one deal only.
      const live = await app.graphql('{ pipelineSummary { stage currency count totalValue weightedValue } }', {}, account.liveKey);
      expect(live.body.data.pipelineSummary).toEqual([{ stage: 'prospecting', currency: 'USD', count: 1, totalValue: 1_000_000, weightedValue: 100_000 }]);
      // An account with no deals has an empty summary.
      const empty = await app.graphql('{ pipelineSummary { stage } }', {}, (await app.createAccount()).testKey);
      expect(empty.body.data.pipelineSummary).toEqual([]);
    });
  });

  describe('isolation between accounts and modes', () => {
    it("never lists, updates or registers another account's or the other mode's deals", async () => {
      const a = await app.createAccount();
      const b = await app.createAccount();
      await connectM365(a, false);
      await connectM365(a, true);
      await connectM365(b, false);
      const aLead = await createLead(a.testKey);
      const aTest = await createDeal({ name: 'A test', value: 5000, stage: 'proposal', lead_id: aLead.id }, a.testKey);
      const aLive = await createDeal({ name: 'A live', value: 5000, stage: 'proposal' }, a.liveKey);
      const bTest = await createDeal({ name: 'B test', value: 5000, stage: 'proposal' }, b.testKey);

      const ids = async (key: string) => (await walk(key, {}, 100)).rows.map((d) => d.id);
      expect(await ids(a.testKey)).toEqual([aTest.id]);
      expect(await ids(a.liveKey)).toEqual([aLive.id]);
      expect(await ids(b.testKey)).toEqual([bTest.id]);
      expect(await ids(b.liveKey)).toEqual([]);
      // Filters do not reach across either.
      expect((await list(b.testKey, { lead_id: aLead.id })).body.data).toEqual([]);
      expect((await list(a.liveKey, { lead_id: aLead.id })).body.data).toEqual([]);

      for (const [id, key] of [
        [aTest.id, b.testKey],
        [aTest.id, a.liveKey],
        [aLive.id, a.testKey],
        [bTest.id, a.testKey],
      ]) {
        expectError(await put(id, { name: 'hijacked', stage: 'closed_lost' }, key), 404, 'resource_missing', 'id');
        expectError(await register(id, key), 404, 'resource_missing', 'id');
        const gql = await gqlDeal(id, key);
        expect(gql.data).toBeNull();
        expect(gql.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND', errorCode: 'resource_missing' });
      }
      for (const deal of [aTest, aLive, bTest]) {
        const row = await dealRow(deal.id);
        expect(row).toMatchObject({ stage: 'proposal', co_sell_id: null });
      }
      expect((await gqlDeal(aTest.id, a.testKey)).data!.deal.name).toBe('A test');
    });
  });

  describe('POST /v1/deals/{id}/register', () => {
    const CO_SELL_ID = /^cosell_[0-9A-HJKMNP-TV-Z]{26}$/;

    it('is 422 deal_not_eligible listing every failed rule, and registers nothing', async () => {
      const account = await app.createAccount();
      const deal = await createDeal({ name: 'Too early', value: 999.99 }, account.testKey);
      const res = await register(deal.id, account.testKey);
      expectError(res, 422, 'deal_not_eligible', undefined, ['reasons']);
      const reasons = res.body.error.reasons as Array<{ rule: string; message: string }>;
      expect(reasons.map((r) => r.rule)).toEqual(['stage', 'value', 'lead', 'm365_integration']);
      for (const reason of reasons) {
        expect(Object.keys(reason).sort()).toEqual(['message', 'rule']);
        expect(reason.message.length).toBeGreaterThan(0);
        expect(res.body.error.message).toContain(reason.message);
      }
      expect((await dealRow(deal.id)).co_sell_id).toBeNull();
      // GraphQL gives the same reasons.
      const gql = await app.graphql('mutation R($id: ID!) { registerDeal(id: $id) { id } }', { id: deal.id }, account.testKey);
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'deal_not_eligible', reasons });
    });

    it('reports exactly the rules that fail, one at a time', async () => {
      const { account, key, lead } = await eligibleSetup();
      const cases: Array<[Record<string, unknown>, string[]]> = [
        [{ stage: 'prospecting' }, ['stage']],
        [{ stage: 'closed_won' }, ['stage']],
        [{ stage: 'closed_lost' }, ['stage']],
        [{ value: 999.99 }, ['value']],
        [{ lead_id: null }, ['lead']],
        [{ stage: 'negotiation', value: 1000 }, []],
      ];
      for (const [fields, rules] of cases) {
        const deal = await createDeal({ name: 'Case', value: 1000, stage: 'proposal', lead_id: lead.id, ...fields }, key);
        // Asking first registers nothing, and answers what registering then does.
        const asked = await app.request('GET', `/v1/deals/${deal.id}/co_sell_eligibility`, { key });
        expect(asked.status).toBe(200);
        expect(asked.body).toMatchObject({ object: 'co_sell_eligibility', deal_id: deal.id, eligible: rules.length === 0, registered: false });
        expect(asked.body.reasons.map((r: { rule: string }) => r.rule)).toEqual(rules);
        expect((await dealRow(deal.id)).co_sell_id).toBeNull();
        const res = await register(deal.id, key);
        if (rules.length === 0) {
          expect(res.status).toBe(200);
          const after = await app.request('GET', `/v1/deals/${deal.id}/co_sell_eligibility`, { key });
          expect(after.body).toMatchObject({ eligible: true, reasons: [], registered: true });
          continue;
        }
        expectError(res, 422, 'deal_not_eligible', undefined, ['reasons']);
        expect(res.body.error.reasons).toEqual(asked.body.reasons);
      }
      // A linked lead without a company: written directly, since the API requires a company.
      const blankLead = await createLead(key);
      await app.orm.em.fork().getConnection().execute(`update leads set company = '' where id = ? and account_id = ?`, [blankLead.id, account.account.id]);
      const deal = await createDeal({ name: 'Blank company', value: 1000, stage: 'proposal', lead_id: blankLead.id }, key);
      const res = await register(deal.id, key);
      expectError(res, 422, 'deal_not_eligible', undefined, ['reasons']);
      expect(res.body.error.reasons).toEqual([{ rule: 'lead', message: expect.stringMatching(/company/) }]);
    });

    it('registers an eligible test-mode deal: 200, accepted at once; then 409 already_registered', async () => {
      const { key, integrationId, deal } = await eligibleSetup(false);
      const before = Date.now();
      const res = await register(deal.id, key);
      const after = Date.now();
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(DEAL_KEYS);
      const coSell = res.body.co_sell!;
      expect(Object.keys(coSell).sort()).toEqual(['decided_at', 'id', 'integration_id', 'referral_id', 'status', 'status_reason', 'submitted_at']);
      // Test mode sends nothing anywhere: no referral, and nothing to explain.
      expect(coSell).toMatchObject({ referral_id: null, status_reason: null });
      expect(coSell.id).toMatch(CO_SELL_ID);
      expect(coSell.status).toBe('accepted');
      expect(coSell.integration_id).toBe(integrationId);
      expect(coSell.submitted_at).toMatch(ISO_MS);
      expect(coSell.decided_at).toMatch(ISO_MS);
      expect(Date.parse(coSell.submitted_at)).toBeGreaterThanOrEqual(before - 1);
      expect(Date.parse(coSell.submitted_at)).toBeLessThanOrEqual(after + 1);
      expect(Date.parse(coSell.decided_at!)).toBeGreaterThanOrEqual(Date.parse(coSell.submitted_at));
      // Nothing else about the deal changed.
      expect({ ...res.body, co_sell: null, updated_at: deal.updated_at }).toEqual(deal);

      expect(await dealRow(deal.id)).toMatchObject({ co_sell_id: coSell.id, co_sell_status: 'accepted', co_sell_integration_id: integrationId });
      const gql = (await gqlDeal(deal.id, key)).data!.deal;
      expect(gql.coSell).toEqual({
        id: coSell.id,
        status: 'accepted',
        submittedAt: coSell.submitted_at,
        decidedAt: coSell.decided_at,
        integrationId,
      });
      // Later updates keep the registration.
      expect((await updated(deal.id, { name: 'Renamed' }, key)).co_sell).toEqual(coSell);

      const again = await register(deal.id, key);
      expectError(again, 409, 'already_registered', undefined);
      expect((await dealRow(deal.id)).co_sell_id).toBe(coSell.id);
    });

    it('registers an eligible live-mode deal as submitted, undecided, through Partner Center (the referral is made in the background)', async () => {
      const { key, integrationId, deal } = await eligibleSetup(true);
      expect(deal.livemode).toBe(true);
      const res = await register(deal.id, key);
      expect(res.status).toBe(200);
      expect(res.body.livemode).toBe(true);
      expect(res.body.co_sell).toMatchObject({ status: 'submitted', decided_at: null, integration_id: integrationId, referral_id: null, status_reason: null });
      expect(res.body.co_sell!.id).toMatch(CO_SELL_ID);
      expect(res.body.co_sell!.submitted_at).toMatch(ISO_MS);
      expect(await dealRow(deal.id)).toMatchObject({ co_sell_status: 'submitted', livemode: true });
      const submitted = await list(key, { co_sell_status: 'submitted' });
      expect(submitted.body.data.map((d) => d.id)).toEqual([deal.id]);
      expectError(await register(deal.id, key), 409, 'already_registered', undefined);
    });

    it('does not count a Microsoft 365 integration of the other mode', async () => {
      const account = await app.createAccount();
      const liveIntegration = await connectM365(account, true);
      const lead = await createLead(account.testKey);
      const deal = await createDeal({ name: 'Test mode', value: 2000, stage: 'negotiation', lead_id: lead.id }, account.testKey);
      const res = await register(deal.id, account.testKey);
      expectError(res, 422, 'deal_not_eligible', undefined, ['reasons']);
      expect(res.body.error.reasons.map((r: { rule: string }) => r.rule)).toEqual(['m365_integration']);

      // And the reverse: a test-mode integration does not serve a live deal, which goes through Partner Center.
      const liveOnly = await app.createAccount();
      await connectM365(liveOnly, false);
      await connectM365(liveOnly, true);
      const liveLead = await createLead(liveOnly.liveKey, { contact_name: 'Grace Hopper', country: 'US' });
      const liveDeal = await createDeal(
        { name: 'Live mode', value: 2000, stage: 'negotiation', lead_id: liveLead.id, expected_close_date: '2099-01-31' },
        liveOnly.liveKey,
      );
      const liveRes = await register(liveDeal.id, liveOnly.liveKey);
      expectError(liveRes, 422, 'deal_not_eligible', undefined, ['reasons']);
      expect(liveRes.body.error.reasons.map((r: { rule: string }) => r.rule)).toEqual(['partner_center_integration']);

      // Once the test mode has its own, the same deal registers through it.
      const testIntegration = await connectM365(account, false);
      const ok = await register(deal.id, account.testKey);
      expect(ok.status).toBe(200);
      expect(ok.body.co_sell!.integration_id).toBe(testIntegration);
      expect(ok.body.co_sell!.integration_id).not.toBe(liveIntegration);
    });

    it('does not count a disconnected Microsoft 365 integration', async () => {
      const { key, integrationId, deal } = await eligibleSetup();
      const disconnected = await app.request('DELETE', `/v1/integrations/${integrationId}`, { key });
      expect(disconnected.status).toBe(200);
      const res = await register(deal.id, key);
      expectError(res, 422, 'deal_not_eligible', undefined, ['reasons']);
      expect(res.body.error.reasons.map((r: { rule: string }) => r.rule)).toEqual(['m365_integration']);
      expect((await dealRow(deal.id)).co_sell_id).toBeNull();
    });

    it('of 10 concurrent registrations of one deal, exactly one succeeds and the rest are 409', async () => {
      const { key, deal } = await eligibleSetup();
      const responses = await Promise.all(Array.from({ length: 10 }, () => register(deal.id, key)));
      const ok = responses.filter((r) => r.status === 200);
      const conflicts = responses.filter((r) => r.status === 409);
      expect(responses.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
      expect(ok).toHaveLength(1);
      for (const res of conflicts) expectError(res, 409, 'already_registered', undefined);
      const row = await dealRow(deal.id);
      expect(row.co_sell_id).toBe(ok[0].body.co_sell!.id);
      const [{ count }] = await app.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ count: string }>>('select count(*) from deals where id = ? and co_sell_id is not null', [deal.id]);
      expect(Number(count)).toBe(1);
      expect((await gqlDeal(deal.id, key)).data!.deal.coSell!.id).toBe(ok[0].body.co_sell!.id);
    });
  });
});

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('registerDeal per-operation limit', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ operationLimits: { ...OPERATION_LIMITS, registerDeal: { windowS: 60, max: 1 } } });
  });
  afterAll(() => app.close());

  it('is 429 rate_limit_exceeded with Retry-After on the second registration in the window, per account and mode', async () => {
    const account = await app.createAccount();
    const key = account.testKey;
    const connected = await app.request('POST', '/v1/integrations', {
      key,
      body: {
        type: 'm365',
        provider: 'microsoft365',
        credentials: { tenant_id: randomUUID(), client_id: randomUUID(), client_secret: 'limit-test-secret', mailbox: 'sales@contoso.com' },
      },
    });
    expect(connected.status).toBe(201);
    const lead = (await app.request('POST', '/v1/leads', { key, body: { company: 'Contoso', contact_email: uniqueEmail() } })).body;
    const create = async (name: string, apiKey = key, leadId: string | null = lead.id) => {
      const res = await app.request('POST', '/v1/deals', { key: apiKey, body: { name, value: 1000, stage: 'proposal', lead_id: leadId } });
      expect(res.status).toBe(201);
      return res.body as Deal;
    };
    const first = await create('first');
    const second = await create('second');

    const ok = await app.request('POST', `/v1/deals/${first.id}/register`, { key });
    expect(ok.status).toBe(200);
    const limited = await app.request('POST', `/v1/deals/${second.id}/register`, { key });
    expectError(limited, 429, 'rate_limit_exceeded', undefined);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const rows = await app.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ co_sell_id: string | null }>>('select co_sell_id from deals where id = ?', [second.id]);
    expect(rows[0].co_sell_id).toBeNull();

    // Other reads and writes are not limited by it, and the live mode has its own allowance.
    expect((await app.request('PUT', `/v1/deals/${second.id}`, { key, body: { name: 'still fine' } })).status).toBe(200);
    const liveDeal = await create('live', account.liveKey, null);
    const live = await app.request('POST', `/v1/deals/${liveDeal.id}/register`, { key: account.liveKey });
    expect(live.status).toBe(422); // counted separately: not eligible (no lead, no M365), but not 429
    expect(live.body.error.code).toBe('deal_not_eligible');
  });
});

import { randomUUID } from 'node:crypto';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { eventually } from '../helpers/receiver';
import { CONDITION_TIMEOUT_MS } from '../helpers/timeouts';
import { passesOf } from '../helpers/wait';

/**
 * Agents (CONTRACT §3, §4, §8, §10) through real HTTP, real Apollo and real PostgreSQL, with the
 * AgentRunner running beside the app on a clock the tests move: the four REST routes (create,
 * list, deploy, metrics), config validation per type, deploy versioning, the three agent types
 * acting on the shared event outbox (and only when deployed, only in their own account and mode),
 * runs recorded with their version, metrics checked against figures computed here from the runs
 * read back through GraphQL and from the deals the test itself won, a run that really crashes
 * (a PostgreSQL trigger refuses the qualifier's write), and two instances sharing the work.
 *
 * Lead scores come from the documented prior model (docs/API.md, "The lead score"): base 40, Software +15,
 * 201–1000 employees +15, a company email +5 → 75 (hot); Non-profit −8, 1–10 employees −8, a
 * gmail address −12, purchased_list −8 → 4 (cold); no industry −3, no size −5, company email +5 → 37.
 */

type Json = Record<string, unknown>;

interface Agent {
  id: string;
  object: string;
  name: string;
  type: string;
  status: string;
  config: Json;
  version: number;
  deployed_at: string | null;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

interface Action {
  kind: string;
  object_id: string;
  [detail: string]: unknown;
}

interface Run {
  id: string;
  object: string;
  agentId: string;
  version: number;
  trigger: string;
  eventId: string | null;
  eventType: string | null;
  outcome: string;
  actions: Action[];
  error: string | null;
  durationMs: number;
  createdAt: string;
  livemode: boolean;
}

interface Lead {
  id: string;
  company: string;
  status: string;
  score: number;
  livemode: boolean;
}

interface Deal {
  id: string;
  name: string;
  lead_id: string | null;
  stage: string;
  value: number;
  stage_changed_at: string;
  livemode: boolean;
}

interface Metrics {
  object: string;
  agent_id: string;
  window: string;
  from: string;
  to: string;
  runs: number;
  errors: number;
  success_rate: number | null;
  actions_by_kind: Record<string, number>;
  p50_latency_ms: number | null;
  p95_latency_ms: number | null;
  last_run_at: string | null;
  outcomes: {
    leads_qualified: number;
    leads_disqualified: number;
    deals_opened: number;
    proposals_drafted: number;
    idle_deals_flagged: number;
    qualified_leads_won: number;
    suggestions_made: number;
    leads_routed: number;
    leads_routed_by_member: Record<string, number>;
  };
  model_usage: Json;
  suggestions: Json;
}

/** The model usage and suggestion figures of an agent that asked no model and made no suggestion. */
const NO_MODEL_USAGE = { calls: 0, failures: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, by_model: [] };
const NO_SUGGESTIONS = {
  pending: 0,
  approved: 0,
  approved_automatically: 0,
  rejected: 0,
  expired: 0,
  approval_rate: null,
  p50_time_to_approval_ms: null,
  p95_time_to_approval_ms: null,
};

const AGENT_KEYS = ['config', 'created_at', 'deployed_at', 'id', 'livemode', 'name', 'object', 'status', 'type', 'updated_at', 'version'];
const AGENT_ID = /^agent_[0-9A-HJKMNP-TV-Z]{26}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ERROR_KEYS = ['code', 'message', 'param', 'request_id', 'type'];
const RUN_FIELDS = 'id object agentId version trigger eventId eventType outcome actions error durationMs createdAt livemode';
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const WINDOW_MS: Record<string, number> = { '24h': DAY_MS, '7d': 7 * DAY_MS, '30d': 30 * DAY_MS };
/** How long a test waits for an agent to act on an event (the runner polls every 100 ms in tests): a bound against hangs, not a speed check. */
const BOUND_MS = CONDITION_TIMEOUT_MS;

/** The defaults of CONTRACT §8 / docs/API.md, written out here rather than imported. */
const DEFAULTS: Record<string, Json> = {
  lead_qualifier: { qualify_at: 70, disqualify_below: 20, open_deal: false, deal_stage: 'qualification', deal_value: 0 },
  deal_follow_up: { idle_days: { prospecting: 14, qualification: 14, proposal: 7, negotiation: 7 }, deliver_to: 'none' },
  proposal_drafter: { valid_days: 30, discount_percent: 0, tax_percent: 0, notes: null, cover_note: false, daily_token_budget: 50000, instructions: null },
  follow_up_writer: {
    idle_days: { prospecting: 14, qualification: 14, proposal: 7, negotiation: 7 },
    on_lead_qualified: true,
    suggestion_ttl_days: 7,
    act_without_approval: [],
    daily_token_budget: 50000,
    instructions: null,
  },
  lead_researcher: { suggestion_ttl_days: 7, act_without_approval: [], daily_token_budget: 50000, instructions: null },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let counter = 0;
const unique = () => `${++counter}-${Date.now()}-${randomUUID().slice(0, 8)}`;

/** Leads whose prior score is known (see the header). */
const HOT_SCORE = 75;
const COLD_SCORE = 4;
const MIDDLE_SCORE = 37;
const hotLead = (extra: Json = {}): Json => {
  const u = unique();
  return { company: `Hot ${u}`, contact_email: `buyer-${u}@hot-${u}.test`, industry: 'Software', employees: 500, ...extra };
};
const coldLead = (extra: Json = {}): Json => {
  const u = unique();
  return { company: `Cold ${u}`, contact_email: `cold-${u}@gmail.com`, industry: 'Non-profit', employees: 5, source: 'purchased_list', ...extra };
};
const middleLead = (extra: Json = {}): Json => {
  const u = unique();
  return { company: `Middle ${u}`, contact_email: `mid-${u}@middle-${u}.test`, ...extra };
};

/** Continuous percentile as PostgreSQL's percentile_cont defines it (linear interpolation), rounded. */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const position = p * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const lo = sorted[lower];
  const hi = sorted[upper];
  return Math.round(lo + (hi - lo) * (position - lower));
}

/** The contract's error shape (§3) with its status, code and param, and the X-Request-Id header. */
function expectError(res: HttpResponse, status: number, code: string, param: string | undefined, extraKeys: string[] = []): void {
  const context = `${status} ${code} ${param ?? ''}: got ${res.status} ${res.text.slice(0, 400)}`;
  expect({ context, status: res.status }).toEqual({ context, status });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['error']);
  const error = res.body.error as Json;
  for (const key of Object.keys(error)) expect([...ERROR_KEYS, ...extraKeys]).toContain(key);
  expect(error.code).toBe(code);
  expect(error.type).toBe(status === 429 ? 'rate_limit_error' : 'invalid_request_error');
  expect(typeof error.message).toBe('string');
  expect((error.message as string).length).toBeGreaterThan(0);
  expect(error.message).not.toMatch(
    /\$input|Variable "|AgentCreateInput|AgentDeployInput|AgentListInput|graphql|\bat .+\(.*:\d+:\d+\)|select |insert |update "/i,
  );
  if (param === undefined) expect(error).not.toHaveProperty('param');
  else expect(error.param).toBe(param);
  expect(res.headers.get('x-request-id')).toBe(error.request_id);
}

describe('agents', () => {
  let app: TestApp;
  let owner: TestAccount;
  /** The time agents judge idleness by; tests move it forward. */
  let now = new Date();

  const sql = <T = Json>(query: string, params: unknown[] = []) => app.orm.em.getConnection().execute<T[]>(query, params);

  const createAgent = (body: unknown, key: string = owner.testKey) => app.request('POST', '/v1/agents', { key, body });
  const deploy = (id: string, body?: unknown, key: string = owner.testKey) => app.request('POST', `/v1/agents/${id}/deploy`, { key, body });
  const listAgents = (key: string, params: Record<string, string | number> = {}) => {
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return app.request('GET', `/v1/agents${qs ? `?${qs}` : ''}`, { key });
  };
  const metrics = (id: string, window?: string, key: string = owner.testKey) =>
    app.request('GET', `/v1/agents/${id}/metrics${window === undefined ? '' : `?window=${encodeURIComponent(window)}`}`, { key });

  async function newAgent(type: string, config?: Json, key: string = owner.testKey, name = `${type} ${unique()}`): Promise<Agent> {
    const res = await createAgent({ name, type, ...(config === undefined ? {} : { config }) }, key);
    if (res.status !== 201) throw new Error(`create agent failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async function deployed(id: string, body?: unknown, key: string = owner.testKey): Promise<Agent> {
    const res = await deploy(id, body, key);
    if (res.status !== 200) throw new Error(`deploy failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async function deployedAgent(type: string, config?: Json, key: string = owner.testKey): Promise<Agent> {
    return deployed((await newAgent(type, config, key)).id, undefined, key);
  }

  async function runsOf(id: string, key: string = owner.testKey): Promise<Run[]> {
    const res = await app.graphql(`query ($id: ID!) { agent(id: $id) { runs(filter: { limit: 100 }) { data { ${RUN_FIELDS} } hasMore } } }`, { id }, key);
    if (res.status !== 200 || res.body.errors) throw new Error(`runs query failed: ${res.status} ${res.text}`);
    expect(res.body.data.agent.runs.hasMore).toBe(false);
    return res.body.data.agent.runs.data;
  }

  /** Waits until the agent has exactly `count` runs (failing at once if it has more), oldest first. */
  async function waitForRuns(id: string, count: number, key: string = owner.testKey, timeoutMs = BOUND_MS): Promise<Run[]> {
    const runs = await eventually(async () => {
      const found = await runsOf(id, key);
      if (found.length > count) throw new Error(`expected ${count} runs, found ${found.length}: ${JSON.stringify(found)}`);
      expect(found).toHaveLength(count);
      return found;
    }, timeoutMs);
    return [...runs].reverse();
  }

  async function createLead(body: Json, key: string = owner.testKey, on: TestApp = app): Promise<Lead> {
    const res = await on.request<Lead>('POST', '/v1/leads', { key, body });
    if (res.status !== 201) throw new Error(`create lead failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async function getLead(id: string, key: string = owner.testKey): Promise<Lead> {
    const res = await app.request<Lead>('GET', `/v1/leads/${id}`, { key });
    if (res.status !== 200) throw new Error(`get lead failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async function createDeal(body: Json, key: string = owner.testKey, on: TestApp = app): Promise<Deal> {
    const res = await on.request<Deal>('POST', '/v1/deals', { key, body: { name: `Deal ${unique()}`, value: 1000, ...body } });
    if (res.status !== 201) throw new Error(`create deal failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async function moveDeal(id: string, stage: string, key: string = owner.testKey): Promise<Deal> {
    const res = await app.request<Deal>('PUT', `/v1/deals/${id}`, { key, body: { stage } });
    if (res.status !== 200) throw new Error(`move deal failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async function dealsOfLead(leadId: string, key: string = owner.testKey): Promise<Deal[]> {
    const res = await app.request('GET', `/v1/deals?lead_id=${leadId}&limit=100`, { key });
    if (res.status !== 200) throw new Error(`list deals failed: ${res.status} ${res.text}`);
    return res.body.data;
  }

  async function eventsOfType(
    type: string,
    key: string = owner.testKey,
  ): Promise<Array<{ id: string; type: string; livemode: boolean; data: { object: Json } }>> {
    const res = await app.graphql('query ($type: String) { events(filter: { type: $type, limit: 100 }) { data { id type livemode data } } }', { type }, key);
    if (res.status !== 200 || res.body.errors) throw new Error(`events query failed: ${res.status} ${res.text}`);
    return res.body.data.events.data;
  }

  /**
   * A barrier: every event written so far has been fanned out (tasks for the agents deployed then
   * are written in that same transaction) and every agent task is finished. After it, an agent
   * that has no task for an event will never act on it.
   */
  async function settled(): Promise<void> {
    await eventually(async () => {
      const [row] = await sql<{ events: number; tasks: number }>(
        `select (select count(*) from event_fan_outs)::int as events,
                (select count(*) from agent_tasks where done_at is null)::int as tasks`,
      );
      expect(row).toEqual({ events: 0, tasks: 0 });
    }, BOUND_MS);
  }

  /**
   * settled(), then two full passes of each instance's runner begun after it, then settled() again:
   * any scan or task those passes made is finished too, so what the runs do not show, the runner
   * did not do.
   */
  async function quiet(instances: TestApp[] = [app]): Promise<void> {
    await settled();
    await passesOf(...instances.map((instance) => instance.agentRunner!));
    await settled();
  }

  async function leadScoredEventOf(leadId: string, key: string = owner.testKey): Promise<string[]> {
    return (await eventsOfType('lead.scored', key)).filter((event) => event.data.object.id === leadId).map((event) => event.id);
  }

  beforeAll(async () => {
    app = await startTestApp({ agents: { clock: () => now, scanIntervalMs: HOUR_MS } });
  });
  afterAll(() => app.close());
  beforeEach(async () => {
    now = new Date();
    // The runner works every 100 ms; emptying the tables under it could deadlock with its scans.
    await app.agentRunner!.stop();
    await app.reset();
    app.agentRunner!.start();
    owner = await app.createAccount();
  });

  describe('configuration over REST', () => {
    it('creates each type in draft (201) with its defaults filled in, version 0 and no deployed_at', async () => {
      for (const type of Object.keys(DEFAULTS)) {
        for (const [key, livemode] of [
          [owner.testKey, false],
          [owner.liveKey, true],
        ] as const) {
          const res = await createAgent({ name: `  ${type} agent  `, type }, key);
          expect(res.status).toBe(201);
          expect(Object.keys(res.body).sort()).toEqual(AGENT_KEYS);
          expect(res.body).toMatchObject({ object: 'agent', name: `${type} agent`, type, status: 'draft', version: 0, deployed_at: null, livemode });
          expect(res.body.config).toStrictEqual(DEFAULTS[type]);
          expect(res.body.id).toMatch(AGENT_ID);
          expect(res.body.created_at).toMatch(ISO_MS);
          expect(res.body.updated_at).toMatch(ISO_MS);
        }
      }
    });

    it('keeps the settings given, fills in the rest, and merges idle_days over the default stages', async () => {
      const qualifier = await newAgent('lead_qualifier', { qualify_at: 80, open_deal: true, deal_value: 2500.5, deal_stage: 'prospecting' });
      expect(qualifier.config).toStrictEqual({ qualify_at: 80, disqualify_below: 20, open_deal: true, deal_stage: 'prospecting', deal_value: 2500.5 });

      const followUp = await newAgent('deal_follow_up', { idle_days: { proposal: 3, negotiation: 30 } });
      expect(followUp.config).toStrictEqual({ idle_days: { prospecting: 14, qualification: 14, proposal: 3, negotiation: 30 }, deliver_to: 'none' });

      const drafter = await newAgent('proposal_drafter', { valid_days: 14, discount_percent: 12.5, tax_percent: 8.125, notes: 'Net 30' });
      expect(drafter.config).toStrictEqual({
        valid_days: 14,
        discount_percent: 12.5,
        tax_percent: 8.125,
        notes: 'Net 30',
        cover_note: false,
        daily_token_budget: 50000,
        instructions: null,
      });

      // The boundaries are accepted: qualify_at may equal disqualify_below, 0 and 100 are valid.
      expect((await newAgent('lead_qualifier', { qualify_at: 0, disqualify_below: 0 })).config).toMatchObject({ qualify_at: 0, disqualify_below: 0 });
      expect((await newAgent('lead_qualifier', { qualify_at: 100, disqualify_below: 100 })).config).toMatchObject({ qualify_at: 100, disqualify_below: 100 });

      // GraphQL shows the same agent with the same snake_case config keys.
      const gql = await app.graphql('query ($id: ID!) { agent(id: $id) { id type status version config } }', { id: followUp.id }, owner.testKey);
      expect(gql.body.data.agent).toStrictEqual({ id: followUp.id, type: 'deal_follow_up', status: 'draft', version: 0, config: followUp.config });
    });

    it('refuses a config that does not fit its type with 400 parameter_invalid naming config[setting], and stores nothing', async () => {
      const cases: Array<[string, Json, string]> = [
        ['lead_qualifier', { qualify_at: 101 }, 'config[qualify_at]'],
        ['lead_qualifier', { qualify_at: -1 }, 'config[qualify_at]'],
        ['lead_qualifier', { qualify_at: 70.5 }, 'config[qualify_at]'],
        ['lead_qualifier', { qualify_at: '70' }, 'config[qualify_at]'],
        ['lead_qualifier', { qualify_at: null }, 'config[qualify_at]'],
        ['lead_qualifier', { disqualify_below: 101 }, 'config[disqualify_below]'],
        ['lead_qualifier', { qualify_at: 50, disqualify_below: 60 }, 'config[disqualify_below]'],
        ['lead_qualifier', { qualify_at: 10 }, 'config[disqualify_below]'], // the default 20 would be above it
        ['lead_qualifier', { open_deal: 'yes' }, 'config[open_deal]'],
        ['lead_qualifier', { deal_stage: 'proposal' }, 'config[deal_stage]'],
        ['lead_qualifier', { deal_stage: 'closed_won' }, 'config[deal_stage]'],
        ['lead_qualifier', { deal_value: -1 }, 'config[deal_value]'],
        ['lead_qualifier', { deal_value: 10.005 }, 'config[deal_value]'],
        ['lead_qualifier', { foo: 1 }, 'config[foo]'],
        ['lead_qualifier', { idle_days: { proposal: 3 } }, 'config[idle_days]'],
        ['deal_follow_up', { idle_days: { closed_won: 3 } }, 'config[idle_days]'],
        ['deal_follow_up', { idle_days: { proposal: 0 } }, 'config[idle_days]'],
        ['deal_follow_up', { idle_days: { proposal: 366 } }, 'config[idle_days]'],
        ['deal_follow_up', { idle_days: { proposal: 2.5 } }, 'config[idle_days]'],
        ['deal_follow_up', { idle_days: [7] }, 'config[idle_days]'],
        ['deal_follow_up', { idle_days: 7 }, 'config[idle_days]'],
        ['deal_follow_up', { qualify_at: 70 }, 'config[qualify_at]'],
        ['deal_follow_up', { deliver_to: 'email' }, 'config[deliver_to]'],
        ['deal_follow_up', { deliver_to: null }, 'config[deliver_to]'],
        ['proposal_drafter', { valid_days: 0 }, 'config[valid_days]'],
        ['proposal_drafter', { valid_days: 366 }, 'config[valid_days]'],
        ['proposal_drafter', { discount_percent: 100.5 }, 'config[discount_percent]'],
        ['proposal_drafter', { discount_percent: -5 }, 'config[discount_percent]'],
        ['proposal_drafter', { tax_percent: 1.2345 }, 'config[tax_percent]'],
        ['proposal_drafter', { notes: 'x'.repeat(5001) }, 'config[notes]'],
        ['proposal_drafter', { notes: 42 }, 'config[notes]'],
      ];
      for (const [type, config, param] of cases) {
        const res = await createAgent({ name: 'Bad', type, config });
        expectError(res, 400, 'parameter_invalid', param);
        // The message names the setting and says what it must be, without GraphQL or SQL vocabulary.
        expect(res.body.error.message).toContain(param.slice('config['.length, -1));
      }
      expect((await listAgents(owner.testKey)).body.data).toEqual([]);
      expect(await sql('select id from agents')).toEqual([]);
    });

    it("names an unknown camelCase setting as sent (config keys are the client's JSON, never renamed)", async () => {
      // qualifyAt is not a setting (qualify_at is): the error must name what was sent, not the valid setting.
      const res = await createAgent({ name: 'Bad', type: 'lead_qualifier', config: { qualifyAt: 70 } });
      expectError(res, 400, 'parameter_invalid', 'config[qualifyAt]');
      const agent = await newAgent('lead_qualifier');
      expectError(await deploy(agent.id, { config: { dealValue: 5 } }), 422, 'agent_config_invalid', 'config[dealValue]', ['problems']);
    });

    it('refuses a missing or bad name, type or config shape, and parameters an agent does not take', async () => {
      expectError(await createAgent({ type: 'lead_qualifier' }), 400, 'parameter_missing', 'name');
      expectError(await createAgent({ name: 'No type' }), 400, 'parameter_missing', 'type');
      expectError(await createAgent({ name: 'Closer', type: 'closer' }), 400, 'parameter_invalid', 'type');
      expectError(await createAgent({ name: '   ', type: 'lead_qualifier' }), 400, 'parameter_invalid', 'name');
      expectError(await createAgent({ name: 'x'.repeat(201), type: 'lead_qualifier' }), 400, 'parameter_invalid', 'name');
      expectError(await createAgent({ name: 'Array', type: 'lead_qualifier', config: [1, 2] }), 400, 'parameter_invalid', 'config');
      expectError(await createAgent({ name: 'Text', type: 'lead_qualifier', config: 'qualify_at=70' }), 400, 'parameter_invalid', 'config');
      expectError(await createAgent({ name: 'Status', type: 'lead_qualifier', status: 'deployed' }), 400, 'parameter_unknown', 'status');
      expectError(await createAgent({ name: 'Version', type: 'lead_qualifier', version: 3 }), 400, 'parameter_unknown', 'version');
      expectError(await createAgent({ name: 'Id', type: 'lead_qualifier', id: 'agent_01J0000000000000000000000' }), 400, 'parameter_unknown', 'id');
      expect(await sql('select id from agents')).toEqual([]);
    });

    it('lists agents newest first with status and type filters, pages with a cursor, and refuses bad filters', async () => {
      const created: Agent[] = [];
      for (const type of ['lead_qualifier', 'deal_follow_up', 'proposal_drafter', 'lead_qualifier', 'proposal_drafter']) {
        created.push(await newAgent(type));
        await sleep(3); // distinct created_at
      }
      await deployed(created[0].id);
      await deployed(created[2].id);
      const ids = (res: HttpResponse) => (res.body.data as Agent[]).map((agent) => agent.id);
      const newestFirst = [...created].reverse();

      const all = await listAgents(owner.testKey);
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
      expect(ids(all)).toEqual(newestFirst.map((agent) => agent.id));
      for (const agent of all.body.data as Agent[]) expect(Object.keys(agent).sort()).toEqual(AGENT_KEYS);

      const deployedIds = [created[2].id, created[0].id];
      expect(ids(await listAgents(owner.testKey, { status: 'deployed' }))).toEqual(deployedIds);
      expect(ids(await listAgents(owner.testKey, { status: 'draft' }))).toEqual(newestFirst.filter((a) => !deployedIds.includes(a.id)).map((a) => a.id));
      expect(ids(await listAgents(owner.testKey, { type: 'lead_qualifier' }))).toEqual([created[3].id, created[0].id]);
      expect(ids(await listAgents(owner.testKey, { type: 'proposal_drafter', status: 'draft' }))).toEqual([created[4].id]);
      expect(ids(await listAgents(owner.testKey, { type: 'deal_follow_up', status: 'deployed' }))).toEqual([]);

      // Pages of 2 walk every agent once.
      const walked: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: HttpResponse = await listAgents(owner.testKey, cursor ? { limit: 2, cursor } : { limit: 2 });
        expect(page.status).toBe(200);
        walked.push(...ids(page));
        cursor = page.body.next_cursor;
        expect(page.body.has_more).toBe(cursor !== null);
        pages += 1;
      } while (cursor);
      expect(pages).toBe(3);
      expect(walked).toEqual(newestFirst.map((agent) => agent.id));

      expectError(await listAgents(owner.testKey, { status: 'active' }), 400, 'parameter_invalid', 'status');
      expectError(await listAgents(owner.testKey, { type: 'closer' }), 400, 'parameter_invalid', 'type');
      expectError(await listAgents(owner.testKey, { limit: 0 }), 400, 'parameter_invalid', 'limit');
      expectError(await listAgents(owner.testKey, { limit: 101 }), 400, 'parameter_invalid', 'limit');
      expectError(await listAgents(owner.testKey, { owner: 'me' }), 400, 'parameter_unknown', 'owner');
    });

    it('keeps accounts and modes apart: another account or mode lists nothing and gets 404 on deploy and metrics', async () => {
      const agent = await newAgent('lead_qualifier');
      const liveAgent = await newAgent('proposal_drafter', undefined, owner.liveKey);
      const other = await app.createAccount();

      expect((await listAgents(owner.testKey)).body.data.map((a: Agent) => a.id)).toEqual([agent.id]);
      expect((await listAgents(owner.liveKey)).body.data.map((a: Agent) => a.id)).toEqual([liveAgent.id]);
      expect((await listAgents(other.testKey)).body.data).toEqual([]);
      expect((await listAgents(other.liveKey)).body.data).toEqual([]);

      for (const key of [owner.liveKey, other.testKey, other.liveKey]) {
        expectError(await deploy(agent.id, undefined, key), 404, 'resource_missing', 'id');
        expectError(await metrics(agent.id, '7d', key), 404, 'resource_missing', 'id');
      }
      expectError(await deploy(liveAgent.id, undefined, owner.testKey), 404, 'resource_missing', 'id');
      expectError(await metrics(liveAgent.id, undefined, owner.testKey), 404, 'resource_missing', 'id');
      const gql = await app.graphql('query ($id: ID!) { agent(id: $id) { id } }', { id: agent.id }, other.testKey);
      expect(gql.body.errors[0].extensions.code).toBe('NOT_FOUND');

      // Unknown ids and ids of the wrong shape or prefix are simply not found, never a 500.
      const lead = await createLead(middleLead());
      for (const id of ['agent_01J00000000000000000000000', 'agent_nope', lead.id, 'nope', '%20']) {
        expectError(await deploy(id), 404, 'resource_missing', 'id');
        expectError(await metrics(id), 404, 'resource_missing', 'id');
      }
      // Nothing of this touched the agent.
      const [row] = await sql<{ status: string; version: number }>('select status, version from agents where id = ?', [agent.id]);
      expect(row).toEqual({ status: 'draft', version: 0 });
    });
  });

  describe('deploying and versions', () => {
    it('deploys draft → deployed as version 1, freezes the config, records agent.deployed; redeploying makes version 2', async () => {
      const agent = await newAgent('lead_qualifier', { qualify_at: 80 });
      const first = await deploy(agent.id);
      expect(first.status).toBe(200);
      expect(Object.keys(first.body).sort()).toEqual(AGENT_KEYS);
      expect(first.body).toMatchObject({ id: agent.id, status: 'deployed', version: 1, config: agent.config, livemode: false });
      expect(first.body.deployed_at).toMatch(ISO_MS);

      const second = await deployed(agent.id, { config: { qualify_at: 90, disqualify_below: 10 } });
      expect(second).toMatchObject({ status: 'deployed', version: 2 });
      expect(second.config).toStrictEqual({ ...DEFAULTS.lead_qualifier, qualify_at: 90, disqualify_below: 10 });
      expect(Date.parse(second.deployed_at!)).toBeGreaterThanOrEqual(Date.parse(first.body.deployed_at!));

      const versions = await sql<{ version: number; config: Json }>('select version, config from agent_versions where agent_id = ? order by version', [
        agent.id,
      ]);
      expect(versions).toEqual([
        { version: 1, config: { ...DEFAULTS.lead_qualifier, qualify_at: 80 } },
        { version: 2, config: { ...DEFAULTS.lead_qualifier, qualify_at: 90, disqualify_below: 10 } },
      ]);

      const events = await eventsOfType('agent.deployed');
      expect(events).toHaveLength(2);
      expect(events.map((event) => event.data.object.version).sort()).toEqual([1, 2]);
      for (const event of events) expect(event.data.object).toMatchObject({ id: agent.id, object: 'agent', status: 'deployed' });
      const listed = (await listAgents(owner.testKey, { status: 'deployed' })).body.data as Agent[];
      expect(listed.map((a) => [a.id, a.version])).toEqual([[agent.id, 2]]);
    });

    it('refuses a bad config on deploy with 422 agent_config_invalid naming every problem, and changes nothing', async () => {
      const agent = await newAgent('lead_qualifier', { qualify_at: 80 });
      await deployed(agent.id);

      const bad = await deploy(agent.id, { config: { qualify_at: 150, open_deal: 'sometimes' } });
      expectError(bad, 422, 'agent_config_invalid', 'config[qualify_at]', ['problems']);
      expect(bad.body.error.problems).toEqual([
        { field: 'qualify_at', message: expect.stringContaining('qualify_at') },
        { field: 'open_deal', message: expect.stringContaining('open_deal') },
      ]);
      expect(bad.body.error.message).toMatch(/qualify_at/);
      expect(bad.body.error.message).toMatch(/open_deal/);

      expectError(await deploy(agent.id, { config: { qualify_at: 30, disqualify_below: 40 } }), 422, 'agent_config_invalid', 'config[disqualify_below]', [
        'problems',
      ]);
      expectError(await deploy(agent.id, { config: { idle_days: { proposal: 3 } } }), 422, 'agent_config_invalid', 'config[idle_days]', ['problems']);
      // Not an object at all is the request's shape, not the config's content: 400.
      expectError(await deploy(agent.id, { config: [1] }), 400, 'parameter_invalid', 'config');
      expectError(await deploy(agent.id, { revision: 7 }), 400, 'parameter_unknown', 'revision');

      const drafter = await newAgent('proposal_drafter');
      expectError(await deploy(drafter.id, { config: { valid_days: 0 } }), 422, 'agent_config_invalid', 'config[valid_days]', ['problems']);
      const [draft] = await sql<{ status: string; version: number }>('select status, version from agents where id = ?', [drafter.id]);
      expect(draft).toEqual({ status: 'draft', version: 0 });

      const [row] = await sql<{ status: string; version: number; config: Json }>('select status, version, config from agents where id = ?', [agent.id]);
      expect(row).toEqual({ status: 'deployed', version: 1, config: { ...DEFAULTS.lead_qualifier, qualify_at: 80 } });
      expect(await sql('select version from agent_versions where agent_id = ?', [agent.id])).toEqual([{ version: 1 }]);
      expect(await eventsOfType('agent.deployed')).toHaveLength(1);
    });

    it('runs name the version they ran with; a config changes behaviour only from the version that deploys it', async () => {
      const agent = await newAgent('lead_qualifier', { qualify_at: 90 });
      await deployed(agent.id);

      // v1: 75 is below qualify_at 90 and not below 20: left alone.
      const first = await createLead(hotLead());
      expect(first.score).toBe(HOT_SCORE);
      const [run1] = await waitForRuns(agent.id, 1);
      expect(run1).toMatchObject({ version: 1, trigger: 'event', eventType: 'lead.scored', outcome: 'no_action', actions: [], error: null });
      expect(run1.eventId).toEqual((await leadScoredEventOf(first.id))[0]);

      // v2, through the deploy body: 75 now qualifies, for leads that come after it.
      expect(await deployed(agent.id, { config: { qualify_at: 75 } })).toMatchObject({ version: 2, config: { qualify_at: 75 } });
      const second = await createLead(hotLead());
      const runs2 = await waitForRuns(agent.id, 2);
      expect(runs2[1]).toMatchObject({ version: 2, outcome: 'acted', actions: [{ kind: 'lead_qualified', object_id: second.id, score: HOT_SCORE }] });
      expect((await getLead(second.id)).status).toBe('qualified');
      expect((await getLead(first.id)).status).toBe('new'); // judged by v1 once; not judged again

      // A working-copy change (GraphQL updateAgent) does not reach the deployed version.
      const update = await app.graphql(
        'mutation ($id: ID!, $input: AgentUpdateInput!) { updateAgent(id: $id, input: $input) { status version config } }',
        { id: agent.id, input: { config: { qualify_at: 95 } } },
        owner.testKey,
      );
      expect(update.body.data.updateAgent).toEqual({ status: 'deployed', version: 2, config: { ...DEFAULTS.lead_qualifier, qualify_at: 95 } });
      const third = await createLead(hotLead());
      const runs3 = await waitForRuns(agent.id, 3);
      expect(runs3[2]).toMatchObject({ version: 2, outcome: 'acted', actions: [{ kind: 'lead_qualified', object_id: third.id }] });

      // Deploying without a body freezes the working copy as v3.
      expect(await deployed(agent.id)).toMatchObject({ version: 3, config: { qualify_at: 95 } });
      const fourth = await createLead(hotLead());
      const runs4 = await waitForRuns(agent.id, 4);
      expect(runs4[3]).toMatchObject({ version: 3, outcome: 'no_action', actions: [] });
      expect((await getLead(fourth.id)).status).toBe('new');
      expect(runs4.map((run) => run.version)).toEqual([1, 2, 2, 3]);
      const scoredEvents = await Promise.all([first, second, third, fourth].map(async (lead) => (await leadScoredEventOf(lead.id))[0]));
      expect(runs4.map((run) => run.eventId)).toEqual(scoredEvents);
    });

    it('limits deployAgent to 10 a minute per account and mode (429 rate_limit_exceeded), the other mode unaffected', async () => {
      const agent = await newAgent('proposal_drafter');
      for (let i = 1; i <= 10; i += 1) expect(await deployed(agent.id)).toMatchObject({ version: i });
      const refused = await deploy(agent.id);
      expectError(refused, 429, 'rate_limit_exceeded', undefined);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const [row] = await sql<{ version: number }>('select version from agents where id = ?', [agent.id]);
      expect(row.version).toBe(10);

      const live = await newAgent('proposal_drafter', undefined, owner.liveKey);
      expect(await deployed(live.id, undefined, owner.liveKey)).toMatchObject({ version: 1, livemode: true });
    });
  });

  describe('pause, resume and rollback', () => {
    const post = (id: string, action: 'pause' | 'resume') => app.request('POST', `/v1/agents/${id}/${action}`, { key: owner.testKey });

    it('a paused agent acts on nothing until resumed; pausing or resuming twice changes nothing; a draft is 409', async () => {
      const agent = await deployedAgent('lead_qualifier');
      const paused = await post(agent.id, 'pause');
      expect(paused.status).toBe(200);
      expect(paused.body).toMatchObject({ id: agent.id, status: 'paused', version: 1 });
      expect((await post(agent.id, 'pause')).body.status).toBe('paused');

      const ignored = await createLead(hotLead());
      await settled();
      expect(await runsOf(agent.id)).toEqual([]);
      expect((await getLead(ignored.id)).status).toBe('new');
      expect((await listAgents(owner.testKey, { status: 'paused' })).body.data.map((a: Agent) => a.id)).toEqual([agent.id]);
      // A paused agent keeps its history: only a draft may be deleted.
      expect((await app.request('DELETE', `/v1/agents/${agent.id}`, { key: owner.testKey })).status).toBe(409);

      const resumed = await post(agent.id, 'resume');
      expect(resumed.status).toBe(200);
      expect(resumed.body).toMatchObject({ status: 'deployed', version: 1 });
      expect((await post(agent.id, 'resume')).body.status).toBe('deployed');
      const judged = await createLead(hotLead());
      await eventually(async () => expect((await getLead(judged.id)).status).toBe('qualified'), BOUND_MS);
      expect(await waitForRuns(agent.id, 1)).toEqual([expect.objectContaining({ version: 1, outcome: 'acted' })]);

      // One event per move, none for the moves that changed nothing.
      expect((await eventsOfType('agent.paused')).map((event) => event.data.object)).toEqual([expect.objectContaining({ id: agent.id, status: 'paused' })]);
      expect((await eventsOfType('agent.resumed')).map((event) => event.data.object)).toEqual([expect.objectContaining({ id: agent.id, status: 'deployed' })]);

      const draft = await newAgent('lead_qualifier');
      for (const action of ['pause', 'resume'] as const) {
        const refused = await post(draft.id, action);
        expect(refused.status).toBe(409);
        expect(refused.body.error.code).toBe('resource_conflict');
      }
      expect((await post('agent_00000000000000000000000000', 'pause')).status).toBe(404);
    });

    it('deploying an earlier version again rolls back as a new version; an unknown version or one with a config is 400', async () => {
      const agent = await newAgent('lead_qualifier', { qualify_at: 80 });
      await deployed(agent.id);
      await deployed(agent.id, { config: { qualify_at: 95 } });
      const rolledBack = await deployed(agent.id, { version: 1 });
      expect(rolledBack).toMatchObject({ status: 'deployed', version: 3 });
      expect(rolledBack.config).toStrictEqual({ ...DEFAULTS.lead_qualifier, qualify_at: 80 });
      const versions = await sql<{ version: number; config: Json }>('select version, config from agent_versions where agent_id = ? order by version', [
        agent.id,
      ]);
      expect(versions.map((row) => [row.version, row.config.qualify_at])).toEqual([
        [1, 80],
        [2, 95],
        [3, 80],
      ]);

      const unknown = await deploy(agent.id, { version: 9 });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatchObject({ code: 'parameter_invalid', param: 'version' });
      expect(unknown.body.error.message).toContain('its versions are 1 to 3');
      const both = await deploy(agent.id, { version: 1, config: { qualify_at: 70 } });
      expect(both.status).toBe(400);
      expect(both.body.error.param).toBe('version');
      expect((await deploy(agent.id, { version: 0 })).status).toBe(400);
      expect((await app.request('GET', `/v1/agents/${agent.id}`, { key: owner.testKey })).body.version).toBe(3);
    });
  });

  describe('lead qualifier', () => {
    it('does nothing while in draft; once deployed it qualifies a hot lead and disqualifies a cold one within a bounded time', async () => {
      const agent = await newAgent('lead_qualifier');
      const early = await createLead(hotLead());
      await quiet();
      expect(await runsOf(agent.id)).toEqual([]);
      expect(await sql('select id from agent_tasks where agent_id = ?', [agent.id])).toEqual([]);
      expect((await getLead(early.id)).status).toBe('new');

      await deployed(agent.id);
      const hot = await createLead(hotLead());
      const cold = await createLead(coldLead());
      const middle = await createLead(middleLead());
      expect([hot.score, cold.score, middle.score]).toEqual([HOT_SCORE, COLD_SCORE, MIDDLE_SCORE]);
      expect([hot.status, cold.status, middle.status]).toEqual(['new', 'new', 'new']);

      await eventually(async () => expect((await getLead(hot.id)).status).toBe('qualified'), BOUND_MS);
      await eventually(async () => expect((await getLead(cold.id)).status).toBe('disqualified'), BOUND_MS);
      const runs = await waitForRuns(agent.id, 3);
      await settled();

      const byLead = new Map<string, Run>();
      for (const lead of [hot, cold, middle]) {
        const [eventId] = await leadScoredEventOf(lead.id);
        const run = runs.find((r) => r.eventId === eventId);
        expect(run).toBeDefined();
        byLead.set(lead.id, run!);
      }
      expect(byLead.get(hot.id)).toMatchObject({
        outcome: 'acted',
        version: 1,
        trigger: 'event',
        error: null,
        actions: [{ kind: 'lead_qualified', object_id: hot.id, score: HOT_SCORE }],
      });
      expect(byLead.get(cold.id)).toMatchObject({ outcome: 'acted', actions: [{ kind: 'lead_disqualified', object_id: cold.id, score: COLD_SCORE }] });
      expect(byLead.get(middle.id)).toMatchObject({ outcome: 'no_action', actions: [] });
      for (const run of runs) {
        expect(run).toMatchObject({ object: 'agent_run', agentId: agent.id, livemode: false, eventType: 'lead.scored' });
        expect(run.id).toMatch(/^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/);
        expect(run.durationMs).toBeGreaterThanOrEqual(0);
        expect(run.createdAt).toMatch(ISO_MS);
      }
      expect((await getLead(middle.id)).status).toBe('new');
      // The lead from before the deploy is never judged; no deal was opened (open_deal defaults to false).
      expect((await getLead(early.id)).status).toBe('new');
      expect(await sql('select id from deals')).toEqual([]);

      // Each acting run announced itself as agent.action, with the run as data.object.
      const actions = await eventsOfType('agent.action');
      expect(actions.map((event) => event.data.object.id).sort()).toEqual([byLead.get(hot.id)!.id, byLead.get(cold.id)!.id].sort());
      for (const event of actions) {
        const run = runs.find((r) => r.id === event.data.object.id)!;
        expect(event.data.object).toMatchObject({
          object: 'agent_run',
          agent_id: agent.id,
          version: 1,
          outcome: 'acted',
          trigger: 'event',
          event_id: run.eventId,
          actions: run.actions,
        });
      }
    });

    it('with open_deal opens exactly one deal per qualified lead, and none for a lead that has one or is rescored', async () => {
      const agent = await newAgent('lead_qualifier', { open_deal: true, deal_stage: 'prospecting', deal_value: 2500.5 });
      // A lead that already has a deal, from before the agent was deployed.
      const withDeal = await createLead(middleLead());
      const existing = await createDeal({ lead_id: withDeal.id, name: 'Existing', stage: 'qualification' });
      await settled();
      await deployed(agent.id);

      const hot = await createLead(hotLead());
      const runs = await waitForRuns(agent.id, 1);
      expect(runs[0].actions).toHaveLength(2);
      const deals = await dealsOfLead(hot.id);
      expect(deals).toHaveLength(1);
      expect(deals[0]).toMatchObject({ lead_id: hot.id, name: hot.company, stage: 'prospecting', value: 2500.5, livemode: false });
      expect(runs[0].actions).toEqual([
        { kind: 'lead_qualified', object_id: hot.id, score: HOT_SCORE },
        { kind: 'deal_opened', object_id: deals[0].id, lead_id: hot.id },
      ]);
      expect((await getLead(hot.id)).status).toBe('qualified');

      // Rescoring the qualified lead (a scored field changes): a run, but the lead was moved past new, so nothing more.
      const rescore = await app.request('PUT', `/v1/leads/${hot.id}`, { key: owner.testKey, body: { contact_name: 'Jane Doe' } });
      expect(rescore.status).toBe(200);
      expect(rescore.body.score).toBe(HOT_SCORE + 3);
      const afterRescore = await waitForRuns(agent.id, 2);
      expect(afterRescore[1]).toMatchObject({ outcome: 'no_action', actions: [] });
      expect(await dealsOfLead(hot.id)).toHaveLength(1);

      // The lead with a deal becomes hot by a change: qualified, and no second deal.
      const rescored = await app.request('PUT', `/v1/leads/${withDeal.id}`, { key: owner.testKey, body: { industry: 'Software', employees: 500 } });
      expect(rescored.body.score).toBe(HOT_SCORE);
      const runs3 = await waitForRuns(agent.id, 3);
      expect(runs3[2]).toMatchObject({ outcome: 'acted', actions: [{ kind: 'lead_qualified', object_id: withDeal.id, score: HOT_SCORE }] });
      expect((await dealsOfLead(withDeal.id)).map((deal) => deal.id)).toEqual([existing.id]);

      // A cold lead gets no deal.
      const cold = await createLead(coldLead());
      const runs4 = await waitForRuns(agent.id, 4);
      expect(runs4[3].actions).toEqual([{ kind: 'lead_disqualified', object_id: cold.id, score: COLD_SCORE }]);
      expect(await dealsOfLead(cold.id)).toEqual([]);
      const [count] = await sql<{ n: number }>('select count(*)::int as n from deals');
      expect(count.n).toBe(2);
    });

    it('qualifies a contacted lead but leaves alone leads a person already qualified, disqualified or converted', async () => {
      const agent = await deployedAgent('lead_qualifier');
      const contacted = await createLead(hotLead({ status: 'contacted' }));
      const disqualified = await createLead(hotLead({ status: 'disqualified' }));
      const qualified = await createLead(coldLead({ status: 'qualified' }));
      const runs = await waitForRuns(agent.id, 3);
      expect((await getLead(contacted.id)).status).toBe('qualified');
      expect((await getLead(disqualified.id)).status).toBe('disqualified');
      expect((await getLead(qualified.id)).status).toBe('qualified');
      expect(runs.filter((run) => run.outcome === 'acted').map((run) => run.actions)).toEqual([
        [{ kind: 'lead_qualified', object_id: contacted.id, score: HOT_SCORE }],
      ]);
      expect(runs.filter((run) => run.outcome === 'no_action')).toHaveLength(2);
    });

    it('acts only in its own mode and account: a test-mode agent never touches live data, nor a live one test data', async () => {
      const testAgent = await deployedAgent('lead_qualifier');
      const other = await app.createAccount();
      const otherAgent = await deployedAgent('lead_qualifier', { qualify_at: 10, disqualify_below: 5 }, other.testKey);

      const liveHot = await createLead(hotLead(), owner.liveKey);
      const testHot = await createLead(hotLead());
      await eventually(async () => expect((await getLead(testHot.id)).status).toBe('qualified'), BOUND_MS);
      await settled();
      expect((await getLead(liveHot.id, owner.liveKey)).status).toBe('new');
      expect((await runsOf(testAgent.id)).map((run) => run.actions)).toEqual([[{ kind: 'lead_qualified', object_id: testHot.id, score: HOT_SCORE }]]);

      // A live agent now, with different settings: each acts only on its own mode's new leads.
      const liveAgent = await deployedAgent('lead_qualifier', { qualify_at: 90, disqualify_below: 80 }, owner.liveKey);
      const liveLead = await createLead(hotLead(), owner.liveKey); // 75 < 80: disqualified by the live agent
      const testCold = await createLead(coldLead()); // 4 < 20: disqualified by the test agent
      const testMiddle = await createLead(middleLead()); // 37: the test agent leaves it; the live agent never sees it
      await waitForRuns(liveAgent.id, 1, owner.liveKey);
      await waitForRuns(testAgent.id, 3);
      await settled();

      expect((await getLead(liveLead.id, owner.liveKey)).status).toBe('disqualified');
      expect((await getLead(liveHot.id, owner.liveKey)).status).toBe('new');
      expect((await getLead(testCold.id)).status).toBe('disqualified');
      expect((await getLead(testMiddle.id)).status).toBe('new');

      const liveRuns = await runsOf(liveAgent.id, owner.liveKey);
      expect(liveRuns.map((run) => [run.livemode, run.actions])).toEqual([[true, [{ kind: 'lead_disqualified', object_id: liveLead.id, score: HOT_SCORE }]]]);
      const testRuns = await runsOf(testAgent.id);
      expect(testRuns.every((run) => run.livemode === false)).toBe(true);
      expect(testRuns.flatMap((run) => run.actions.map((action) => action.object_id)).sort()).toEqual([testHot.id, testCold.id].sort());

      // Every task of each agent came from an event of its own account and mode.
      const tasks = await sql<{ agent_id: string; account_id: string; livemode: boolean }>(
        'select t.agent_id, e.account_id, e.livemode from agent_tasks t join events e on e.id = t.event_id',
      );
      expect(tasks.length).toBeGreaterThan(0);
      for (const task of tasks) {
        expect([testAgent.id, liveAgent.id]).toContain(task.agent_id);
        expect([task.account_id, task.livemode]).toEqual([owner.account.id, task.agent_id === liveAgent.id]);
      }
      // The other account's eager agent saw none of it; its runs are its own.
      expect(await runsOf(otherAgent.id, other.testKey)).toEqual([]);
      const gqlRuns = await app.graphql('query ($id: ID!) { agent(id: $id) { id } }', { id: liveAgent.id }, owner.testKey);
      expect(gqlRuns.body.errors[0].extensions.code).toBe('NOT_FOUND');
    });
  });

  describe('proposal drafter', () => {
    it('drafts a proposal with its configured terms when a deal enters proposal, and the PDF renders', async () => {
      const config = { valid_days: 14, discount_percent: 10, tax_percent: 8.5, notes: 'Drafted by the agent' };
      const agent = await deployedAgent('proposal_drafter', config);

      const moved = await createDeal({ name: 'Moved deal', value: 1000 });
      const runs1 = await waitForRuns(agent.id, 1);
      expect(runs1[0]).toMatchObject({ eventType: 'deal.created', outcome: 'no_action', actions: [] });
      await moveDeal(moved.id, 'qualification');
      const runs2 = await waitForRuns(agent.id, 2);
      expect(runs2[1]).toMatchObject({ eventType: 'deal.stage_changed', outcome: 'no_action', actions: [] });

      await moveDeal(moved.id, 'proposal');
      const direct = await createDeal({ name: 'Direct deal', value: 250.25, stage: 'proposal' });
      const runs = await waitForRuns(agent.id, 4);
      const acted = runs.filter((run) => run.outcome === 'acted');
      expect(acted).toHaveLength(2);
      expect(acted.map((run) => run.eventType).sort()).toEqual(['deal.created', 'deal.stage_changed']);

      for (const [deal, subtotal] of [
        [moved, 1000],
        [direct, 250.25],
      ] as const) {
        const run = acted.find((r) => r.actions[0].deal_id === deal.id)!;
        expect(run.actions).toEqual([
          { kind: 'proposal_drafted', object_id: expect.stringMatching(/^prop_/), deal_id: deal.id, number: expect.stringMatching(/^P-\d{4}-\d{6}$/) },
        ]);
        const proposalId = run.actions[0].object_id;
        const res = await app.request('GET', `/v1/proposals/${proposalId}`, { key: owner.testKey });
        expect(res.status).toBe(200);
        const discount = Math.round(subtotal * 10) / 100; // 10 %
        const tax = Math.round((subtotal - discount) * 8.5) / 100; // 8.5 % of the discounted subtotal
        expect(res.body).toMatchObject({
          object: 'proposal',
          deal_id: deal.id,
          number: run.actions[0].number,
          livemode: false,
          discount_percent: 10,
          tax_percent: 8.5,
          notes: 'Drafted by the agent',
          subtotal,
          discount,
          tax,
          total: Math.round((subtotal - discount + tax) * 100) / 100,
          currency: 'USD',
        });
        expect(res.body.valid_until).toBe(new Date(Date.parse(res.body.created_at) + 14 * DAY_MS).toISOString().slice(0, 10));
        expect(res.body.pdf_url).toMatch(new RegExp(`/v1/proposals/${proposalId}/pdf$`));

        const pdf = await fetch(`${app.baseUrl}/v1/proposals/${proposalId}/pdf`, { headers: { authorization: `Bearer ${owner.testKey}` } });
        expect(pdf.status).toBe(200);
        expect(pdf.headers.get('content-type')).toMatch(/^application\/pdf/);
        expect(pdf.headers.get('content-disposition')).toMatch(/attachment/);
        const bytes = Buffer.from(await pdf.arrayBuffer());
        expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
        expect(bytes.subarray(-8).toString('latin1')).toContain('%%EOF');
        expect(bytes.length).toBeGreaterThan(1000);
      }

      // One proposal per entry into proposal; edits inside the stage and other modes draft nothing.
      const rename = await app.request('PUT', `/v1/deals/${direct.id}`, { key: owner.testKey, body: { name: 'Renamed' } });
      expect(rename.status).toBe(200);
      const liveDeal = await createDeal({ stage: 'proposal' }, owner.liveKey);
      await settled();
      expect(await runsOf(agent.id)).toHaveLength(4);
      const proposals = await sql<{ deal_id: string; livemode: boolean }>('select deal_id, livemode from proposals order by deal_id');
      expect(proposals).toEqual([moved.id, direct.id].sort().map((id) => ({ deal_id: id, livemode: false })));
      expect(proposals.map((p) => p.deal_id)).not.toContain(liveDeal.id);

      const metricsNow = await metrics(agent.id, '24h');
      expect(metricsNow.body.outcomes.proposals_drafted).toBe(2);
      expect(metricsNow.body.actions_by_kind).toEqual({ proposal_drafted: 2 });
    });

    it('a draft drafter drafts nothing', async () => {
      const agent = await newAgent('proposal_drafter');
      await createDeal({ stage: 'proposal' });
      await quiet();
      expect(await runsOf(agent.id)).toEqual([]);
      expect(await sql('select id from proposals')).toEqual([]);
    });
  });

  describe('deal follow-up', () => {
    it('on a controllable clock raises an idle deal once per stage entered, with agent.action, and not a fresh one', async () => {
      const idle = await createDeal({ name: 'Goes idle', stage: 'proposal' }); // 7 days allowed
      const slow = await createDeal({ name: 'Slow stage', stage: 'prospecting' }); // 14 days allowed
      // The clock moves in whole days (plus a minute) past the later deal's stage change.
      const t0 = Date.parse(slow.stage_changed_at) + 60_000;
      expect(Date.parse(idle.stage_changed_at)).toBeLessThanOrEqual(Date.parse(slow.stage_changed_at));
      const won = await createDeal({ name: 'Closed', stage: 'closed_won' }); // closed: never idle
      const liveIdle = await createDeal({ stage: 'proposal' }, owner.liveKey); // other mode
      const draftAgent = await newAgent('deal_follow_up');
      const agent = await deployedAgent('deal_follow_up');

      // The first scan, at the real time: every deal is fresh.
      const [scan1] = await waitForRuns(agent.id, 1);
      expect(scan1).toMatchObject({ trigger: 'schedule', eventId: null, eventType: null, outcome: 'no_action', actions: [], version: 1 });
      // No new scan while the clock stays within the scan interval.
      await quiet();
      expect(await runsOf(agent.id)).toHaveLength(1);

      // Eight days later: the proposal deal is past its 7 days, the prospecting deal not past 14.
      now = new Date(t0 + 8 * DAY_MS);
      const runs2 = await waitForRuns(agent.id, 2);
      expect(runs2[1]).toMatchObject({ trigger: 'schedule', outcome: 'acted', error: null });
      expect(runs2[1].actions).toEqual([{ kind: 'deal_idle', object_id: idle.id, stage: 'proposal', idle_days: 8, threshold_days: 7 }]);

      // The next scan does not raise it again.
      now = new Date(t0 + 8 * DAY_MS + HOUR_MS);
      const runs3 = await waitForRuns(agent.id, 3);
      expect(runs3[2]).toMatchObject({ outcome: 'no_action', actions: [] });

      // Entering a new stage makes it a new case: raised again once it has sat there past the limit.
      await moveDeal(idle.id, 'negotiation');
      now = new Date(t0 + 8 * DAY_MS + 2 * HOUR_MS);
      const runs4 = await waitForRuns(agent.id, 4);
      expect(runs4[3].actions).toEqual([{ kind: 'deal_idle', object_id: idle.id, stage: 'negotiation', idle_days: 8, threshold_days: 7 }]);

      // Fifteen days: the prospecting deal too (the negotiation one was raised for this stage already).
      now = new Date(t0 + 15 * DAY_MS);
      const runs5 = await waitForRuns(agent.id, 5);
      expect(runs5[4].actions).toEqual([{ kind: 'deal_idle', object_id: slow.id, stage: 'prospecting', idle_days: 15, threshold_days: 14 }]);
      const flagged = runs5.flatMap((run) => run.actions.map((action) => action.object_id));
      expect(flagged).not.toContain(won.id);
      expect(flagged).not.toContain(liveIdle.id);

      // Every acting scan announced itself; the draft agent never scanned.
      const events = await eventsOfType('agent.action');
      const actedRuns = runs5.filter((run) => run.outcome === 'acted');
      expect(events.map((event) => event.data.object.id).sort()).toEqual(actedRuns.map((run) => run.id).sort());
      for (const event of events) {
        const run = actedRuns.find((r) => r.id === event.data.object.id)!;
        expect(event.livemode).toBe(false);
        expect(event.data.object).toMatchObject({
          object: 'agent_run',
          agent_id: agent.id,
          trigger: 'schedule',
          event_id: null,
          outcome: 'acted',
          actions: run.actions,
        });
      }
      expect(await runsOf(draftAgent.id)).toEqual([]);
      expect(await eventsOfType('agent.action', owner.liveKey)).toEqual([]);

      const m = (await metrics(agent.id, '24h')).body;
      expect(m.outcomes.idle_deals_flagged).toBe(3);
      expect(m.runs).toBe(5);
    });
  });

  describe('metrics', () => {
    it('equal the figures derived here from the recorded runs and the deals the test won, per window', async () => {
      const agent = await deployedAgent('lead_qualifier', { open_deal: true, deal_value: 1200 });
      const hot: Lead[] = [];
      for (let i = 0; i < 4; i += 1) hot.push(await createLead(hotLead()));
      const cold = [await createLead(coldLead()), await createLead(coldLead())];
      const middle = await createLead(middleLead());
      await waitForRuns(agent.id, 7);
      await settled();

      // Win the deals of three qualified leads, lose the fourth; win a person's deal on the middle lead.
      const dealOf = async (leadId: string) => (await dealsOfLead(leadId))[0];
      const wonLeads = new Set([hot[0].id, hot[1].id, hot[2].id]);
      for (const lead of hot) await moveDeal((await dealOf(lead.id)).id, wonLeads.has(lead.id) ? 'closed_won' : 'closed_lost');
      const manual = await createDeal({ lead_id: middle.id });
      await moveDeal(manual.id, 'closed_won');
      await settled();
      expect(await runsOf(agent.id)).toHaveLength(7); // deal events start no qualifier run

      // Move some runs back in time to tell the windows apart: 3 days, 10 days and 40 days ago.
      const runs0 = await runsOf(agent.id);
      const runAbout = (leadId: string) => runs0.find((run) => run.actions.some((action) => action.object_id === leadId))!.id;
      const backdate = async (runId: string, days: number) =>
        sql(`update agent_runs set created_at = now() - make_interval(days => ?) where id = ?`, [days, runId]);
      await backdate(runAbout(hot[0].id), 3);
      await backdate(runAbout(hot[1].id), 10);
      await backdate(runAbout(cold[0].id), 40);

      const runs = await runsOf(agent.id);
      const lastRunAt = new Date(Math.max(...runs.map((run) => Date.parse(run.createdAt)))).toISOString();
      for (const window of ['24h', '7d', '30d']) {
        const res = await metrics(agent.id, window);
        expect(res.status).toBe(200);
        const body: Metrics = res.body;
        expect(Object.keys(body).sort()).toEqual(
          [
            'actions_by_kind',
            'agent_id',
            'errors',
            'from',
            'last_run_at',
            'model_usage',
            'object',
            'outcomes',
            'p50_latency_ms',
            'p95_latency_ms',
            'runs',
            'success_rate',
            'suggestions',
            'to',
            'window',
          ].sort(),
        );
        expect(Date.parse(body.to) - Date.parse(body.from)).toBe(WINDOW_MS[window]);
        expect(Math.abs(Date.now() - Date.parse(body.to))).toBeLessThan(5_000);

        const inWindow = runs.filter((run) => Date.parse(run.createdAt) >= Date.parse(body.from) && Date.parse(run.createdAt) <= Date.parse(body.to));
        const actions = inWindow.flatMap((run) => run.actions);
        const byKind: Record<string, number> = {};
        for (const action of actions) byKind[action.kind] = (byKind[action.kind] ?? 0) + 1;
        const errors = inWindow.filter((run) => run.outcome === 'error').length;
        const durations = inWindow.map((run) => run.durationMs);
        const qualified = new Set(actions.filter((action) => action.kind === 'lead_qualified').map((action) => action.object_id));
        const count = (kind: string) => actions.filter((action) => action.kind === kind).length;
        expect(body).toEqual({
          object: 'agent_metrics',
          agent_id: agent.id,
          window,
          from: body.from,
          to: body.to,
          runs: inWindow.length,
          errors,
          success_rate: inWindow.length ? (inWindow.length - errors) / inWindow.length : null,
          actions_by_kind: byKind,
          p50_latency_ms: percentile(durations, 0.5),
          p95_latency_ms: percentile(durations, 0.95),
          last_run_at: lastRunAt,
          outcomes: {
            leads_qualified: count('lead_qualified'),
            leads_disqualified: count('lead_disqualified'),
            deals_opened: count('deal_opened'),
            proposals_drafted: count('proposal_drafted'),
            idle_deals_flagged: count('deal_idle'),
            qualified_leads_won: [...qualified].filter((id) => wonLeads.has(id)).length,
            suggestions_made: 0,
            leads_routed: 0,
            leads_routed_by_member: {},
          },
          // A lead qualifier asks no model and writes no suggestions (agent-metrics-writers.test.ts counts those).
          model_usage: NO_MODEL_USAGE,
          suggestions: NO_SUGGESTIONS,
        });
      }
      // The figures written out for this data set, so a shared mistake above cannot hide.
      const figures = async (window: string) => {
        const { body } = await metrics(agent.id, window);
        return [body.runs, body.outcomes.leads_qualified, body.outcomes.leads_disqualified, body.outcomes.deals_opened, body.outcomes.qualified_leads_won];
      };
      expect(await figures('24h')).toEqual([4, 2, 1, 2, 1]);
      expect(await figures('7d')).toEqual([5, 3, 1, 3, 2]);
      expect(await figures('30d')).toEqual([6, 4, 1, 4, 3]);
      expect((await metrics(agent.id)).body.window).toBe('7d');
    });

    it('accepts the windows 24h, 7d and 30d (default 7d), refuses others with 400, and shows no runs as empty figures', async () => {
      const agent = await newAgent('deal_follow_up');
      for (const window of ['24h', '7d', '30d', undefined]) {
        const res = await metrics(agent.id, window);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          object: 'agent_metrics',
          agent_id: agent.id,
          window: window ?? '7d',
          from: expect.stringMatching(ISO_MS),
          to: expect.stringMatching(ISO_MS),
          runs: 0,
          errors: 0,
          success_rate: null,
          actions_by_kind: {},
          p50_latency_ms: null,
          p95_latency_ms: null,
          last_run_at: null,
          outcomes: {
            leads_qualified: 0,
            leads_disqualified: 0,
            deals_opened: 0,
            proposals_drafted: 0,
            idle_deals_flagged: 0,
            qualified_leads_won: 0,
            suggestions_made: 0,
            leads_routed: 0,
            leads_routed_by_member: {},
          },
          model_usage: NO_MODEL_USAGE,
          suggestions: NO_SUGGESTIONS,
        });
      }
      for (const window of ['1h', '7D', '90d', '', '24 h', '7']) {
        expectError(await metrics(agent.id, window), 400, 'parameter_invalid', 'window');
      }
      expectError(await app.request('GET', `/v1/agents/${agent.id}/metrics?period=7d`, { key: owner.testKey }), 400, 'parameter_unknown', 'period');
      expectError(await app.request('GET', `/v1/agents/${agent.id}/metrics?window=7d&window=30d`, { key: owner.testKey }), 400, 'parameter_invalid', 'window');
    });
  });

  describe('failures', () => {
    it('records a crashing run as an error, finishes its task, and goes on with the next event and other agents', async () => {
      const crashCompany = `Crash Co ${randomUUID()}`;
      const qualifier = await deployedAgent('lead_qualifier');
      const drafter = await deployedAgent('proposal_drafter');
      await sql(`create or replace function crash_agent_run_for_test() returns trigger language plpgsql as $$
        begin
          if new.company = '${crashCompany}' then raise exception 'crash for test: % may not change', new.company; end if;
          return new;
        end $$`);
      await sql('create trigger crash_agent_run_for_test before update on leads for each row execute function crash_agent_run_for_test()');
      try {
        const crashing = await createLead(hotLead({ company: crashCompany }));
        const deal = await createDeal({ stage: 'proposal' });
        const [crashRun] = await waitForRuns(qualifier.id, 1);
        expect(crashRun).toMatchObject({ outcome: 'error', version: 1, trigger: 'event', eventType: 'lead.scored', actions: [] });
        expect(crashRun.eventId).toBe((await leadScoredEventOf(crashing.id))[0]);
        // Clients read a generic message; the database's own text (with its SQL) stays in the log.
        expect(crashRun.error).toBe('The run failed unexpectedly; the details are in the service log.');
        expect(crashRun.error).not.toMatch(/update|leads|crash for test/i);
        expect(crashRun.error).not.toMatch(/\bat .+\(.*:\d+:\d+\)/); // a message, not a stack
        expect(crashRun.durationMs).toBeGreaterThanOrEqual(0);

        // The lead is as it was, the task is done after one attempt, and it is not taken again.
        const lead = await getLead(crashing.id);
        expect(lead).toMatchObject({ status: 'new', score: HOT_SCORE });
        await quiet();
        const tasks = await sql<{ attempt_count: number; done: boolean }>(
          'select attempt_count, done_at is not null as done from agent_tasks where agent_id = ?',
          [qualifier.id],
        );
        expect(tasks).toEqual([{ attempt_count: 1, done: true }]);
        expect(await runsOf(qualifier.id)).toHaveLength(1);
        expect(await eventsOfType('agent.action').then((events) => events.filter((e) => e.data.object.agent_id === qualifier.id))).toEqual([]);

        // The other agent was not held up, and the next event is processed.
        const drafted = await waitForRuns(drafter.id, 1);
        expect(drafted[0]).toMatchObject({ outcome: 'acted', actions: [{ kind: 'proposal_drafted', deal_id: deal.id }] });
        const next = await createLead(hotLead());
        await eventually(async () => expect((await getLead(next.id)).status).toBe('qualified'), BOUND_MS);
        const runs = await waitForRuns(qualifier.id, 2);
        expect(runs[1]).toMatchObject({ outcome: 'acted', error: null, actions: [{ kind: 'lead_qualified', object_id: next.id }] });

        const m = (await metrics(qualifier.id, '24h')).body;
        expect([m.runs, m.errors, m.success_rate, m.outcomes.leads_qualified]).toEqual([2, 1, 0.5, 1]);
        // The API kept answering all along.
        expect((await app.request('GET', '/v1/health', { key: owner.testKey })).status).toBe(200);
      } finally {
        await sql('drop trigger if exists crash_agent_run_for_test on leads');
        await sql('drop function if exists crash_agent_run_for_test()');
      }
    });

    it('tries a run again when the database failed it transiently (a statement stopped by its timeout), and records no error', async () => {
      const drafter = await deployedAgent('proposal_drafter');
      // The first proposal insert is stopped as statement_timeout stops one (57014); a sequence is not rolled back with the run.
      await sql('create sequence if not exists cancel_once_for_test');
      await sql(`create or replace function cancel_once_for_test() returns trigger language plpgsql as $$
      begin
        if nextval('cancel_once_for_test') = 1 then raise exception 'canceling statement due to statement timeout' using errcode = 'query_canceled'; end if;
        return new;
      end $$`);
      await sql('create trigger cancel_once_for_test before insert on proposals for each row execute function cancel_once_for_test()');
      try {
        const deal = await createDeal({ stage: 'proposal' });
        const [run] = await waitForRuns(drafter.id, 1);
        expect(run).toMatchObject({ outcome: 'acted', error: null, actions: [{ kind: 'proposal_drafted', deal_id: deal.id }] });
        expect(await sql('select attempt_count, done_at is not null as done from agent_tasks where agent_id = ?', [drafter.id])).toEqual([
          { attempt_count: 2, done: true },
        ]);
        expect(await sql<{ n: number }>('select count(*)::int as n from proposals where deal_id = ?', [deal.id])).toEqual([{ n: 1 }]);
      } finally {
        await sql('drop trigger if exists cancel_once_for_test on proposals');
        await sql('drop function if exists cancel_once_for_test()');
        await sql('drop sequence if exists cancel_once_for_test');
      }
    });
  });

  describe('several instances', () => {
    it('two app instances with runners on one database run each event once per agent, and each scan slot once', async () => {
      const second = await startTestApp({ agents: { clock: () => now, scanIntervalMs: HOUR_MS } });
      try {
        const qualifier = await deployedAgent('lead_qualifier', { open_deal: true });
        const drafter = await deployedAgent('proposal_drafter');
        const followUp = await deployedAgent('deal_follow_up');
        const instances = [app, second];

        const leads = await Promise.all(
          Array.from({ length: 24 }, (_, i) => createLead(i % 3 === 2 ? coldLead() : hotLead(), owner.testKey, instances[i % 2])),
        );
        const deals = await Promise.all(Array.from({ length: 6 }, (_, i) => createDeal({ stage: 'proposal' }, owner.testKey, instances[i % 2])));
        const hotCount = leads.filter((lead) => lead.score === HOT_SCORE).length;
        // Qualified leads each get a deal (deal.created, in qualification): the drafter runs on those too, without acting.
        const qualifierRuns = await waitForRuns(qualifier.id, leads.length, owner.testKey);
        const drafterRuns = await waitForRuns(drafter.id, deals.length + hotCount, owner.testKey);
        for (let slot = 1; slot <= 3; slot += 1) {
          now = new Date(now.getTime() + HOUR_MS);
          await waitForRuns(followUp.id, slot + 1);
        }
        await quiet([app, second]);

        const duplicates = await sql(
          'select agent_id, event_id, count(*)::int as n from agent_runs where event_id is not null group by 1, 2 having count(*) > 1',
        );
        expect(duplicates).toEqual([]);
        const scored = new Set<string>();
        for (const lead of leads) for (const id of await leadScoredEventOf(lead.id)) scored.add(id);
        expect(new Set(qualifierRuns.map((run) => run.eventId))).toEqual(scored);
        expect(new Set(drafterRuns.map((run) => run.eventId)).size).toBe(drafterRuns.length);

        expect(qualifierRuns.filter((run) => run.outcome === 'error')).toEqual([]);
        // A deal left without its proposal shows what the drafter's runs did (seen once beside two CPU-bound processes).
        const proposed = new Set((await sql<{ deal_id: string }>('select deal_id from proposals')).map((row) => row.deal_id));
        const unproposed = deals.filter((deal) => !proposed.has(deal.id)).map((deal) => deal.id);
        expect({ unproposed, drafterRuns: unproposed.length ? drafterRuns : [] }).toEqual({ unproposed: [], drafterRuns: [] });
        for (const lead of leads) {
          expect((await getLead(lead.id)).status).toBe(lead.score === HOT_SCORE ? 'qualified' : 'disqualified');
          expect(await dealsOfLead(lead.id)).toHaveLength(lead.score === HOT_SCORE ? 1 : 0);
        }
        const proposals = await sql<{ deal_id: string; n: number }>('select deal_id, count(*)::int as n from proposals group by 1 order by 1');
        expect(proposals).toEqual(
          deals
            .map((deal) => deal.id)
            .sort()
            .map((id) => ({ deal_id: id, n: 1 })),
        );

        const slots = await sql<{ n: number }>('select count(*)::int as n from agent_tasks where agent_id = ? group by schedule_slot', [followUp.id]);
        expect(slots).toHaveLength(4);
        expect(slots.every((row) => row.n === 1)).toBe(true);
        expect((await runsOf(followUp.id)).every((run) => run.trigger === 'schedule')).toBe(true);
        expect(await runsOf(followUp.id)).toHaveLength(4);
      } finally {
        await second.close();
      }
    });
  });
});

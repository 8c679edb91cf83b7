import { randomUUID } from 'node:crypto';
import { startTestApp, TestAccount, TestApp } from '../helpers/app';
import type { FakeChatCompletions } from '../helpers/fakes';
import { eventually } from '../helpers/wait';

/**
 * Metrics of writer agents (issue 23): the model's use (calls, failures, tokens, by model) counted
 * from the usage each run recorded, and what became of the suggestions made in the window (by
 * status, approval rate, time to a person's approval). A lead_researcher writes through the
 * account's `openai` integration, played by the loopback Chat Completions fake with scripted
 * answers (good JSON with known usage, malformed JSON, a refusal, 429s until the client gives up);
 * the test approves, rejects and lets a suggestion expire through the API and SQL, moves rows back
 * in time to tell the windows apart, and compares every figure, over REST and GraphQL alike, with
 * counts it derives from the rows it made.
 */

type Json = Record<string, unknown>;

interface Usage {
  model: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
  failures: number;
}

interface Run {
  id: string;
  createdAt: string;
  usage: Usage | null;
  actions: Array<{ kind: string; object_id: string }>;
}

/** An agent_suggestions row as the database holds it (read with SQL, so that nothing expires it on the way). */
interface SuggestionRow {
  id: string;
  run_id: string;
  lead_id: string;
  status: string;
  approved_automatically: boolean;
  /** Times in epoch milliseconds. */
  created_at: number;
  decided_at: number | null;
  expires_at: number;
}

const DAY_MS = 86_400_000;
const WINDOWS = ['24h', '7d', '30d'];
const WINDOW_MS: Record<string, number> = { '24h': DAY_MS, '7d': 7 * DAY_MS, '30d': 30 * DAY_MS };
const MODEL = 'gpt-4o-mini';
const OTHER_MODEL = 'gpt-4o';
const METRICS_FIELDS = `object agentId window from to runs errors successRate actionsByKind p50LatencyMs p95LatencyMs lastRunAt
  outcomes { leadsQualified leadsDisqualified dealsOpened proposalsDrafted idleDealsFlagged qualifiedLeadsWon suggestionsMade leadsRouted leadsRoutedByMember }
  modelUsage { calls failures promptTokens completionTokens totalTokens byModel { model runs calls failures promptTokens completionTokens totalTokens } }
  suggestions { pending approved approvedAutomatically rejected expired approvalRate p50TimeToApprovalMs p95TimeToApprovalMs }`;

/** Continuous percentile as PostgreSQL's percentile_cont defines it (linear interpolation), rounded. */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const position = p * (sorted.length - 1);
  const lower = Math.floor(position);
  const lo = sorted[lower];
  const hi = sorted[Math.ceil(position)];
  return Math.round(lo + (hi - lo) * (position - lower));
}

/** GraphQL's camelCase field names as REST writes them (the keys of actionsByKind, JSON data, are kinds already). */
function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snakeKeys(inner)]));
}

const brief = (text: string) => ({ brief: `${text} is a software company worth a call.`, next_step: `Call ${text} this week.`, fields_used: ['company'] });

describe('agent metrics of writer agents', () => {
  let app: TestApp;
  let chat: FakeChatCompletions;
  let owner: TestAccount;

  const sql = <T = Json>(query: string, params: unknown[] = []) => app.orm.em.getConnection().execute<T[]>(query, params);
  const rest = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Json> => {
    const res = await app.request(method, path, { key: owner.testKey, body });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body as Json;
  };

  async function deployedAgent(type: string, config?: Json): Promise<string> {
    const agent = await rest('POST', '/v1/agents', { name: `${type} ${randomUUID().slice(0, 8)}`, type, ...(config ? { config } : {}) });
    await rest('POST', `/v1/agents/${agent.id as string}/deploy`);
    return agent.id as string;
  }

  async function runsOf(id: string): Promise<Run[]> {
    const res = await app.graphql(
      'query ($id: ID!) { agent(id: $id) { runs(filter: { limit: 100 }) { data { id createdAt usage actions } hasMore } } }',
      { id },
      owner.testKey,
    );
    if (res.status !== 200 || res.body.errors) throw new Error(`runs query failed: ${res.status} ${res.text}`);
    expect(res.body.data.agent.runs.hasMore).toBe(false);
    return res.body.data.agent.runs.data;
  }

  /** Creates a lead and waits for the agent's run about it (the agent's `count`-th), so the model's script is used in order. */
  async function leadWithRun(agentId: string, count: number): Promise<string> {
    const unique = randomUUID().slice(0, 8);
    const lead = await rest('POST', '/v1/leads', { company: `Acme ${unique}`, contact_email: `buyer@acme-${unique}.test`, industry: 'Software' });
    await eventually(async () => expect(await runsOf(agentId)).toHaveLength(count));
    return lead.id as string;
  }

  const suggestionRows = (agentId: string) => {
    const ms = (column: string) => `cast(extract(epoch from ${column}) * 1000 as float8) as ${column}`;
    return sql<SuggestionRow>(
      `select id, run_id, lead_id, status, approved_automatically, ${ms('created_at')}, ${ms('decided_at')}, ${ms('expires_at')}
         from agent_suggestions where agent_id = ? order by created_at`,
      [agentId],
    );
  };

  /** The agent's metrics over REST, checked equal to GraphQL's (but for `from` and `to`, which are each request's own now). */
  async function metrics(agentId: string, window: string): Promise<Json> {
    const res = await app.request('GET', `/v1/agents/${agentId}/metrics?window=${window}`, { key: owner.testKey });
    expect(res.status).toBe(200);
    const graph = await app.graphql(
      `query ($id: ID!, $window: String) { agentMetrics(id: $id, filter: { window: $window }) { ${METRICS_FIELDS} } }`,
      { id: agentId, window },
      owner.testKey,
    );
    expect(graph.body.errors).toBeUndefined();
    const { from: _from, to: _to, ...viaGraphql } = snakeKeys(graph.body.data.agentMetrics) as Json;
    expect({ ...res.body, from: undefined, to: undefined }).toEqual({ ...viaGraphql, from: undefined, to: undefined });
    expect(Date.parse(res.body.to) - Date.parse(res.body.from)).toBe(WINDOW_MS[window]);
    return res.body as Json;
  }

  /** The figures the metrics must show, derived here from the runs and suggestion rows as of the window [from, to]. */
  function derived(runs: Run[], rows: SuggestionRow[], window: { from: number; to: number }): Json {
    const within = (at: number) => at >= window.from && at <= window.to;
    const used = runs.filter((run) => within(Date.parse(run.createdAt)) && run.usage !== null).map((run) => run.usage!);
    const models = [...new Set(used.map((usage) => usage.model))].sort((a, b) => (a === null ? 1 : b === null ? -1 : a < b ? -1 : 1));
    const figures = (usages: Usage[]) => {
      const sum = (pick: (usage: Usage) => number) => usages.reduce((total, usage) => total + pick(usage), 0);
      const prompt = sum((usage) => usage.prompt_tokens);
      const completion = sum((usage) => usage.completion_tokens);
      return {
        calls: sum((usage) => usage.calls),
        failures: sum((usage) => usage.failures),
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
      };
    };
    const made = rows.filter((row) => within(row.created_at));
    const statusOf = (row: SuggestionRow) => (row.status === 'pending' && row.expires_at <= window.to ? 'expired' : row.status);
    const count = (status: string) => made.filter((row) => statusOf(row) === status).length;
    const decided = count('approved') + count('rejected') + count('expired');
    const waits = made.filter((row) => row.status === 'approved' && !row.approved_automatically).map((row) => row.decided_at! - row.created_at);
    return {
      suggestions_made: made.length,
      model_usage: {
        ...figures(used),
        by_model: models.map((model) => {
          const ofModel = used.filter((usage) => usage.model === model);
          return { model, runs: ofModel.length, ...figures(ofModel) };
        }),
      },
      suggestions: {
        pending: count('pending'),
        approved: count('approved'),
        approved_automatically: made.filter((row) => row.status === 'approved' && row.approved_automatically).length,
        rejected: count('rejected'),
        expired: count('expired'),
        approval_rate: decided ? count('approved') / decided : null,
        p50_time_to_approval_ms: percentile(waits, 0.5),
        p95_time_to_approval_ms: percentile(waits, 0.95),
      },
    };
  }

  const shown = (body: Json) => ({
    suggestions_made: (body.outcomes as Json).suggestions_made,
    model_usage: body.model_usage,
    suggestions: body.suggestions,
  });

  beforeAll(async () => {
    app = await startTestApp({ agents: { scanIntervalMs: 3_600_000 } });
    chat = app.crms.chat;
  });
  afterAll(() => app.close());
  beforeEach(async () => {
    // The runner works every 100 ms; emptying the tables under it could deadlock with its scans.
    await app.agentRunner!.stop();
    await app.reset();
    app.agentRunner!.start();
    chat.clearScript();
    chat.requests.length = 0;
    chat.conformance.violations.length = 0;
    owner = await app.createAccount();
  });
  // Every request to the model, and every answer the fake gave, is what OpenAI's or Azure's document allows.
  afterEach(() => expect(chat.conformance.violations).toEqual([]));

  it('count the model use each run recorded and what became of the suggestions made, per window, as derived from the rows', async () => {
    const integration = await rest('POST', '/v1/integrations', { type: 'llm', provider: 'openai', credentials: { api_key: 'sk-metrics-test-0001' } });
    expect(integration).toMatchObject({ status: 'connected', settings: expect.objectContaining({ model: MODEL }) });
    const agentId = await deployedAgent('lead_researcher');

    // One lead at a time, each answered by the next step: known usage, malformed JSON, a refusal, 429s until the client gives up.
    chat.answerWith({ kind: 'json', value: brief('One'), usage: { prompt_tokens: 120, completion_tokens: 30 } });
    const approvedEarly = await leadWithRun(agentId, 1);
    chat.answerWith({ kind: 'json', value: brief('Two'), usage: { prompt_tokens: 200, completion_tokens: 40 } });
    const approvedLongAgo = await leadWithRun(agentId, 2);
    chat.answerWith({ kind: 'malformed' });
    const rejected = await leadWithRun(agentId, 3);
    chat.answerWith({ kind: 'refusal' });
    const expiring = await leadWithRun(agentId, 4);
    chat.answerWith(...[1, 2, 3].map(() => ({ kind: 'rate_limited' as const, retryAfterS: 0 })));
    const pending = await leadWithRun(agentId, 5);
    chat.answerWith({ kind: 'json', value: brief('Six'), usage: { prompt_tokens: 80, completion_tokens: 20 } });
    const approvedNow = await leadWithRun(agentId, 6);
    // The account picks another model for its integration: the next run is counted under it.
    await rest('POST', `/v1/integrations/${integration.id as string}`, { settings: { model: OTHER_MODEL } });
    chat.answerWith({ kind: 'json', value: brief('Seven'), usage: { prompt_tokens: 60, completion_tokens: 15 } });
    const pendingOtherModel = await leadWithRun(agentId, 7);
    expect(chat.chats().map((seen) => seen.body.model)).toEqual([...Array(8).fill(MODEL), OTHER_MODEL]); // three for the rate-limited lead

    // The usage the runs recorded, as the writer counted it.
    const runs = await runsOf(agentId);
    const runAbout = (leadId: string) => runs.find((run) => run.actions.some((action) => (action as Json).lead_id === leadId))!;
    expect(runAbout(approvedEarly).usage).toEqual({ model: MODEL, prompt_tokens: 120, completion_tokens: 30, calls: 1, failures: 0 });
    expect(runAbout(rejected).usage).toMatchObject({ model: MODEL, calls: 1, failures: 1, completion_tokens: 12 });
    expect(runAbout(expiring).usage).toMatchObject({ model: MODEL, calls: 1, failures: 1 });
    expect(runAbout(pending).usage).toEqual({ model: null, prompt_tokens: 0, completion_tokens: 0, calls: 1, failures: 1 });
    expect(runAbout(pendingOtherModel).usage).toEqual({ model: OTHER_MODEL, prompt_tokens: 60, completion_tokens: 15, calls: 1, failures: 0 });

    // People decide: approve three (one edited), reject one; two are left pending, and one expires (by SQL, unread).
    const rows0 = await suggestionRows(agentId);
    expect(rows0).toHaveLength(7);
    const suggestionOf = (leadId: string) => rows0.find((row) => row.lead_id === leadId)!.id;
    await rest('POST', `/v1/suggestions/${suggestionOf(approvedEarly)}/approve`, { brief: 'Edited before approving.' });
    await rest('POST', `/v1/suggestions/${suggestionOf(approvedLongAgo)}/approve`);
    await rest('POST', `/v1/suggestions/${suggestionOf(approvedNow)}/approve`);
    await rest('POST', `/v1/suggestions/${suggestionOf(rejected)}/reject`);
    await sql(`update agent_suggestions set expires_at = now() - interval '1 minute' where id = ?`, [suggestionOf(expiring)]);

    // Move a suggestion and its run back in time (made earlier, decided when it was): 3, 10 and 40 days.
    const backdate = async (leadId: string, days: number) => {
      const row = rows0.find((candidate) => candidate.lead_id === leadId)!;
      await sql('update agent_suggestions set created_at = created_at - make_interval(days => ?) where id = ?', [days, row.id]);
      await sql('update agent_runs set created_at = created_at - make_interval(days => ?) where id = ?', [days, row.run_id]);
    };
    await backdate(approvedEarly, 3);
    await backdate(rejected, 10);
    await backdate(approvedLongAgo, 40);

    const rows = await suggestionRows(agentId);
    // Nothing has read the overdue suggestion: it is still pending in the table, and the metrics count it expired all the same.
    expect(rows.find((row) => row.lead_id === expiring)!.status).toBe('pending');
    const runsNow = await runsOf(agentId);
    const seen: Record<string, Json> = {};
    for (const window of WINDOWS) {
      const body = await metrics(agentId, window);
      seen[window] = body;
      expect(shown(body)).toEqual(derived(runsNow, rows, { from: Date.parse(body.from as string), to: Date.parse(body.to as string) }));
      // The lead_brief actions of the runs and the suggestions made agree; the figures that were there stay as they were.
      expect(body.actions_by_kind).toEqual({ lead_brief: (body.outcomes as Json).suggestions_made });
      expect(body).toMatchObject({ runs: (body.outcomes as Json).suggestions_made, errors: 0, success_rate: 1 });
    }

    // The figures written out for this data set, so a mistake shared by the derivation above cannot hide.
    const written = (window: string) => {
      const { suggestions, model_usage: usage } = seen[window] as { suggestions: Json; model_usage: Json & { by_model: Json[] } };
      return {
        made: (seen[window].outcomes as Json).suggestions_made,
        statuses: [suggestions.pending, suggestions.approved, suggestions.rejected, suggestions.expired],
        rate: suggestions.approval_rate,
        calls: [usage.calls, usage.failures],
        models: usage.by_model.map((row) => [row.model, row.runs]),
      };
    };
    const models = (mini: number) => [
      [OTHER_MODEL, 1],
      [MODEL, mini],
      [null, 1],
    ];
    expect(written('24h')).toEqual({ made: 4, statuses: [2, 1, 0, 1], rate: 1 / 2, calls: [4, 2], models: models(2) });
    expect(written('7d')).toEqual({ made: 5, statuses: [2, 2, 0, 1], rate: 2 / 3, calls: [5, 2], models: models(3) });
    expect(written('30d')).toEqual({ made: 6, statuses: [2, 2, 1, 1], rate: 2 / 4, calls: [6, 3], models: models(4) });
    // Known tokens: 24h holds the refusal's (counted by the fake from the prompt), 80 + 20 and 60 + 15; 7d adds 120 + 30.
    const tokens = (window: string) => (seen[window].model_usage as Json).completion_tokens;
    expect(tokens('24h')).toBe(12 + 20 + 15);
    expect(tokens('7d')).toBe(12 + 20 + 15 + 30);
    expect(tokens('30d')).toBe(12 + 20 + 15 + 30 + 12);
    const otherModel = (window: string) => (seen[window].model_usage as { by_model: Json[] }).by_model[0];
    for (const window of WINDOWS) {
      expect(otherModel(window)).toEqual({ model: OTHER_MODEL, runs: 1, calls: 1, failures: 0, prompt_tokens: 60, completion_tokens: 15, total_tokens: 75 });
    }
    const waits = (window: string) => {
      const { p50_time_to_approval_ms: p50, p95_time_to_approval_ms: p95 } = seen[window].suggestions as Record<string, number>;
      return { p50, p95 };
    };
    expect(waits('24h').p50).toBeLessThan(60_000); // approved within the test
    expect(waits('24h').p95).toBe(waits('24h').p50);
    expect(waits('7d').p50).toBeGreaterThan(1.5 * DAY_MS - 60_000); // halfway between moments ago and three days
    expect(waits('7d').p95).toBeGreaterThan(2.85 * DAY_MS - 60_000);
    expect(waits('30d')).toEqual(waits('7d')); // the suggestion 10 days back was rejected, and the approved one 40 days back is outside

    // Reading the suggestions expires the overdue one for good; the figures stay the same.
    const listed = await rest('GET', `/v1/agents/${agentId}/suggestions?status=expired`);
    expect((listed.data as Json[]).map((row) => row.id)).toEqual([suggestionOf(expiring)]);
    for (const window of WINDOWS) expect(shown(await metrics(agentId, window))).toEqual(shown(seen[window]));
  });

  it('count automatic approvals as approved but leave them out of the time to approval; template writing uses no model', async () => {
    // No model connected: the template writes, the runs record no usage.
    const agentId = await deployedAgent('lead_researcher', { act_without_approval: ['lead_brief'] });
    const leads = [await leadWithRun(agentId, 1), await leadWithRun(agentId, 2)];
    expect(chat.chats()).toHaveLength(0);
    const rows = await suggestionRows(agentId);
    expect(rows.map((row) => [row.lead_id, row.status, row.approved_automatically]).sort()).toEqual(leads.map((id) => [id, 'approved', true]).sort());
    expect((await runsOf(agentId)).map((run) => run.usage)).toEqual([null, null]);

    for (const window of WINDOWS) {
      const body = await metrics(agentId, window);
      expect(shown(body)).toEqual({
        suggestions_made: 2,
        model_usage: { calls: 0, failures: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, by_model: [] },
        suggestions: {
          pending: 0,
          approved: 2,
          approved_automatically: 2,
          rejected: 0,
          expired: 0,
          approval_rate: 1,
          p50_time_to_approval_ms: null,
          p95_time_to_approval_ms: null,
        },
      });
    }
  });
});

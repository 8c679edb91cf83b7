import { outboxSignal } from '../../src/events/outbox.subscriber';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { Plan } from '../../src/modules/accounts/plan';
import { LeadFeatures } from '../../src/modules/scoring/lead-scorer';
import { LabelledLead, LearnedLeadScorer, LearnedModelParams, trainLeadModel } from '../../src/modules/scoring/learned-model';
import { PriorLeadScorer } from '../../src/modules/scoring/prior-model';
import { syntheticLeads } from '../../src/modules/scoring/synthetic-leads';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { Lead as RestLead, Signal } from '../helpers/rest-shapes';

/**
 * The learned lead score (CONTRACT §5) end to end through real HTTP, real Apollo and real
 * PostgreSQL: leads and closed deals are created over /v1, the trainer runs one pass
 * (`app.trainer.runOnce()`, as the background worker does), and the test reads back
 * `leadScoringModel`, the leads, their scores and their events. Covered: the training threshold
 * (30 closed leads, at least 5 won and 5 lost) and retraining after 10 more, rescoring with
 * lead.scored events, isolation of models between accounts and modes, and determinism (the
 * stored model equals one trained here from the same leads, and retraining the same data gives
 * the same model). Expected scores are computed here with the model's stored parameters.
 */

interface RestScore {
  lead_id: string;
  score: number;
  score_label: string;
  base_score: number;
  model_version: string;
  scored_at: string;
  signals: Signal[];
}

interface ModelInfo {
  modelVersion: string;
  kind: string;
  trainedAt: string | null;
  closedLeads: number;
  closedLeadsNeeded: number;
  trainingSize: number | null;
  holdoutSize: number | null;
  won: number | null;
  lost: number | null;
  auc: number | null;
  priorAuc: number | null;
  calibration: Array<{ from: number; to: number; count: number; meanPredicted: number | null; observedWinRate: number | null }>;
  weights: Record<string, number> | null;
}

interface ModelRow {
  livemode: boolean;
  version: number;
  won: number;
  lost: number;
  training_size: number;
  holdout_size: number;
  params: LearnedModelParams;
}

interface EventRow {
  id: string;
  livemode: boolean;
  type: string;
  data: { object: Record<string, unknown>; previous_attributes: Record<string, unknown> };
}

/** A lead created with its outcome: `won` true/false once closed, undefined while it has no closed deal. */
interface Created {
  lead: RestLead;
  won?: boolean;
  dealIds: string[];
}

const MODEL_FIELDS =
  'modelVersion kind trainedAt closedLeads closedLeadsNeeded trainingSize holdoutSize won lost auc priorAuc calibration { from to count meanPredicted observedWinRate } weights';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FEATURES = ['industry', 'company_size', 'email_domain', 'website', 'source', 'contact_name', 'country'];
/** CONTRACT §5, written out: hot ≥ 70, warm 40–69, cold < 40. */
const labelFor = (score: number): string => (score >= 70 ? 'hot' : score >= 40 ? 'warm' : 'cold');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BATCH = 10;

/** The request body of a synthetic lead (absent fields left out). */
function leadBody(lead: LeadFeatures): Record<string, unknown> {
  const body: Record<string, unknown> = { company: lead.company, contact_email: lead.contactEmail };
  const optional: Array<[string, unknown]> = [
    ['contact_name', lead.contactName],
    ['industry', lead.industry],
    ['employees', lead.employees],
    ['website', lead.website],
    ['country', lead.country],
    ['source', lead.source],
  ];
  for (const [name, value] of optional) if (value !== null && value !== undefined) body[name] = value;
  return body;
}

/** What a scorer reads of a lead, from its REST shape. */
function featuresOf(lead: RestLead): LeadFeatures {
  return {
    company: lead.company,
    contactEmail: lead.contact_email,
    contactName: lead.contact_name,
    industry: lead.industry,
    employees: lead.employees,
    website: lead.website,
    country: lead.country,
    source: lead.source,
  };
}

/** The fields whose values differ between two REST bodies, with their earlier values (updated_at aside). */
function changedFields(before: object, after: object): Record<string, unknown> {
  const later = after as Record<string, unknown>;
  return Object.fromEntries(Object.entries(before).filter(([name, value]) => name !== 'updated_at' && JSON.stringify(value) !== JSON.stringify(later[name])));
}

const wonCount = (items: Array<{ won?: boolean }>) => items.filter((item) => item.won === true).length;
const lostCount = (items: Array<{ won?: boolean }>) => items.filter((item) => item.won === false).length;

describe('learned lead score', () => {
  let app: TestApp;

  const ok = async <T>(res: Promise<HttpResponse<T>>, status = 200): Promise<T> => {
    const r = await res;
    if (r.status !== status) throw new Error(`expected ${status}, got ${r.status} ${r.text.slice(0, 400)}`);
    return r.body;
  };
  const sql = <T>(query: string, params: unknown[] = []) => app.orm.em.fork().getConnection().execute<T[]>(query, params);

  const createLead = (key: string, lead: LeadFeatures) => ok<RestLead>(app.request('POST', '/v1/leads', { key, body: leadBody(lead) }), 201);
  const createDeal = (key: string, leadId: string | null, stage: string) =>
    ok<{ id: string; stage: string }>(app.request('POST', '/v1/deals', { key, body: { name: 'Deal', value: 1000, lead_id: leadId, stage } }), 201);
  const closeDeal = (key: string, dealId: string, won: boolean) =>
    ok<{ stage: string }>(app.request('PUT', `/v1/deals/${dealId}`, { key, body: { stage: won ? 'closed_won' : 'closed_lost' } }));
  const getLead = (key: string, id: string) => ok<RestLead>(app.request('GET', `/v1/leads/${id}`, { key }));
  const getScore = (key: string, id: string) => ok<RestScore>(app.request('GET', `/v1/leads/${id}/score`, { key }));

  /** Runs `work` over `items` in parallel batches of BATCH, keeping the order. */
  async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
    const results: R[] = [];
    for (let i = 0; i < items.length; i += BATCH) results.push(...(await Promise.all(items.slice(i, i + BATCH).map(work))));
    return results;
  }

  /** Creates each lead with one deal closed as its outcome says. */
  const closedLeads = (key: string, leads: ReadonlyArray<{ lead: LeadFeatures; won: boolean }>): Promise<Created[]> =>
    inBatches(leads, async ({ lead, won }) => {
      const created = await createLead(key, lead);
      const deal = await createDeal(key, created.id, won ? 'closed_won' : 'closed_lost');
      return { lead: created, won, dealIds: [deal.id] };
    });

  /** Every lead of the key's account and mode through GET /v1/leads, by id. */
  async function allLeads(key: string): Promise<Map<string, RestLead>> {
    const leads = new Map<string, RestLead>();
    let cursor: string | null = null;
    do {
      const page: { data: RestLead[]; next_cursor: string | null } = await ok(
        app.request('GET', `/v1/leads?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key }),
      );
      for (const lead of page.data) leads.set(lead.id, lead);
      cursor = page.next_cursor;
    } while (cursor);
    return leads;
  }

  async function scoringModel(key: string): Promise<ModelInfo> {
    const res = await app.graphql(`{ leadScoringModel { ${MODEL_FIELDS} } }`, {}, key);
    if (res.status !== 200 || res.body.errors) throw new Error(`leadScoringModel failed: ${res.status} ${res.text.slice(0, 400)}`);
    return res.body.data.leadScoringModel as ModelInfo;
  }

  const modelRows = (account: TestAccount) =>
    sql<ModelRow>('select livemode, version, won, lost, training_size, holdout_size, params from lead_models where account_id = ? order by livemode, version', [
      account.account.id,
    ]);
  const eventRows = (account: TestAccount, livemode: boolean) =>
    sql<EventRow>('select id, livemode, type, data from events where account_id = ? and livemode = ? order by created_at, id', [account.account.id, livemode]);

  /** The scorer of a stored model version, built here from its stored parameters. */
  async function storedScorer(account: TestAccount, livemode: boolean, version: number): Promise<LearnedLeadScorer> {
    const row = (await modelRows(account)).find((r) => r.livemode === livemode && r.version === version);
    if (!row) throw new Error(`no model v${version} (livemode ${livemode}) for ${account.account.id}`);
    return new LearnedLeadScorer(`learned-v${version}`, row.params);
  }

  /** What the prior model says before any training: no learned figures at all. */
  function expectPrior(info: ModelInfo, closedLeads: number): void {
    expect(info).toEqual({
      modelVersion: 'prior-v1',
      kind: 'prior',
      trainedAt: null,
      closedLeads,
      closedLeadsNeeded: 30,
      trainingSize: null,
      holdoutSize: null,
      won: null,
      lost: null,
      auc: null,
      priorAuc: null,
      calibration: [],
      weights: null,
    });
  }

  /** A learned model's figures: its version, what it learned from, and held-out quality. */
  function expectLearned(info: ModelInfo, version: number, closed: Array<{ won?: boolean }>): void {
    expect(info.modelVersion).toBe(`learned-v${version}`);
    expect(info.kind).toBe('learned');
    expect(info.trainedAt).toMatch(ISO_MS);
    expect(info.closedLeads).toBe(closed.length);
    expect(info.closedLeadsNeeded).toBe(30);
    expect(info.trainingSize! + info.holdoutSize!).toBe(closed.length);
    expect(info.trainingSize!).toBeGreaterThan(info.holdoutSize!);
    expect(info.won).toBe(wonCount(closed));
    expect(info.lost).toBe(lostCount(closed));
    for (const value of [info.auc, info.priorAuc]) {
      if (value !== null) {
        expect(value).toBeGreaterThanOrEqual(0);
        expect(value).toBeLessThanOrEqual(1);
      }
    }
    expect(info.calibration.map((bucket) => [bucket.from, bucket.to])).toEqual([
      [0, 0.2],
      [0.2, 0.4],
      [0.4, 0.6],
      [0.6, 0.8],
      [0.8, 1],
    ]);
    expect(info.calibration.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(info.holdoutSize);
    const tokens = Object.keys(info.weights ?? {});
    expect(tokens.length).toBeGreaterThan(FEATURES.length);
    for (const token of tokens) expect(FEATURES).toContain(token.slice(0, token.indexOf('=')));
  }

  /** Every lead scored by `scorer` exactly as it computes, through GET /v1/leads/{id} and /score. */
  async function expectScoredBy(key: string, leads: Iterable<RestLead>, scorer: LearnedLeadScorer | PriorLeadScorer): Promise<void> {
    await inBatches([...leads], async (listed) => {
      const expected = scorer.score(featuresOf(listed));
      const [lead, score] = await Promise.all([getLead(key, listed.id), getScore(key, listed.id)]);
      expect({ id: lead.id, score: lead.score, label: lead.score_label, model: lead.model_version }).toEqual({
        id: listed.id,
        score: expected.score,
        label: labelFor(expected.score),
        model: scorer.version,
      });
      expect(Object.keys(score).sort()).toEqual(['base_score', 'lead_id', 'model_version', 'score', 'score_label', 'scored_at', 'signals']);
      expect(score).toMatchObject({
        lead_id: lead.id,
        score: lead.score,
        score_label: lead.score_label,
        model_version: scorer.version,
        scored_at: lead.scored_at,
      });
      expect(score.base_score).toBe(expected.baseScore);
      expect(score.signals).toEqual(expected.signals);
      expect(score.signals.reduce((sum, s) => sum + s.impact, 0)).toBe(score.score - score.base_score);
    });
  }

  beforeAll(async () => {
    // Every lead's score is read back: lift the per-account leadScore limit (60 a minute) for this file.
    app = await startTestApp({ operationLimits: { ...OPERATION_LIMITS, leadScore: { windowS: 60, max: 1_000_000 } } });
  });
  afterAll(() => app.close());

  describe('training threshold', () => {
    it('trains nothing below 30 closed leads, learned-v1 at 30, and learned-v2 only after 10 more', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const data = syntheticLeads(60, 101);
      const first29 = data.slice(0, 29);
      expect(wonCount(first29)).toBeGreaterThanOrEqual(5);
      expect(lostCount(first29)).toBeGreaterThanOrEqual(5);
      const closed = await closedLeads(key, first29);
      // A lead with a lost and then a won deal counts once, as won; an extra open deal changes nothing.
      const lostLead = closed.find((c) => c.won === false)!;
      await createDeal(key, lostLead.lead.id, 'proposal');
      const twice = closed.find((c) => c.won === false && c !== lostLead)!;
      await createDeal(key, twice.lead.id, 'closed_won');
      twice.won = true;
      // Leads with only open deals, or none, and a won deal without a lead do not count.
      const open = await inBatches(data.slice(29, 32), async (lead) => {
        const created = await createLead(key, lead.lead);
        return { lead: created, deal: await createDeal(key, created.id, 'qualification'), won: lead.won };
      });
      const bare = await inBatches(data.slice(32, 34), (lead) => createLead(key, lead.lead));
      await createDeal(key, null, 'closed_won');
      expect(closed).toHaveLength(29);

      await app.trainer.runOnce();
      expect(await modelRows(account)).toEqual([]);
      expectPrior(await scoringModel(key), 29);
      for (const lead of (await allLeads(key)).values()) expect(lead.model_version).toBe('prior-v1');

      // The 30th closed lead: learned-v1.
      closed.push(...(await closedLeads(key, [data[34]])));
      expect(wonCount(closed) + lostCount(closed)).toBe(30);
      await app.trainer.runOnce();
      const rows = await modelRows(account);
      expect(rows.map((r) => [r.livemode, r.version, r.won, r.lost, r.training_size + r.holdout_size])).toEqual([
        [false, 1, wonCount(closed), lostCount(closed), 30],
      ]);
      const v1 = await scoringModel(key);
      expectLearned(v1, 1, closed);
      const leads = await allLeads(key);
      expect(leads.size).toBe(30 + open.length + bare.length);
      for (const lead of leads.values()) expect(lead.model_version).toBe('learned-v1');

      // Nothing new is due: the same model stays, not even retrained.
      await app.trainer.runOnce();
      expect(await modelRows(account)).toHaveLength(1);
      expect(await scoringModel(key)).toEqual(v1);

      // 9 more closed leads (three by closing their open deals) are not enough to retrain.
      await inBatches(open, async (o) => closeDeal(key, o.deal.id, o.won));
      closed.push(...open.map((o) => ({ lead: o.lead, won: o.won, dealIds: [o.deal.id] })));
      closed.push(...(await closedLeads(key, data.slice(35, 41))));
      expect(closed).toHaveLength(39);
      await app.trainer.runOnce();
      expect(await modelRows(account)).toHaveLength(1);
      expect(await scoringModel(key)).toEqual({ ...v1, closedLeads: 39 });

      // The 10th: learned-v2, trained on all 40, and learned-v1 is kept as it was.
      closed.push(...(await closedLeads(key, [data[41]])));
      const seen = new Set((await eventRows(account, false)).map((e) => e.id));
      await app.trainer.runOnce();
      const after = await modelRows(account);
      expect(after.map((r) => [r.livemode, r.version, r.won, r.lost, r.training_size + r.holdout_size])).toEqual([
        [false, 1, v1.won, v1.lost, 30],
        [false, 2, wonCount(closed), lostCount(closed), 40],
      ]);
      expect(after[0].params).toEqual(rows[0].params);
      expectLearned(await scoringModel(key), 2, closed);
      const latest = await allLeads(key);
      expect(latest.size).toBe(40 + bare.length);
      await expectScoredBy(key, latest.values(), await storedScorer(account, false, 2));
      // Every lead moved from learned-v1 (the 10 closed since were created under it) to learned-v2, with an event saying so.
      const rescored = (await eventRows(account, false)).filter((e) => !seen.has(e.id));
      expect(rescored.map((e) => e.type)).toEqual(new Array(latest.size).fill('lead.scored'));
      for (const event of rescored) {
        expect(event.data.object).toMatchObject({ model_version: 'learned-v2' });
        expect(event.data.previous_attributes).toMatchObject({ model_version: 'learned-v1' });
      }
    });

    it('waits for 5 won leads: 30 closed with 4 won trains nothing, the 5th won trains', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const data = syntheticLeads(31, 102).map((lead, i) => ({ lead: lead.lead, won: i < 4 }));
      const closed = await closedLeads(key, data.slice(0, 30));
      expect([wonCount(closed), lostCount(closed)]).toEqual([4, 26]);
      await app.trainer.runOnce();
      expect(await modelRows(account)).toEqual([]);
      expectPrior(await scoringModel(key), 30);

      closed.push(...(await closedLeads(key, [{ lead: data[30].lead, won: true }])));
      await app.trainer.runOnce();
      const info = await scoringModel(key);
      expectLearned(info, 1, closed);
      expect([info.won, info.lost]).toEqual([5, 26]);
    });

    it('waits for 5 lost leads: 30 closed with 4 lost trains nothing, the 5th lost trains', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const data = syntheticLeads(31, 103).map((lead, i) => ({ lead: lead.lead, won: i >= 4 }));
      const closed = await closedLeads(key, data.slice(0, 30));
      expect([wonCount(closed), lostCount(closed)]).toEqual([26, 4]);
      await app.trainer.runOnce();
      expect(await modelRows(account)).toEqual([]);
      expectPrior(await scoringModel(key), 30);

      closed.push(...(await closedLeads(key, [{ lead: data[30].lead, won: false }])));
      await app.trainer.runOnce();
      const info = await scoringModel(key);
      expectLearned(info, 1, closed);
      expect([info.won, info.lost]).toEqual([26, 5]);
    });
  });

  describe('rescoring after training', () => {
    it('rescores every lead with the new model, moves scored_at and writes lead.scored with the earlier values', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const data = syntheticLeads(40, 202);
      const closed = await closedLeads(key, data.slice(0, 30));
      expect(wonCount(closed)).toBeGreaterThanOrEqual(5);
      expect(lostCount(closed)).toBeGreaterThanOrEqual(5);
      await inBatches(data.slice(30, 35), (lead) => createLead(key, lead.lead));
      const before = await allLeads(key);
      expect(before.size).toBe(35);
      await expectScoredBy(key, before.values(), new PriorLeadScorer());
      const seen = new Set((await eventRows(account, false)).map((e) => e.id));
      await sleep(5);

      await app.trainer.runOnce();
      const scorer = await storedScorer(account, false, 1);
      const after = await allLeads(key);
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      await expectScoredBy(key, after.values(), scorer);
      let changedScores = 0;
      for (const [id, lead] of after) {
        const earlier = before.get(id)!;
        expect(lead.model_version).toBe('learned-v1');
        expect(Date.parse(lead.scored_at)).toBeGreaterThan(Date.parse(earlier.scored_at));
        if (lead.score !== earlier.score) changedScores += 1;
      }
      // The learned model really scores differently from the prior (else this test would prove little).
      expect(changedScores).toBeGreaterThan(5);

      // One lead.scored per lead: its object is the lead as GET shows it now, with the earlier values.
      const events = (await eventRows(account, false)).filter((e) => !seen.has(e.id));
      expect(events.map((e) => e.type)).toEqual(new Array(35).fill('lead.scored'));
      expect(new Set(events.map((e) => e.data.object.id))).toEqual(new Set(after.keys()));
      for (const event of events) {
        const id = event.data.object.id as string;
        const now = await getLead(key, id);
        expect(event.data.object).toStrictEqual(now);
        expect(event.data.object.model_version).toBe('learned-v1');
        expect(event.data.previous_attributes).toStrictEqual(changedFields(before.get(id)!, now));
        expect(event.data.previous_attributes).toMatchObject({ model_version: 'prior-v1', scored_at: before.get(id)!.scored_at });
      }
      // The same events through GraphQL.
      const res = await app.graphql(`{ events(filter: { type: "lead.scored", limit: 100 }) { data { id type data } } }`, {}, key);
      expect(res.body.errors).toBeUndefined();
      const listed = (res.body.data.events.data as Array<{ id: string; type: string }>).map((e) => e.id);
      for (const event of events) expect(listed).toContain(event.id);

      // A lead created now is scored by learned-v1 in its create response, with signals that explain it.
      const fresh = await createLead(key, data[35].lead);
      const expected = scorer.score(data[35].lead);
      expect(fresh).toMatchObject({ model_version: 'learned-v1', score: expected.score, score_label: labelFor(expected.score) });
      const freshScore = await getScore(key, fresh.id);
      expect(freshScore.signals.reduce((sum, s) => sum + s.impact, 0)).toBe(freshScore.score - freshScore.base_score);
      expect(freshScore.signals).toEqual(expected.signals);
      expect(freshScore.signals.map((s) => s.name).sort()).toEqual([...FEATURES].sort());
      const sizes = freshScore.signals.map((s) => Math.abs(s.impact));
      expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
      for (const s of freshScore.signals) expect(s.description).toMatch(new RegExp(`^[A-Z].*\\(${s.impact > 0 ? '\\+' : ''}${s.impact}\\)\\.$`));

      // Changing a scored field rescores with the learned model too.
      const updated = await ok<RestLead>(app.request('PUT', `/v1/leads/${fresh.id}`, { key, body: { industry: 'Non-profit', employees: 5 } }));
      const reexpected = scorer.score({ ...data[35].lead, industry: 'Non-profit', employees: 5 });
      expect(updated).toMatchObject({ model_version: 'learned-v1', score: reexpected.score, score_label: labelFor(reexpected.score) });
      expect((await getScore(key, fresh.id)).signals).toEqual(reexpected.signals);
    });
    it('stops between batches on shutdown and resumes where it stopped, each lead rescored once', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const data = syntheticLeads(36, 303);
      await closedLeads(key, data.slice(0, 29));
      await inBatches(data.slice(30, 36), (lead) => createLead(key, lead.lead));
      // Whatever else of this file is due is done now; then the 30th closed lead makes only this account due.
      await app.trainer.runOnce();
      await closedLeads(key, [data[29]]);
      const seen = new Set((await eventRows(account, false)).map((e) => e.id));

      const other = await startTestApp({ trainer: { rescoreBatchSize: 5 } });
      try {
        // Shut the trainer down as the first batch writes its events: that batch commits, no other starts.
        const stopped = new Promise<void>((resolve) => outboxSignal.once('written', () => void other.trainer.stop().then(resolve)));
        other.trainer.start();
        await stopped;
      } finally {
        await other.close();
      }
      const progress = () =>
        sql<{ rescored_through: string | null; rescored_at: Date | null }>('select rescored_through, rescored_at from lead_models where account_id = ?', [
          account.account.id,
        ]);
      const [halfway] = await progress();
      expect(halfway.rescored_at).toBeNull();
      const learned = () => sql<{ id: string }>("select id from leads where account_id = ? and model_version = 'learned-v1' order by id", [account.account.id]);
      const firstBatch = await learned();
      expect(firstBatch).toHaveLength(5);
      expect(halfway.rescored_through).toBe(firstBatch[4].id);

      // The next pass (after a restart, or on another instance) finishes the rest.
      await app.trainer.runOnce();
      const [done] = await progress();
      expect(done.rescored_at).not.toBeNull();
      const leads = await allLeads(key);
      expect(leads.size).toBe(36);
      await expectScoredBy(key, leads.values(), await storedScorer(account, false, 1));
      const events = (await eventRows(account, false)).filter((e) => !seen.has(e.id));
      expect(events.map((e) => e.type)).toEqual(new Array(36).fill('lead.scored'));
      expect(new Set(events.map((e) => e.data.object.id)).size).toBe(36);
      expect(done.rescored_through).toBe([...leads.keys()].sort().at(-1));

      // Done means done: another pass trains and rescores nothing.
      await app.trainer.runOnce();
      expect((await eventRows(account, false)).length).toBe(seen.size + 36);
    });
  });

  describe('isolation', () => {
    it('keeps each account and mode on its own model', async () => {
      // Enterprise: live mode allows 1,000 requests a minute, enough for this test's live-mode traffic.
      const a = await app.createAccount({ plan: Plan.enterprise });
      const b = await app.createAccount();
      // 30 closed leads in A's live mode; 20 in A's test mode and 20 in B: together far over 30, apart under it.
      const liveData = syntheticLeads(31, 301);
      const testData = syntheticLeads(31, 304);
      const bData = syntheticLeads(21, 303);
      const aLive = await closedLeads(a.liveKey, liveData.slice(0, 30));
      const aTest = await closedLeads(a.testKey, testData.slice(0, 20));
      const bTest = await closedLeads(b.testKey, bData.slice(0, 20));
      for (const set of [aLive, aTest, bTest]) {
        expect(wonCount(set)).toBeGreaterThanOrEqual(5);
        expect(lostCount(set)).toBeGreaterThanOrEqual(5);
      }
      const aTestBefore = await allLeads(a.testKey);
      const bBefore = await allLeads(b.testKey);
      const aTestEvents = (await eventRows(a, false)).length;
      const bEvents = (await eventRows(b, false)).length;

      await app.trainer.runOnce();
      expect((await modelRows(a)).map((r) => [r.livemode, r.version])).toEqual([[true, 1]]);
      expect(await modelRows(b)).toEqual([]);
      const liveInfo = await scoringModel(a.liveKey);
      expectLearned(liveInfo, 1, aLive);
      expectPrior(await scoringModel(a.testKey), 20);
      expectPrior(await scoringModel(b.testKey), 20);
      // A's test leads and B's leads were not touched: same scores, same scored_at, no events.
      expect(await allLeads(a.testKey)).toEqual(aTestBefore);
      expect(await allLeads(b.testKey)).toEqual(bBefore);
      expect(await eventRows(a, false)).toHaveLength(aTestEvents);
      expect(await eventRows(b, false)).toHaveLength(bEvents);
      const liveScorer = await storedScorer(a, true, 1);
      await expectScoredBy(a.liveKey, (await allLeads(a.liveKey)).values(), liveScorer);

      // The same lead is scored by the live model in live mode only.
      const same = testData[30].lead;
      const inLive = await createLead(a.liveKey, same);
      const inTest = await createLead(a.testKey, same);
      const inB = await createLead(b.testKey, same);
      expect(inLive).toMatchObject({ model_version: 'learned-v1', score: liveScorer.score(same).score });
      const prior = new PriorLeadScorer().score(same);
      expect(inTest).toMatchObject({ model_version: 'prior-v1', score: prior.score });
      expect(inB).toMatchObject({ model_version: 'prior-v1', score: prior.score });
      expect((await getScore(a.testKey, inTest.id)).signals).toEqual(prior.signals);

      // A's test mode reaches 30: it gets its own learned-v1; A's live model and B stay as they were.
      const liveLeads = await allLeads(a.liveKey);
      const liveEvents = (await eventRows(a, true)).length;
      aTest.push(...(await closedLeads(a.testKey, testData.slice(20, 30))));
      const bLeads = await allLeads(b.testKey);
      await app.trainer.runOnce();
      expect((await modelRows(a)).map((r) => [r.livemode, r.version])).toEqual([
        [false, 1],
        [true, 1],
      ]);
      expect(await modelRows(b)).toEqual([]);
      const testInfo = await scoringModel(a.testKey);
      expectLearned(testInfo, 1, aTest);
      expect(await scoringModel(a.liveKey)).toEqual(liveInfo);
      expect(testInfo.weights).not.toEqual(liveInfo.weights);
      expect(await allLeads(a.liveKey)).toEqual(liveLeads);
      expect(await eventRows(a, true)).toHaveLength(liveEvents);
      expectPrior(await scoringModel(b.testKey), 20);
      expect(await allLeads(b.testKey)).toEqual(bLeads);
      // A's test leads (inTest too) now follow A's test model, not the live one.
      const testLeads = await allLeads(a.testKey);
      expect(testLeads.size).toBe(31);
      await expectScoredBy(a.testKey, testLeads.values(), await storedScorer(a, false, 1));
    });
  });

  describe('determinism', () => {
    it('stores exactly the model trained here from the same leads, and retraining the same data gives it again', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const data = syntheticLeads(36, 404);
      const closed = await closedLeads(key, data);
      await app.trainer.runOnce();
      const info = await scoringModel(key);
      expectLearned(info, 1, closed);
      expect(info.holdoutSize).toBeGreaterThan(0);

      // The same closed leads, read back over REST, in the order the service reads them (by id).
      const leads = await allLeads(key);
      const outcome = new Map(closed.map((c) => [c.lead.id, c.won!]));
      const labelled: LabelledLead[] = [...leads.values()]
        .sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
        .map((lead) => ({ id: lead.id, lead: featuresOf(lead), won: outcome.get(lead.id)! }));
      const here = trainLeadModel(labelled, new PriorLeadScorer());
      const [row] = await modelRows(account);
      expect(row.params).toEqual(here.params);
      expect(info.weights).toEqual(here.params.model.weights);
      expect(info).toMatchObject({
        trainingSize: here.trainingSize,
        holdoutSize: here.holdoutSize,
        won: here.won,
        lost: here.lost,
        auc: here.auc,
        priorAuc: here.priorAuc,
        calibration: here.calibration,
      });
      await expectScoredBy(key, leads.values(), new LearnedLeadScorer('learned-v1', here.params));

      // Retrain from scratch on the same data: the same model, so no lead changes and no lead.scored is written.
      const seen = (await eventRows(account, false)).length;
      await sql('delete from lead_models where account_id = ?', [account.account.id]);
      expectPrior(await scoringModel(key), 36);
      await app.trainer.runOnce();
      const [again] = await modelRows(account);
      expect(again.version).toBe(1);
      expect(again.params).toEqual(row.params);
      const { trainedAt: _t1, ...first } = info;
      const { trainedAt: _t2, ...second } = await scoringModel(key);
      expect(second).toEqual(first);
      expect(await eventRows(account, false)).toHaveLength(seen);
      expect(await allLeads(key)).toEqual(leads);
    });
  });
});

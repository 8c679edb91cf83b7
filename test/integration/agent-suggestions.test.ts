import { randomUUID } from 'node:crypto';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { parsePermissions } from '../../src/modules/accounts/key-permissions';
import { ACTION_PROPERTY_ID } from '../../src/modules/integrations/providers/m365-client';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { waitFor } from '../helpers/wait';

/**
 * Suggestions of writer agents (issue 23), against the real app: a deployed lead_researcher writes
 * a lead_brief for each new lead, a follow_up_writer a follow_up_email for each lead that becomes
 * qualified. No model is connected, so the built-in template writes (generated_by "template").
 * Listing, reading, approving (with edits) and rejecting over REST and GraphQL; expiry; automatic
 * approval; an approved e-mail becoming exactly one Outlook draft in a Microsoft 365 mailbox (the
 * sync worker is the real one, Microsoft is played by FakeGraphMailboxes); tenant isolation and
 * restricted keys.
 */

type Json = Record<string, unknown>;

interface Suggestion {
  id: string;
  object: string;
  agent_id: string;
  run_id: string;
  kind: 'follow_up_email' | 'lead_brief';
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  lead_id: string | null;
  deal_id: string | null;
  content: Json;
  approved_content: Json | null;
  generated_by: string;
  model: string | null;
  generation_error: string | null;
  approved_automatically: boolean;
  expires_at: string;
  decided_at: string | null;
  created_at: string;
  updated_at: string;
  livemode: boolean;
}

interface Lead {
  id: string;
  company: string;
  contact_email: string;
  contact_name: string | null;
}

const SUGGESTION_KEYS = [
  'agent_id',
  'approved_automatically',
  'approved_content',
  'content',
  'created_at',
  'deal_id',
  'decided_at',
  'expires_at',
  'generated_by',
  'generation_error',
  'id',
  'kind',
  'lead_id',
  'livemode',
  'model',
  'object',
  'run_id',
  'status',
  'updated_at',
];
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GQL_FIELDS =
  'id object agentId runId kind status leadId dealId content approvedContent generatedBy model generationError approvedAutomatically expiresAt decidedAt createdAt updatedAt livemode';

/** The contract's error shape with its status, code and param. */
function expectError(res: HttpResponse, status: number, code: string, param?: string): void {
  const context = `${status} ${code} ${param ?? ''}: got ${res.status} ${res.text.slice(0, 400)}`;
  expect({ context, status: res.status }).toEqual({ context, status });
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  expect(res.body.error.message).not.toMatch(/\$input|Variable "|SuggestionApproveInput|graphql|select |update "/i);
  if (param === undefined) expect(res.body.error).not.toHaveProperty('param');
  else expect(res.body.error.param).toBe(param);
}

describe('agent suggestions', () => {
  let crms: FakeCrms;
  let app: TestApp;
  let owner: TestAccount;
  let now = new Date();

  const api = (method: string, path: string, body?: unknown, key = owner.testKey) => app.request(method, path, { key, body });
  const sql = <Row = Json>(text: string, params: unknown[] = []) => app.orm.em.fork().getConnection().execute<Row[]>(text, params);

  async function deployedAgent(type: 'lead_researcher' | 'follow_up_writer', config: Json = {}, key = owner.testKey): Promise<string> {
    const made = await api('POST', '/v1/agents', { name: `${type} ${randomUUID().slice(0, 6)}`, type, config }, key);
    if (made.status !== 201) throw new Error(`create agent failed: ${made.status} ${made.text}`);
    const deployed = await api('POST', `/v1/agents/${made.body.id}/deploy`, undefined, key);
    if (deployed.status !== 200) throw new Error(`deploy failed: ${deployed.status} ${deployed.text}`);
    return made.body.id;
  }
  async function newLead(key = owner.testKey, extra: Json = {}): Promise<Lead> {
    const u = randomUUID().slice(0, 8);
    const res = await api(
      'POST',
      '/v1/leads',
      { company: `Initech ${u}`, contact_email: `bill-${u}@initech.test`, contact_name: 'Bill Lumbergh', ...extra },
      key,
    );
    if (res.status !== 201) throw new Error(`create lead failed: ${res.status} ${res.text}`);
    return res.body;
  }
  async function qualify(lead: Lead, key = owner.testKey): Promise<void> {
    const res = await api('PUT', `/v1/leads/${lead.id}`, { status: 'qualified' }, key);
    if (res.status !== 200) throw new Error(`qualify failed: ${res.status} ${res.text}`);
  }
  const list = (agentId: string, query = '', key = owner.testKey) => api('GET', `/v1/agents/${agentId}/suggestions${query}`, undefined, key);
  /** Waits until the agent has made `count` suggestions (failing at once on more); newest first. */
  const suggestionsOf = (agentId: string, count: number, key = owner.testKey): Promise<Suggestion[]> =>
    waitFor(`${count} suggestions of ${agentId}`, async () => {
      const res = await list(agentId, '?limit=100', key);
      expect(res.status).toBe(200);
      if (res.body.data.length > count) throw new Error(`expected ${count} suggestions, got ${res.text}`);
      return res.body.data.length === count && (res.body.data as Suggestion[]);
    });
  /** A lead_brief of a new lead, pending. */
  async function brief(agentId: string, key = owner.testKey): Promise<{ lead: Lead; suggestion: Suggestion }> {
    const before = (await list(agentId, '?limit=100', key)).body.data.length;
    const lead = await newLead(key);
    const [suggestion] = await suggestionsOf(agentId, before + 1, key);
    expect(suggestion.lead_id).toBe(lead.id);
    return { lead, suggestion };
  }
  /** A follow_up_email for a lead that has just become qualified. */
  async function email(agentId: string, key = owner.testKey, extra: Json = {}): Promise<{ lead: Lead; suggestion: Suggestion }> {
    const before = (await list(agentId, '?limit=100', key)).body.data.length;
    const lead = await newLead(key, extra);
    await qualify(lead, key);
    const [suggestion] = await suggestionsOf(agentId, before + 1, key);
    expect(suggestion.lead_id).toBe(lead.id);
    return { lead, suggestion };
  }
  const get = (id: string, key = owner.testKey) => api('GET', `/v1/suggestions/${id}`, undefined, key);
  const approve = (id: string, body?: unknown, key = owner.testKey) => api('POST', `/v1/suggestions/${id}/approve`, body, key);
  const reject = (id: string, key = owner.testKey) => api('POST', `/v1/suggestions/${id}/reject`, undefined, key);
  /** The events of a type about one suggestion, as GET /v1/events shows them. */
  async function eventsAbout(type: string, id: string, key = owner.testKey): Promise<Array<{ type: string; data: { object: Json } }>> {
    const res = await api('GET', `/v1/events?type=${type}&limit=100`, undefined, key);
    expect(res.status).toBe(200);
    return res.body.data.filter((event: { data: { object: Json } }) => event.data.object.id === id);
  }
  /** Every event so far fanned out (what an approval owes the mailbox exists by now). */
  const fannedOut = () => waitFor('the events fanned out', async () => (await sql(`select event_id from event_fan_outs`)).length === 0);

  beforeAll(async () => {
    crms = await startFakeCrms();
    app = await startTestApp({ crms, agents: { clock: () => now, scanIntervalMs: HOUR_MS }, sync: { leaseMs: 3_000 } });
  });
  beforeEach(async () => {
    now = new Date();
    crms.microsoft.recover();
    // Both workers poll every 100 ms; emptying the tables under them could deadlock with their passes.
    await Promise.all([app.agentRunner!.stop(), app.syncWorker!.stop()]);
    await app.reset();
    app.agentRunner!.start();
    app.syncWorker!.start();
    owner = await app.createAccount();
  });
  afterAll(async () => {
    await app.close();
    await crms.close();
  });

  describe('listing and reading', () => {
    it('lists newest first in the REST shape, filters by status, pages with limit and cursor, and reads one by id', async () => {
      const agentId = await deployedAgent('lead_researcher');
      const made: Array<{ lead: Lead; suggestion: Suggestion }> = [];
      for (let i = 0; i < 3; i += 1) made.push(await brief(agentId));
      const all = await list(agentId);
      expect(all.status).toBe(200);
      expect(Object.keys(all.body).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object']);
      expect(all.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
      const listed: Suggestion[] = all.body.data;
      expect(listed.map((one) => one.lead_id)).toEqual(made.map(({ lead }) => lead.id).reverse());

      const runs = await app.graphql('query ($id: ID!) { agent(id: $id) { runs(filter: { limit: 100 }) { data { id } } } }', { id: agentId }, owner.testKey);
      const runIds = runs.body.data.agent.runs.data.map((run: { id: string }) => run.id);
      for (const suggestion of listed) {
        expect(Object.keys(suggestion).sort()).toEqual(SUGGESTION_KEYS);
        expect(suggestion).toMatchObject({
          object: 'agent_suggestion',
          agent_id: agentId,
          kind: 'lead_brief',
          status: 'pending',
          deal_id: null,
          approved_content: null,
          generated_by: 'template',
          model: null,
          generation_error: null,
          approved_automatically: false,
          decided_at: null,
          livemode: false,
        });
        expect(suggestion.id).toMatch(/^sugg_[0-9A-HJKMNP-TV-Z]{26}$/);
        expect(runIds).toContain(suggestion.run_id);
        expect(Object.keys(suggestion.content).sort()).toEqual(['brief', 'fields_used', 'next_step']);
        expect(suggestion.content.brief).toContain(made.find(({ lead }) => lead.id === suggestion.lead_id)!.lead.company);
        for (const at of [suggestion.created_at, suggestion.updated_at, suggestion.expires_at]) expect(at).toMatch(ISO_MS);
        // The default suggestion_ttl_days is 7, counted from the agent's clock (set when the test began).
        expect(Math.abs(Date.parse(suggestion.expires_at) - (now.getTime() + 7 * DAY_MS))).toBeLessThan(1_000);
        const one = await get(suggestion.id);
        expect(one.status).toBe(200);
        expect(one.body).toEqual(suggestion);
      }

      const first = await list(agentId, '?limit=2');
      expect(first.body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
      expect(first.body.data.map((one: Suggestion) => one.id)).toEqual(listed.slice(0, 2).map((one) => one.id));
      const second = await list(agentId, `?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
      expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
      expect(second.body.data.map((one: Suggestion) => one.id)).toEqual([listed[2].id]);

      expect((await approve(listed[0].id)).status).toBe(200);
      expect((await reject(listed[1].id)).status).toBe(200);
      const byStatus = async (status: string) => {
        const res = await list(agentId, `?status=${status}`);
        expect(res.status).toBe(200);
        return res.body.data.map((one: Suggestion) => one.id);
      };
      expect(await byStatus('approved')).toEqual([listed[0].id]);
      expect(await byStatus('rejected')).toEqual([listed[1].id]);
      expect(await byStatus('pending')).toEqual([listed[2].id]);
      expect(await byStatus('expired')).toEqual([]);
    });

    it('refuses a bad status or limit (400) and answers 404 for an unknown agent or suggestion', async () => {
      const agentId = await deployedAgent('lead_researcher');
      for (const status of ['maybe', '', 'PENDING']) {
        const res = await list(agentId, `?status=${status}`);
        expectError(res, 400, 'parameter_invalid', 'status');
        expect(res.body.error.message).toBe('status must be one of pending, approved, rejected, expired');
      }
      expectError(await list(agentId, '?status=pending&status=approved'), 400, 'parameter_invalid', 'status');
      expectError(await list(agentId, '?cursor=not-a-cursor'), 400, 'parameter_invalid', 'cursor');
      expectError(await list(agentId, '?limit=0'), 400, 'parameter_invalid', 'limit');
      expectError(await list('agent_01HZZZZZZZZZZZZZZZZZZZZZZZ'), 404, 'resource_missing', 'id');
      expectError(await list('nonsense'), 404, 'resource_missing', 'id');
      for (const id of ['sugg_01HZZZZZZZZZZZZZZZZZZZZZZZ', 'nonsense']) {
        expectError(await get(id), 404, 'resource_missing', 'id');
        expectError(await approve(id), 404, 'resource_missing', 'id');
        expectError(await reject(id), 404, 'resource_missing', 'id');
      }
    });
  });

  describe('approving and rejecting', () => {
    it('approves as written: approved_content is the content, decided_at set, agent.suggestion_approved recorded; a second decision is 409', async () => {
      const agentId = await deployedAgent('follow_up_writer');
      const { lead, suggestion } = await email(agentId);
      expect(suggestion).toMatchObject({ kind: 'follow_up_email', status: 'pending', generated_by: 'template', lead_id: lead.id });
      expect(Object.keys(suggestion.content).sort()).toEqual(['body', 'subject']);
      expect(suggestion.content.subject).toBe(`Next steps with ${lead.company}`);
      expect(await eventsAbout('agent.suggestion_created', suggestion.id)).toHaveLength(1);

      const before = Date.now();
      const approved = await approve(suggestion.id);
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({
        id: suggestion.id,
        status: 'approved',
        content: suggestion.content,
        approved_content: suggestion.content,
        approved_automatically: false,
      });
      expect(Date.parse(approved.body.decided_at)).toBeGreaterThanOrEqual(before - 1_000);
      expect((await get(suggestion.id)).body).toEqual(approved.body);
      const [event] = await eventsAbout('agent.suggestion_approved', suggestion.id);
      expect(event.data.object).toMatchObject({ id: suggestion.id, object: 'agent_suggestion', status: 'approved', approved_content: suggestion.content });

      expectError(await approve(suggestion.id), 409, 'resource_conflict');
      expectError(await reject(suggestion.id), 409, 'resource_conflict');
      expect((await get(suggestion.id)).body).toEqual(approved.body);
      expect(await eventsAbout('agent.suggestion_approved', suggestion.id)).toHaveLength(1);
      expect(await eventsAbout('agent.suggestion_rejected', suggestion.id)).toHaveLength(0);
    });

    it('approves with edits (subject and body of an e-mail; brief and next_step of a brief): approved_content has them, content is unchanged', async () => {
      const writer = await deployedAgent('follow_up_writer');
      const { suggestion: mail } = await email(writer);
      const edited = await approve(mail.id, { subject: '  Lunch\r\nnext   week?  ', body: 'Hi Bill,\n\nShall we meet?\n\nPeter' });
      expect(edited.status).toBe(200);
      expect(edited.body.content).toEqual(mail.content);
      expect(edited.body.approved_content).toEqual({ subject: 'Lunch next week?', body: 'Hi Bill,\n\nShall we meet?\n\nPeter' });
      const [event] = await eventsAbout('agent.suggestion_approved', mail.id);
      expect(event.data.object.approved_content).toEqual(edited.body.approved_content);

      // Only the body edited: the subject stays as the agent wrote it.
      const { suggestion: other } = await email(writer);
      const bodyOnly = await approve(other.id, { body: 'Just the body' });
      expect(bodyOnly.body.approved_content).toEqual({ subject: other.content.subject, body: 'Just the body' });

      const researcher = await deployedAgent('lead_researcher');
      const { suggestion: note } = await brief(researcher);
      const briefed = await approve(note.id, { brief: 'A short brief.', next_step: 'Call on Monday.' });
      expect(briefed.status).toBe(200);
      expect(briefed.body.content).toEqual(note.content);
      expect(briefed.body.approved_content).toEqual({ brief: 'A short brief.', next_step: 'Call on Monday.', fields_used: note.content.fields_used });
    });

    it('refuses an edit of the wrong kind, a blank or too long edit (400 naming it), and leaves nothing half-written', async () => {
      const writer = await deployedAgent('follow_up_writer');
      const researcher = await deployedAgent('lead_researcher');
      const { suggestion: mail } = await email(writer);
      const { suggestion: note } = await brief(researcher);

      for (const [id, body, param] of [
        [mail.id, { brief: 'Not for an e-mail' }, 'brief'],
        [mail.id, { subject: 'Fine', next_step: 'Not for an e-mail' }, 'next_step'],
        [note.id, { subject: 'Not for a brief' }, 'subject'],
        [note.id, { brief: 'Fine', body: 'Not for a brief' }, 'body'],
        [mail.id, { subject: '   ' }, 'subject'],
        [mail.id, { body: '' }, 'body'],
        [mail.id, { subject: 'x'.repeat(201) }, 'subject'],
        [mail.id, { body: 'x'.repeat(10_001) }, 'body'],
        [note.id, { brief: 'x'.repeat(4_001) }, 'brief'],
        [note.id, { next_step: 'x'.repeat(1_001) }, 'next_step'],
        [note.id, { next_step: ' \n ' }, 'next_step'],
        [mail.id, { subject: 42 }, 'subject'],
      ] as Array<[string, Json, string]>) {
        const res = await approve(id, body);
        expectError(res, 400, 'parameter_invalid', param);
      }
      const wrongKind = await approve(mail.id, { brief: 'Not for an e-mail' });
      expect(wrongKind.body.error.message).toMatch(/follow_up_email.*subject and body/);

      for (const suggestion of [mail, note]) {
        const read = (await get(suggestion.id)).body;
        expect(read).toMatchObject({ status: 'pending', approved_content: null, decided_at: null, content: suggestion.content });
        expect(await eventsAbout('agent.suggestion_approved', suggestion.id)).toEqual([]);
      }
      // Still decidable after all that.
      expect((await approve(mail.id, { subject: 'Now right' })).body.approved_content.subject).toBe('Now right');
    });

    it('decides once under a race: of an approval and a rejection sent together exactly one wins, the other is 409', async () => {
      const agentId = await deployedAgent('lead_researcher');
      for (let round = 0; round < 3; round += 1) {
        const { suggestion } = await brief(agentId);
        const answers = await Promise.all([approve(suggestion.id, { brief: 'Mine' }), reject(suggestion.id), approve(suggestion.id)]);
        const statuses = answers.map((res) => res.status).sort();
        expect(statuses).toEqual([200, 409, 409]);
        const winner = answers.find((res) => res.status === 200)!;
        expect((await get(suggestion.id)).body).toEqual(winner.body);
        const decided = [
          ...(await eventsAbout('agent.suggestion_approved', suggestion.id)),
          ...(await eventsAbout('agent.suggestion_rejected', suggestion.id)),
        ];
        expect(decided.map((event) => event.data.object.status)).toEqual([winner.body.status]);
      }
    });

    it('refuses a body that is not the edits: an unknown field, a list, a number', async () => {
      const agentId = await deployedAgent('lead_researcher');
      const { suggestion } = await brief(agentId);
      for (const body of [{ brief: 'Fine', tone: 'warm' }, ['brief'], 42, { next_step: ['a'] }]) {
        const res = await approve(suggestion.id, body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(Object.keys(res.body)).toEqual(['error']);
      }
      expect((await get(suggestion.id)).body).toMatchObject({ status: 'pending', approved_content: null });
    });

    it('rejects: status rejected, decided_at set, agent.suggestion_rejected recorded, nothing approved; deciding again is 409', async () => {
      const agentId = await deployedAgent('lead_researcher');
      const { suggestion } = await brief(agentId);
      const rejected = await reject(suggestion.id);
      expect(rejected.status).toBe(200);
      expect(rejected.body).toMatchObject({ status: 'rejected', approved_content: null, content: suggestion.content });
      expect(rejected.body.decided_at).toMatch(ISO_MS);
      const [event] = await eventsAbout('agent.suggestion_rejected', suggestion.id);
      expect(event.data.object).toMatchObject({ id: suggestion.id, status: 'rejected' });
      expectError(await approve(suggestion.id, { brief: 'Too late' }), 409, 'resource_conflict');
      expectError(await reject(suggestion.id), 409, 'resource_conflict');
      expect((await get(suggestion.id)).body).toEqual(rejected.body);
      expect(await eventsAbout('agent.suggestion_approved', suggestion.id)).toEqual([]);
    });
  });

  it('expires a pending suggestion past its expires_at: it reads and filters as expired, and deciding it is 409', async () => {
    const agentId = await deployedAgent('lead_researcher', { suggestion_ttl_days: 2 });
    const { suggestion } = await brief(agentId);
    const { suggestion: kept } = await brief(agentId);
    expect(Math.abs(Date.parse(suggestion.expires_at) - (now.getTime() + 2 * DAY_MS))).toBeLessThan(1_000);
    await sql(`update agent_suggestions set expires_at = now() - interval '1 minute' where id = ?`, [suggestion.id]);

    const read = await get(suggestion.id);
    expect(read.body).toMatchObject({ status: 'expired', decided_at: null, approved_content: null });
    const ids = async (status: string) => (await list(agentId, `?status=${status}`)).body.data.map((one: Suggestion) => one.id);
    expect(await ids('expired')).toEqual([suggestion.id]);
    expect(await ids('pending')).toEqual([kept.id]);
    expectError(await approve(suggestion.id), 409, 'resource_conflict');
    expectError(await reject(suggestion.id), 409, 'resource_conflict');
    expect(await eventsAbout('agent.suggestion_approved', suggestion.id)).toEqual([]);

    // Expired by a decision's own read too, not only by a list: the second one expires and is refused.
    await sql(`update agent_suggestions set expires_at = now() - interval '1 minute' where id = ?`, [kept.id]);
    expectError(await approve(kept.id), 409, 'resource_conflict');
    expect((await get(kept.id)).body.status).toBe('expired');
  });

  it('act_without_approval: the kinds listed are approved at once (approved_automatically), with both events; others wait', async () => {
    const automatic = await deployedAgent('lead_researcher', { act_without_approval: ['lead_brief'] });
    const manual = await deployedAgent('follow_up_writer', { act_without_approval: [] });
    const lead = await newLead();
    const [suggestion] = await suggestionsOf(automatic, 1);
    expect(suggestion).toMatchObject({ lead_id: lead.id, status: 'approved', approved_automatically: true, approved_content: suggestion.content });
    expect(suggestion.decided_at).toMatch(ISO_MS);
    expect(await eventsAbout('agent.suggestion_created', suggestion.id)).toHaveLength(1);
    const [approvedEvent] = await eventsAbout('agent.suggestion_approved', suggestion.id);
    expect(approvedEvent.data.object).toMatchObject({ status: 'approved', approved_automatically: true });
    expectError(await approve(suggestion.id), 409, 'resource_conflict');

    await qualify(lead);
    const [waiting] = await suggestionsOf(manual, 1);
    expect(waiting).toMatchObject({ status: 'pending', approved_automatically: false });

    // A writer may act unapproved only on what it writes.
    const wrong = await api('POST', '/v1/agents', { name: 'Wrong', type: 'follow_up_writer', config: { act_without_approval: ['lead_brief'] } });
    expectError(wrong, 400, 'parameter_invalid', 'config[act_without_approval]');
  });

  describe('Microsoft 365', () => {
    interface Mailbox {
      tenant_id: string;
      client_id: string;
      client_secret: string;
      mailbox: string;
    }
    function registered(): Mailbox {
      const credentials = {
        tenant_id: randomUUID(),
        client_id: randomUUID(),
        client_secret: `m365~${randomUUID()}`,
        mailbox: `sales-${randomUUID().slice(0, 8)}@contoso.test`,
      };
      crms.microsoft.registerApp({ tenantId: credentials.tenant_id, clientId: credentials.client_id, clientSecret: credentials.client_secret });
      crms.microsoft.addMailbox(credentials.tenant_id, credentials.mailbox);
      return credentials;
    }
    async function connect(credentials: Mailbox, key = owner.testKey): Promise<string> {
      const made = await api('POST', '/v1/integrations', { type: 'm365', provider: 'microsoft365', credentials }, key);
      expect(made.status).toBe(201);
      return made.body.id;
    }
    const graphCalls = (credentials: Mailbox) => crms.microsoft.requests.filter((request) => request.path.startsWith(`/v1.0/users/${credentials.mailbox}/`));
    const owedRows = () => sql<{ object_id: string }>(`select object_id from integration_pending_changes where object_type = 'action'`);
    const syncRuns = async (integrationId: string) => (await api('GET', `/v1/integrations/${integrationId}/sync_runs?limit=100`)).body.data;
    const settled = (integrationId: string, count: number) =>
      waitFor(`${count} settled runs of ${integrationId}`, async () => {
        const runs = await syncRuns(integrationId);
        return runs.length >= count && runs.every((run: { status: string }) => run.status !== 'running') && runs;
      });

    it('an approved e-mail becomes exactly one Outlook draft to the lead’s contact with the edited text, never sent; a brief writes nothing', async () => {
      const credentials = registered();
      const integrationId = await connect(credentials);
      const writer = await deployedAgent('follow_up_writer');
      const researcher = await deployedAgent('lead_researcher');
      const { lead, suggestion } = await email(writer, owner.testKey, { contact_name: 'Grace Hopper' });
      await suggestionsOf(researcher, 1);
      await fannedOut();
      // Pending: nothing owed, nothing written.
      expect(await owedRows()).toEqual([]);
      expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toEqual([]);

      const body = 'Hi Grace,\n\nCould we talk <Tuesday> & go over the numbers?\nThanks.\n\nPeter';
      expect((await approve(suggestion.id, { subject: 'About the numbers', body })).status).toBe(200);
      const [draft] = await waitFor('the draft', () => {
        const drafts = crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox);
        return drafts.length > 0 && drafts;
      });
      await fannedOut();
      await waitFor('nothing owed', async () => (await owedRows()).length === 0);
      expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toHaveLength(1);
      expect(draft.isDraft).toBe(true);
      expect(draft.subject).toBe('About the numbers');
      expect(draft.subject).not.toBe(suggestion.content.subject);
      expect(draft.singleValueExtendedProperties).toEqual([{ id: ACTION_PROPERTY_ID, value: suggestion.id }]);
      expect(draft.toRecipients).toEqual([{ emailAddress: { address: lead.contact_email, name: 'Grace Hopper' } }]);
      expect(draft.body.contentType).toBe('html');
      expect(draft.body.content).toContain('<p>Hi Grace,</p>');
      expect(draft.body.content).toContain('<p>Could we talk &#60;Tuesday&#62; &#38; go over the numbers?<br>Thanks.</p>');
      expect(draft.body.content).toContain('<p>Peter</p>');
      expect(draft.body.content).not.toContain(String(suggestion.content.body).split('\n')[2]);
      expect(graphCalls(credentials).every((call) => !/\/send(Mail)?$/.test(call.path.split('?')[0]))).toBe(true);

      // Another run of the mailbox writes nothing again.
      const runsBefore = (await settled(integrationId, 1)).length;
      const creates = () => graphCalls(credentials).filter((call) => call.method === 'POST').length;
      const postsBefore = creates();
      expect((await api('POST', `/v1/integrations/${integrationId}/sync`)).status).toBe(202);
      await settled(integrationId, runsBefore + 1);
      expect(creates()).toBe(postsBefore);
      expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toHaveLength(1);

      // An approved brief is kept as text; nothing is owed to the mailbox for it.
      const [note] = await suggestionsOf(researcher, 1);
      expect((await approve(note.id, { brief: 'Edited brief' })).status).toBe(200);
      await fannedOut();
      expect(await owedRows()).toEqual([]);
      expect(creates()).toBe(postsBefore);
      expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toHaveLength(1);
    });

    it('an e-mail approved automatically becomes a draft too; a rejected one never does', async () => {
      const credentials = registered();
      await connect(credentials);
      const automatic = await deployedAgent('follow_up_writer', { act_without_approval: ['follow_up_email'] });
      const manual = await deployedAgent('follow_up_writer');
      // One lead qualified: each writer writes its e-mail about it.
      const { lead, suggestion } = await email(automatic);
      const [refused] = await suggestionsOf(manual, 1);
      expect(suggestion).toMatchObject({ status: 'approved', approved_automatically: true });
      expect(refused).toMatchObject({ lead_id: lead.id, status: 'pending' });
      const [draft] = await waitFor('the draft', () => {
        const drafts = crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox);
        return drafts.length > 0 && drafts;
      });
      expect(draft.singleValueExtendedProperties[0].value).toBe(suggestion.id);
      expect(draft.subject).toBe(suggestion.content.subject);
      expect(draft.toRecipients).toEqual([{ emailAddress: { address: lead.contact_email, name: lead.contact_name } }]);

      expect((await reject(refused.id)).status).toBe(200);
      await fannedOut();
      expect(await owedRows()).toEqual([]);
      expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toHaveLength(1);
    });

    it('an idle deal’s e-mail (a scan’s) names its deal, and its approved draft goes to the deal’s lead', async () => {
      const credentials = registered();
      const integrationId = await connect(credentials);
      const lead = await newLead(owner.testKey, { contact_name: 'Ada Lovelace' });
      const deal = await api('POST', '/v1/deals', { name: 'Initech rollout', value: 5000, stage: 'proposal', lead_id: lead.id });
      expect(deal.status).toBe(201);
      const writer = await deployedAgent('follow_up_writer', { idle_days: { proposal: 3 }, on_lead_qualified: false });
      now = new Date(Date.now() + 4 * DAY_MS);
      const [suggestion] = await suggestionsOf(writer, 1);
      expect(suggestion).toMatchObject({ kind: 'follow_up_email', status: 'pending', lead_id: lead.id, deal_id: deal.body.id });
      expect(suggestion.content.subject).toBe('Following up: Initech rollout');
      // Its time to wait runs from the agent's clock.
      expect(Math.abs(Date.parse(suggestion.expires_at) - (now.getTime() + 7 * DAY_MS))).toBeLessThan(1_000);

      expect((await approve(suggestion.id)).status).toBe(200);
      const [draft] = await waitFor('the draft', () => {
        const drafts = crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox);
        return drafts.length > 0 && drafts;
      });
      expect(draft.subject).toBe('Following up: Initech rollout');
      expect(draft.toRecipients).toEqual([{ emailAddress: { address: lead.contact_email, name: 'Ada Lovelace' } }]);
      await settled(integrationId, 1);
      const links = await sql<{ object_id: string; external_id: string; fields: Json }>(
        `select object_id, external_id, fields from integration_links where object_type = 'action'`,
      );
      expect(links).toEqual([
        { object_id: suggestion.id, external_id: draft.id, fields: { deliver_to: 'outlook_draft', deal_id: deal.body.id, found: false } },
      ]);
    });

    it('an approved e-mail whose lead or deal was deleted meanwhile fails for itself in the sync run; nothing is written', async () => {
      const credentials = registered();
      const integrationId = await connect(credentials);
      const writer = await deployedAgent('follow_up_writer', { idle_days: { proposal: 3 } });
      const { lead, suggestion } = await email(writer);
      const dealLead = await newLead(owner.testKey);
      const deal = await api('POST', '/v1/deals', { name: 'Doomed deal', value: 100, stage: 'proposal', lead_id: dealLead.id });
      now = new Date(Date.now() + 4 * DAY_MS);
      const [ofDeal] = await suggestionsOf(writer, 2);
      expect(ofDeal.deal_id).toBe(deal.body.id);
      // Microsoft is unreachable while both are approved, so both are still owed when their lead and deal go.
      crms.microsoft.throttleNext(1_000, 120);
      expect((await approve(suggestion.id)).status).toBe(200);
      expect((await approve(ofDeal.id)).status).toBe(200);
      await settled(integrationId, 1);
      expect((await api('DELETE', `/v1/leads/${lead.id}`)).status).toBe(200);
      expect((await api('DELETE', `/v1/deals/${deal.body.id}`)).status).toBe(200);
      crms.microsoft.recover();
      expect((await api('POST', `/v1/integrations/${integrationId}/sync`)).status).toBe(202);
      const [last] = await waitFor('the manual run', async () => {
        const runs = await settled(integrationId, 2);
        return runs[0].trigger === 'manual' && runs;
      });
      expect(last).toMatchObject({ status: 'succeeded', pushed: 0, failed: 2 });
      const failures = await sql<{ object_id: string; message: string }>(
        `select object_id, message from integration_sync_failures where object_type = 'action' order by message`,
      );
      expect(failures).toEqual([
        { object_id: ofDeal.id, message: `the deal ${deal.body.id} was deleted before its approved e-mail was delivered` },
        { object_id: suggestion.id, message: `the lead ${lead.id} was deleted before its approved e-mail was delivered` },
      ]);
      expect(await owedRows()).toEqual([]);
      expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toEqual([]);
    });

    it('without Microsoft 365 the approved text is simply kept: nothing owed, nothing written', async () => {
      const credentials = registered();
      const other = await app.createAccount();
      await connect(credentials, other.testKey); // another account's mailbox must not receive this one's e-mail
      const writer = await deployedAgent('follow_up_writer');
      const { suggestion } = await email(writer);
      const approved = await approve(suggestion.id, { subject: 'Kept here' });
      expect(approved.status).toBe(200);
      await fannedOut();
      expect(await owedRows()).toEqual([]);
      expect((await get(suggestion.id)).body.approved_content).toEqual({ subject: 'Kept here', body: suggestion.content.body });
      expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toEqual([]);
      expect(graphCalls(credentials).filter((call) => call.method === 'POST')).toEqual([]);
    });
  });

  it('GraphQL: agentSuggestions(id, filter), suggestion(id), approveSuggestion(id, input), rejectSuggestion(id) match REST', async () => {
    const researcher = await deployedAgent('lead_researcher');
    const { suggestion: first } = await brief(researcher);
    const { suggestion: second } = await brief(researcher);
    const gql = (query: string, variables: Json) => app.graphql(query, variables, owner.testKey);

    const listed = await gql(
      `query ($id: ID!, $filter: SuggestionListInput) { agentSuggestions(id: $id, filter: $filter) { data { ${GQL_FIELDS} } hasMore nextCursor } }`,
      { id: researcher, filter: { status: 'pending', limit: 1 } },
    );
    expect(listed.body.errors).toBeUndefined();
    expect(listed.body.data.agentSuggestions).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const [row] = listed.body.data.agentSuggestions.data;
    expect(row).toEqual({
      id: second.id,
      object: 'agent_suggestion',
      agentId: researcher,
      runId: second.run_id,
      kind: 'lead_brief',
      status: 'pending',
      leadId: second.lead_id,
      dealId: null,
      content: second.content,
      approvedContent: null,
      generatedBy: 'template',
      model: null,
      generationError: null,
      approvedAutomatically: false,
      expiresAt: second.expires_at,
      decidedAt: null,
      createdAt: second.created_at,
      updatedAt: second.updated_at,
      livemode: false,
    });
    const one = await gql(`query ($id: ID!) { suggestion(id: $id) { ${GQL_FIELDS} } }`, { id: first.id });
    expect(one.body.data.suggestion).toMatchObject({ id: first.id, content: first.content, status: 'pending' });

    const approved = await gql(
      `mutation ($id: ID!, $input: SuggestionApproveInput) { approveSuggestion(id: $id, input: $input) { status content approvedContent decidedAt } }`,
      {
        id: first.id,
        input: { nextStep: 'Send the case study.' },
      },
    );
    expect(approved.body.errors).toBeUndefined();
    expect(approved.body.data.approveSuggestion).toMatchObject({
      status: 'approved',
      content: first.content,
      approvedContent: { ...first.content, next_step: 'Send the case study.' },
    });
    const wrong = await gql(`mutation ($id: ID!, $input: SuggestionApproveInput) { approveSuggestion(id: $id, input: $input) { id } }`, {
      id: second.id,
      input: { subject: 'Not for a brief' },
    });
    expect(wrong.body.errors[0].extensions).toMatchObject({ errorCode: 'parameter_invalid', param: 'subject' });
    const rejected = await gql(`mutation ($id: ID!) { rejectSuggestion(id: $id) { status decidedAt } }`, { id: second.id });
    expect(rejected.body.data.rejectSuggestion.status).toBe('rejected');
    const again = await gql(`mutation ($id: ID!) { rejectSuggestion(id: $id) { status } }`, { id: second.id });
    expect(again.body.errors[0].extensions).toMatchObject({ errorCode: 'resource_conflict' });
    const rest = await list(researcher, '?status=rejected');
    expect(rest.body.data.map((s: Suggestion) => s.id)).toEqual([second.id]);
  });

  it('GraphQL: a null filter or a null input is as none given; REST refuses a null body (400)', async () => {
    const researcher = await deployedAgent('lead_researcher');
    const { suggestion } = await brief(researcher);
    const listed = await app.graphql('query ($id: ID!) { agentSuggestions(id: $id, filter: null) { data { id } } }', { id: researcher }, owner.testKey);
    expect(listed.body).toEqual({ data: { agentSuggestions: { data: [{ id: suggestion.id }] } } });
    expectError(await approve(suggestion.id, null), 400, 'parameter_invalid');
    expect((await get(suggestion.id)).body.status).toBe('pending');
    const approved = await app.graphql(
      'mutation ($id: ID!) { approveSuggestion(id: $id, input: null) { status approvedContent } }',
      { id: suggestion.id },
      owner.testKey,
    );
    expect(approved.body).toEqual({ data: { approveSuggestion: { status: 'approved', approvedContent: suggestion.content } } });
  });

  it('another account’s key, or the other mode’s, gets 404 on every suggestion route; an agents=read key may list and read but not decide', async () => {
    const agentId = await deployedAgent('lead_researcher');
    const { suggestion } = await brief(agentId);
    const other = await app.createAccount();
    for (const key of [other.testKey, other.liveKey, owner.liveKey]) {
      expectError(await list(agentId, '', key), 404, 'resource_missing', 'id');
      expectError(await get(suggestion.id, key), 404, 'resource_missing', 'id');
      expectError(await approve(suggestion.id, { brief: 'Theirs' }, key), 404, 'resource_missing', 'id');
      expectError(await reject(suggestion.id, key), 404, 'resource_missing', 'id');
      const gql = await app.graphql('query ($id: ID!) { suggestion(id: $id) { id } }', { id: suggestion.id }, key);
      expect(gql.body.errors[0].extensions.code).toBe('NOT_FOUND');
    }
    // The other account's own agent sees none of this one's suggestions.
    const theirs = await deployedAgent('lead_researcher', {}, other.testKey);
    expect((await list(theirs, '', other.testKey)).body.data).toEqual([]);

    const reader = (await new ApiKeyService(app.orm.em.fork()).create(owner.account, KeyType.test, 'agents reader', parsePermissions('agents=read'))).secret;
    const listed = await list(agentId, '', reader);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((one: Suggestion) => one.id)).toEqual([suggestion.id]);
    expect((await get(suggestion.id, reader)).status).toBe(200);
    for (const res of [await approve(suggestion.id, undefined, reader), await reject(suggestion.id, reader)]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'permission_denied', message: 'This key lacks the agents:write permission this request needs.' });
    }
    const live = (await new ApiKeyService(app.orm.em.fork()).create(owner.account, KeyType.live, 'live agents reader', parsePermissions('agents=write')))
      .secret;
    expectError(await approve(suggestion.id, undefined, live), 404, 'resource_missing', 'id');
    expect((await get(suggestion.id)).body).toMatchObject({ status: 'pending', decided_at: null });
    expect(await eventsAbout('agent.suggestion_approved', suggestion.id)).toEqual([]);
  });
});

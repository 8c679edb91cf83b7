import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ACTION_PROPERTY_ID, TASK_EXTENSION_NAME } from '../../src/modules/integrations/providers/m365-client';
import { startTestApp, TestAccount, TestApp } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { DEFAULT_PERMISSIONS } from '../helpers/fakes/fake-microsoft';
import { waitFor } from '../helpers/wait';

/**
 * A deal_follow_up agent's follow-ups reach a Microsoft 365 mailbox (issue 22): with `deliver_to`
 * `outlook_draft` or `todo_task`, each `deal_idle` action of a run becomes one draft or one To Do
 * task, through the sync engine's outbound side (owed rows, runs, links), and the item's Graph id
 * shows on the run. Our service, database, agent runner and sync worker are the real ones; only
 * Microsoft is played (test/helpers/fakes/fake-microsoft.ts and fake-microsoft-mailbox.ts), on a
 * clock the agent runner reads, so deals go idle without waiting days. Every Graph request and
 * answer of these tests conforms to Graph's v1.0 metadata (the fake's `conformance`, checked after
 * each), and every call is one Graph allows an app-only token (issue 66).
 */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

interface Delivery {
  actionIndex: number;
  kind: 'outlook_draft' | 'todo_task';
  integrationId: string;
  status: 'pending' | 'delivered' | 'failed';
  graphId: string | null;
  deliveredAt: string | null;
  error: string | null;
}
interface Run {
  id: string;
  outcome: string;
  actions: Array<{ kind: string; object_id: string; stage: string; idle_days: number; threshold_days: number }>;
  deliveries: Delivery[];
}
interface SyncRunBody {
  id: string;
  status: 'running' | 'succeeded' | 'failed';
  trigger: string;
  pushed: number;
  failed: number;
  error: string | null;
}
interface Mailbox {
  tenant_id: string;
  client_id: string;
  client_secret: string;
  mailbox: string;
}

const RUNS = `query ($id: ID!) { agent(id: $id) { runs(filter: { limit: 100 }) { data {
  id outcome actions deliveries { actionIndex kind integrationId status graphId deliveredAt error } } } } }`;

describe('Microsoft 365 delivers agents’ follow-ups', () => {
  let crms: FakeCrms;
  let app: TestApp;
  let owner: TestAccount;
  let now = new Date();

  const api = (method: string, path: string, body?: unknown, key = owner.testKey) => app.request(method, path, { key, body });
  const sql = <Row = Record<string, unknown>>(text: string, params: unknown[] = []) => app.orm.em.fork().getConnection().execute<Row[]>(text, params);

  /** An app registration with its mailbox, known to the fake Microsoft. */
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
  async function idleDeal(name: string, withLead = true, key = owner.testKey): Promise<{ id: string; lead: { contact_email: string } | null }> {
    const lead = withLead
      ? (
          await api(
            'POST',
            '/v1/leads',
            { company: `${name} Inc`, contact_email: `buyer-${randomUUID().slice(0, 8)}@customer.test`, contact_name: 'Grace Hopper' },
            key,
          )
        ).body
      : null;
    const deal = await api('POST', '/v1/deals', { name, value: 12500.5, stage: 'proposal', ...(lead ? { lead_id: lead.id } : {}) }, key);
    expect(deal.status).toBe(201);
    return { id: deal.body.id, lead };
  }
  async function followUpAgent(deliverTo: string, key = owner.testKey): Promise<string> {
    const made = await api(
      'POST',
      '/v1/agents',
      { name: `Follow-up ${deliverTo}`, type: 'deal_follow_up', config: { idle_days: { proposal: 3 }, deliver_to: deliverTo } },
      key,
    );
    expect(made.status).toBe(201);
    expect(made.body.config.deliver_to).toBe(deliverTo);
    expect((await api('POST', `/v1/agents/${made.body.id}/deploy`, undefined, key)).status).toBe(200);
    return made.body.id;
  }
  async function runsOf(agentId: string, key = owner.testKey): Promise<Run[]> {
    const res = await app.graphql(RUNS, { id: agentId }, key);
    expect(res.body.errors).toBeUndefined();
    return res.body.data.agent.runs.data;
  }
  /** Moves the agents' clock past the deals' limit (a new scan interval) and waits for the scan that raises them. */
  async function scanIdle(agentId: string, key = owner.testKey): Promise<Run> {
    now = new Date(Date.now() + 4 * DAY_MS);
    return waitFor('the scan that raises the idle deals', async () => (await runsOf(agentId, key)).find((run) => run.outcome === 'acted'));
  }
  /** Moves the clock `days` ahead (another scan interval) and waits for the agent's `count`th acting run. */
  async function scanAgain(agentId: string, count: number, days: number): Promise<Run> {
    now = new Date(Date.now() + days * DAY_MS);
    return waitFor(`acting run ${count}`, async () => {
      const acted = (await runsOf(agentId)).filter((run) => run.outcome === 'acted');
      return acted.length >= count && acted[0];
    });
  }
  const deliveriesOf = async (agentId: string, runId: string, key = owner.testKey) => (await runsOf(agentId, key)).find((run) => run.id === runId)!.deliveries;
  const delivered = (agentId: string, runId: string, count: number) =>
    waitFor(`${count} deliveries of ${runId}`, async () => {
      const deliveries = await deliveriesOf(agentId, runId);
      return deliveries.length === count && deliveries.every((delivery) => delivery.status === 'delivered') && deliveries;
    });
  const syncRuns = async (integrationId: string): Promise<SyncRunBody[]> =>
    (await api('GET', `/v1/integrations/${integrationId}/sync_runs?limit=100`)).body.data;
  const settled = (integrationId: string) =>
    waitFor(`the runs of ${integrationId} to settle`, async () => {
      const runs = await syncRuns(integrationId);
      return runs.length > 0 && runs.every((run) => run.status !== 'running') && runs;
    });
  const graphCalls = (credentials: Mailbox) => crms.microsoft.requests.filter((request) => request.path.startsWith(`/v1.0/users/${credentials.mailbox}/`));
  const owedRows = () => sql<{ object_id: string }>(`select object_id from integration_pending_changes where object_type = 'action'`);

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
  afterEach(() => {
    expect(crms.microsoft.conformance.violations).toEqual([]);
  });
  afterAll(async () => {
    await app.close();
    await crms.close();
  });

  it('takes deliver_to none (the default), outlook_draft or todo_task, and refuses anything else naming config.deliver_to', async () => {
    const plain = await api('POST', '/v1/agents', { name: 'Plain', type: 'deal_follow_up' });
    expect(plain.body.config.deliver_to).toBe('none');
    const bad = await api('POST', '/v1/agents', { name: 'Bad', type: 'deal_follow_up', config: { deliver_to: 'teams_chat' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'config[deliver_to]',
      message: 'deliver_to must be one of none, outlook_draft, todo_task',
    });
    const gql = await app.graphql(
      'mutation ($input: AgentCreateInput!) { createAgent(input: $input) { id } }',
      { input: { name: 'Bad', type: 'deal_follow_up', config: { deliver_to: 'sms' } } },
      owner.testKey,
    );
    expect(gql.body.errors[0].extensions).toMatchObject({ errorCode: 'parameter_invalid', param: 'config.deliver_to' });
    const deploy = await api('POST', `/v1/agents/${plain.body.id}/deploy`, { config: { deliver_to: 'fax' } });
    expect(deploy.status).toBe(422);
    expect(deploy.body.error).toMatchObject({ code: 'agent_config_invalid', param: 'config[deliver_to]' });
  });

  it('outlook_draft: each idle deal becomes one draft to its contact, never sent, and the run shows its Graph id', async () => {
    const credentials = registered();
    const integrationId = await connect(credentials);
    const withContact = await idleDeal('Contoso rollout');
    const withoutLead = await idleDeal('Fabrikam renewal', false);
    const agentId = await followUpAgent('outlook_draft');
    const run = await scanIdle(agentId);
    expect(run.actions.map((action) => action.object_id).sort()).toEqual([withContact.id, withoutLead.id].sort());

    const deliveries = await delivered(agentId, run.id, 2);
    const drafts = crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox);
    expect(drafts).toHaveLength(2);
    for (const [index, action] of run.actions.entries()) {
      const draft = drafts.find((one) => one.singleValueExtendedProperties[0]?.value === `${run.id}:${index}`)!;
      expect(draft.singleValueExtendedProperties).toEqual([{ id: ACTION_PROPERTY_ID, value: `${run.id}:${index}` }]);
      expect(draft.isDraft).toBe(true);
      expect(deliveries[index]).toEqual({
        actionIndex: index,
        kind: 'outlook_draft',
        integrationId,
        status: 'delivered',
        graphId: draft.id,
        deliveredAt: expect.any(String),
        error: null,
      });
      const name = action.object_id === withContact.id ? 'Contoso rollout' : 'Fabrikam renewal';
      expect(draft.subject).toBe(`Following up: ${name}`);
      expect(draft.body.contentType).toBe('html');
      expect(draft.body.content).toContain(`${name} has been in proposal for 4 days (the agent follows up after 3 days)`);
      expect(draft.body.content).toContain('USD 12,500.50');
      expect(draft.toRecipients).toEqual(
        action.object_id === withContact.id ? [{ emailAddress: { address: withContact.lead!.contact_email, name: 'Grace Hopper' } }] : [],
      );
      expect(draft.body.content).toContain(action.object_id === withContact.id ? 'Hi Grace,' : 'Hi there,');
    }
    // Never sent: nothing but drafts was asked of Graph.
    expect(graphCalls(credentials).every((call) => !/\/send(Mail)?$/.test(call.path.split('?')[0]))).toBe(true);
    const [syncRun] = await settled(integrationId);
    expect(syncRun).toMatchObject({ status: 'succeeded', trigger: 'change', pushed: 2, failed: 0, error: null });
    expect(await owedRows()).toEqual([]);
  });

  it('todo_task: one task in the default To Do list, the action’s id and the deal’s address in its open extension, its id on the run', async () => {
    const credentials = registered();
    const integrationId = await connect(credentials);
    const deal = await idleDeal('Northwind expansion');
    const agentId = await followUpAgent('todo_task');
    const run = await scanIdle(agentId);
    const [delivery] = await delivered(agentId, run.id, 1);

    const tasks = crms.microsoft.tasks(credentials.tenant_id, credentials.mailbox);
    expect(tasks).toHaveLength(1);
    const [task] = tasks;
    expect(delivery).toEqual({
      actionIndex: 0,
      kind: 'todo_task',
      integrationId,
      status: 'delivered',
      graphId: task.id,
      deliveredAt: expect.any(String),
      error: null,
    });
    expect(task.title).toBe('Follow up: Northwind expansion (idle 4 days in proposal)');
    expect(task.body.content).toContain('Value: USD 12,500.50');
    expect(task.body.content).toContain(`Contact: Grace Hopper <${deal.lead!.contact_email}> at Northwind expansion Inc`);
    expect(task.body.content).toContain(`Deal: ${app.config.publicUrl}/v1/deals/${deal.id}`);
    // An open extension, which an application may create in a new task; not a linked resource, which it may not.
    expect(task.extensions).toEqual([
      {
        '@odata.type': '#microsoft.graph.openTypeExtension',
        id: `microsoft.graph.openTypeExtension.${TASK_EXTENSION_NAME}`,
        extensionName: TASK_EXTENSION_NAME,
        actionId: `${run.id}:0`,
        dealUrl: `${app.config.publicUrl}/v1/deals/${deal.id}`,
        dealName: 'Northwind expansion',
      },
    ]);
    expect(task.linkedResources).toEqual([]);
    expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toEqual([]);
    // Looked for among the list's tasks with their extensions, then written; no filter Graph does not document.
    const calls = graphCalls(credentials).map((call) => {
      const path = call.path.replace(/^.*\/v1\.0\/users\/[^/]+/, '').replace(/lists\/[^/?]+\//, 'lists/{id}/');
      return `${call.method} ${decodeURIComponent(path)}`;
    });
    expect(calls).toEqual(['GET /todo/lists', 'GET /todo/lists/{id}/tasks?$expand=extensions', 'POST /todo/lists/{id}/tasks']);
  });

  it('finds its task on any page of a full list, by its own extension, after a crash: still one task', async () => {
    const credentials = registered();
    const integrationId = await connect(credentials);
    for (let index = 0; index < 12; index++) crms.microsoft.userAddTask(credentials.tenant_id, credentials.mailbox, `Someone’s task ${index}`);
    await idleDeal('Paged deal');
    const agentId = await followUpAgent('todo_task');
    const run = await scanIdle(agentId);
    const [delivery] = await delivered(agentId, run.id, 1);
    await settled(integrationId);
    // Later tasks push ours to the middle page; another app's task, listed first, has an extension with the same property.
    for (let index = 0; index < 12; index++) crms.microsoft.userAddTask(credentials.tenant_id, credentials.mailbox, `Later task ${index}`);
    crms.microsoft.userAddTask(credentials.tenant_id, credentials.mailbox, 'Another app’s task', {
      extensions: [{ extensionName: 'com.contoso.crm', actionId: `${run.id}:0` }],
      first: true,
    });

    await app.syncWorker!.stop();
    await sql(`delete from integration_links where object_type = 'action'`);
    await sql(
      `insert into integration_pending_changes (integration_id, object_type, object_id, account_id, livemode, changed_at)
       values (?, 'action', ?, ?, false, now())`,
      [integrationId, `${run.id}:0`, owner.account.id],
    );
    const creates = () => graphCalls(credentials).filter((call) => call.method === 'POST').length;
    const before = creates();
    const reads = graphCalls(credentials).length;
    app.syncWorker!.start();
    await waitFor('the owed action settled', async () => (await owedRows()).length === 0);

    expect(creates()).toBe(before);
    expect((await deliveriesOf(agentId, run.id))[0].graphId).toBe(delivery.graphId);
    const [link] = await sql<{ fields: { found: boolean } }>(`select fields from integration_links where object_type = 'action'`);
    expect(link.fields.found).toBe(true);
    expect(crms.microsoft.tasks(credentials.tenant_id, credentials.mailbox)).toHaveLength(26);
    // Pages of ten, followed by their next links until ours was on one.
    const pages = graphCalls(credentials)
      .slice(reads)
      .filter((call) => call.method === 'GET' && call.path.includes('/tasks'))
      .map((call) => new URL(call.path, crms.microsoft.url).searchParams.get('$skip'));
    expect(pages).toEqual([null, '10']);
  });

  it('none: the follow-up stays an agent.action event, and nothing reaches Graph', async () => {
    const credentials = registered();
    const integrationId = await connect(credentials);
    await idleDeal('Quiet deal');
    const agentId = await followUpAgent('none');
    const run = await scanIdle(agentId);
    // Every event has been fanned out (the action's included): whatever it owed exists by now.
    await waitFor('the events fanned out', async () => (await sql(`select event_id from event_fan_outs`)).length === 0);
    expect(await owedRows()).toEqual([]);
    expect(await deliveriesOf(agentId, run.id)).toEqual([]);
    expect(await syncRuns(integrationId)).toEqual([]);
    expect(graphCalls(credentials)).toEqual([]);
  });

  it('waits out Graph throttling (429 with Retry-After) and a 503 within the run, and writes again after a 504 that wrote nothing: exactly one draft', async () => {
    const credentials = registered();
    await connect(credentials);
    await idleDeal('Throttled deal');
    const agentId = await followUpAgent('outlook_draft');
    crms.microsoft.failNext(1, 503, 'GET');
    crms.microsoft.throttleNext(2, 1, 'GET');
    crms.microsoft.failNext(1, 504, 'POST');
    const run = await scanIdle(agentId);
    await delivered(agentId, run.id, 1);
    expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toHaveLength(1);
    // The lookup: 503, 429, 429, then heard; the write: 504 (nothing written), looked for again, written.
    const calls = graphCalls(credentials).map((call) => `${call.method} ${call.path.split('?')[0].replace(/^.*\/v1\.0\/users\/[^/]+/, '')}`);
    expect(calls).toEqual(['GET /messages', 'GET /messages', 'GET /messages', 'GET /messages', 'POST /messages', 'GET /messages', 'POST /messages']);
  });

  it('a throttle longer than the client waits fails the run with a backoff (integration still connected); the next run delivers once', async () => {
    const credentials = registered();
    const integrationId = await connect(credentials);
    await idleDeal('Long throttle');
    const agentId = await followUpAgent('outlook_draft');
    crms.microsoft.throttleNext(1_000, 120);
    const run = await scanIdle(agentId);
    const [failed] = await settled(integrationId);
    expect(failed).toMatchObject({ status: 'failed', trigger: 'change', pushed: 0 });
    expect(failed.error).toMatch(/429/);
    const [{ resume_in_s }] = await sql<{ resume_in_s: number }>(
      'select cast(extract(epoch from resume_at - now()) as int) as resume_in_s from integration_sync_runs where id = ?',
      [failed.id],
    );
    expect(resume_in_s).toBeGreaterThan(100);
    expect((await api('GET', `/v1/integrations/${integrationId}`)).body.status).toBe('connected');
    expect(await deliveriesOf(agentId, run.id)).toEqual([expect.objectContaining({ status: 'pending', kind: 'outlook_draft', graphId: null })]);

    crms.microsoft.recover();
    expect((await api('POST', `/v1/integrations/${integrationId}/sync`)).status).toBe(202);
    await delivered(agentId, run.id, 1);
    expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toHaveLength(1);
  });

  it('a follow-up whose deal is deleted before it is delivered fails for itself, on the run and in the sync run; nothing is written', async () => {
    const credentials = registered();
    const integrationId = await connect(credentials);
    const deal = await idleDeal('Gone deal');
    const agentId = await followUpAgent('outlook_draft');
    crms.microsoft.throttleNext(1_000, 120);
    const run = await scanIdle(agentId);
    await settled(integrationId);
    expect((await api('DELETE', `/v1/deals/${deal.id}`)).status).toBe(200);
    crms.microsoft.recover();
    expect((await api('POST', `/v1/integrations/${integrationId}/sync`)).status).toBe(202);
    const [delivery] = await waitFor('the delivery to fail', async () => {
      const deliveries = await deliveriesOf(agentId, run.id);
      return deliveries[0]?.status === 'failed' && deliveries;
    });
    expect(delivery).toMatchObject({ kind: 'outlook_draft', graphId: null, error: `the deal ${deal.id} was deleted before its follow-up was delivered` });
    const [last] = await settled(integrationId);
    expect(last).toMatchObject({ status: 'succeeded', trigger: 'manual', pushed: 0, failed: 1 });
    expect(await owedRows()).toEqual([]);
    expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toEqual([]);
  });

  it('a create whose answer is lost (the connection breaks after Graph wrote it) is found, not written again', async () => {
    const credentials = registered();
    const integrationId = await connect(credentials);
    await idleDeal('Lost answer');
    const draftAgent = await followUpAgent('outlook_draft');
    const taskAgent = await followUpAgent('todo_task');
    crms.microsoft.dropNextCreates(2);
    const draftRun = await scanIdle(draftAgent);
    const taskRun = await waitFor('the task agent’s scan', async () => (await runsOf(taskAgent)).find((run) => run.outcome === 'acted'));
    const [draft] = await delivered(draftAgent, draftRun.id, 1);
    const [task] = await delivered(taskAgent, taskRun.id, 1);

    expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox).map((one) => one.id)).toEqual([draft.graphId]);
    expect(crms.microsoft.tasks(credentials.tenant_id, credentials.mailbox).map((one) => one.id)).toEqual([task.graphId]);
    // Each was written once, its answer lost, and found by what it carries.
    const links = await sql<{ fields: { found: boolean } }>(`select fields from integration_links where object_type = 'action' order by object_id`);
    expect(links.map((link) => link.fields.found)).toEqual([true, true]);
    expect((await settled(integrationId)).every((run) => run.status === 'succeeded')).toBe(true);
  });

  it('a crash between Graph’s answer and our link (the action owed again without its link) finds the item: still one draft and one task', async () => {
    const credentials = registered();
    const integrationId = await connect(credentials);
    await idleDeal('Crash deal');
    const draftAgent = await followUpAgent('outlook_draft');
    const taskAgent = await followUpAgent('todo_task');
    const draftRun = await scanIdle(draftAgent);
    const taskRun = await waitFor('the task agent’s scan', async () => (await runsOf(taskAgent)).find((run) => run.outcome === 'acted'));
    const [draft] = await delivered(draftAgent, draftRun.id, 1);
    const [task] = await delivered(taskAgent, taskRun.id, 1);
    await settled(integrationId);

    // What a crash right after Graph's answer leaves: the item at Graph, the action still owed, no link.
    await app.syncWorker!.stop();
    await sql(`delete from integration_links where object_type = 'action'`);
    await sql(
      `insert into integration_pending_changes (integration_id, object_type, object_id, account_id, livemode, changed_at)
       select ?, 'action', id, ?, false, now() from unnest(cast(? as text[])) as id`,
      [integrationId, owner.account.id, `{${draftRun.id}:0,${taskRun.id}:0}`],
    );
    const creates = () => graphCalls(credentials).filter((call) => call.method === 'POST').length;
    const before = creates();
    app.syncWorker!.start();
    await delivered(draftAgent, draftRun.id, 1);
    await delivered(taskAgent, taskRun.id, 1);
    await waitFor('the owed actions settled', async () => (await owedRows()).length === 0);

    expect(creates()).toBe(before);
    expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox).map((one) => one.id)).toEqual([draft.graphId]);
    expect(crms.microsoft.tasks(credentials.tenant_id, credentials.mailbox).map((one) => one.id)).toEqual([task.graphId]);
    expect((await deliveriesOf(draftAgent, draftRun.id))[0].graphId).toBe(draft.graphId);
    expect((await deliveriesOf(taskAgent, taskRun.id))[0].graphId).toBe(task.graphId);
  });

  it('a revoked token is replaced unnoticed; consent taken away moves the integration to error, and the follow-up is delivered once it is back', async () => {
    const credentials = registered();
    const integrationId = await connect(credentials);
    await idleDeal('First deal');
    const agentId = await followUpAgent('outlook_draft');
    await delivered(agentId, (await scanIdle(agentId)).id, 1);

    // Tokens revoked early (or expired): the cached one is refused, a new grant carries on.
    crms.microsoft.revokeTokens();
    await idleDeal('Second deal');
    const second = await scanAgain(agentId, 2, 5);
    await delivered(agentId, second.id, 1);
    expect((await api('GET', `/v1/integrations/${integrationId}`)).body.status).toBe('connected');

    // An admin takes the app's Mail.ReadWrite consent away: Graph denies it even with a new token.
    crms.microsoft.setPermissions(credentials.tenant_id, credentials.client_id, ['User.Read.All']);
    crms.microsoft.revokeTokens();
    await idleDeal('Third deal');
    const third = await scanAgain(agentId, 3, 6);
    await waitFor('the integration in error', async () => (await api('GET', `/v1/integrations/${integrationId}`)).body.status === 'error');
    const shown = (await api('GET', `/v1/integrations/${integrationId}`)).body;
    expect(shown.last_error).toMatch(/^Microsoft Graph denied the call: ErrorAccessDenied: Access is denied/);
    expect(JSON.stringify(shown)).not.toContain(credentials.client_secret);
    const [failed] = await settled(integrationId);
    expect(failed).toMatchObject({ status: 'failed', error: shown.last_error });
    expect(await deliveriesOf(agentId, third.id)).toEqual([expect.objectContaining({ status: 'pending', graphId: null })]);
    expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toHaveLength(2);

    // Consent given again; a run on request (the failed one set a backoff) reads the mailbox, then delivers what was owed.
    crms.microsoft.setPermissions(credentials.tenant_id, credentials.client_id, DEFAULT_PERMISSIONS);
    crms.microsoft.revokeTokens();
    expect((await api('POST', `/v1/integrations/${integrationId}/sync`)).status).toBe(202);
    const [delivery] = await delivered(agentId, third.id, 1);
    const drafts = crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox);
    expect(drafts.map((draft) => draft.subject)).toEqual(['Following up: First deal', 'Following up: Second deal', 'Following up: Third deal']);
    expect(drafts[2].id).toBe(delivery.graphId);
    await waitFor('the integration connected again', async () => (await api('GET', `/v1/integrations/${integrationId}`)).body.status === 'connected');
    expect((await api('GET', '/v1/events?type=integration.error')).body.data).toHaveLength(1);
  });

  it('the fake Graph refuses what an app-only token may not do, and what Graph’s metadata does not allow', async () => {
    const credentials = registered();
    const tokenFor = async () => {
      const grant = await fetch(`${crms.microsoft.url}/${credentials.tenant_id}/oauth2/v2.0/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: credentials.client_id,
          client_secret: credentials.client_secret,
          scope: 'https://graph.microsoft.com/.default',
          grant_type: 'client_credentials',
        }).toString(),
      });
      return ((await grant.json()) as { access_token: string }).access_token;
    };
    const token = await tokenFor();
    crms.microsoft.setPermissions(credentials.tenant_id, credentials.client_id, ['User.Read.All', 'Mail.ReadWrite', 'Tasks.Read.All']);
    const readOnly = await tokenFor();
    crms.microsoft.setPermissions(credentials.tenant_id, credentials.client_id, DEFAULT_PERMISSIONS);
    const graph = async (method: string, path: string, body?: unknown, bearer = token) => {
      const res = await fetch(`${crms.microsoft.url}/v1.0/users/${credentials.mailbox}${path}`, {
        method,
        headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = (await res.json()) as { error?: { code: string; message: string }; value?: Array<{ id: string; wellknownListName: string }> };
      return { status: res.status, error: answer.error, value: answer.value };
    };
    const listId = (await graph('GET', '/todo/lists')).value!.find((list) => list.wellknownListName === 'defaultList')!.id;
    const tasks = `/todo/lists/${encodeURIComponent(listId)}/tasks`;

    // "Create linkedResource": Application, not supported; and no filter on a task's linked resources is documented.
    const withLink = { title: 'x', linkedResources: [{ webUrl: 'https://example.test', applicationName: 'App', displayName: 'x', externalId: 'e' }] };
    expect(await graph('POST', tasks, withLink)).toMatchObject({ status: 403, error: { code: 'ErrorAccessDenied' } });
    expect(await graph('GET', `${tasks}?$filter=${encodeURIComponent("linkedResources/any(r:r/externalId eq 'e')")}`)).toMatchObject({
      status: 400,
      error: { code: 'ErrorInvalidUrlQueryFilter' },
    });
    // A task's extensions take Tasks.ReadWrite.All ("Get open extension"); Tasks.Read.All lists the tasks only.
    expect(await graph('GET', `${tasks}?$expand=extensions`, undefined, readOnly)).toMatchObject({ status: 403, error: { code: 'ErrorAccessDenied' } });
    expect(await graph('GET', tasks, undefined, readOnly)).toMatchObject({ status: 200, value: [] });
    // What the metadata refuses (when its excerpt is here: scripts/refresh-provider-specs.ts writes it; without it the fake
    // checks nothing): an importance that is not one, a property the user does not have, a message body type.
    const metadata = existsSync(path.join(__dirname, '../fixtures/provider-specs/microsoft-graph/graph-v1.0.json'));
    if (metadata) {
      const badImportance = await graph('POST', tasks, { title: 'x', importance: 'urgent' });
      expect(badImportance).toMatchObject({ status: 400, error: { code: 'BadRequest' } });
      expect(badImportance.error!.message).toContain('/requestBody/importance must be equal to one of the allowed values');
      expect(await graph('GET', '?$select=favouriteColour')).toMatchObject({ status: 400, error: { code: 'BadRequest' } });
      expect(await graph('POST', '/messages', { subject: 'x', body: { contentType: 'rtf', content: 'x' } })).toMatchObject({ status: 400 });
    }
    // A call the metadata does not describe, as Graph answers an unknown segment.
    expect(await graph('POST', '/sendMail', { message: { subject: 'x' } })).toMatchObject({ status: 400, error: { code: 'BadRequest' } });
    expect(crms.microsoft.tasks(credentials.tenant_id, credentials.mailbox)).toEqual([]);
    expect(crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox)).toEqual([]);
    // Each refusal of the metadata is logged; the afterEach check is for the tests above and below.
    expect(crms.microsoft.conformance.violations.map((violation) => violation.operation)).toEqual([
      ...(metadata ? ['POST /users/{user-id}/todo/lists/{todoTaskList-id}/tasks', 'GET /users/{user-id}', 'POST /users/{user-id}/messages'] : []),
      null,
    ]);
    crms.microsoft.conformance.violations.splice(0);
  });

  it('never writes to another tenant’s mailbox: another account, or the other mode, delivers only to its own', async () => {
    const credentials = registered();
    await connect(credentials);
    const other = await app.createAccount();
    const otherCredentials = registered();
    await connect(otherCredentials, other.testKey);

    const ownDeal = await idleDeal('Own deal');
    const otherDeal = await idleDeal('Other account deal', true, other.testKey);
    const liveDeal = await idleDeal('Live mode deal', true, owner.liveKey);
    const ownAgent = await followUpAgent('outlook_draft');
    const otherAgent = await followUpAgent('outlook_draft', other.testKey);
    const liveAgent = await followUpAgent('outlook_draft', owner.liveKey);
    const ownRun = await scanIdle(ownAgent);
    const otherRun = await waitFor('the other account’s scan', async () => (await runsOf(otherAgent, other.testKey)).find((run) => run.outcome === 'acted'));
    const liveRun = await waitFor('the live scan', async () => (await runsOf(liveAgent, owner.liveKey)).find((run) => run.outcome === 'acted'));
    expect([ownRun, otherRun, liveRun].map((run) => run.actions.map((action) => action.object_id))).toEqual([[ownDeal.id], [otherDeal.id], [liveDeal.id]]);

    await delivered(ownAgent, ownRun.id, 1);
    await waitFor('the other account’s delivery', async () => (await deliveriesOf(otherAgent, otherRun.id, other.testKey))[0]?.status === 'delivered');
    await waitFor('the events fanned out', async () => (await sql(`select event_id from event_fan_outs`)).length === 0);
    const own = crms.microsoft.drafts(credentials.tenant_id, credentials.mailbox);
    const theirs = crms.microsoft.drafts(otherCredentials.tenant_id, otherCredentials.mailbox);
    expect(own.map((draft) => draft.subject)).toEqual(['Following up: Own deal']);
    expect(theirs.map((draft) => draft.subject)).toEqual(['Following up: Other account deal']);
    // Live mode has no Microsoft 365 integration: its follow-up is owed nowhere.
    expect(await deliveriesOf(liveAgent, liveRun.id, owner.liveKey)).toEqual([]);
    expect(await owedRows()).toEqual([]);
    // Another account cannot read this one's runs at all.
    const foreign = await app.graphql(RUNS, { id: ownAgent }, other.testKey);
    expect(foreign.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });
});

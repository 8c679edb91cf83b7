import { startTestApp, TestAccount, TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';
import { Plan } from '../../src/modules/accounts/plan';

/**
 * The lead_router agent (issue 67): new leads get an owner by the first matching rule (country,
 * industry, source, employees), else in turn among the round-robin members, else the fallback;
 * through the agent runtime (deploy, runs, metrics by member, simulate), with the real runner on
 * the event outbox.
 */
describe('lead_router agents', () => {
  let app: TestApp;
  let owner: TestAccount;
  const members: Record<string, string> = {};
  let counter = 0;

  /** A member made active for the test (the invitation flow is members.test.ts's subject). */
  async function activeMember(name: string): Promise<string> {
    const invited = await app.request('POST', '/v1/members', {
      key: owner.testKey,
      body: { email: `${name}-${Date.now()}@router.test`, role: 'member', name },
    });
    expect(invited.status).toBe(201);
    await app.orm.em.getConnection().execute(`update members set status = 'active' where user_id = ?`, [invited.body.id]);
    return invited.body.id;
  }

  const lead = async (body: Record<string, unknown>) => {
    const made = await app.request('POST', '/v1/leads', {
      key: owner.testKey,
      body: { company: `Co ${++counter}`, contact_email: `c${counter}@router.test`, ...body },
    });
    expect(made.status).toBe(201);
    return made.body.id as string;
  };
  const ownerOf = (id: string) =>
    waitFor(`an owner for ${id}`, async () => (await app.request('GET', `/v1/leads/${id}`, { key: owner.testKey })).body.owner_id as string | null);

  beforeAll(async () => {
    app = await startTestApp({ agents: {} });
    owner = await app.createAccount({ plan: Plan.enterprise });
    for (const name of ['dora', 'bo', 'cy', 'gone']) members[name] = await activeMember(name);
  });
  afterAll(() => app?.close());

  it('routes by the first matching rule, then in turn among the round-robin members, and leaves owned leads alone', async () => {
    const created = await app.request('POST', '/v1/agents', {
      key: owner.testKey,
      body: {
        name: 'Router',
        type: 'lead_router',
        config: {
          rules: [
            { country: ['de', 'AT'], owner_id: members.dora },
            { industry: ['Healthcare'], min_employees: 500, owner_id: members.gone },
          ],
          round_robin: [members.bo, members.cy],
          fallback_owner_id: null,
        },
      },
    });
    expect(created.status).toBe(201);
    // Made before the router is deployed: no run routes it, but a simulation does (and changes nothing).
    const early = await lead({ country: 'AT' });
    expect((await app.request('POST', `/v1/agents/${created.body.id}/deploy`, { key: owner.testKey })).status).toBe(200);
    // A rule whose owner is no longer active is passed over.
    await app.orm.em.getConnection().execute(`update members set status = 'deactivated' where user_id = ?`, [members.gone]);

    const german = await lead({ country: 'DE' });
    const hospital = await lead({ industry: 'healthcare', employees: 900 });
    const first = await lead({ country: 'US' });
    const second = await lead({ country: 'US' });
    const mine = await lead({ country: 'DE', owner_id: members.cy });

    expect(await ownerOf(german)).toBe(members.dora);
    // In turn: the hospital (its rule's owner gone) and the two US leads, runs taking turns in the
    // order the runner takes them (several at once): the first of the list twice, the second once.
    const turns = [await ownerOf(hospital), await ownerOf(first), await ownerOf(second)];
    expect(turns.sort()).toEqual([members.bo, members.bo, members.cy].sort());

    // The lead created with an owner keeps it: its run routes nothing.
    await waitFor('five runs', async () => {
      const runs = await app.graphql(
        `query ($id: ID!) { agent(id: $id) { runs(filter: {limit: 100}) { data { actions } } } }`,
        { id: created.body.id },
        owner.testKey,
      );
      return runs.body.data.agent.runs.data.length === 5;
    });
    expect((await app.request('GET', `/v1/leads/${mine}`, { key: owner.testKey })).body.owner_id).toBe(members.cy);

    const metrics = await app.request('GET', `/v1/agents/${created.body.id}/metrics`, { key: owner.testKey });
    expect(metrics.body.outcomes).toMatchObject({ leads_routed: 4, leads_routed_by_member: { [members.dora]: 1, [members.bo]: 2, [members.cy]: 1 } });
    expect(metrics.body.actions_by_kind).toEqual({ lead_routed: 4 });

    // Simulated over the window, the lead made before deployment is routed by its rule, and stays as it was.
    const simulated = await app.request('POST', `/v1/agents/${created.body.id}/simulate`, { key: owner.testKey, body: { window: '7d' } });
    expect(simulated.status).toBe(200);
    expect(simulated.body).toMatchObject({ actions_by_kind: { lead_routed: 1 }, leads_affected: [early] });
    expect(simulated.body.sample[0]).toMatchObject({ kind: 'lead_routed', object_id: early, owner_id: members.dora, rule: 0 });
    expect((await app.request('GET', `/v1/leads/${early}`, { key: owner.testKey })).body.owner_id).toBeNull();
  });

  it('refuses a config it cannot follow, naming the setting', async () => {
    const refused = async (config: Record<string, unknown>) => {
      const res = await app.request('POST', '/v1/agents', { key: owner.testKey, body: { name: 'Bad router', type: 'lead_router', config } });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toMatch(/^config\[/);
      return res.body.error;
    };
    expect((await refused({ rules: [{ country: ['DE'] }] })).message).toMatch(/owner_id must be a member id/);
    expect((await refused({ rules: [{ owner_id: members.bo, region: 'EU' }] })).message).toMatch(/region, which is not a rule's criterion/);
    expect((await refused({ rules: [{ owner_id: members.bo, min_employees: 10, max_employees: 5 }] })).message).toMatch(/min_employees must not be above/);
    expect((await refused({ round_robin: [members.bo, members.bo] })).message).toMatch(/distinct member ids/);
    expect((await refused({ fallback_owner_id: 'someone' })).message).toMatch(/member id/);
  });
});

import { HttpResponse, LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * Issue 20, first section: every object by id, every collection listed, and two deletes, through
 * real HTTP and real PostgreSQL. GET /v1/{deals,agents,integrations,webhooks}/{id} answer the
 * objects the lists answer; GET /v1/proposals pages like the other lists (deal_id filter); DELETE
 * /v1/deals/{id} keeps a deal with a proposal (409) and DELETE /v1/agents/{id} a deployed agent
 * (409), and both record their *.deleted event; GET /v1/events filters by type (one or a comma
 * list), time and object, newest first, and GET /v1/events/{id} answers the same event object.
 * Isolation of every {id} route is also walked from the route table in route-isolation.test.ts.
 */

const ERROR_KEYS = ['code', 'message', 'param', 'request_id', 'type'];

interface EventObject {
  id: string;
  object: string;
  type: string;
  created_at: string;
  livemode: boolean;
  api_version: string;
  data: { object: Record<string, unknown>; previous_attributes: Record<string, unknown> };
}

function expectError(res: HttpResponse, status: number, code: string, param?: string): void {
  const context = `${status} ${code}: got ${res.status} ${res.text.slice(0, 300)}`;
  expect({ context, status: res.status }).toEqual({ context, status });
  expect(Object.keys(res.body)).toEqual(['error']);
  for (const key of Object.keys(res.body.error)) expect(ERROR_KEYS).toContain(key);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.type).toBe('invalid_request_error');
  if (param === undefined) expect(res.body.error).not.toHaveProperty('param');
  else expect(res.body.error.param).toBe(param);
  expect(res.headers.get('x-request-id')).toBe(res.body.error.request_id);
}

describe('objects by id, collections, deletes and events', () => {
  let app: TestApp;
  let owner: TestAccount;
  let stranger: TestAccount;

  const made = async (path: string, body: unknown, key = owner.testKey): Promise<Record<string, unknown> & { id: string }> => {
    const response = await app.request('POST', path, { key, body });
    expect({ path, status: response.status, body: response.status === 201 ? null : response.body }).toEqual({ path, status: 201, body: null });
    return response.body;
  };
  const get = (path: string, key = owner.testKey) => app.request('GET', path, { key });
  const del = (path: string, key = owner.testKey) => app.request('DELETE', path, { key });
  const allEvents = async (query = '', key = owner.testKey): Promise<EventObject[]> => {
    const events: EventObject[] = [];
    let cursor: string | null = null;
    do {
      const response: HttpResponse = await get(`/v1/events?limit=100${query}${cursor ? `&cursor=${cursor}` : ''}`, key);
      expect(response.status).toBe(200);
      events.push(...response.body.data);
      cursor = response.body.next_cursor;
    } while (cursor);
    return events;
  };

  beforeAll(async () => {
    app = await startTestApp({ env: LOCAL_RECEIVERS });
  });
  beforeEach(async () => {
    await app.reset();
    owner = await app.createAccount();
    stranger = await app.createAccount();
  });
  afterAll(() => app.close());

  describe('GET /v1/{resource}/{id}', () => {
    const cases: Array<[string, () => Promise<string>]> = [
      ['deals', async () => (await made('/v1/deals', { name: 'By id', value: 1234.5, metadata: { k: 'v' } })).id],
      ['agents', async () => (await made('/v1/agents', { name: 'By id', type: 'deal_follow_up' })).id],
      [
        'integrations',
        async () => (await made('/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-00000000-byid' } })).id,
      ],
      ['webhooks', async () => (await made('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['deal.created'] })).id],
    ];

    it.each(cases)('/v1/%s/{id} answers the object the list shows, with rate-limit headers', async (kind, create) => {
      const id = await create();
      const one = await get(`/v1/${kind}/${id}`);
      expect(one.status).toBe(200);
      expect(one.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(one.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(one.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
      const listed = await get(`/v1/${kind}`);
      expect(one.body).toEqual(listed.body.data.find((item: { id: string }) => item.id === id));
      expect(one.body).toMatchObject({ id, object: kind.slice(0, -1), livemode: false });
    });

    it.each(cases)('/v1/%s/{id} is 404 resource_missing for another account, the other mode, an unknown id and a malformed one', async (kind, create) => {
      const id = await create();
      for (const key of [stranger.testKey, owner.liveKey]) expectError(await get(`/v1/${kind}/${id}`, key), 404, 'resource_missing', 'id');
      const unknown = id.slice(0, -4) + (id.endsWith('0000') ? '1111' : '0000');
      expectError(await get(`/v1/${kind}/${unknown}`), 404, 'resource_missing', 'id');
      expectError(await get(`/v1/${kind}/not-an-id`), 404, 'resource_missing', 'id');
    });

    it('the webhook by id never shows its secret', async () => {
      const webhook = await made('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
      expect(webhook.secret).toMatch(/^whsec_/);
      const one = await get(`/v1/webhooks/${webhook.id}`);
      expect(JSON.stringify(one.body)).not.toContain(webhook.secret as string);
    });
  });

  describe('GET /v1/proposals', () => {
    it('pages newest first through every proposal exactly once, filters by deal_id, and answers the proposal objects', async () => {
      const first = await made('/v1/deals', { name: 'First', value: 1000 });
      const second = await made('/v1/deals', { name: 'Second', value: 2000 });
      const made1: string[] = [];
      for (let i = 0; i < 3; i += 1) made1.push((await made('/v1/proposals', { deal_id: first.id })).id);
      const made2 = [(await made('/v1/proposals', { deal_id: second.id })).id, (await made('/v1/proposals', { deal_id: second.id })).id];
      await made('/v1/proposals', { deal_id: (await made('/v1/deals', { name: 'Theirs', value: 5 }, stranger.testKey)).id }, stranger.testKey);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: HttpResponse = await get(`/v1/proposals?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        expect(page.body.object).toBe('list');
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.data.map((p: { id: string }) => p.id));
        expect(page.body.has_more).toBe(page.body.next_cursor !== null);
        cursor = page.body.next_cursor;
        pages += 1;
      } while (cursor);
      expect(pages).toBe(3);
      // Newest first: ids are time-sortable, and the proposals were made one after another.
      expect(seen).toEqual([...made1, ...made2].sort().reverse());

      const ofFirst = await get(`/v1/proposals?deal_id=${first.id}`);
      expect(ofFirst.body.data.map((p: { id: string }) => p.id)).toEqual([...made1].reverse());
      expect(ofFirst.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
      const one = await get(`/v1/proposals/${made1[0]}`);
      expect(ofFirst.body.data[2]).toEqual(one.body);
      // A full page, every field of a proposal selected, fits the cost limit.
      const full = await get('/v1/proposals?limit=100');
      expect(full.status).toBe(200);
      expect(full.body.data).toHaveLength(5);

      expect((await get(`/v1/proposals?deal_id=${first.id}`, stranger.testKey)).body.data).toEqual([]);
      expect((await get('/v1/proposals', owner.liveKey)).body.data).toEqual([]);
      expect((await get('/v1/proposals?deal_id=deal_nothing')).body.data).toEqual([]);
    });

    it('refuses bad parameters naming them', async () => {
      expectError(await get('/v1/proposals?limit=0'), 400, 'parameter_invalid', 'limit');
      expectError(await get('/v1/proposals?limit=101'), 400, 'parameter_invalid', 'limit');
      expectError(await get('/v1/proposals?cursor=nonsense'), 400, 'parameter_invalid', 'cursor');
      expectError(await get(`/v1/proposals?deal_id=${'d'.repeat(65)}`), 400, 'parameter_invalid', 'deal_id');
      expectError(await get('/v1/proposals?sort=created_at'), 400, 'parameter_unknown', 'sort');
    });

    it('is the GraphQL query proposals(filter)', async () => {
      const deal = await made('/v1/deals', { name: 'GraphQL', value: 10 });
      const proposal = await made('/v1/proposals', { deal_id: deal.id });
      const response = await app.graphql(
        'query ($f: ProposalListInput) { proposals(filter: $f) { object hasMore nextCursor data { id dealId } } }',
        { f: { dealId: deal.id, limit: 5 } },
        owner.testKey,
      );
      expect(response.body).toEqual({
        data: { proposals: { object: 'list', hasMore: false, nextCursor: null, data: [{ id: proposal.id, dealId: deal.id }] } },
      });
    });
  });

  describe('DELETE /v1/deals/{id}', () => {
    it('deletes a deal without proposals, answers the deleted shape and records deal.deleted carrying the deal as it was', async () => {
      const deal = await made('/v1/deals', { name: 'Doomed', value: 50, stage: 'qualification' });
      const response = await del(`/v1/deals/${deal.id}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: deal.id, object: 'deal', deleted: true });
      expectError(await get(`/v1/deals/${deal.id}`), 404, 'resource_missing', 'id');
      expectError(await del(`/v1/deals/${deal.id}`), 404, 'resource_missing', 'id');
      const history = await app.orm.em.fork().getConnection().execute('select count(*)::int as n from deal_stage_changes where deal_id = ?', [deal.id]);
      expect(history[0].n).toBe(0);
      const [event] = await allEvents('&type=deal.deleted');
      expect(event).toMatchObject({
        type: 'deal.deleted',
        livemode: false,
        data: { object: { ...deal, updated_at: expect.any(String) }, previous_attributes: {} },
      });
    });

    it('keeps a deal that has a proposal: 409 resource_conflict saying why, nothing changed', async () => {
      const deal = await made('/v1/deals', { name: 'Proposed', value: 5000 });
      const proposal = await made('/v1/proposals', { deal_id: deal.id });
      const response = await del(`/v1/deals/${deal.id}`);
      expectError(response, 409, 'resource_conflict');
      expect(response.body.error.message).toMatch(/proposal/);
      expect((await get(`/v1/deals/${deal.id}`)).status).toBe(200);
      expect((await get(`/v1/proposals/${proposal.id}`)).status).toBe(200);
      expect(await allEvents('&type=deal.deleted')).toEqual([]);
    });

    it('racing a proposal generation: either the proposal is made and the deal kept (409), or the deal is deleted and the proposal refused (404)', async () => {
      for (let round = 0; round < 6; round += 1) {
        const deal = await made('/v1/deals', { name: `Race ${round}`, value: 100 });
        const [deleted, proposed] = await Promise.all([
          del(`/v1/deals/${deal.id}`),
          app.request('POST', '/v1/proposals', { key: owner.testKey, body: { deal_id: deal.id } }),
        ]);
        const outcome = [deleted.status, proposed.status];
        expect([
          [200, 404],
          [409, 201],
        ]).toContainEqual(outcome);
        const proposals = await get(`/v1/proposals?deal_id=${deal.id}`);
        if (deleted.status === 200) {
          expect(proposed.body.error.code).toBe('resource_missing');
          expect((await get(`/v1/deals/${deal.id}`)).status).toBe(404);
          expect(proposals.body.data).toEqual([]);
        } else {
          expect(deleted.body.error.code).toBe('resource_conflict');
          expect((await get(`/v1/deals/${deal.id}`)).status).toBe(200);
          expect(proposals.body.data.map((p: { id: string }) => p.id)).toEqual([proposed.body.id]);
        }
      }
    });

    it('is 404 for another account or the other mode, and deletes nothing', async () => {
      const deal = await made('/v1/deals', { name: 'Mine', value: 1 });
      for (const key of [stranger.testKey, stranger.liveKey, owner.liveKey]) expectError(await del(`/v1/deals/${deal.id}`, key), 404, 'resource_missing', 'id');
      expect((await get(`/v1/deals/${deal.id}`)).status).toBe(200);
    });

    it('is the GraphQL mutation deleteDeal, with CONFLICT for a deal with a proposal', async () => {
      const free = await made('/v1/deals', { name: 'Free', value: 1 });
      const kept = await made('/v1/deals', { name: 'Kept', value: 1 });
      await made('/v1/proposals', { deal_id: kept.id });
      const mutation = 'mutation ($id: ID!) { deleteDeal(id: $id) { id object deleted } }';
      expect((await app.graphql(mutation, { id: free.id }, owner.testKey)).body).toEqual({
        data: { deleteDeal: { id: free.id, object: 'deal', deleted: true } },
      });
      const refused = await app.graphql(mutation, { id: kept.id }, owner.testKey);
      expect(refused.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', errorCode: 'resource_conflict' });
    });
  });

  describe('DELETE /v1/agents/{id}', () => {
    it('deletes a draft agent and records agent.deleted', async () => {
      const agent = await made('/v1/agents', { name: 'Draft', type: 'lead_qualifier' });
      const response = await del(`/v1/agents/${agent.id}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: agent.id, object: 'agent', deleted: true });
      expectError(await get(`/v1/agents/${agent.id}`), 404, 'resource_missing', 'id');
      const events = await allEvents('&type=agent.deleted');
      expect(events).toHaveLength(1);
      expect(events[0].data.object).toMatchObject({ id: agent.id, object: 'agent', status: 'draft' });
    });

    it('keeps a deployed agent: 409 resource_conflict saying it is deployed', async () => {
      const agent = await made('/v1/agents', { name: 'Live one', type: 'lead_qualifier' });
      expect((await app.request('POST', `/v1/agents/${agent.id}/deploy`, { key: owner.testKey, body: {} })).status).toBe(200);
      const response = await del(`/v1/agents/${agent.id}`);
      expectError(response, 409, 'resource_conflict');
      expect(response.body.error.message).toMatch(/deployed/);
      expect((await get(`/v1/agents/${agent.id}`)).body.status).toBe('deployed');
      expect(await allEvents('&type=agent.deleted')).toEqual([]);
    });

    it('is 404 for another account or the other mode, and the GraphQL mutation deleteAgent', async () => {
      const agent = await made('/v1/agents', { name: 'Mine', type: 'proposal_drafter' });
      for (const key of [stranger.testKey, owner.liveKey]) expectError(await del(`/v1/agents/${agent.id}`, key), 404, 'resource_missing', 'id');
      const response = await app.graphql('mutation ($id: ID!) { deleteAgent(id: $id) { id object deleted } }', { id: agent.id }, owner.testKey);
      expect(response.body).toEqual({ data: { deleteAgent: { id: agent.id, object: 'agent', deleted: true } } });
    });
  });

  describe('GET /v1/events', () => {
    /** A few events of several types, about several objects. */
    const makeHistory = async () => {
      const lead = await made('/v1/leads', { company: 'Eventful', contact_email: 'ev@example.test' });
      const deal = await made('/v1/deals', { name: 'Eventful deal', value: 100, lead_id: lead.id });
      await app.request('PUT', `/v1/deals/${deal.id}`, { key: owner.testKey, body: { stage: 'qualification' } });
      await made('/v1/leads', { company: 'Other', contact_email: 'other@example.test' });
      await made('/v1/leads', { company: 'Live', contact_email: 'live@example.test' }, owner.liveKey);
      return { lead, deal };
    };

    it('lists the events webhooks carry, newest first, every one exactly once across pages; GET /v1/events/{id} answers the same object', async () => {
      await makeHistory();
      const everything = await allEvents();
      expect(everything.length).toBeGreaterThanOrEqual(7);
      const rows = await app.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ id: string }>>('select id from events where account_id = ? and livemode = false order by created_at desc, id desc', [
          owner.account.id,
        ]);
      expect(everything.map((e) => e.id)).toEqual(rows.map((row) => row.id));
      for (const event of everything) {
        expect(Object.keys(event).sort()).toEqual(['actor', 'api_version', 'created_at', 'data', 'id', 'livemode', 'object', 'request', 'type', 'updated_at']);
        expect(event).toMatchObject({ object: 'event', livemode: false, api_version: 'v1' });
      }
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: HttpResponse = await get(`/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.body.object).toBe('list');
        paged.push(...page.body.data.map((e: EventObject) => e.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(paged).toEqual(everything.map((e) => e.id));

      const one = await get(`/v1/events/${everything[3].id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(everything[3]);
      for (const key of [stranger.testKey, owner.liveKey]) expectError(await get(`/v1/events/${everything[3].id}`, key), 404, 'resource_missing', 'id');
      expectError(await get('/v1/events/evt_nothing'), 404, 'resource_missing', 'id');
      expect((await allEvents('', owner.liveKey)).map((e) => e.type)).toEqual(
        ['lead.scored', 'lead.created'].filter((t) => everything.some((e) => e.type === t)),
      );
      expect(await allEvents('', stranger.testKey)).toEqual([]);
    });

    it('filters by one type or a comma list, by object_id and by created_after / created_before', async () => {
      const { lead, deal } = await makeHistory();
      const everything = await allEvents();
      const only = (keep: (e: EventObject) => boolean) => everything.filter(keep).map((e) => e.id);

      expect((await allEvents('&type=deal.updated')).map((e) => e.id)).toEqual(only((e) => e.type === 'deal.updated'));
      const several = await allEvents('&type=deal.created,lead.created');
      expect(several.map((e) => e.id)).toEqual(only((e) => e.type === 'deal.created' || e.type === 'lead.created'));
      expect(new Set(several.map((e) => e.type))).toEqual(new Set(['deal.created', 'lead.created']));

      const aboutDeal = await allEvents(`&object_id=${deal.id}`);
      expect(aboutDeal.map((e) => e.id)).toEqual(only((e) => e.data.object.id === deal.id));
      expect(aboutDeal.map((e) => e.type).sort()).toEqual(['deal.created', 'deal.stage_changed', 'deal.updated']);
      expect((await allEvents(`&object_id=${lead.id}&type=lead.scored`)).map((e) => e.id)).toEqual(
        only((e) => e.data.object.id === lead.id && e.type === 'lead.scored'),
      );
      expect(await allEvents('&object_id=lead_nothing')).toEqual([]);

      const middle = everything[Math.floor(everything.length / 2)].created_at;
      expect((await allEvents(`&created_after=${middle}`)).map((e) => e.id)).toEqual(only((e) => e.created_at >= middle));
      expect((await allEvents(`&created_before=${middle}`)).map((e) => e.id)).toEqual(only((e) => e.created_at < middle));
      expect((await allEvents(`&created_after=${middle}&created_before=${middle}`)).map((e) => e.id)).toEqual([]);
    });

    it('refuses bad filters naming them', async () => {
      expectError(await get('/v1/events?type=deal.exploded'), 400, 'parameter_invalid', 'type');
      expectError(await get('/v1/events?type=deal.created,nope'), 400, 'parameter_invalid', 'type');
      expectError(await get('/v1/events?type=,'), 400, 'parameter_invalid', 'type');
      expectError(await get('/v1/events?created_after=yesterday'), 400, 'parameter_invalid', 'created_after');
      expectError(await get('/v1/events?created_before=0000-01-01T00:00:00Z'), 400, 'parameter_invalid', 'created_before');
      expectError(await get(`/v1/events?object_id=${'x'.repeat(65)}`), 400, 'parameter_invalid', 'object_id');
      expectError(await get('/v1/events?limit=500'), 400, 'parameter_invalid', 'limit');
      expectError(await get('/v1/events?status=new'), 400, 'parameter_unknown', 'status');
    });

    it('GraphQL events(filter) takes the same filters, and a String variable for type still works', async () => {
      const { deal } = await makeHistory();
      const response = await app.graphql(
        'query ($f: EventListInput) { events(filter: $f) { data { type } } }',
        { f: { type: 'deal.created, deal.updated', objectId: deal.id } },
        owner.testKey,
      );
      expect(response.body).toEqual({ data: { events: { data: [{ type: 'deal.updated' }, { type: 'deal.created' }] } } });
      const byVariable = await app.graphql(
        'query ($type: String) { events(filter: { type: $type }) { data { type } } }',
        { type: 'deal.stage_changed' },
        owner.testKey,
      );
      expect(byVariable.body).toEqual({ data: { events: { data: [{ type: 'deal.stage_changed' }] } } });
      const refused = await app.graphql('{ events(filter: { type: "deal.created,deal.nope" }) { data { type } } }', {}, owner.testKey);
      expect(refused.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', param: 'type' });
    });
  });
});

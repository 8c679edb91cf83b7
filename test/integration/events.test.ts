import { randomBytes, randomUUID } from 'node:crypto';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * The event outbox (CONTRACT §10) end to end through real HTTP, real Apollo and real PostgreSQL:
 * which changes write which events, that `data.object` is exactly the REST shape a `GET /v1/...`
 * answers and `previous_attributes` exactly the earlier values of what changed, that an event
 * commits with its change or not at all, the event object's shape, and that `events` / `event`
 * in GraphQL see only the key's account and mode. Events are read back from the `events` table
 * and through GraphQL; every expectation is computed from what the test itself sent or read.
 */

type Json = Record<string, unknown>;

interface EventRow {
  id: string;
  account_id: string;
  livemode: boolean;
  type: string;
  api_version: string;
  created_at: string | Date;
  data: { object: Json; previous_attributes: Json };
}

interface GqlEvent {
  id: string;
  object: string;
  type: string;
  createdAt: string;
  updatedAt: string;
  livemode: boolean;
  apiVersion: string;
  data: { object: Json; previous_attributes: Json };
}

interface GqlError {
  message: string;
  extensions: Record<string, unknown>;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const EVT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;
const EVENT_FIELDS = 'id object type createdAt updatedAt livemode apiVersion data';

let emailCounter = 0;
const uniqueEmail = () => `events${++emailCounter}-${Date.now()}@fabrikam.test`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The fields whose values differ between two REST bodies, with their earlier values (updated_at aside). */
function changedFields(before: Json, after: Json): Json {
  return Object.fromEntries(Object.entries(before).filter(([name, value]) => name !== 'updated_at' && JSON.stringify(value) !== JSON.stringify(after[name])));
}

describe('events', () => {
  let app: TestApp;

  const ok = async <T = Json>(res: Promise<HttpResponse<T>>, status = 200): Promise<T> => {
    const r = await res;
    if (r.status !== status) throw new Error(`expected ${status}, got ${r.status} ${r.text.slice(0, 400)}`);
    return r.body;
  };
  const sql = <T>(query: string, params: unknown[] = []) => app.orm.em.fork().getConnection().execute<T[]>(query, params);

  /** The account's event rows, oldest first. */
  const eventRows = (accountId: string): Promise<EventRow[]> =>
    sql<EventRow>('select id, account_id, livemode, type, api_version, created_at, data from events where account_id = ? order by created_at, id', [accountId]);
  const countRows = async (table: 'events' | 'leads' | 'deals' | 'integrations', accountId: string): Promise<number> =>
    Number((await sql<{ count: string }>(`select count(*) from ${table} where account_id = ?`, [accountId]))[0].count);

  /** Runs `action` and returns the event rows it wrote in the account. */
  async function captured<T>(account: TestAccount, action: () => Promise<T>): Promise<{ result: T; events: EventRow[] }> {
    const seen = new Set((await eventRows(account.account.id)).map((e) => e.id));
    const result = await action();
    return { result, events: (await eventRows(account.account.id)).filter((e) => !seen.has(e.id)) };
  }
  const typesOf = (events: EventRow[]) => events.map((e) => e.type).sort();
  const only = (events: EventRow[], type: string): EventRow => {
    const matching = events.filter((e) => e.type === type);
    expect({ type, count: matching.length }).toEqual({ type, count: 1 });
    return matching[0];
  };
  /** data.object is the REST body exactly: same keys in the same order, same values. */
  const expectObject = (event: EventRow, body: Json) => {
    expect(Object.keys(event.data)).toEqual(['object', 'previous_attributes']);
    expect(Object.keys(event.data.object)).toEqual(Object.keys(body));
    expect(event.data.object).toStrictEqual(body);
  };

  const createLead = (key: string, fields: Json = {}) =>
    ok<Json>(app.request('POST', '/v1/leads', { key, body: { company: 'Fabrikam', contact_email: uniqueEmail(), ...fields } }), 201);
  const getLead = (key: string, id: unknown) => ok<Json>(app.request('GET', `/v1/leads/${id}`, { key }));
  const createDeal = (key: string, fields: Json = {}) =>
    ok<Json>(app.request('POST', '/v1/deals', { key, body: { name: 'Deal', value: 100, ...fields } }), 201);
  /** The deal as REST shows it. There is no GET /v1/deals/{id} (the spec lists none): read it from GET /v1/deals. */
  const getDeal = async (key: string, id: unknown): Promise<Json> => {
    const found = (await ok<{ data: Json[] }>(app.request('GET', '/v1/deals?limit=100', { key }))).data.filter((d) => d.id === id);
    expect(found).toHaveLength(1);
    return found[0];
  };
  const getIntegration = async (key: string, id: unknown): Promise<Json> => {
    const found = (await ok<{ data: Json[] }>(app.request('GET', '/v1/integrations?limit=100', { key }))).data.filter((i) => i.id === id);
    expect(found).toHaveLength(1);
    return found[0];
  };
  const putDeal = (key: string, id: unknown, body: Json) => app.request('PUT', `/v1/deals/${id}`, { key, body });

  const m365Credentials = () => ({
    tenant_id: randomUUID(),
    client_id: randomUUID(),
    client_secret: `m365~${randomBytes(16).toString('hex')}`,
    mailbox: 'sales@contoso.com',
  });
  const connect = (key: string, body: Json) => app.request('POST', '/v1/integrations', { key, body });

  async function gqlEvents(key: string, filter: Json = {}) {
    const res = await app.graphql(
      `query E($f: EventListInput) { events(filter: $f) { object data { ${EVENT_FIELDS} } hasMore nextCursor } }`,
      { f: filter },
      key,
    );
    if (res.status !== 200 || res.body.errors) throw new Error(`events query failed: ${res.status} ${res.text.slice(0, 400)}`);
    return res.body.data.events as { object: string; data: GqlEvent[]; hasMore: boolean; nextCursor: string | null };
  }
  const gqlEvent = (key: string, id: string) => app.graphql(`query E($id: ID!) { event(id: $id) { ${EVENT_FIELDS} } }`, { id }, key);
  const firstError = (res: HttpResponse): GqlError => {
    expect(Array.isArray(res.body.errors)).toBe(true);
    return res.body.errors[0];
  };

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  describe('leads', () => {
    it('POST writes lead.created and lead.scored whose object is the lead as GET shows it', async () => {
      const account = await app.createAccount();
      const { result: created, events } = await captured(account, () => createLead(account.testKey, { employees: 40, industry: 'Retail' }));
      expect(typesOf(events)).toEqual(['lead.created', 'lead.scored']);
      const got = await getLead(account.testKey, created.id);
      expect(got).toStrictEqual(created);
      for (const event of events) {
        expectObject(event, got);
        expect(event.data.previous_attributes).toStrictEqual({});
        expect(event.livemode).toBe(false);
      }
    });

    it('PUT of a scored field writes lead.updated and lead.scored with exactly the earlier values of what changed', async () => {
      const account = await app.createAccount();
      const lead = await createLead(account.testKey, { employees: 3, contact_email: `owner-${randomUUID()}@gmail.com` });
      const before = await getLead(account.testKey, lead.id);
      await sleep(5); // so updated_at and scored_at visibly move
      const { events } = await captured(account, () =>
        ok(app.request('PUT', `/v1/leads/${lead.id}`, { key: account.testKey, body: { employees: 5000, industry: 'Software' } })),
      );
      const after = await getLead(account.testKey, lead.id);
      expect(typesOf(events)).toEqual(['lead.scored', 'lead.updated']);
      expect(after.score).not.toBe(before.score); // the change did rescore
      const expected = changedFields(before, after);
      expect(expected).toMatchObject({ employees: 3, industry: null, score: before.score, scored_at: before.scored_at });
      for (const event of events) {
        expectObject(event, after);
        expect(event.data.previous_attributes).toStrictEqual(expected);
        expect(event.data.previous_attributes).not.toHaveProperty('updated_at');
      }
    });

    it('a PUT that changes nothing a client sees writes no event', async () => {
      const account = await app.createAccount();
      const lead = await createLead(account.testKey, { employees: 12, industry: 'Retail', status: 'contacted', metadata: { crm: '7' } });
      const before = await getLead(account.testKey, lead.id);
      const same = { status: 'contacted', metadata: { crm: '7' } };
      await sleep(5); // a write would move updated_at
      const { events: unscored } = await captured(account, () => ok(app.request('PUT', `/v1/leads/${lead.id}`, { key: account.testKey, body: same })));
      expect(unscored).toEqual([]);
      expect(await getLead(account.testKey, lead.id)).toStrictEqual(before);
    });

    // CONTRACT §5: the score is recomputed when a scored field changes, not when one is resent as it was.
    it('a PUT resending the same scored values writes no event and leaves the lead as it was', async () => {
      const account = await app.createAccount();
      const lead = await createLead(account.testKey, { employees: 12, industry: 'Retail' });
      const before = await getLead(account.testKey, lead.id);
      await sleep(5);
      const body = { company: before.company, employees: before.employees, industry: before.industry };
      const { events } = await captured(account, () => ok(app.request('PUT', `/v1/leads/${lead.id}`, { key: account.testKey, body })));
      expect(typesOf(events)).toEqual([]);
      expect(await getLead(account.testKey, lead.id)).toStrictEqual(before);
    });

    it('a PUT of metadata only writes lead.updated and no lead.scored', async () => {
      const account = await app.createAccount();
      const lead = await createLead(account.testKey, { metadata: { keep: '1', change: 'old' } });
      const { events } = await captured(account, () =>
        ok(app.request('PUT', `/v1/leads/${lead.id}`, { key: account.testKey, body: { metadata: { change: 'new' } } })),
      );
      expect(typesOf(events)).toEqual(['lead.updated']);
      const after = await getLead(account.testKey, lead.id);
      expectObject(events[0], after);
      expect(events[0].data.previous_attributes).toStrictEqual({ metadata: { keep: '1', change: 'old' } });
    });

    it('DELETE writes lead.deleted carrying the lead as it was', async () => {
      const account = await app.createAccount();
      const lead = await createLead(account.testKey, { employees: 80 });
      const before = await getLead(account.testKey, lead.id);
      const { events } = await captured(account, () => ok(app.request('DELETE', `/v1/leads/${lead.id}`, { key: account.testKey })));
      expect(typesOf(events)).toEqual(['lead.deleted']);
      expectObject(events[0], before);
      expect(events[0].data.previous_attributes).toStrictEqual({});
      expect((await app.request('GET', `/v1/leads/${lead.id}`, { key: account.testKey })).status).toBe(404);
    });
  });

  describe('deals', () => {
    it('create writes deal.created; a stage move writes deal.updated and deal.stage_changed', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const { result: deal, events: created } = await captured(account, () => createDeal(key, { name: 'Tailspin' }));
      expect(typesOf(created)).toEqual(['deal.created']);
      expectObject(created[0], await getDeal(key, deal.id));

      const before = await getDeal(key, deal.id);
      await sleep(5);
      const { events } = await captured(account, () => ok(putDeal(key, deal.id, { stage: 'qualification' })));
      const after = await getDeal(key, deal.id);
      expect(typesOf(events)).toEqual(['deal.stage_changed', 'deal.updated']);
      for (const event of events) {
        expectObject(event, after);
        expect(event.data.previous_attributes).toStrictEqual({ stage: 'prospecting', probability: 10, stage_changed_at: before.stage_changed_at });
      }

      // Other fields: deal.updated alone; the same stage again: nothing.
      const { events: renamed } = await captured(account, () => ok(putDeal(key, deal.id, { name: 'Tailspin 2' })));
      expect(typesOf(renamed)).toEqual(['deal.updated']);
      expect(renamed[0].data.previous_attributes).toStrictEqual({ name: 'Tailspin' });
      expect((await captured(account, () => ok(putDeal(key, deal.id, { stage: 'qualification' })))).events).toEqual([]);
    });

    it('closed_won writes deal.won and lead.updated for the converted lead; moving out of it writes nothing', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const lead = await createLead(key);
      await ok(app.request('PUT', `/v1/leads/${lead.id}`, { key, body: { status: 'qualified' } }));
      const deal = await createDeal(key, { lead_id: lead.id, stage: 'negotiation' });
      const leadBefore = await getLead(key, lead.id);
      const dealBefore = await getDeal(key, deal.id);

      const { events } = await captured(account, () => ok(putDeal(key, deal.id, { stage: 'closed_won' })));
      expect(typesOf(events)).toEqual(['deal.stage_changed', 'deal.updated', 'deal.won', 'lead.updated']);
      const dealAfter = await getDeal(key, deal.id);
      for (const type of ['deal.updated', 'deal.stage_changed', 'deal.won']) {
        const event = only(events, type);
        expectObject(event, dealAfter);
        expect(event.data.previous_attributes).toStrictEqual({ stage: 'negotiation', probability: 75, stage_changed_at: dealBefore.stage_changed_at });
      }
      const leadAfter = await getLead(key, lead.id);
      expect(leadAfter.status).toBe('converted');
      const converted = only(events, 'lead.updated');
      expectObject(converted, leadAfter);
      expect(converted.data.previous_attributes).toStrictEqual({ status: leadBefore.status });
      expect(leadBefore.status).toBe('qualified');

      const eventsBefore = await countRows('events', account.account.id);
      const refused = await putDeal(key, deal.id, { stage: 'negotiation' });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('invalid_stage_transition');
      expect(await countRows('events', account.account.id)).toBe(eventsBefore);
      expect(await getDeal(key, deal.id)).toStrictEqual(dealAfter);
    });

    it('closed_lost writes deal.lost (and no lead event); a deal created won converts its lead at once', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const lead = await createLead(key);
      const deal = await createDeal(key, { lead_id: lead.id, stage: 'proposal' });
      const { events } = await captured(account, () => ok(putDeal(key, deal.id, { stage: 'closed_lost' })));
      expect(typesOf(events)).toEqual(['deal.lost', 'deal.stage_changed', 'deal.updated']);
      expectObject(only(events, 'deal.lost'), await getDeal(key, deal.id));
      expect(only(events, 'deal.lost').data.previous_attributes).toMatchObject({ stage: 'proposal' });
      expect((await getLead(key, lead.id)).status).toBe('new');

      const other = await createLead(key);
      const { result: won, events: wonAtOnce } = await captured(account, () => createDeal(key, { lead_id: other.id, stage: 'closed_won' }));
      expect(typesOf(wonAtOnce)).toEqual(['deal.created', 'deal.won', 'lead.updated']);
      expectObject(only(wonAtOnce, 'deal.won'), await getDeal(key, won.id));
      expectObject(only(wonAtOnce, 'lead.updated'), await getLead(key, other.id));
      expect(only(wonAtOnce, 'lead.updated').data.previous_attributes).toStrictEqual({ status: 'new' });
    });

    it('co-sell registration writes deal.updated and deal.registered; a refused one writes nothing', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const integration = await ok(connect(key, { type: 'm365', provider: 'microsoft365', credentials: m365Credentials() }), 201);
      const lead = await createLead(key);
      const deal = await createDeal(key, { name: 'Eligible', value: 1000, stage: 'qualification', lead_id: lead.id });

      const { result: registered, events } = await captured(account, () => ok(app.request('POST', `/v1/deals/${deal.id}/register`, { key })));
      expect(typesOf(events)).toEqual(['deal.registered', 'deal.updated']);
      const after = await getDeal(key, deal.id);
      expect(after).toStrictEqual(registered);
      expect(after.co_sell).toMatchObject({ status: 'accepted', integration_id: integration.id });
      for (const event of events) {
        expectObject(event, after);
        expect(event.data.previous_attributes).toStrictEqual({ co_sell: null });
      }

      const { result: again, events: none } = await captured(account, () => app.request('POST', `/v1/deals/${deal.id}/register`, { key }));
      expect(again.status).toBe(409);
      expect(none).toEqual([]);
      const ineligible = await createDeal(key, { value: 10, stage: 'prospecting' });
      const { result: refused, events: none2 } = await captured(account, () => app.request('POST', `/v1/deals/${ineligible.id}/register`, { key }));
      expect(refused.status).toBe(422);
      expect(none2).toEqual([]);
    });

    it('of concurrent registrations of one deal, exactly one writes deal.registered', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      await ok(connect(key, { type: 'm365', provider: 'microsoft365', credentials: m365Credentials() }), 201);
      const lead = await createLead(key);
      const deal = await createDeal(key, { value: 5000, stage: 'negotiation', lead_id: lead.id });
      const { result, events } = await captured(account, () =>
        Promise.all(Array.from({ length: 6 }, () => app.request('POST', `/v1/deals/${deal.id}/register`, { key }))),
      );
      expect(result.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      expect(typesOf(events)).toEqual(['deal.registered', 'deal.updated']);
    });
  });

  describe('integrations', () => {
    it('connect writes integration.connected, DELETE integration.disconnected; no payload holds a credential', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const credentials = m365Credentials();
      const hubspotToken = `pat-na1-${randomBytes(16).toString('hex')}`;
      const sent = [...Object.values(credentials), hubspotToken];

      const { result: connected, events } = await captured(account, () =>
        ok(connect(key, { type: 'm365', provider: 'microsoft365', name: 'Tenant', credentials }), 201),
      );
      expect(typesOf(events)).toEqual(['integration.connected']);
      expectObject(events[0], await getIntegration(key, connected.id));
      expect(events[0].data.object).toStrictEqual(connected);
      expect(events[0].data.object.credentials_hint).toBe(credentials.client_secret.slice(-4));
      expect(events[0].data.previous_attributes).toStrictEqual({});

      const hubspot = await captured(account, () => ok(connect(key, { type: 'crm', provider: 'hubspot', credentials: { access_token: hubspotToken } }), 201));
      expect(typesOf(hubspot.events)).toEqual(['integration.connected']);

      const { events: gone } = await captured(account, () => ok(app.request('DELETE', `/v1/integrations/${connected.id}`, { key })));
      expect(typesOf(gone)).toEqual(['integration.disconnected']);
      expectObject(gone[0], await getIntegration(key, connected.id));
      expect(gone[0].data.object.status).toBe('disconnected');
      expect(gone[0].data.previous_attributes).toStrictEqual({ status: 'connected', disconnected_at: null });
      // Disconnecting again changes nothing and says nothing.
      expect((await captured(account, () => ok(app.request('DELETE', `/v1/integrations/${connected.id}`, { key })))).events).toEqual([]);

      // Neither the stored payloads nor the GraphQL view of them holds any credential value.
      const stored = await sql<{ text: string }>('select data::text as text from events where account_id = ?', [account.account.id]);
      expect(stored).toHaveLength(3);
      const listedText = (await app.graphql(`{ events(filter: {limit: 100}) { data { ${EVENT_FIELDS} } } }`, {}, key)).text;
      for (const secret of sent) {
        for (const row of stored) expect(row.text).not.toContain(secret);
        expect(listedText).not.toContain(secret);
      }
    });
  });

  describe('same transaction', () => {
    it('a request that fails writes no event: duplicate email 409, bad PUT 400, second connection 409, refused move 409', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const lead = await createLead(key);
      const closed = await createDeal(key, { stage: 'closed_lost' });
      await ok(connect(key, { type: 'crm', provider: 'hubspot', credentials: { access_token: `pat-na1-${randomUUID()}` } }), 201);
      const counts = async () => Promise.all((['events', 'leads', 'deals', 'integrations'] as const).map((table) => countRows(table, account.account.id)));
      const before = await counts();
      const leadBefore = await getLead(key, lead.id);

      const duplicate = await app.request('POST', '/v1/leads', { key, body: { company: 'Copy', contact_email: String(lead.contact_email).toUpperCase() } });
      expect(duplicate.status).toBe(409);
      expect((await app.request('PUT', `/v1/leads/${lead.id}`, { key, body: { employees: -1 } })).status).toBe(400);
      expect((await app.request('PUT', `/v1/leads/${lead.id}`, { key, body: { metadata: { k: 'x'.repeat(501) } } })).status).toBe(400);
      expect((await app.request('PUT', `/v1/leads/${lead.id}`, { key, body: { status: 'converted' } })).status).toBe(400);
      expect((await connect(key, { type: 'crm', provider: 'hubspot', credentials: { access_token: `pat-na1-${randomUUID()}` } })).status).toBe(409);
      expect((await putDeal(key, closed.id, { stage: 'prospecting', name: 'Reopened' })).status).toBe(409);

      expect(await counts()).toEqual(before);
      expect(await getLead(key, lead.id)).toStrictEqual(leadBefore);
    });

    it('a change and its events commit together: one lead, two events; a failed event write keeps the change out too', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const [leads0, events0] = [await countRows('leads', account.account.id), await countRows('events', account.account.id)];
      await createLead(key);
      expect([await countRows('leads', account.account.id), await countRows('events', account.account.id)]).toEqual([leads0 + 1, events0 + 2]);

      // Make the database refuse one event of one lead: the lead and its other event must not commit either.
      const company = `Refused ${randomUUID()}`;
      await sql(`create or replace function refuse_event_for_test() returns trigger language plpgsql as $$
        begin
          if new.type = 'lead.scored' and new.data->'object'->>'company' = '${company}' then raise exception 'refused by test'; end if;
          return new;
        end $$`);
      await sql('create trigger refuse_event_for_test before insert on events for each row execute function refuse_event_for_test()');
      try {
        const res = await app.request('POST', '/v1/leads', { key, body: { company, contact_email: uniqueEmail() } });
        expect(res.status).toBe(500);
      } finally {
        await sql('drop trigger refuse_event_for_test on events');
        await sql('drop function refuse_event_for_test()');
      }
      expect([await countRows('leads', account.account.id), await countRows('events', account.account.id)]).toEqual([leads0 + 1, events0 + 2]);
      expect(await sql('select id from leads where company = ?', [company])).toEqual([]);
    });
  });

  describe('the event object and listing', () => {
    it('has an evt_ id, object "event", its type, api_version v1, livemode by key, created_at with milliseconds', async () => {
      const account = await app.createAccount();
      for (const [key, livemode] of [
        [account.testKey, false],
        [account.liveKey, true],
      ] as const) {
        const start = Date.now();
        const lead = await createLead(key);
        const end = Date.now();
        const listed = await gqlEvents(key, { type: 'lead.created' });
        expect(listed.object).toBe('list');
        expect(listed.data).toHaveLength(1);
        const event = listed.data[0];
        expect(Object.keys(event).sort()).toEqual(['apiVersion', 'createdAt', 'data', 'id', 'livemode', 'object', 'type', 'updatedAt']);
        expect(event.id).toMatch(EVT_ID);
        expect(event).toMatchObject({ object: 'event', type: 'lead.created', apiVersion: 'v1', livemode });
        expect(event.createdAt).toMatch(ISO_MS);
        expect(Date.parse(event.createdAt)).toBeGreaterThanOrEqual(start - 1);
        expect(Date.parse(event.createdAt)).toBeLessThanOrEqual(end + 1);
        const got = await getLead(key, lead.id);
        expect(Object.keys(event.data.object)).toEqual(Object.keys(got));
        expect(event.data.object).toStrictEqual(got);
        expect(event.data.object.livemode).toBe(livemode);

        const [row] = (await eventRows(account.account.id)).filter((r) => r.id === event.id);
        expect(row).toMatchObject({ type: 'lead.created', api_version: 'v1', livemode });
        expect(new Date(row.created_at).toISOString()).toBe(event.createdAt);
        expect(row.data).toStrictEqual(event.data);
        const single = await gqlEvent(key, event.id);
        expect(single.body.data.event).toStrictEqual(event);
      }
    });

    it("lists only the key's own account and mode; event(id) of another account or mode is NOT_FOUND", async () => {
      const a = await app.createAccount();
      const b = await app.createAccount();
      await createLead(a.testKey);
      await createDeal(a.testKey);
      await createLead(a.liveKey);
      await createLead(b.testKey);
      const rowsOf = async (account: TestAccount, livemode: boolean) =>
        (await eventRows(account.account.id))
          .filter((r) => r.livemode === livemode)
          .map((r) => r.id)
          .sort();
      const listedIds = async (key: string) => (await gqlEvents(key, { limit: 100 })).data.map((e) => e.id).sort();

      expect(await rowsOf(a, false)).toHaveLength(3);
      expect(await listedIds(a.testKey)).toEqual(await rowsOf(a, false));
      expect(await listedIds(a.liveKey)).toEqual(await rowsOf(a, true));
      expect(await listedIds(b.testKey)).toEqual(await rowsOf(b, false));
      expect(await listedIds(b.liveKey)).toEqual([]);
      expect((await gqlEvents(a.testKey, { type: 'deal.created' })).data.map((e) => e.type)).toEqual(['deal.created']);

      const [bEvent] = await rowsOf(b, false);
      const [aLive] = await rowsOf(a, true);
      expect((await gqlEvent(b.testKey, bEvent)).body.data.event.id).toBe(bEvent);
      for (const [key, id] of [
        [a.testKey, bEvent],
        [a.liveKey, bEvent],
        [a.testKey, aLive],
        [a.testKey, 'evt_nope'],
        [a.testKey, 'lead_01J0000000000000000000000'],
      ]) {
        const res = await gqlEvent(key, id);
        expect(res.body.data).toBeNull();
        expect(firstError(res).extensions.code).toBe('NOT_FOUND');
      }
    });

    it('an unknown type or a bad limit is BAD_USER_INPUT', async () => {
      const account = await app.createAccount();
      for (const filter of ['{type: "not.a.type"}', '{limit: 0}', '{limit: 101}', '{cursor: "garbage"}']) {
        const res = await app.graphql(`{ events(filter: ${filter}) { data { id } } }`, {}, account.testKey);
        expect({ filter, code: firstError(res).extensions.code }).toEqual({ filter, code: 'BAD_USER_INPUT' });
      }
    });

    it('paging with limit and cursor walks every event once, newest first, even while events are written', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      for (let i = 0; i < 6; i += 1) await createLead(key); // 12 events, in pairs written by one flush
      const expected = (await eventRows(account.account.id)).map((r) => r.id).reverse();
      expect(expected).toHaveLength(12);

      const walked: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Awaited<ReturnType<typeof gqlEvents>> = await gqlEvents(key, { limit: 5, ...(cursor ? { cursor } : {}) });
        expect(page.data.length).toBeLessThanOrEqual(5);
        if (page.hasMore) expect(page.data).toHaveLength(5);
        else expect(page.nextCursor).toBeNull();
        walked.push(...page.data.map((e) => e.id));
        cursor = page.nextCursor;
        pages += 1;
        if (pages === 1) await createLead(key); // newer than the cursor: not on a later page
        if (pages > 20) throw new Error('paging does not end');
      } while (cursor);
      expect(pages).toBe(3);
      expect(walked).toEqual(expected);
    });
  });
});

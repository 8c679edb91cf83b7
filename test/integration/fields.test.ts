import { startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * Custom fields (issue 68) through REST and GraphQL against PostgreSQL: definitions per account and
 * mode, values on leads and deals checked by type, unknown keys refused, null clearing, required on
 * create, unique enforced by the database (also under concurrent creates), options renamed and
 * archived while stored values keep working, values in events, and deletion removing the values.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- an OpenAPI document

let app: TestApp;
let owner: TestAccount;
let seq = 0;
const email = () => `buyer-${Date.now()}-${++seq}@fields.test`;

beforeAll(async () => {
  app = await startTestApp();
  owner = await app.createAccount();
});
afterAll(() => app?.close());

const rest = (method: string, path: string, body?: unknown, key = owner.testKey) => app.request(method, path, { key, body });

async function define(body: Record<string, unknown>, key = owner.testKey) {
  const made = await rest('POST', '/v1/fields', body, key);
  expect(made.status).toBe(201);
  return made.body as { id: string; key: string; object: string; object_type: string };
}

describe('custom fields', () => {
  let seats: { id: string };
  let tier: { id: string };

  beforeAll(async () => {
    seats = await define({ object_type: 'lead', key: 'seats', label: 'Seats', type: 'number' });
    tier = await define({
      object_type: 'lead',
      key: 'tier',
      label: 'Tier',
      type: 'select',
      options: [
        { value: 'gold', label: 'Gold' },
        { value: 'silver', label: 'Silver' },
      ],
    });
    await define({ object_type: 'lead', key: 'renewal', label: 'Renewal', type: 'date' });
    await define({
      object_type: 'lead',
      key: 'domains',
      label: 'Domains',
      type: 'multi_select',
      options: [
        { value: 'a', label: 'A' },
        { value: 'b', label: 'B' },
      ],
    });
    await define({ object_type: 'lead', key: 'met_at', label: 'Met at', type: 'datetime' });
  });

  it('defines fields as objects of their own, listed per object and mode', async () => {
    const got = await rest('GET', `/v1/fields/${seats.id}`);
    expect(got.body).toMatchObject({
      id: seats.id,
      object: 'field',
      object_type: 'lead',
      key: 'seats',
      type: 'number',
      required: false,
      unique: false,
      options: [],
      livemode: false,
    });
    const leads = await rest('GET', '/v1/fields?object_type=lead&limit=100');
    expect(leads.body.data.map((field: { key: string }) => field.key)).toEqual(['met_at', 'domains', 'renewal', 'tier', 'seats']);
    expect((await rest('GET', '/v1/fields?object_type=deal')).body.data).toEqual([]);
    // Live mode has its own: none yet, and the test field is not found there.
    expect((await rest('GET', '/v1/fields', undefined, owner.liveKey)).body.data).toEqual([]);
    expect((await rest('GET', `/v1/fields/${seats.id}`, undefined, owner.liveKey)).status).toBe(404);
  });

  it('refuses a taken key, a built-in name, options on a number, unique on a boolean, a select without options', async () => {
    const again = await rest('POST', '/v1/fields', { object_type: 'lead', key: 'seats', label: 'Seats again', type: 'number' });
    expect([again.status, again.body.error.code, again.body.error.param]).toEqual([409, 'resource_conflict', 'key']);
    const builtIn = await rest('POST', '/v1/fields', { object_type: 'lead', key: 'contact_email', label: 'E-mail', type: 'email' });
    expect([builtIn.status, builtIn.body.error.param]).toEqual([400, 'key']);
    const inherited = await rest('POST', '/v1/fields', { object_type: 'lead', key: 'constructor', label: 'x', type: 'number' });
    expect([inherited.status, inherited.body.error.param]).toEqual([400, 'key']);
    const badKey = await rest('POST', '/v1/fields', { object_type: 'lead', key: 'Seats!', label: 'x', type: 'number' });
    expect([badKey.status, badKey.body.error.param]).toEqual([400, 'key']);
    const options = await rest('POST', '/v1/fields', { object_type: 'deal', key: 'n', label: 'N', type: 'number', options: [{ value: 'a', label: 'A' }] });
    expect([options.status, options.body.error.param]).toEqual([400, 'options']);
    const unique = await rest('POST', '/v1/fields', { object_type: 'deal', key: 'flag', label: 'Flag', type: 'boolean', unique: true });
    expect([unique.status, unique.body.error.param]).toEqual([400, 'unique']);
    const noOptions = await rest('POST', '/v1/fields', { object_type: 'deal', key: 'stage2', label: 'S', type: 'select' });
    expect([noOptions.status, noOptions.body.error.code, noOptions.body.error.param]).toEqual([400, 'parameter_missing', 'options']);
    // The same key on the other object is another field.
    await define({ object_type: 'deal', key: 'seats', label: 'Seats', type: 'number' });
  });

  it('stores values by type on a lead, in REST and GraphQL alike, keys as given', async () => {
    const made = await rest('POST', '/v1/leads', {
      company: 'Fielded',
      contact_email: email(),
      fields: { seats: 120, tier: 'gold', renewal: '2027-03-31', domains: ['a', 'b'], met_at: '2027-01-02T10:00:00+02:00' },
    });
    expect(made.status).toBe(201);
    expect(made.body.fields).toEqual({ seats: 120, tier: 'gold', renewal: '2027-03-31', domains: ['a', 'b'], met_at: '2027-01-02T08:00:00.000Z' });
    const graphql = await app.graphql(`query($id: ID!) { lead(id: $id) { fields } }`, { id: made.body.id }, owner.testKey);
    expect(graphql.body.data.lead.fields).toEqual(made.body.fields);

    // An update changes only the keys sent; null clears one.
    const updated = await rest('PUT', `/v1/leads/${made.body.id}`, { fields: { seats: 130, renewal: null } });
    expect(updated.body.fields).toEqual({ seats: 130, tier: 'gold', domains: ['a', 'b'], met_at: '2027-01-02T08:00:00.000Z' });
    // The event carries the values, and what they were.
    const events = await rest('GET', `/v1/events?type=lead.updated&limit=5`);
    const event = events.body.data.find((candidate: { data: { object: { id: string } } }) => candidate.data.object.id === made.body.id);
    expect(event.data.object.fields.seats).toBe(130);
    expect(event.data.previous_attributes.fields).toMatchObject({ seats: 120, renewal: '2027-03-31' });
  });

  it.each([
    ['seats', 'many'],
    ['seats', 1e16],
    ['tier', 'bronze'],
    ['tier', 7],
    ['renewal', '2027-02-30'],
    ['renewal', '31/03/2027'],
    ['domains', ['a', 'a']],
    ['domains', 'a'],
    ['met_at', '2027-01-02 10:00'],
  ])('refuses fields[%s] = %j with 400 naming it, and writes nothing', async (key, value) => {
    const contact = email();
    const refused = await rest('POST', '/v1/leads', { company: 'Refused', contact_email: contact, fields: { [key]: value } });
    expect([refused.status, refused.body.error.code, refused.body.error.param]).toEqual([400, 'parameter_invalid', `fields[${key}]`]);
    expect((await rest('GET', `/v1/leads?q=${encodeURIComponent(contact)}`)).body.data).toEqual([]);
  });

  it('refuses an undefined key as parameter_unknown, on GraphQL too', async () => {
    const refused = await rest('POST', '/v1/leads', { company: 'X', contact_email: email(), fields: { nope: 1 } });
    expect([refused.status, refused.body.error.code, refused.body.error.param]).toEqual([400, 'parameter_unknown', 'fields[nope]']);
    const graphql = await app.graphql(
      `mutation { createLead(input: { company: "X", contactEmail: "${email()}", fields: { nope: 1 } }) { id } }`,
      {},
      owner.testKey,
    );
    expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_unknown' });
    // A key of live mode's fields is unknown to test mode.
    const live = await define({ object_type: 'lead', key: 'live_only', label: 'Live only', type: 'boolean' }, owner.liveKey);
    expect(live.key).toBe('live_only');
    const crossMode = await rest('POST', '/v1/leads', { company: 'X', contact_email: email(), fields: { live_only: true } });
    expect([crossMode.status, crossMode.body.error.code]).toEqual([400, 'parameter_unknown']);
  });

  it('options are renamed and archived: stored values keep working, an archived one is not newly set, none is dropped', async () => {
    const holder = await rest('POST', '/v1/leads', { company: 'Silver holder', contact_email: email(), fields: { tier: 'silver' } });
    const renamed = await rest('PUT', `/v1/fields/${tier.id}`, {
      options: [
        { value: 'gold', label: 'Gold (annual)' },
        { value: 'silver', label: 'Silver', archived: true },
        { value: 'bronze', label: 'Bronze' },
      ],
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.options).toEqual([
      { value: 'gold', label: 'Gold (annual)', archived: false },
      { value: 'silver', label: 'Silver', archived: true },
      { value: 'bronze', label: 'Bronze', archived: false },
    ]);
    expect((await rest('GET', `/v1/leads/${holder.body.id}`)).body.fields.tier).toBe('silver');
    // The holder may be saved with it; a new lead may not take it.
    expect((await rest('PUT', `/v1/leads/${holder.body.id}`, { fields: { tier: 'silver' } })).status).toBe(200);
    const archived = await rest('POST', '/v1/leads', { company: 'Y', contact_email: email(), fields: { tier: 'silver' } });
    expect([archived.status, archived.body.error.param]).toEqual([400, 'fields[tier]']);
    expect((await rest('POST', '/v1/leads', { company: 'Z', contact_email: email(), fields: { tier: 'bronze' } })).status).toBe(201);
    const dropped = await rest('PUT', `/v1/fields/${tier.id}`, { options: [{ value: 'gold', label: 'Gold' }] });
    expect([dropped.status, dropped.body.error.param]).toEqual([400, 'options']);
  });

  it('required holds on create and cannot be cleared; made required later, older records keep working', async () => {
    const region = await define({ object_type: 'deal', key: 'region', label: 'Region', type: 'text', required: true });
    const missing = await rest('POST', '/v1/deals', { name: 'No region', value: 10 });
    expect([missing.status, missing.body.error.code, missing.body.error.param]).toEqual([400, 'parameter_missing', 'fields[region]']);
    const deal = await rest('POST', '/v1/deals', { name: 'In EMEA', value: 10, fields: { region: 'EMEA' } });
    expect(deal.status).toBe(201);
    const cleared = await rest('PUT', `/v1/deals/${deal.body.id}`, { fields: { region: null } });
    expect([cleared.status, cleared.body.error.param]).toEqual([400, 'fields[region]']);
    // Other changes to the deal do not need the field resent.
    expect((await rest('PUT', `/v1/deals/${deal.body.id}`, { name: 'Still in EMEA' })).status).toBe(200);
    expect((await rest('PUT', `/v1/fields/${region.id}`, { required: false })).body.required).toBe(false);
  });

  it('unique is held by the database: 409 naming the field, also for concurrent creates, per mode', async () => {
    await define({ object_type: 'lead', key: 'vat_number', label: 'VAT number', type: 'text', unique: true });
    const first = await rest('POST', '/v1/leads', { company: 'A', contact_email: email(), fields: { vat_number: 'IE123' } });
    expect(first.status).toBe(201);
    const second = await rest('POST', '/v1/leads', { company: 'B', contact_email: email(), fields: { vat_number: 'IE123' } });
    expect([second.status, second.body.error.code, second.body.error.param]).toEqual([409, 'resource_conflict', 'fields[vat_number]']);
    const moved = await rest('PUT', `/v1/leads/${first.body.id}`, { fields: { vat_number: 'IE124' } });
    expect(moved.status).toBe(200);
    // Several at once with one value: exactly one is created.
    const racers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => rest('POST', '/v1/leads', { company: `Racer ${i}`, contact_email: email(), fields: { vat_number: 'RACE-1' } })),
    );
    expect(racers.map((racer) => racer.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    // Another account may hold the same value.
    const other = await app.createAccount();
    await define({ object_type: 'lead', key: 'vat_number', label: 'VAT', type: 'text', unique: true }, other.testKey);
    expect((await rest('POST', '/v1/leads', { company: 'Other', contact_email: email(), fields: { vat_number: 'RACE-1' } }, other.testKey)).status).toBe(201);
  });

  it("deleting a field removes its values from the mode's records, and the key becomes free", async () => {
    const score = await define({ object_type: 'deal', key: 'health', label: 'Health', type: 'number' });
    const deal = await rest('POST', '/v1/deals', { name: 'Healthy', value: 5, fields: { health: 9, region: 'APAC' } });
    const deleted = await rest('DELETE', `/v1/fields/${score.id}`);
    expect(deleted.body).toEqual({ id: score.id, object: 'field', deleted: true });
    expect((await rest('GET', `/v1/deals/${deal.body.id}`)).body.fields).toEqual({ region: 'APAC' });
    expect((await rest('GET', `/v1/fields/${score.id}`)).status).toBe(404);
    await define({ object_type: 'deal', key: 'health', label: 'Health again', type: 'text' });
  });
});

describe('lists filtered on custom fields', () => {
  let account: TestAccount;
  const ids: Record<string, string> = {};
  const as = (method: string, path: string, body?: unknown) => app.request(method, path, { key: account.testKey, body });
  const listed = async (query: string) => {
    const answer = await as('GET', `/v1/leads?limit=100&${query}`);
    expect([query, answer.status]).toEqual([query, 200]);
    return (answer.body.data as Array<{ company: string }>).map((lead) => lead.company).sort();
  };

  beforeAll(async () => {
    account = await app.createAccount();
    const define = (body: Record<string, unknown>) => as('POST', '/v1/fields', body);
    await define({ object_type: 'lead', key: 'seats', label: 'Seats', type: 'number' });
    await define({
      object_type: 'lead',
      key: 'tier',
      label: 'Tier',
      type: 'select',
      options: ['gold', 'silver', 'bronze'].map((value) => ({ value, label: value })),
    });
    await define({ object_type: 'lead', key: 'renewal', label: 'Renews', type: 'boolean' });
    await define({ object_type: 'lead', key: 'ends', label: 'Ends', type: 'date' });
    await define({ object_type: 'lead', key: 'tags', label: 'Tags', type: 'multi_select', options: ['a', 'b', 'c'].map((value) => ({ value, label: value })) });
    await define({ object_type: 'lead', key: 'notes', label: 'Notes', type: 'long_text' });
    const rows: Array<[string, Record<string, unknown>]> = [
      ['Small', { seats: 10, tier: 'bronze', renewal: false, ends: '2027-01-31', tags: ['a'] }],
      ['Medium', { seats: 100, tier: 'silver', renewal: true, ends: '2027-06-30', tags: ['b', 'c'] }],
      ['Large', { seats: 1000, tier: 'gold', renewal: true, ends: '2028-01-01', tags: ['c'] }],
      ['Unset', {}],
    ];
    for (const [company, fields] of rows) ids[company] = (await as('POST', '/v1/leads', { company, contact_email: email(), fields })).body.id;
  });

  it('filters by range, by any of a list, by boolean and by date, as REST brackets', async () => {
    expect(await listed('fields[seats][gte]=100')).toEqual(['Large', 'Medium']);
    expect(await listed('fields[seats][gt]=10&fields[seats][lt]=1000')).toEqual(['Medium']);
    expect(await listed('fields[tier]=gold,silver')).toEqual(['Large', 'Medium']);
    expect(await listed('fields[renewal]=true')).toEqual(['Large', 'Medium']);
    expect(await listed('fields[renewal]=false')).toEqual(['Small']);
    expect(await listed('fields[ends][lt]=2027-07-01')).toEqual(['Medium', 'Small']);
    expect(await listed('fields[tags]=a,b')).toEqual(['Medium', 'Small']);
    expect(await listed('fields[tier]=gold&fields[seats][lte]=500')).toEqual([]);
  });

  it('filters the same way in GraphQL', async () => {
    const answer = await app.graphql(
      'query { leads(filter: { limit: 100, fields: { seats: { gte: 100 }, tier: ["gold", "silver"] } }) { data { company } } }',
      {},
      account.testKey,
    );
    expect(answer.body.data.leads.data.map((lead: { company: string }) => lead.company).sort()).toEqual(['Large', 'Medium']);
  });

  it.each([
    ['fields[nope]=1', 'parameter_unknown', 'fields[nope]'],
    ['fields[seats][gte]=many', 'parameter_invalid', 'fields[seats]'],
    ['fields[seats][between]=1', 'parameter_invalid', 'fields[seats]'],
    ['fields[tier][gte]=gold', 'parameter_invalid', 'fields[tier]'],
    ['fields[renewal]=maybe', 'parameter_invalid', 'fields[renewal]'],
    ['fields[ends][gte]=tomorrow', 'parameter_invalid', 'fields[ends]'],
    ['fields[notes]=x', 'parameter_invalid', 'fields[notes]'],
    ['fields=1&fields[seats]=1', 'parameter_invalid', 'fields[seats]'],
  ])('refuses %s with 400', async (query, code, param) => {
    const answer = await as('GET', `/v1/leads?${query}`);
    expect([answer.status, answer.body.error.code, answer.body.error.param]).toEqual([400, code, param]);
  });
});

describe("the account's own OpenAPI document", () => {
  let account: TestAccount;

  beforeAll(async () => {
    account = await app.createAccount();
    const define = (body: Record<string, unknown>, key = account.testKey) => app.request('POST', '/v1/fields', { key, body });
    await define({ object_type: 'lead', key: 'seats', label: 'Seats', type: 'number', required: true });
    await define({
      object_type: 'lead',
      key: 'tier',
      label: 'Tier',
      type: 'select',
      options: [
        { value: 'gold', label: 'Gold' },
        { value: 'old', label: 'Old', archived: true },
      ],
    });
    await define({ object_type: 'deal', key: 'region', label: 'Region', type: 'text' });
    await define({ object_type: 'deal', key: 'live_region', label: 'Live region', type: 'text' }, account.liveKey);
  });

  const documentWith = async (key?: string) => {
    const response = await fetch(`${app.baseUrl}/v1/openapi.json`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    return { status: response.status, cacheControl: response.headers.get('cache-control'), body: (await response.json()) as Json };
  };

  it("types the mode's fields on leads and deals: objects, create and update bodies, list filters", async () => {
    const { status, cacheControl, body } = await documentWith(account.testKey);
    expect([status, cacheControl]).toEqual([200, 'private, no-store']);
    const schemas = body.components.schemas;
    expect(schemas.Lead.properties.fields).toMatchObject({
      additionalProperties: false,
      properties: { seats: { type: 'number', title: 'Seats' }, tier: { type: 'string', enum: ['gold', 'old'] } },
    });
    // A new record may not take an archived option; a required field is required on create only.
    expect(schemas.LeadCreateInput.properties.fields).toMatchObject({
      required: ['seats'],
      properties: { tier: { anyOf: [{ enum: ['gold'] }, { type: 'null' }] } },
    });
    expect(schemas.LeadUpdateInput.properties.fields.required).toBeUndefined();
    expect(Object.keys(schemas.Deal.properties.fields.properties)).toEqual(['region']);
    const filter = body.paths['/v1/leads'].get.parameters.find((parameter: { name: string }) => parameter.name === 'fields');
    expect(filter).toMatchObject({ style: 'deepObject', schema: { additionalProperties: false, properties: { seats: { anyOf: expect.any(Array) } } } });
  });

  it('live mode has its own; without a key the document stays generic; a bad key is 401', async () => {
    const live = await documentWith(account.liveKey);
    expect(Object.keys(live.body.components.schemas.Deal.properties.fields.properties)).toEqual(['live_region']);
    expect(live.body.components.schemas.Lead.properties.fields.properties).toEqual({});
    const generic = await documentWith();
    expect([generic.status, generic.cacheControl]).toEqual([200, 'public, max-age=300']);
    expect(generic.body.components.schemas.Lead.properties.fields).toMatchObject({ additionalProperties: true });
    expect(generic.body.components.schemas.Lead.properties.fields.properties).toBeUndefined();
    const bad = await documentWith('sk_test_not_a_key_at_all_00000000');
    expect([bad.status, bad.body.error.code]).toEqual([401, 'api_key_invalid']);
  });
});

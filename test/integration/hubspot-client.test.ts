import { randomBytes } from 'node:crypto';
import {
  CrmAuthRefused,
  CrmClient,
  CrmClientOptions,
  CrmDealFields,
  CrmLeadFields,
  CrmUnavailable,
  OutboundLead,
} from '../../src/modules/integrations/providers/crm-client';
import type { ProviderSettings } from '../../src/modules/integrations/providers/provider-settings';
import { createHubSpotClient } from '../../src/modules/integrations/providers/hubspot-client';
import { FakeHubSpot } from '../helpers/fakes';
import { documentsPresent } from '../helpers/fakes/openapi-conformance';
import { waitFor } from '../helpers/wait';
import { providerSettings } from '../helpers/provider-settings';

/**
 * The HubSpot CrmClient against the loopback fake HubSpot (test/helpers/fakes/fake-hubspot.ts,
 * played from HubSpot's OpenAPI documents) over real HTTP: what it writes is read back from the
 * fake's records, and its waits are proven by the fake's request log, not by the clock.
 */

const settingsFor = (fake: FakeHubSpot, timeoutMs = 5_000): ProviderSettings => providerSettings({ hubspotApiUrl: fake.url }, timeoutMs);

const leadFields = (n: number, overrides: Partial<CrmLeadFields> = {}): CrmLeadFields => ({
  company: `Company ${n % 25}`,
  contactEmail: `person${n}@example.com`,
  contactName: `Ada Lovelace${n}`,
  industry: 'Software',
  employees: 40 + (n % 25),
  website: `https://www.company${n % 25}.example.com/about`,
  country: 'GB',
  source: 'web',
  ...overrides,
});
const lead = (n: number, overrides: Partial<CrmLeadFields> = {}): OutboundLead => ({ id: `lead_${n}`, fields: leadFields(n, overrides), external: {} });
const dealFields = (overrides: Partial<CrmDealFields> = {}): CrmDealFields => ({
  name: 'Acme renewal',
  amount: 12500.5,
  currency: 'EUR',
  stage: 'qualifiedtobuy',
  closeDate: '2025-03-31',
  owner: null,
  ...overrides,
});

describe('the HubSpot CrmClient', () => {
  let fake: FakeHubSpot;
  let token: string;
  // Cursors exactly at the last record (no settling overlap), so a test sees each change once; the overlap has its own test.
  const client = (options: CrmClientOptions = {}, timeoutMs?: number): CrmClient =>
    createHubSpotClient({ access_token: token }, settingsFor(fake, timeoutMs), { changesSettleMs: 0, ...options });
  const posts = (path: string) => fake.seen(path).filter((request) => request.method === 'POST');

  beforeEach(async () => {
    fake = await new FakeHubSpot().start();
    // A new token per test: the client's pacing is per app token, like HubSpot's limits.
    token = `pat-na1-${randomBytes(12).toString('hex')}`;
    fake.accept(token);
  });
  afterEach(async () => {
    await fake.close();
  });

  const propertyCalls = () =>
    fake.requests.filter((request) => request.path.startsWith('/crm/v3/properties/')).map((request) => `${request.method} ${request.path}`);

  it('open() makes the unique sales_pipeline_id property on contacts, companies and deals; later clients of the account make no property call', async () => {
    await client().open();
    expect(propertyCalls()).toEqual(
      ['contacts', 'companies', 'deals'].flatMap((type) => [`GET /crm/v3/properties/${type}/sales_pipeline_id`, `POST /crm/v3/properties/${type}`]),
    );
    const created = fake.requests.find((request) => request.method === 'POST' && request.path === '/crm/v3/properties/contacts')!;
    expect(JSON.parse(created.body)).toMatchObject({
      name: 'sales_pipeline_id',
      label: 'Sales Pipeline ID',
      groupName: 'contactinformation',
      type: 'string',
      fieldType: 'text',
      hasUniqueValue: true,
    });
    // A sync run makes a new client: the account's properties are known in this process.
    const before = fake.requests.length;
    await client().open();
    expect(fake.requests).toHaveLength(before);

    // Another token (a reconnect) is checked afresh: the properties exist, three reads and no write.
    const other = `pat-na1-${randomBytes(12).toString('hex')}`;
    fake.accept(other);
    await createHubSpotClient({ access_token: other }, settingsFor(fake)).open();
    expect(propertyCalls().slice(6)).toEqual(['contacts', 'companies', 'deals'].map((type) => `GET /crm/v3/properties/${type}/sales_pipeline_id`));
  });

  it('refuses to sync when sales_pipeline_id was made by hand without unique values, and says what to do', async () => {
    fake.userCreateProperty('deals', { name: 'sales_pipeline_id', hasUniqueValue: false });
    await expect(client().open()).rejects.toThrow(/deals property sales_pipeline_id exists but does not require unique values; delete it in HubSpot/);
  });

  it('sets sales_pipeline_id up again when HubSpot says it is gone (deleted there), and writes what it was writing', async () => {
    const hubspot = client();
    await hubspot.open();
    const [first] = await hubspot.upsertLeads([lead(1)]);
    fake.userDeleteProperty('contacts', 'sales_pipeline_id');
    const setUp = propertyCalls().length;

    const outcomes = await hubspot.upsertLeads([{ ...lead(1), external: first.external! }, lead(2)]);
    expect(outcomes.map((outcome) => outcome.error)).toEqual([undefined, undefined]);
    expect(outcomes[0].external?.contact).toBe(first.external!.contact);
    expect(propertyCalls().slice(setUp)).toEqual([
      'GET /crm/v3/properties/contacts/sales_pipeline_id',
      'POST /crm/v3/properties/contacts',
      'GET /crm/v3/properties/companies/sales_pipeline_id',
      'GET /crm/v3/properties/deals/sales_pipeline_id',
    ]);
    expect(fake.find('contacts', 'sales_pipeline_id', 'lead_1')!.id).toBe(first.external!.contact);
    expect(fake.find('contacts', 'sales_pipeline_id', 'lead_2')!.id).toBe(outcomes[1].external!.contact);
    // HubSpot's refusal was what the document describes; nothing our client sent was refused by it.
    expect(fake.conformance.violations).toEqual([]);
  });

  it('upserts leads as contacts and shared companies, associated; a second upsert updates the same records', async () => {
    const hubspot = client();
    await hubspot.open();
    const leads = [lead(1, { company: 'Acme Ltd' }), lead(2, { company: '  acme   LTD ' }), lead(3, { company: 'Globex', website: null, employees: null })];
    const first = await hubspot.upsertLeads(leads);
    expect(first.every((outcome) => outcome.error === undefined)).toBe(true);
    expect(fake.objects('contacts')).toHaveLength(3);
    expect(fake.objects('companies')).toHaveLength(2);
    const ada = fake.find('contacts', 'sales_pipeline_id', 'lead_1')!;
    expect(ada.properties).toMatchObject({
      email: 'person1@example.com',
      firstname: 'Ada',
      lastname: 'Lovelace1',
      company: 'Acme Ltd',
      industry: 'Software',
      country: 'GB',
    });
    const acme = fake.find('companies', 'sales_pipeline_id', 'company:acme ltd')!;
    expect(acme.properties).toMatchObject({ name: 'Acme Ltd', domain: 'company1.example.com', numberofemployees: '41' });
    expect(first[0]).toEqual({ id: 'lead_1', external: { contact: ada.id, company: acme.id } });
    expect(first[1].external?.company).toBe(acme.id);
    expect(fake.associations('contacts', ada.id, 'companies')).toEqual([acme.id]);
    expect(fake.associations('companies', acme.id, 'contacts').sort()).toEqual([ada.id, first[1].external!.contact].sort());

    const again = await hubspot.upsertLeads([lead(1, { company: 'Acme Ltd', contactName: 'Ada King', country: null }), ...leads.slice(1)]);
    expect(again.map((outcome) => outcome.external)).toEqual(first.map((outcome) => outcome.external));
    expect(fake.allObjects('contacts')).toHaveLength(3);
    expect(fake.allObjects('companies')).toHaveLength(2);
    expect(fake.find('contacts', 'sales_pipeline_id', 'lead_1')!.properties).toMatchObject({ firstname: 'Ada', lastname: 'King', country: null });
  });

  it('counts every upserted record as written when the results carry no sales_pipeline_id and come in their own order', async () => {
    const hubspot = client();
    await hubspot.open();
    fake.userCreate('contacts', { email: 'taken@example.com' });
    const leads = [lead(1), lead(2), lead(3, { contactEmail: 'taken@example.com' }), lead(4), lead(5)];
    const outcomes = await hubspot.upsertLeads(leads);
    for (const n of [1, 2, 4, 5]) {
      expect(outcomes[n - 1]).toEqual({
        id: `lead_${n}`,
        external: { contact: fake.find('contacts', 'sales_pipeline_id', `lead_${n}`)!.id, company: expect.any(String) },
      });
    }
    expect(outcomes[2]).toEqual({ id: 'lead_3', error: expect.stringMatching(/^contact: Contact already exists/) });
    expect(posts('/crm/v3/objects/contacts/batch/upsert')).toHaveLength(1);
    // The four written were read back by our id, in one call, and so were their four companies.
    const reads = (type: string) => posts(`/crm/v3/objects/${type}/batch/read`).map((request) => JSON.parse(request.body) as unknown);
    expect(reads('contacts')).toEqual([
      {
        idProperty: 'sales_pipeline_id',
        inputs: ['lead_1', 'lead_2', 'lead_4', 'lead_5'].map((id) => ({ id })),
        properties: ['sales_pipeline_id'],
        propertiesWithHistory: [],
      },
    ]);
    expect(reads('companies')).toHaveLength(1);
    expect(fake.conformance.violations).toEqual([]);
  });

  it('pairs the one record left with the one result left, without reading it back', async () => {
    const hubspot = client();
    await hubspot.open();
    const [outcome] = await hubspot.upsertLeads([lead(1)]);
    expect(outcome.external).toEqual({
      contact: fake.find('contacts', 'sales_pipeline_id', 'lead_1')!.id,
      company: fake.find('companies', 'sales_pipeline_id', 'company:company 1')!.id,
    });
    expect(fake.requests.filter((request) => request.path.endsWith('/batch/read'))).toEqual([]);
  });

  it('reads nothing back when the results do carry sales_pipeline_id', async () => {
    fake.upsertEchoesProperties = true;
    const hubspot = client();
    await hubspot.open();
    const outcomes = await hubspot.upsertLeads([lead(1), lead(2), lead(3)]);
    expect(outcomes.map((outcome) => outcome.external?.contact)).toEqual(
      ['lead_1', 'lead_2', 'lead_3'].map((id) => fake.find('contacts', 'sales_pipeline_id', id)!.id),
    );
    expect(fake.requests.filter((request) => request.path.endsWith('/batch/read'))).toEqual([]);
  });

  // Needs HubSpot's documents on this machine (scripts/refresh-provider-specs.ts); without them the fake checks nothing.
  (documentsPresent('hubspot') ? it : it.skip)(
    'is answered as HubSpot answers what its document refuses: a search with object sorts and no after is 400 VALIDATION_ERROR, and recorded',
    async () => {
      const search = await fetch(`${fake.url}/crm/v3/objects/contacts/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ filterGroups: [], sorts: [{ propertyName: 'lastmodifieddate', direction: 'ASCENDING' }], properties: ['email'], limit: 100 }),
      });
      expect(search.status).toBe(400);
      const body = (await search.json()) as { status: string; category: string; correlationId: string; errors: Array<{ message: string }> };
      expect(body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR', correlationId: expect.any(String) });
      expect(body.errors.map((error) => error.message)).toEqual(
        expect.arrayContaining([expect.stringMatching(/after/), expect.stringMatching(/^\/requestBody\/sorts\/0 must be string/)]),
      );
      expect(fake.conformance.violations).toEqual([
        expect.objectContaining({ side: 'request', path: '/crm/v3/objects/contacts/search', operation: 'POST /crm/v3/objects/{objectType}/search' }),
      ]);

      // What our client sends is what the document describes.
      await client().changedLeads(null);
      expect(fake.conformance.violations).toHaveLength(1);
      expect(fake.conformance.calls.at(-1)).toEqual({
        method: 'POST',
        path: '/crm/v3/objects/contacts/search',
        operation: 'POST /crm/v3/objects/{objectType}/search',
        status: 200,
      });
      // Asserted: not one for `npm run test:providers` to report.
      fake.conformance.violations.splice(0);
    },
  );

  it("gives HubSpot's reason for the leads it refuses and writes the rest", async () => {
    const hubspot = client();
    await hubspot.open();
    fake.userCreate('contacts', { email: 'taken@example.com', firstname: 'Someone' });
    const outcomes = await hubspot.upsertLeads([lead(1), lead(2, { contactEmail: 'not-an-email' }), lead(3, { contactEmail: 'taken@example.com' })]);
    expect(outcomes[0].external?.contact).toBeDefined();
    expect(outcomes[1]).toEqual({ id: 'lead_2', error: expect.stringMatching(/^contact: .*not-an-email is invalid/) });
    expect(outcomes[2]).toEqual({ id: 'lead_3', error: expect.stringMatching(/^contact: Contact already exists/) });
    expect(fake.objects('contacts')).toHaveLength(2);
  });

  it('upserts deals with stage, amount and close date, associated with their lead’s contact and company', async () => {
    const hubspot = client();
    await hubspot.open();
    const [pushed] = await hubspot.upsertLeads([lead(1)]);
    const outcomes = await hubspot.upsertDeals([
      { id: 'deal_1', fields: dealFields(), external: {}, lead: { id: 'lead_1', external: pushed.external! } },
      { id: 'deal_2', fields: dealFields({ name: 'No lead', closeDate: null }), external: {}, lead: null },
      { id: 'deal_3', fields: dealFields({ stage: 'not-a-stage' }), external: {}, lead: null },
    ]);
    const deal = fake.find('deals', 'sales_pipeline_id', 'deal_1')!;
    expect(outcomes[0]).toEqual({ id: 'deal_1', external: { deal: deal.id } });
    expect(deal.properties).toMatchObject({
      dealname: 'Acme renewal',
      amount: '12500.5',
      deal_currency_code: 'EUR',
      dealstage: 'qualifiedtobuy',
      pipeline: 'default',
      closedate: '2025-03-31T00:00:00.000Z',
    });
    expect(fake.associations('deals', deal.id, 'contacts')).toEqual([pushed.external!.contact]);
    expect(fake.associations('deals', deal.id, 'companies')).toEqual([pushed.external!.company]);
    expect(outcomes[1].external?.deal).toBe(fake.find('deals', 'sales_pipeline_id', 'deal_2')!.id);
    expect(outcomes[2]).toEqual({ id: 'deal_3', error: expect.stringMatching(/not-a-stage was not one of the allowed options/) });

    const again = await hubspot.upsertDeals([{ id: 'deal_1', fields: dealFields({ stage: 'closedwon' }), external: { deal: deal.id }, lead: null }]);
    expect(again).toEqual([{ id: 'deal_1', external: { deal: deal.id } }]);
    expect(fake.allObjects('deals')).toHaveLength(2);
    expect(fake.find('deals', 'sales_pipeline_id', 'deal_1')!.properties.dealstage).toBe('closedwon');
  });

  it('writes a contact and a deal made in HubSpot by their HubSpot ids (batch update): the same records, now with our id, and no second one', async () => {
    const hubspot = client();
    await hubspot.open();
    const madeContact = fake.userCreate('contacts', { email: 'person1@example.com', firstname: 'Grace' });
    const madeDeal = fake.userCreate('deals', { dealname: 'Made in HubSpot', dealstage: 'appointmentscheduled', pipeline: 'default' });
    const [contactBefore, dealBefore] = [madeContact.updatedAt, madeDeal.updatedAt];

    const [imported, fresh] = await hubspot.upsertLeads([{ ...lead(1), external: { contact: madeContact.id } }, lead(2)]);
    expect(imported).toEqual({ id: 'lead_1', external: { contact: madeContact.id, company: expect.any(String) } });
    expect(fake.allObjects('contacts')).toHaveLength(2);
    const contact = fake.find('contacts', 'sales_pipeline_id', 'lead_1')!;
    expect(contact.id).toBe(madeContact.id);
    expect(contact.properties).toMatchObject({ email: 'person1@example.com', firstname: 'Ada', lastname: 'Lovelace1' });
    expect(Date.parse(contact.updatedAt)).toBeGreaterThan(Date.parse(contactBefore));
    expect(fake.associations('contacts', contact.id, 'companies')).toEqual([imported.external!.company]);
    const updates = posts('/crm/v3/objects/contacts/batch/update');
    expect(updates).toHaveLength(1);
    expect(JSON.parse(updates[0].body)).toEqual({
      inputs: [{ id: madeContact.id, properties: expect.objectContaining({ sales_pipeline_id: 'lead_1', email: 'person1@example.com' }) }],
    });
    // Only the lead without a HubSpot id went through the upsert by our id.
    const upserts = posts('/crm/v3/objects/contacts/batch/upsert');
    expect(upserts.map((request) => (JSON.parse(request.body) as { inputs: Array<{ id: string }> }).inputs.map((input) => input.id))).toEqual([['lead_2']]);
    expect(fresh.external?.contact).toBe(fake.find('contacts', 'sales_pipeline_id', 'lead_2')!.id);

    const deal = { id: 'deal_1', fields: dealFields(), external: { deal: madeDeal.id }, lead: { id: 'lead_1', external: imported.external! } };
    expect(await hubspot.upsertDeals([deal])).toEqual([{ id: 'deal_1', external: { deal: madeDeal.id } }]);
    expect(fake.allObjects('deals').map((record) => record.id)).toEqual([madeDeal.id]);
    expect(fake.find('deals', 'sales_pipeline_id', 'deal_1')!.properties).toMatchObject({
      dealname: 'Acme renewal',
      dealstage: 'qualifiedtobuy',
      amount: '12500.5',
    });
    expect(Date.parse(fake.find('deals', 'sales_pipeline_id', 'deal_1')!.updatedAt)).toBeGreaterThan(Date.parse(dealBefore));
    expect(fake.associations('deals', madeDeal.id, 'contacts')).toEqual([madeContact.id]);

    // Pushed again (a repeated push, or a later change): still the same records.
    expect(await hubspot.upsertDeals([{ ...deal, fields: dealFields({ stage: 'closedwon' }) }])).toEqual([{ id: 'deal_1', external: { deal: madeDeal.id } }]);
    expect(fake.allObjects('deals')).toHaveLength(1);
    expect(fake.allObjects('deals')[0].properties.dealstage).toBe('closedwon');
    expect(posts('/crm/v3/objects/deals/batch/update')).toHaveLength(2);
    expect(posts('/crm/v3/objects/deals/batch/upsert')).toHaveLength(0);
  });

  it('writes again by our id (upsert) a record whose HubSpot id was archived or deleted there meanwhile', async () => {
    const hubspot = client();
    await hubspot.open();
    const archived = fake.userCreate('contacts', { email: 'person1@example.com', firstname: 'Gone' });
    fake.userArchive('contacts', archived.id);
    const kept = fake.userCreate('contacts', { email: 'person2@example.com', firstname: 'Kept' });

    const outcomes = await hubspot.upsertLeads([
      { ...lead(1), external: { contact: archived.id } },
      { ...lead(2), external: { contact: kept.id } },
    ]);
    const rewritten = fake.find('contacts', 'sales_pipeline_id', 'lead_1')!;
    expect(rewritten.id).not.toBe(archived.id);
    expect(rewritten.archived).toBe(false);
    expect(outcomes).toEqual([
      { id: 'lead_1', external: { contact: rewritten.id, company: expect.any(String) } },
      { id: 'lead_2', external: { contact: kept.id, company: expect.any(String) } },
    ]);
    expect(
      fake
        .objects('contacts')
        .map((contact) => contact.id)
        .sort(),
    ).toEqual([kept.id, rewritten.id].sort());
    expect(posts('/crm/v3/objects/contacts/batch/update')).toHaveLength(1);
    const upserts = posts('/crm/v3/objects/contacts/batch/upsert');
    expect(upserts.map((request) => (JSON.parse(request.body) as { inputs: Array<{ id: string }> }).inputs.map((input) => input.id))).toEqual([['lead_1']]);

    const [deal] = await hubspot.upsertDeals([{ id: 'deal_1', fields: dealFields(), external: { deal: '999999' }, lead: null }]);
    expect(deal).toEqual({ id: 'deal_1', external: { deal: fake.find('deals', 'sales_pipeline_id', 'deal_1')!.id } });
    expect(deal.external!.deal).not.toBe('999999');
    expect(posts('/crm/v3/objects/deals/batch/update')).toHaveLength(1);
    expect(posts('/crm/v3/objects/deals/batch/upsert')).toHaveLength(1);
  });

  it("gives HubSpot's reason when it refuses an update by id (our id already on another record, an invalid value) and writes the rest", async () => {
    const hubspot = client();
    await hubspot.open();
    await hubspot.upsertLeads([lead(1)]);
    const duplicate = fake.userCreate('contacts', { email: 'someone.else@example.com' });
    const invalid = fake.userCreate('contacts', { email: 'person2@example.com' });
    const other = fake.userCreate('contacts', { email: 'person3@example.com' });
    const outcomes = await hubspot.upsertLeads([
      { ...lead(1, { contactEmail: 'someone.else@example.com' }), external: { contact: duplicate.id } },
      { ...lead(2, { contactEmail: 'not-an-email' }), external: { contact: invalid.id } },
      { ...lead(3), external: { contact: other.id } },
    ]);
    expect(outcomes[0]).toEqual({ id: 'lead_1', error: expect.stringMatching(/^contact: \d+ already has that value for sales_pipeline_id=lead_1/) });
    expect(outcomes[1]).toEqual({ id: 'lead_2', error: expect.stringMatching(/^contact: .*not-an-email is invalid/) });
    expect(outcomes[2].external?.contact).toBe(other.id);
    // Refused, not missing: nothing was written again by our id.
    expect(posts('/crm/v3/objects/contacts/batch/upsert')).toHaveLength(1);
    expect(fake.allObjects('contacts')).toHaveLength(4);
    expect(invalid.properties.sales_pipeline_id).toBeUndefined();
  });

  it('archives a lead’s contact (not its shared company) and a deal; gone already is success', async () => {
    const hubspot = client();
    await hubspot.open();
    const [one, two] = await hubspot.upsertLeads([lead(1, { company: 'Acme' }), lead(2, { company: 'Acme' })]);
    const [deal] = await hubspot.upsertDeals([{ id: 'deal_1', fields: dealFields(), external: {}, lead: null }]);
    const removals = [
      { id: 'lead_1', external: one.external! },
      { id: 'lead_never_pushed', external: {} },
    ];
    expect(await hubspot.archiveLeads(removals)).toEqual([{ id: 'lead_1' }, { id: 'lead_never_pushed' }]);
    expect(fake.objects('contacts').map((contact) => contact.id)).toEqual([two.external!.contact]);
    expect(fake.objects('companies').map((company) => company.id)).toEqual([one.external!.company]);
    expect(fake.find('contacts', 'sales_pipeline_id', 'lead_1')!.archived).toBe(true);
    expect(await hubspot.archiveLeads(removals)).toEqual([{ id: 'lead_1' }, { id: 'lead_never_pushed' }]);
    expect(await hubspot.archiveDeals([{ id: 'deal_1', external: deal.external! }])).toEqual([{ id: 'deal_1' }]);
    expect(fake.objects('deals')).toEqual([]);
  });

  it('keeps the last cursor of a changes query CHANGES_SETTLE_MS behind now: a recent change is read again, an old one is not', async () => {
    const hubspot = client({ changesSettleMs: 30_000 });
    await hubspot.open();
    fake.freezeClock(new Date(Date.now() - 120_000));
    const old = fake.userCreate('contacts', { email: 'old@hubspot.example', company: 'Old Co' });
    fake.freezeClock(null);
    const recent = fake.userCreate('contacts', { email: 'recent@hubspot.example', company: 'Recent Co' });
    const first = await hubspot.changedLeads(null);
    expect(first.records.map((record) => record.external.contact)).toEqual([old.id, recent.id]);
    // The index may not have caught up with the last half-minute: it is asked about again.
    const again = await hubspot.changedLeads(first.cursor);
    expect(again.records.map((record) => record.external.contact)).toEqual([recent.id]);
  });

  it('reads changed contacts page by page, then only what was edited after the cursor', async () => {
    fake.searchLimitPerSecond = 5;
    const hubspot = client();
    await hubspot.open();
    await hubspot.upsertLeads(Array.from({ length: 150 }, (_, i) => lead(i)));
    const userMade = fake.userCreate('contacts', { email: 'made.in@hubspot.example', firstname: 'Made', lastname: 'There', company: 'Initech' });

    const seen = new Map<string, unknown>();
    let cursor: string | null = null;
    let calls = 0;
    for (let more = true; more; calls++) {
      const page = await hubspot.changedLeads(cursor);
      for (const record of page.records) seen.set(record.external.contact, record);
      ({ cursor, more } = page);
    }
    expect(calls).toBeLessThanOrEqual(3);
    expect(seen.size).toBe(151);
    expect(seen.get(userMade.id)).toMatchObject({
      ourId: null,
      fields: { contactEmail: 'made.in@hubspot.example', contactName: 'Made There', company: 'Initech' },
    });
    const ada = fake.find('contacts', 'sales_pipeline_id', 'lead_7')!;
    expect(seen.get(ada.id)).toMatchObject({
      ourId: 'lead_7',
      modifiedAt: new Date(ada.updatedAt),
      fields: { contactEmail: 'person7@example.com', contactName: 'Ada Lovelace7', industry: 'Software', website: 'https://www.company7.example.com/about' },
    });

    fake.userEdit('contacts', ada.id, { firstname: 'Augusta', country: 'FR' });
    const after = await hubspot.changedLeads(cursor);
    // The record at the cursor's own time may come again; nothing older does.
    expect(after.records.map((record) => record.ourId).filter((id) => id !== null)).toEqual(['lead_7']);
    expect(after.records.at(-1)).toMatchObject({ ourId: 'lead_7', fields: { contactName: 'Augusta Lovelace7', country: 'FR' } });
    expect(after.more).toBe(false);
    expect((await hubspot.changedLeads(after.cursor)).records.map((record) => record.ourId)).toEqual(['lead_7']);
  });

  it('pages through many records modified in one millisecond (a bulk import) without losing or looping', async () => {
    fake.searchLimitPerSecond = 5;
    const hubspot = client();
    fake.freezeClock(new Date(Date.now() - 60_000));
    for (let i = 0; i < 250; i++) fake.userCreate('contacts', { email: `import${i}@example.com` });
    fake.freezeClock(null);
    const seen = new Set<string>();
    let cursor: string | null = null;
    let calls = 0;
    for (let more = true; more; calls++) {
      expect(calls).toBeLessThan(10);
      const page = await hubspot.changedLeads(cursor);
      for (const record of page.records) seen.add(record.external.contact);
      ({ cursor, more } = page);
    }
    expect(seen.size).toBe(250);
    // Each search answered the first time: the client kept under 5 searches a second.
    expect(fake.seen('/crm/v3/objects/contacts/search').length).toBeLessThanOrEqual(calls + 1);
  });

  it('reads changed deals with their fields', async () => {
    const hubspot = client();
    await hubspot.open();
    await hubspot.upsertDeals([{ id: 'deal_1', fields: dealFields(), external: {}, lead: null }]);
    const first = await hubspot.changedDeals(null);
    expect(first.records).toEqual([
      {
        external: { deal: fake.find('deals', 'sales_pipeline_id', 'deal_1')!.id },
        ourId: 'deal_1',
        modifiedAt: expect.any(Date),
        fields: { name: 'Acme renewal', amount: 12500.5, currency: 'EUR', stage: 'qualifiedtobuy', closeDate: '2025-03-31' },
      },
    ]);
    const deal = fake.find('deals', 'sales_pipeline_id', 'deal_1')!;
    fake.userEdit('deals', deal.id, { dealstage: 'closedwon', amount: '13000' });
    const next = await hubspot.changedDeals(first.cursor);
    expect(next.records.at(-1)?.fields).toMatchObject({ stage: 'closedwon', amount: 13000 });
  });

  it("refuses with CrmAuthRefused and HubSpot's reason once the token is revoked, never naming the token", async () => {
    fake.revoke(token);
    const error = await client()
      .open()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmAuthRefused);
    expect((error as Error).message).toMatch(/^HubSpot refused the credentials: Authentication credentials not found/);
    expect((error as Error).message).not.toContain(token);
  });

  it('waits out a 429 for its Retry-After and tries again', async () => {
    const hubspot = client();
    await hubspot.open();
    fake.rateLimit(1);
    const pushing = hubspot.upsertLeads([lead(1)]);
    await waitFor('the rate-limited upsert', () => posts('/crm/v3/objects/contacts/batch/upsert').length === 1);
    fake.recover();
    const [outcome] = await pushing;
    expect(outcome.external?.contact).toBeDefined();
    const tries = posts('/crm/v3/objects/contacts/batch/upsert');
    expect(tries).toHaveLength(2);
    expect(tries[1].body).toBe(tries[0].body);
  });

  it('gives up with CrmUnavailable (and when to come back) after 3 retries of 429, or at once when Retry-After is beyond maxWaitMs', async () => {
    fake.rateLimit(60);
    const beyond = await client({ maxWaitMs: 30_000 })
      .open()
      .catch((caught: unknown) => caught);
    expect(beyond).toBeInstanceOf(CrmUnavailable);
    expect((beyond as CrmUnavailable).retryAfterMs).toBe(60_000);
    expect(fake.requests).toHaveLength(1);

    fake.rateLimit(1);
    const persistent = await client()
      .open()
      .catch((caught: unknown) => caught);
    expect(persistent).toBeInstanceOf(CrmUnavailable);
    expect((persistent as CrmUnavailable).retryAfterMs).toBe(1_000);
    expect(fake.requests).toHaveLength(1 + 4);
  });

  it('retries a 5xx twice, then gives up with CrmUnavailable', async () => {
    fake.fail(503);
    const pending = client().open();
    await waitFor('the first failed call', () => fake.requests.length === 1);
    fake.recover();
    await pending;
    expect(fake.seen('/crm/v3/properties/contacts/sales_pipeline_id')).toHaveLength(2);

    fake.fail(502);
    await expect(client().upsertLeads([lead(1)])).rejects.toThrow(/^HubSpot answered 502/);
    expect(posts('/crm/v3/objects/contacts/batch/upsert')).toHaveLength(3);
  });

  it('gives up on a HubSpot that does not answer: CrmUnavailable within the deadline of each try', async () => {
    fake.hang();
    const started = Date.now();
    const error = await client({}, 300)
      .open()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmUnavailable);
    expect((error as Error).message).toMatch(/timed out/);
    expect(fake.requests).toHaveLength(3);
    // Three tries of 300 ms and two short pauses: a bound against a hang, not a speed check.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('paces itself under the ten-secondly limit: 250 leads at 10 requests per 10 seconds, never a 429', async () => {
    fake.limitPer10s = 10;
    const hubspot = client({ hubspotRequestsPer10s: 10 });
    await hubspot.open();
    const outcomes = await hubspot.upsertLeads(Array.from({ length: 250 }, (_, i) => lead(i)));
    expect(outcomes.filter((outcome) => outcome.error !== undefined)).toEqual([]);
    expect(fake.objects('contacts')).toHaveLength(250);
    // Counted (associations are exempt): 3 property reads and 3 creations, then per 100 leads a contact upsert and a
    // company upsert, each read back by our id (the fake's results do not carry it): more than one window's worth.
    const counted = fake.requests.filter((request) => !request.path.startsWith('/crm/v4/'));
    expect(counted).toHaveLength(6 + 3 * 4);
    expect(fake.maxRequestsIn10s()).toBe(10);
    expect(posts('/crm/v3/objects/contacts/batch/upsert')).toHaveLength(3);
  }, 60_000);
});

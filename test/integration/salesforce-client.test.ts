import { randomBytes } from 'node:crypto';
import {
  CrmAuthRefused,
  CrmClient,
  CrmClientOptions,
  CrmLeadFields,
  CrmLimitReached,
  CrmSetupIncomplete,
  CrmUnavailable,
  OutboundDeal,
  OutboundLead,
} from '../../src/modules/integrations/providers/crm-client';
import type { ProviderSettings } from '../../src/modules/integrations/providers/provider-settings';
import { createSalesforceClient } from '../../src/modules/integrations/providers/salesforce-client';
import { providerSettings } from '../helpers/provider-settings';
import { FakeSalesforce } from '../helpers/fakes';
import { waitFor } from '../helpers/wait';

/**
 * The Salesforce client against the loopback Salesforce of test/helpers/fakes (played from the
 * REST API Developer Guide): OAuth refresh-token grant, describe, sObject Collections update,
 * upsert and delete, SOQL changes with their cursor, token expiry, the daily API limit, 429 and hangs. No
 * database: the client only speaks to Salesforce.
 */

const EXTERNAL_ID = 'Sales_Pipeline_Id__c';
const SECRETS: string[] = [];
const secret = (prefix: string) => {
  const value = `${prefix}${randomBytes(12).toString('hex')}`;
  SECRETS.push(value);
  return value;
};

const settings = (fake: FakeSalesforce, timeoutMs = 5_000): ProviderSettings => providerSettings({ salesforceLoginUrl: fake.url }, timeoutMs);

const leadFields = (overrides: Partial<CrmLeadFields> = {}): CrmLeadFields => ({
  company: 'Analytical Engines Ltd',
  contactEmail: 'ada@engines.example',
  contactName: 'Ada King Lovelace',
  industry: 'Technology',
  employees: 12,
  website: 'https://engines.example',
  country: 'United Kingdom',
  source: 'Web',
  ...overrides,
});
const lead = (id: string, overrides: Partial<CrmLeadFields> = {}, external: Record<string, string> = {}): OutboundLead => ({
  id,
  fields: leadFields(overrides),
  external,
});
const deal = (id: string, stage: string, closeDate: string | null): OutboundDeal => ({
  id,
  fields: { name: `Deal ${id}`, amount: 12500.5, currency: 'EUR', stage, closeDate, owner: null },
  external: {},
  lead: null,
});

describe('the Salesforce client', () => {
  let fake: FakeSalesforce;
  let credentials: Record<string, string>;
  const errors: string[] = [];

  // Cursors exactly at the last record (no settling overlap), so a test sees each change once; the overlap has its own test.
  const client = (options?: CrmClientOptions, timeoutMs?: number): CrmClient =>
    createSalesforceClient(credentials, settings(fake, timeoutMs), { changesSettleMs: 0, ...options });
  const opened = async (options?: CrmClientOptions, timeoutMs?: number) => {
    const made = client(options, timeoutMs);
    await made.open();
    return made;
  };
  /** The error a promise rejects with, kept to check that none carries a secret. */
  const failure = async (promise: Promise<unknown>): Promise<Error> => {
    const error = await promise.then(
      () => new Error('expected a rejection'),
      (caught: Error) => caught,
    );
    errors.push(error.message);
    return error;
  };
  const requestsTo = (pattern: RegExp, since = 0) => fake.requests.slice(since).filter((request) => pattern.test(request.path));

  beforeEach(async () => {
    fake = await new FakeSalesforce().start();
    credentials = { client_id: secret('3MVG9-client-'), client_secret: secret('sf-secret-'), refresh_token: secret('5Aep861-refresh-') };
    fake.accept(credentials.client_id, credentials.client_secret, credentials.refresh_token);
  });
  afterEach(async () => {
    await fake.close();
  });

  describe('open', () => {
    it('grants a token with the refresh token, then finds the External ID field on Lead and Opportunity', async () => {
      await opened();
      const grants = fake.seen('/services/oauth2/token');
      expect(grants).toHaveLength(1);
      expect(Object.fromEntries(new URLSearchParams(grants[0].body))).toEqual({ grant_type: 'refresh_token', ...credentials });
      expect(fake.requests.filter((request) => request.path.endsWith('/describe')).map((request) => request.path)).toEqual([
        '/services/data/v62.0/sobjects/Lead/describe',
        '/services/data/v62.0/sobjects/Opportunity/describe',
      ]);
    });

    it("refuses a revoked refresh token with Salesforce's reason and no secret", async () => {
      fake.revoke(credentials.refresh_token);
      const error = await failure(client().open());
      expect(error).toBeInstanceOf(CrmAuthRefused);
      expect(error.message).toBe('Salesforce refused the credentials: invalid_grant: expired access/refresh token');
      const wrongSecret = await failure(createSalesforceClient({ ...credentials, client_secret: secret('wrong-') }, settings(fake)).open());
      expect(wrongSecret).toBeInstanceOf(CrmAuthRefused);
      expect(wrongSecret.message).toMatch(/invalid_client: invalid client credentials/);
    });

    it('says what the Salesforce admin must add when the External ID field is missing', async () => {
      fake.removeExternalIdField('Opportunity');
      const error = await failure(client().open());
      expect(error).toBeInstanceOf(CrmSetupIncomplete);
      expect(error.message).toMatch(/External ID field Sales_Pipeline_Id__c on Opportunity/);
      expect(error.message).toMatch(/Setup → Object Manager → Opportunity → Fields & Relationships → New: data type Text, length 64/);
      expect(error.message).toMatch(/tick "Unique" and "External ID"/);
      expect(error.message).not.toMatch(/Object Manager → Lead/);
    });
  });

  describe('pushing', () => {
    it('creates Leads, then updates the same ones on the next push (no duplicates)', async () => {
      const salesforce = await opened();
      const first = await salesforce.upsertLeads([
        lead('lead_1'),
        lead('lead_2', { contactName: 'Grace', contactEmail: 'grace@navy.example' }),
        lead('lead_3', { contactName: null, contactEmail: 'nameless@x.example' }),
      ]);
      expect(first.map((outcome) => outcome.error)).toEqual([undefined, undefined, undefined]);
      for (const outcome of first) expect(outcome.external?.Lead).toMatch(/^00Q[a-zA-Z0-9]{15}$/);
      expect(fake.find('Lead', EXTERNAL_ID, 'lead_1')).toMatchObject({
        FirstName: 'Ada King',
        LastName: 'Lovelace',
        Email: 'ada@engines.example',
        Company: 'Analytical Engines Ltd',
        Industry: 'Technology',
        NumberOfEmployees: 12,
        Website: 'https://engines.example',
        Country: 'United Kingdom',
        LeadSource: 'Web',
      });
      expect(fake.find('Lead', EXTERNAL_ID, 'lead_2')).toMatchObject({ FirstName: null, LastName: 'Grace' });
      // No name at all: Salesforce requires LastName, so the e-mail's local part stands in.
      expect(fake.find('Lead', EXTERNAL_ID, 'lead_3')).toMatchObject({ FirstName: null, LastName: 'nameless' });

      const upserts = requestsTo(/\/composite\/sobjects\/Lead\/Sales_Pipeline_Id__c$/);
      expect(upserts).toHaveLength(1);
      expect(upserts[0].method).toBe('PATCH');
      const body = JSON.parse(upserts[0].body);
      expect(body.allOrNone).toBe(false);
      expect(body.records[0]).toMatchObject({ attributes: { type: 'Lead' }, [EXTERNAL_ID]: 'lead_1' });

      const second = await salesforce.upsertLeads([lead('lead_1', { company: 'Babbage & Co' }, first[0].external)]);
      expect(second).toEqual([{ id: 'lead_1', external: first[0].external }]);
      expect(fake.records('Lead')).toHaveLength(3);
      expect(fake.find('Lead', EXTERNAL_ID, 'lead_1')).toMatchObject({ Id: first[0].external?.Lead, Company: 'Babbage & Co' });
    });

    it('sends more than 200 leads in batches of 200', async () => {
      const salesforce = await opened();
      expect(salesforce.batchSize).toBe(200);
      const outcomes = await salesforce.upsertLeads(Array.from({ length: 230 }, (_, index) => lead(`lead_${index}`, { contactEmail: `p${index}@x.example` })));
      expect(outcomes.filter((outcome) => outcome.external?.Lead)).toHaveLength(230);
      expect(requestsTo(/\/composite\/sobjects\/Lead\//).map((request) => JSON.parse(request.body).records.length)).toEqual([200, 30]);
    });

    it('reports the records Salesforce refuses, with its status code and message, beside the ones it takes', async () => {
      const salesforce = await opened();
      const outcomes = await salesforce.upsertLeads([lead('lead_ok'), lead('lead_blank', { company: '' })]);
      expect(outcomes[0].external?.Lead).toMatch(/^00Q/);
      expect(outcomes[1]).toEqual({ id: 'lead_blank', error: 'REQUIRED_FIELD_MISSING: Required fields are missing: [Company]' });
      expect(fake.records('Lead').map((record) => record[EXTERNAL_ID])).toEqual(['lead_ok']);
    });

    it('pushes deals as Opportunities with their stage, and a close date 90 days out when the deal has none', async () => {
      const salesforce = await opened();
      const outcomes = await salesforce.upsertDeals([deal('deal_1', 'Prospecting', null), deal('deal_2', 'Closed Won', '2026-12-24')]);
      for (const outcome of outcomes) expect(outcome.external?.Opportunity).toMatch(/^006[a-zA-Z0-9]{15}$/);
      const inNinetyDays = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
      expect(fake.find('Opportunity', EXTERNAL_ID, 'deal_1')).toMatchObject({
        Name: 'Deal deal_1',
        Amount: 12500.5,
        StageName: 'Prospecting',
        CloseDate: inNinetyDays,
      });
      expect(fake.find('Opportunity', EXTERNAL_ID, 'deal_2')).toMatchObject({ StageName: 'Closed Won', CloseDate: '2026-12-24' });
      expect(JSON.parse(requestsTo(/\/composite\/sobjects\/Opportunity\//)[0].body).records[0]).not.toHaveProperty('CurrencyIsoCode');

      // Pushed again without a close date: the one in Salesforce (a user may have set it) stays.
      const pushed = fake.find('Opportunity', EXTERNAL_ID, 'deal_1');
      fake.userEdit('Opportunity', pushed?.Id as string, { CloseDate: '2027-03-01' });
      await salesforce.upsertDeals([{ ...deal('deal_1', 'Qualification', null), external: outcomes[0].external ?? {} }]);
      expect(fake.find('Opportunity', EXTERNAL_ID, 'deal_1')).toMatchObject({ StageName: 'Qualification', CloseDate: '2027-03-01' });

      // Deleted in Salesforce meanwhile: the upsert creates it anew, and then it needs the default close date.
      await salesforce.archiveDeals([{ id: 'deal_1', external: outcomes[0].external ?? {} }]);
      const [recreated] = await salesforce.upsertDeals([{ ...deal('deal_1', 'Qualification', null), external: outcomes[0].external ?? {} }]);
      expect(recreated.error).toBeUndefined();
      expect(recreated.external?.Opportunity).not.toBe(outcomes[0].external?.Opportunity);
      expect(fake.find('Opportunity', EXTERNAL_ID, 'deal_1')).toMatchObject({ Id: recreated.external?.Opportunity, CloseDate: inNinetyDays });
    });

    it('deletes what a deleted lead or deal became; deleted already and never pushed count as done', async () => {
      const salesforce = await opened();
      const [one, two] = await salesforce.upsertLeads([lead('lead_1'), lead('lead_2', { contactEmail: 'b@x.example' })]);
      const removals = [
        { id: 'lead_1', external: one.external ?? {} },
        { id: 'lead_2', external: two.external ?? {} },
        { id: 'lead_never_pushed', external: {} },
      ];
      expect((await salesforce.archiveLeads(removals)).map((outcome) => outcome.error)).toEqual([undefined, undefined, undefined]);
      expect(fake.records('Lead')).toEqual([]);
      const deletes = requestsTo(/^\/services\/data\/v62\.0\/composite\/sobjects\?/);
      expect(deletes).toHaveLength(1);
      expect(deletes[0].method).toBe('DELETE');
      expect(deletes[0].path).toBe(`/services/data/v62.0/composite/sobjects?ids=${one.external?.Lead},${two.external?.Lead}&allOrNone=false`);

      // Again: Salesforce answers ENTITY_IS_DELETED, which is what we wanted.
      expect((await salesforce.archiveLeads(removals.slice(0, 1))).map((outcome) => outcome.error)).toEqual([undefined]);
      const [opportunity] = await salesforce.upsertDeals([deal('deal_1', 'Prospecting', null)]);
      expect(await salesforce.archiveDeals([{ id: 'deal_1', external: opportunity.external ?? {} }])).toEqual([
        { id: 'deal_1', external: opportunity.external },
      ]);
      expect(fake.records('Opportunity')).toEqual([]);
    });
  });

  describe('records a person made in Salesforce', () => {
    const UPDATE_PATH = '/services/data/v62.0/composite/sobjects';
    const updates = () => fake.seen(UPDATE_PATH).filter((request) => request.method === 'PATCH');
    const upserts = (object: string) => requestsTo(new RegExp(`/composite/sobjects/${object}/${EXTERNAL_ID}$`));

    it('updates a Lead we imported by its Id, writing our id into it, instead of making a second one', async () => {
      const salesforce = await opened();
      const made = fake.userCreate('Lead', { LastName: 'Hopper', Company: 'Navy', Email: 'grace@navy.example', Status: 'Working - Contacted' });
      expect(made[EXTERNAL_ID]).toBeUndefined();
      const usedBefore = fake.dailyLimit.used;

      const outcomes = await salesforce.upsertLeads([lead('lead_1', { contactName: 'Grace Hopper', contactEmail: 'grace@navy.example' }, { Lead: made.Id })]);
      expect(outcomes).toEqual([{ id: 'lead_1', external: { Lead: made.Id } }]);
      expect(fake.records('Lead')).toHaveLength(1);
      const written = fake.find('Lead', 'Id', made.Id);
      expect(written).toMatchObject({
        [EXTERNAL_ID]: 'lead_1',
        FirstName: 'Grace',
        LastName: 'Hopper',
        Company: 'Analytical Engines Ltd',
        Status: 'Working - Contacted',
      });
      expect(Date.parse(String(written?.SystemModstamp).replace('+0000', 'Z'))).toBeGreaterThan(Date.parse(made.SystemModstamp.replace('+0000', 'Z')));
      expect(upserts('Lead')).toHaveLength(0);
      expect(updates()).toHaveLength(1);
      expect(fake.dailyLimit.used).toBe(usedBefore + 1);
      const body = JSON.parse(updates()[0].body);
      expect(body.allOrNone).toBe(false);
      expect(body.records).toEqual([expect.objectContaining({ attributes: { type: 'Lead' }, id: made.Id, [EXTERNAL_ID]: 'lead_1' })]);

      // Pushed again after the session expired: a new grant, the same record, still one Lead.
      fake.expireAccessTokens();
      const again = await salesforce.upsertLeads([lead('lead_1', { company: 'Babbage & Co' }, { Lead: made.Id })]);
      expect(again).toEqual([{ id: 'lead_1', external: { Lead: made.Id } }]);
      expect(fake.records('Lead')).toHaveLength(1);
      expect(fake.find('Lead', 'Id', made.Id)).toMatchObject({ [EXTERNAL_ID]: 'lead_1', Company: 'Babbage & Co' });
      expect(updates()).toHaveLength(3);
      expect(upserts('Lead')).toHaveLength(0);
    });

    it('updates an Opportunity we imported by its Id and keeps the close date set in Salesforce', async () => {
      const salesforce = await opened();
      const made = fake.userCreate('Opportunity', { Name: 'Big one', StageName: 'Prospecting', CloseDate: '2027-01-15' });
      const outcomes = await salesforce.upsertDeals([{ ...deal('deal_1', 'Negotiation/Review', null), external: { Opportunity: made.Id } }]);
      expect(outcomes).toEqual([{ id: 'deal_1', external: { Opportunity: made.Id } }]);
      expect(fake.records('Opportunity')).toHaveLength(1);
      expect(fake.find('Opportunity', 'Id', made.Id)).toMatchObject({
        [EXTERNAL_ID]: 'deal_1',
        Name: 'Deal deal_1',
        StageName: 'Negotiation/Review',
        CloseDate: '2027-01-15',
      });
      expect(JSON.parse(updates()[0].body).records[0]).not.toHaveProperty('CloseDate');
      expect(updates()).toHaveLength(1);
      expect(upserts('Opportunity')).toHaveLength(0);

      // A close date of ours goes with the update.
      await salesforce.upsertDeals([{ ...deal('deal_1', 'Closed Won', '2026-12-24'), external: { Opportunity: made.Id } }]);
      expect(fake.find('Opportunity', 'Id', made.Id)).toMatchObject({ StageName: 'Closed Won', CloseDate: '2026-12-24' });
      expect(fake.records('Opportunity')).toHaveLength(1);
    });

    it('writes a record deleted in Salesforce (or unknown there) anew through the upsert on our id, in the order asked', async () => {
      const salesforce = await opened();
      const kept = fake.userCreate('Lead', { LastName: 'Kept', Company: 'Kept Ltd' });
      const deleted = fake.userCreate('Lead', { LastName: 'Deleted', Company: 'Gone Ltd' });
      fake.userDelete('Lead', deleted.Id);
      const unknown = '00Q5g00000ZZZZZAAA';

      const outcomes = await salesforce.upsertLeads([
        lead('lead_new', { contactEmail: 'new@x.example' }),
        lead('lead_deleted', { contactEmail: 'deleted@x.example' }, { Lead: deleted.Id }),
        lead('lead_kept', { contactEmail: 'kept@x.example' }, { Lead: kept.Id }),
        lead('lead_unknown', { contactEmail: 'unknown@x.example' }, { Lead: unknown }),
      ]);
      expect(outcomes.map((outcome) => outcome.error)).toEqual([undefined, undefined, undefined, undefined]);
      expect(outcomes.map((outcome) => outcome.id)).toEqual(['lead_new', 'lead_deleted', 'lead_kept', 'lead_unknown']);
      expect(outcomes[2].external).toEqual({ Lead: kept.Id });
      for (const index of [0, 1, 3]) {
        const id = outcomes[index].external?.Lead;
        expect(id).toMatch(/^00Q/);
        expect(id).not.toBe(deleted.Id);
        expect(fake.find('Lead', 'Id', id)).toMatchObject({ [EXTERNAL_ID]: outcomes[index].id });
      }
      expect(
        fake
          .records('Lead')
          .map((record) => record[EXTERNAL_ID])
          .sort(),
      ).toEqual(['lead_deleted', 'lead_kept', 'lead_new', 'lead_unknown']);

      // One update with the three known Ids, then one upsert with the new lead and the two not found.
      expect(updates().map((request) => JSON.parse(request.body).records.map((record: { id: string }) => record.id))).toEqual([[deleted.Id, kept.Id, unknown]]);
      expect(upserts('Lead').map((request) => JSON.parse(request.body).records.map((record: Record<string, unknown>) => record[EXTERNAL_ID]))).toEqual([
        ['lead_new', 'lead_deleted', 'lead_unknown'],
      ]);
    });

    it('recreates an Opportunity deleted in Salesforce with the default close date', async () => {
      const salesforce = await opened();
      const made = fake.userCreate('Opportunity', { Name: 'Gone', StageName: 'Prospecting', CloseDate: '2027-01-15' });
      fake.userDelete('Opportunity', made.Id);
      const [outcome] = await salesforce.upsertDeals([{ ...deal('deal_1', 'Qualification', null), external: { Opportunity: made.Id } }]);
      expect(outcome.error).toBeUndefined();
      expect(outcome.external?.Opportunity).not.toBe(made.Id);
      const inNinetyDays = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
      expect(fake.records('Opportunity')).toEqual([
        expect.objectContaining({ Id: outcome.external?.Opportunity, [EXTERNAL_ID]: 'deal_1', CloseDate: inNinetyDays }),
      ]);
      // The update finds it deleted; the upsert without a close date finds nothing to keep one of; the second carries the default.
      expect(updates()).toHaveLength(1);
      expect(upserts('Opportunity').map((request) => JSON.parse(request.body).records[0].CloseDate)).toEqual([undefined, inNinetyDays]);
    });

    it('reports what the update refuses for another reason, without an upsert that could duplicate it', async () => {
      const salesforce = await opened();
      const [ours] = await salesforce.upsertLeads([lead('lead_1')]);
      const made = fake.userCreate('Lead', { LastName: 'Hand', Company: 'Made Ltd' });
      const other = fake.userCreate('Lead', { LastName: 'Other', Company: 'Other Ltd' });
      const outcomes = await salesforce.upsertLeads([
        // Another Lead already carries lead_1: Sales_Pipeline_Id__c is unique.
        lead('lead_1', {}, { Lead: made.Id }),
        lead('lead_2', { company: '' }, { Lead: other.Id }),
      ]);
      expect(outcomes).toEqual([
        { id: 'lead_1', error: `DUPLICATE_VALUE: duplicate value found: ${EXTERNAL_ID} duplicates value on record with id: ${ours.external?.Lead}` },
        { id: 'lead_2', error: 'REQUIRED_FIELD_MISSING: Required fields are missing: [Company]' },
      ]);
      expect(fake.find('Lead', 'Id', made.Id)).not.toHaveProperty(EXTERNAL_ID);
      expect(fake.find('Lead', 'Id', other.Id)).toMatchObject({ Company: 'Other Ltd' });
      expect(fake.records('Lead')).toHaveLength(3);
      expect(upserts('Lead')).toHaveLength(1);
    });
  });

  describe('reading changes', () => {
    it('keeps the last cursor CHANGES_SETTLE_MS behind now, so a change of the last half-minute is read again, not missed', async () => {
      const salesforce = client({ changesSettleMs: 30_000 });
      await salesforce.open();
      const recent = fake.userCreate('Lead', { LastName: 'Recent', Company: 'Recent Co', Email: 'recent@force.example' });
      const first = await salesforce.changedLeads(null);
      expect(first.records.map((record) => record.external.Lead)).toContain(recent.Id);
      const again = await salesforce.changedLeads(first.cursor);
      expect(again.records.map((record) => record.external.Lead)).toContain(recent.Id);
    });
    it('returns what people changed in Salesforce after the cursor, with our id where there is one, and not what came before', async () => {
      const salesforce = await opened();
      const [pushed] = await salesforce.upsertLeads([lead('lead_1')]);
      const created = fake.userCreate('Lead', { LastName: 'Hopper', FirstName: 'Grace', Company: 'US Navy', Email: 'grace@navy.example' });

      const all = await salesforce.changedLeads(null);
      expect(all.more).toBe(false);
      expect(all.records.map((record) => [record.external.Lead, record.ourId])).toEqual([
        [pushed.external?.Lead, 'lead_1'],
        [created.Id, null],
      ]);
      expect(all.records[0].fields).toEqual({ ...leadFields(), contactName: 'Ada King Lovelace' });
      expect(all.records[1].fields).toMatchObject({ contactName: 'Grace Hopper', company: 'US Navy', contactEmail: 'grace@navy.example' });
      expect(all.records[1].modifiedAt.toISOString()).toBe(created.SystemModstamp.replace('+0000', 'Z'));

      const edited = fake.userEdit('Lead', pushed.external?.Lead as string, { Company: 'Babbage & Co' });
      const after = await salesforce.changedLeads(all.cursor);
      // Records at the cursor's own time may come again; nothing older does.
      expect(after.records.map((record) => record.external.Lead)).toEqual([created.Id, edited.Id]);
      expect(after.records[1]).toMatchObject({ ourId: 'lead_1', fields: { company: 'Babbage & Co' } });
      const query = decodeURIComponent(
        requestsTo(/\/query\?q=/)
          .at(-1)
          ?.path.split('q=')[1] ?? '',
      );
      expect(query).toMatch(/ WHERE SystemModstamp >= \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ORDER BY SystemModstamp ASC, Id ASC LIMIT 200$/);

      const later = await salesforce.changedLeads(after.cursor);
      expect(later.records.map((record) => record.external.Lead)).toEqual([edited.Id]);
    });

    it('pages through more than 200 changes, a tie of many records on one SystemModstamp included, each record once', async () => {
      const salesforce = await opened();
      fake.queryBatchSize = 75; // Salesforce's answers continue at nextRecordsUrl
      const byHand = Array.from({ length: 50 }, (_, index) => fake.userCreate('Lead', { LastName: `Hand ${index}`, Company: 'Made in Salesforce' }).Id);
      // One upsert call is one Salesforce transaction: its 200 records share one SystemModstamp.
      await salesforce.upsertLeads(Array.from({ length: 200 }, (_, index) => lead(`tie_${index}`, { contactEmail: `t${index}@x.example` })));
      await salesforce.upsertLeads(Array.from({ length: 100 }, (_, index) => lead(`late_${index}`, { contactEmail: `l${index}@x.example` })));
      const tied = fake.records('Lead').filter((record) => String(record[EXTERNAL_ID]).startsWith('tie_'));
      expect(new Set(tied.map((record) => record.SystemModstamp)).size).toBe(1);

      const before = fake.requests.length;
      const first = await salesforce.changedDeals(null);
      expect(first).toEqual({ records: [], cursor: null, more: false });
      const page1 = await salesforce.changedLeads(null);
      expect(page1.records).toHaveLength(200);
      expect(page1.more).toBe(true);
      expect(page1.cursor).toContain('|');
      const page2 = await salesforce.changedLeads(page1.cursor);
      expect(page2.records).toHaveLength(150);
      expect(page2.more).toBe(false);
      const seen = [...page1.records, ...page2.records].map((record) => record.external.Lead);
      expect(new Set(seen).size).toBe(350);
      expect(seen.slice(0, 50)).toEqual(byHand);
      expect(page1.records.slice(50).every((record) => record.ourId?.startsWith('tie_'))).toBe(true);
      expect(page2.records.slice(0, 50).every((record) => record.ourId?.startsWith('tie_'))).toBe(true);
      // The second page asked for what comes after (time, Id), and the first followed nextRecordsUrl.
      const queries = requestsTo(/\/query/, before).map((request) => decodeURIComponent(request.path));
      expect(queries.filter((path) => /\/query\/[\w-]+$/.test(path))).toHaveLength(3);
      expect(queries.some((path) => /WHERE \(SystemModstamp > \S+ OR \(SystemModstamp = \S+ AND Id > '00Q\w{15}'\)\)/.test(path))).toBe(true);

      const edited = fake.userEdit('Lead', byHand[3], { Company: 'Edited by hand' });
      const page3 = await salesforce.changedLeads(page2.cursor);
      const ids = page3.records.map((record) => record.external.Lead);
      expect(ids.at(-1)).toBe(edited.Id);
      expect(ids.filter((id) => byHand.includes(id)).length).toBe(1);
      expect(page3.records.slice(0, -1).every((record) => record.ourId?.startsWith('late_'))).toBe(true);
    });

    it('reads Opportunities back', async () => {
      const salesforce = await opened();
      await salesforce.upsertDeals([deal('deal_1', 'Prospecting', '2026-12-24')]);
      const page = await salesforce.changedDeals(null);
      expect(page.records).toHaveLength(1);
      expect(page.records[0]).toMatchObject({
        ourId: 'deal_1',
        external: { Opportunity: expect.stringMatching(/^006/) },
        fields: { name: 'Deal deal_1', amount: 12500.5, stage: 'Prospecting', closeDate: '2026-12-24' },
      });
    });
  });

  describe('tokens, limits and failures', () => {
    it('asks for a new access token once when Salesforce says the session expired, and carries on', async () => {
      const salesforce = await opened();
      fake.expireAccessTokens();
      const [outcome] = await salesforce.upsertLeads([lead('lead_1')]);
      expect(outcome.external?.Lead).toMatch(/^00Q/);
      expect(fake.seen('/services/oauth2/token')).toHaveLength(2);
      expect(requestsTo(/\/composite\/sobjects\/Lead\//)).toHaveLength(2);
    });

    it('gives up with CrmAuthRefused when the refresh token was revoked meanwhile', async () => {
      const salesforce = await opened();
      fake.revoke(credentials.refresh_token);
      const error = await failure(salesforce.changedLeads(null));
      expect(error).toBeInstanceOf(CrmAuthRefused);
      expect(error.message).toMatch(/invalid_grant/);
    });

    it("stops before a call that would go into the reserve of the org's daily API requests", async () => {
      const salesforce = await opened();
      fake.dailyLimit.used = 13_599;
      await salesforce.changedLeads(null); // answered with api-usage=13600/15000
      const before = fake.requests.length;
      const error = await failure(salesforce.upsertLeads([lead('lead_1')]));
      expect(error).toBeInstanceOf(CrmLimitReached);
      expect(error.message).toBe("Salesforce daily API requests at 13,600 of 15,000; the last 10 % is left to the org's other tools");
      expect(fake.requests.length).toBe(before);

      const generous = await opened({ salesforceReserve: 0.05 });
      expect((await generous.upsertLeads([lead('lead_1')]))[0].external?.Lead).toMatch(/^00Q/);
    });

    it('treats 403 REQUEST_LIMIT_EXCEEDED as the limit reached', async () => {
      fake.dailyLimit.used = fake.dailyLimit.max;
      const error = await failure(client().open());
      expect(error).toBeInstanceOf(CrmLimitReached);
      expect(error.message).toMatch(/REQUEST_LIMIT_EXCEEDED/);
    });

    it('waits out a 429 with Retry-After and asks again', async () => {
      const salesforce = await opened();
      fake.rateLimit(1);
      const before = fake.requests.length;
      const pending = salesforce.changedLeads(null);
      await waitFor('the first, rate-limited query', () => requestsTo(/\/query\?/, before).length === 1);
      fake.recover();
      expect(await pending).toMatchObject({ records: [], more: false });
      expect(requestsTo(/\/query\?/, before)).toHaveLength(2);
    });

    it('gives up at once with CrmUnavailable when Retry-After is longer than it may wait', async () => {
      const salesforce = await opened({ maxWaitMs: 5_000 });
      fake.rateLimit(60);
      const error = await failure(salesforce.changedLeads(null));
      expect(error).toBeInstanceOf(CrmUnavailable);
      expect((error as CrmUnavailable).retryAfterMs).toBe(60_000);
    });

    it('asks twice more after a 5xx, then gives up with CrmUnavailable', async () => {
      const salesforce = await opened();
      fake.fail(500);
      const before = fake.requests.length;
      const error = await failure(salesforce.changedLeads(null));
      expect(error).toBeInstanceOf(CrmUnavailable);
      expect(requestsTo(/\/query\?/, before)).toHaveLength(3);
    });

    it('gives up with CrmUnavailable when Salesforce does not answer within the deadline', async () => {
      const salesforce = await opened(undefined, 300);
      fake.hang();
      const before = fake.requests.length;
      const error = await failure(salesforce.upsertLeads([lead('lead_1')]));
      expect(error).toBeInstanceOf(CrmUnavailable);
      expect(error.message).toMatch(/timed out/);
      expect(requestsTo(/\/composite\/sobjects\/Lead\//, before)).toHaveLength(3);
    });

    it('refuses an instance_url at a private address unless private addresses are allowed', async () => {
      const guarded = createSalesforceClient(credentials, { ...settings(fake), allowPrivateUrls: false });
      const error = await failure(guarded.open());
      expect(error).toBeInstanceOf(CrmUnavailable);
      expect(error.message).toMatch(/non-public address/);
      // The login host (configured, outside production) was asked; the instance it named was not.
      expect(fake.requests.map((request) => request.path)).toEqual(['/services/oauth2/token']);
    });

    it('says what to add when the External ID field disappears between runs', async () => {
      const salesforce = await opened();
      fake.removeExternalIdField('Lead');
      const error = await failure(salesforce.upsertLeads([lead('lead_1')]));
      expect(error).toBeInstanceOf(CrmSetupIncomplete);
      expect(error.message).toMatch(/Setup → Object Manager → Lead/);
    });
  });

  // Last on purpose: it reads every error the tests above saw.
  it('no error message held a credential or an access token', () => {
    expect(errors.length).toBeGreaterThan(5);
    for (const message of errors) {
      for (const value of SECRETS) expect(message).not.toContain(value);
      expect(message).not.toMatch(/00D5g000004ABCD!/);
    }
  });
});

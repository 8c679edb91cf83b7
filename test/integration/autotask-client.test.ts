import { randomBytes } from 'node:crypto';
import { AutotaskClientOptions, createAutotaskClient, DEFAULT_Autotask_STAGE_MAP } from '../../src/modules/integrations/providers/autotask-client';
import {
  CrmAuthRefused,
  CrmClient,
  CrmDealFields,
  CrmLeadFields,
  CrmLimitReached,
  CrmSetupIncomplete,
  CrmUnavailable,
  DeliveryOrder,
  OutboundDeal,
  OutboundLead,
} from '../../src/modules/integrations/providers/crm-client';
import type { ProviderSettings } from '../../src/modules/integrations/providers/provider-settings';
import { FakeAutotask } from '../helpers/fakes';
import type { SeenRequest } from '../helpers/fakes/fake-provider';
import { waitFor } from '../helpers/wait';
import { providerSettings } from '../helpers/provider-settings';

/**
 * The Autotask CrmClient against the loopback Autotask (test/helpers/fakes/fake-autotask.ts,
 * played from Autotask's REST API documents) over real HTTP: what it writes is read back from the
 * fake's records, and its waits and retries are proven by the fake's request log, not the clock.
 */

const settingsFor = (fake: FakeAutotask, timeoutMs = 5_000): ProviderSettings => providerSettings({ autotaskZoneUrl: fake.url }, timeoutMs);

const API = '/atservicesrest/v1.0/';
const leadFields = (overrides: Partial<CrmLeadFields> = {}): CrmLeadFields => ({
  company: 'Acme Ltd',
  contactEmail: 'ada@acme.example',
  contactName: 'Ada Lovelace',
  industry: 'Software',
  employees: 40,
  website: 'https://www.acme.example/about',
  country: 'GB',
  source: 'web',
  ...overrides,
});
const lead = (id: string, overrides: Partial<CrmLeadFields> = {}): OutboundLead => ({ id, fields: leadFields(overrides), external: {} });
const dealFields = (overrides: Partial<CrmDealFields> = {}): CrmDealFields => ({
  name: 'Acme managed services',
  amount: 12500.5,
  currency: 'EUR',
  stage: 'Active',
  closeDate: '2026-03-31',
  owner: null,
  ...overrides,
});
const order = (): DeliveryOrder => ({
  proposalId: 'prop_01JQ8Z6Y1X0000000000000000',
  number: 'P-2026-000042',
  title: 'Managed services for Acme',
  currency: 'EUR',
  total: 11_130,
  lines: [
    { description: 'Onboarding and documentation', quantity: 1, unitPrice: 2_500, amount: 2_500 },
    { description: 'Laptop', quantity: 5, unitPrice: 1_200, amount: 6_000 },
    { description: 'Laptop', quantity: 1, unitPrice: 1_130, amount: 1_130 },
    { description: 'Managed endpoint, per device and month', quantity: 12.5, unitPrice: 120, amount: 1_500 },
  ],
});

describe('the Autotask CrmClient', () => {
  let fake: FakeAutotask;
  let credentials: Record<string, string>;
  const client = (options: AutotaskClientOptions = {}, timeoutMs?: number): CrmClient =>
    createAutotaskClient(credentials, settingsFor(fake, timeoutMs), options);
  const opened = async (options: AutotaskClientOptions = {}): Promise<CrmClient> => {
    const autotask = client(options);
    await autotask.open();
    return autotask;
  };
  const calls = (method: string, entityPath: string) => fake.requests.filter((request) => request.method === method && request.path === `${API}${entityPath}`);
  /** A deal of the lead `lead_1`, whose company is pushed first. */
  const dealOf = async (autotask: CrmClient, overrides: Partial<OutboundDeal> = {}): Promise<OutboundDeal> => {
    const [pushed] = await autotask.upsertLeads([lead('lead_1')]);
    return { id: 'deal_01JQ8Z6Y1X0000000000000001', fields: dealFields(), external: {}, lead: { id: 'lead_1', external: pushed.external! }, ...overrides };
  };

  beforeEach(async () => {
    fake = await new FakeAutotask().start();
    credentials = {
      username: `api-${randomBytes(4).toString('hex')}@acme-msp.example`,
      secret: `at-secret-${randomBytes(12).toString('hex')}`,
      integration_code: `AT-TRACK-${randomBytes(12).toString('hex')}`,
    };
    fake.accept({ username: credentials.username, secret: credentials.secret, integration_code: credentials.integration_code });
  });
  afterEach(async () => {
    await fake.close();
  });

  it('opens with the zone lookup, ThresholdInformation, the API user’s resource and the opportunity picklists; pulls nothing', async () => {
    const autotask = await opened();
    expect(autotask.provider).toBe('autotask');
    expect(autotask.batchSize).toBe(50);
    expect(fake.requests.map((request) => `${request.method} ${request.path.split('?')[0]}`)).toEqual([
      `GET ${API}zoneInformation`,
      `GET ${API}ThresholdInformation`,
      `POST ${API}Resources/query`,
      `GET ${API}Opportunities/entityInformation/fields`,
    ]);
    const authenticated = fake.requests[1].headers;
    expect(authenticated).toMatchObject({ apiintegrationcode: credentials.integration_code, username: credentials.username, secret: credentials.secret });
    const before = fake.requests.length;
    expect(await autotask.changedLeads(null)).toEqual({ records: [], cursor: null, more: false });
    expect(await autotask.changedDeals(null)).toEqual({ records: [], cursor: null, more: false });
    expect(fake.requests).toHaveLength(before);
  });

  it('matches a lead’s company by name (any case), by its website’s domain or its contact’s e-mail domain, and creates the others once', async () => {
    const byName = fake.addCompany({ companyName: 'ACME LTD', webAddress: 'https://elsewhere.example' });
    const byWebsite = fake.addCompany({ companyName: 'Globex Corporation', webAddress: 'www.globex.example' });
    const byMail = fake.addCompany({ companyName: 'Initech, Inc.', webAddress: 'http://initech.example/' });
    fake.addCompany({ companyName: 'Not Umbrella', webAddress: 'https://notumbrella.example' });
    fake.addCompany({ companyName: 'Google Mail', webAddress: 'gmail.com' });
    const autotask = await opened();
    const outcomes = await autotask.upsertLeads([
      lead('lead_1', { company: '  acme   ltd ' }),
      lead('lead_2', { company: 'Globex', website: 'globex.example' }),
      lead('lead_3', { company: 'Initech', website: null, contactEmail: 'peter@initech.example' }),
      lead('lead_4', { company: 'Umbrella', website: 'https://umbrella.example', contactEmail: 'alice@gmail.com', country: 'United Kingdom' }),
      lead('lead_5', { company: 'umbrella', website: null, contactEmail: 'bob@umbrella.example' }),
      lead('lead_6', { company: 'Hooli', website: null, contactEmail: 'gavin@gmail.com', country: 'Atlantis' }),
    ]);
    // Made through the API (a create date), not by hand in Autotask.
    const made = fake.companies().filter((company) => company.createDate);
    expect(made.map((company) => company.companyName)).toEqual(['Umbrella', 'Hooli']);
    const [umbrella, hooli] = made;
    const owner = fake.resourceOf(credentials.username).id;
    expect(umbrella).toMatchObject({
      companyType: 3,
      ownerResourceID: owner,
      phone: 'Not given',
      webAddress: 'https://umbrella.example',
      countryID: fake.store.all('Countries').find((country) => country.countryCode === 'GB')!.id,
    });
    expect(hooli.countryID).toBeUndefined();
    expect(hooli.webAddress).toBeUndefined();
    expect(outcomes).toEqual([
      { id: 'lead_1', external: { company: String(byName.id) } },
      { id: 'lead_2', external: { company: String(byWebsite.id) } },
      { id: 'lead_3', external: { company: String(byMail.id) } },
      { id: 'lead_4', external: { company: String(umbrella.id) } },
      { id: 'lead_5', external: { company: String(umbrella.id) } },
      { id: 'lead_6', external: { company: String(hooli.id) } },
    ]);
    // Nothing of the MSP's companies was changed.
    expect(calls('PATCH', 'Companies')).toEqual([]);
    expect(byName.companyName).toBe('ACME LTD');
  });

  it('uses a linked company as it is, without a call, and never deletes a company', async () => {
    const autotask = await opened();
    const before = fake.requests.length;
    const linked = { ...lead('lead_1', { company: 'Renamed Here' }), external: { company: '4242' } };
    expect(await autotask.upsertLeads([linked])).toEqual([{ id: 'lead_1', external: { company: '4242' } }]);
    expect(await autotask.archiveLeads([{ id: 'lead_1', external: { company: '4242' } }])).toEqual([{ id: 'lead_1' }]);
    expect(fake.requests).toHaveLength(before);
  });

  it('gives Autotask’s reason for a company it refuses and writes the rest', async () => {
    const existing = fake.addCompany({ companyName: 'Acme Ltd' });
    const autotask = await opened();
    // The API user's resource is deleted: a new company's owner no longer exists.
    fake.store.remove('Resources', fake.resourceOf(credentials.username).id);
    const outcomes = await autotask.upsertLeads([lead('lead_1'), lead('lead_2', { company: 'Globex', website: null, contactEmail: 'x@globex.example' })]);
    expect(outcomes[0]).toEqual({ id: 'lead_1', external: { company: String(existing.id) } });
    expect(outcomes[1]).toEqual({ id: 'lead_2', error: expect.stringMatching(/^company: Reference value on field: ownerResourceID/) });
    // A refusal is tried again like any 500 (Autotask words both alike), looked for before each try.
    expect(calls('POST', 'Companies')).toHaveLength(3);
    expect(fake.companies()).toHaveLength(1);
  });

  it('creates an opportunity of the lead’s company, then updates it by its id: stage, status and value follow the deal', async () => {
    const autotask = await opened();
    const deal = await dealOf(autotask);
    const [created] = await autotask.upsertDeals([deal]);
    const [opportunity] = fake.opportunities();
    expect(created).toEqual({ id: deal.id, external: { opportunity: String(opportunity.id) } });
    expect(opportunity).toMatchObject({
      companyID: Number(deal.lead!.external.company),
      title: 'Acme managed services',
      amount: 12500.5,
      projectedCloseDate: '2026-03-31T00:00:00Z',
      status: 1,
      stage: 1,
      probability: 50,
      cost: 0,
      useQuoteTotals: false,
      ownerResourceID: fake.resourceOf(credentials.username).id,
      promotionName: deal.id,
    });

    const linked = { ...deal, external: created.external! };
    expect(await autotask.upsertDeals([{ ...linked, fields: dealFields({ stage: 'proposal sent', amount: 14000 }) }])).toEqual([created]);
    expect(fake.opportunities()).toHaveLength(1);
    expect(opportunity).toMatchObject({ stage: 3, status: 1, amount: 14000, probability: 50 });
    expect(await autotask.upsertDeals([{ ...linked, fields: dealFields({ stage: DEFAULT_Autotask_STAGE_MAP.closedWon, amount: 14000 }) }])).toEqual([created]);
    expect(opportunity).toMatchObject({ stage: 3, status: 3, probability: 100 });
    // Updated by id: no search for our id once linked.
    expect(calls('POST', 'Opportunities/query')).toHaveLength(1);
    expect(calls('PATCH', 'Opportunities')).toHaveLength(2);
  });

  it('refuses a deal without a synced lead, or with a stage Autotask does not have, and writes the rest', async () => {
    const autotask = await opened();
    const deal = await dealOf(autotask);
    const outcomes = await autotask.upsertDeals([
      { ...deal, id: 'deal_no_lead', lead: null },
      { ...deal, id: 'deal_unlinked_lead', lead: { id: 'lead_9', external: {} } },
      { ...deal, id: 'deal_bad_stage', fields: dealFields({ stage: 'Retired Stage' }) },
      { ...deal, fields: dealFields({ stage: DEFAULT_Autotask_STAGE_MAP.closedLost }) },
    ]);
    expect(outcomes[0]).toEqual({ id: 'deal_no_lead', error: expect.stringMatching(/^the deal has no lead synced to Autotask; /) });
    expect(outcomes[1]).toEqual({ id: 'deal_unlinked_lead', error: expect.stringMatching(/^the deal has no lead synced to Autotask; /) });
    expect(outcomes[2]).toEqual({ id: 'deal_bad_stage', error: expect.stringMatching(/no opportunity status or active stage named 'Retired Stage'/) });
    expect(outcomes[3].external?.opportunity).toBe(String(fake.opportunities()[0].id));
    expect(fake.opportunities()).toHaveLength(1);
    expect(fake.opportunities()[0]).toMatchObject({ status: 2, probability: 0 });
  });

  it('makes a won deal’s delivery contract from its proposal, once: the lines are its charges', async () => {
    const autotask = await opened();
    const deal = { ...(await dealOf(autotask)), fields: dealFields({ stage: 'Closed' }), delivery: order() };
    const [won] = await autotask.upsertDeals([deal]);
    const [opportunity] = fake.opportunities();
    const [contract] = fake.contracts();
    expect(won).toEqual({ id: deal.id, external: { opportunity: String(opportunity.id), contract: String(contract.id) } });
    expect(contract).toMatchObject({
      companyID: Number(deal.lead!.external.company),
      opportunityID: opportunity.id,
      contractName: 'Acme managed services (P-2026-000042)',
      contractNumber: 'P-2026-000042',
      contractType: 1,
      status: 1,
      estimatedRevenue: 11_130,
    });
    expect(
      fake
        .charges('contract', contract.id)
        .map(({ name, unitQuantity, unitPrice, isBillableToCompany }) => ({ name, unitQuantity, unitPrice, isBillableToCompany })),
    ).toEqual(order().lines.map((line) => ({ name: line.description, unitQuantity: line.quantity, unitPrice: line.unitPrice, isBillableToCompany: true })));

    // Linked: the contract is left alone, whatever the proposal says now.
    const before = fake.requests.length;
    expect(await autotask.upsertDeals([{ ...deal, external: won.external! }])).toEqual([won]);
    expect(fake.requests.slice(before).map((request) => `${request.method} ${request.path}`)).toEqual([`PATCH ${API}Opportunities`]);
    expect(fake.contracts()).toHaveLength(1);
  });

  it('makes a project instead when the integration’s delivery_record says so; refuses a kind it does not know', async () => {
    const autotask = await opened({ deliveryRecord: 'project' });
    const deal = { ...(await dealOf(autotask)), fields: dealFields({ stage: 'Closed' }), delivery: order() };
    const [won] = await autotask.upsertDeals([deal]);
    const [project] = fake.projects();
    expect(won.external).toEqual({ opportunity: String(fake.opportunities()[0].id), project: String(project.id) });
    expect(project).toMatchObject({ projectName: 'Acme managed services (P-2026-000042)', extProjectNumber: 'P-2026-000042', projectType: 5, status: 1 });
    expect(fake.charges('project', project.id).map((charge) => charge.name)).toEqual(order().lines.map((line) => line.description));
    expect(fake.contracts()).toEqual([]);

    await expect(client({ deliveryRecord: 'ticket' }).open()).rejects.toThrow(CrmSetupIncomplete);
  });

  it('after a crash that lost the links, a repeated push finds the opportunity, the contract and its lines instead of making them twice', async () => {
    const autotask = await opened();
    const deal = { ...(await dealOf(autotask)), fields: dealFields({ stage: 'Closed' }), delivery: order() };
    const [first] = await autotask.upsertDeals([deal]);
    const [contract] = fake.contracts();
    // The crash came before the last line was made.
    const charges = fake.charges('contract', contract.id);
    fake.store.remove('ContractCharges', charges[charges.length - 1].id);

    // A new run (a new client) pushes the deal again, its links never written.
    const [again] = await (await opened()).upsertDeals([{ ...deal, external: {} }]);
    expect(again).toEqual(first);
    expect(fake.opportunities()).toHaveLength(1);
    expect(fake.contracts()).toHaveLength(1);
    expect(fake.charges('contract', contract.id).map((charge) => charge.name)).toEqual(order().lines.map((line) => line.description));
  });

  it('looks for a record whose create answer was lost before creating it again: one company, one opportunity, one line each', async () => {
    const autotask = await opened();
    const lost = (path: string) => (request: SeenRequest) => request.method === 'POST' && request.path.toLowerCase().endsWith(path);
    fake.loseAnswers(1, lost('/companies'));
    fake.loseAnswers(1, lost('/opportunities'));
    fake.loseAnswers(1, lost('/contracts'));
    fake.loseAnswers(2, lost('/charges'));
    const [pushed] = await autotask.upsertLeads([lead('lead_1')]);
    expect(pushed.external?.company).toBe(String(fake.companies()[0].id));
    const [won] = await autotask.upsertDeals([
      { id: 'deal_1', fields: dealFields({ stage: 'Closed' }), external: {}, lead: { id: 'lead_1', external: pushed.external! }, delivery: order() },
    ]);
    expect(fake.companies()).toHaveLength(1);
    expect(fake.opportunities()).toHaveLength(1);
    expect(fake.contracts()).toHaveLength(1);
    expect(won.external).toEqual({ opportunity: String(fake.opportunities()[0].id), contract: String(fake.contracts()[0].id) });
    expect(fake.charges('contract', fake.contracts()[0].id)).toHaveLength(order().lines.length);
    // Each lost answer was followed by a search that found the record, not by a second create.
    expect(calls('POST', 'Companies')).toHaveLength(1);
    expect(calls('POST', 'Opportunities')).toHaveLength(1);
    expect(calls('POST', 'Contracts')).toHaveLength(1);
    // Looked for before the create, and again after its answer was lost.
    expect(calls('POST', 'Opportunities/query')).toHaveLength(2);
    expect(calls('POST', 'Contracts/query')).toHaveLength(2);
    expect(fake.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/Charges'))).toHaveLength(order().lines.length);
  });

  it('closes an archived deal’s opportunity as Lost (Autotask cannot delete one); gone already or never pushed is success', async () => {
    const autotask = await opened();
    const deal = await dealOf(autotask);
    const [pushed] = await autotask.upsertDeals([deal]);
    const outcomes = await autotask.archiveDeals([
      { id: deal.id, external: pushed.external! },
      { id: 'deal_gone', external: { opportunity: '987654321' } },
      { id: 'deal_never_pushed', external: {} },
    ]);
    expect(outcomes).toEqual([{ id: deal.id }, { id: 'deal_gone' }, { id: 'deal_never_pushed' }]);
    expect(fake.opportunities()).toHaveLength(1);
    expect(fake.opportunities()[0]).toMatchObject({ status: 2, probability: 0 });
  });

  it('refuses with CrmAuthRefused and Autotask’s reason, never naming a secret', async () => {
    fake.accept({ username: credentials.username, secret: 'another-secret-entirely', integration_code: credentials.integration_code });
    const wrongSecret = await client()
      .open()
      .catch((caught: unknown) => caught);
    expect(wrongSecret).toBeInstanceOf(CrmAuthRefused);
    expect((wrongSecret as Error).message).toBe('Autotask refused the credentials: The user name or secret is incorrect.');

    fake.revoke(credentials.username);
    const unknownUser = await client()
      .open()
      .catch((caught: unknown) => caught);
    expect(unknownUser).toBeInstanceOf(CrmAuthRefused);
    expect((unknownUser as Error).message).toMatch(/Zone information could not be determined/);
    for (const error of [wrongSecret, unknownUser]) {
      for (const value of Object.values(credentials)) expect((error as Error).message).not.toContain(value);
    }
  });

  it('waits out a 429 for its Retry-After and asks again', async () => {
    const autotask = await opened();
    fake.rateLimit(1);
    const pushing = autotask.upsertLeads([lead('lead_1')]);
    await waitFor('the rate-limited query', () => calls('POST', 'Companies/query').length === 1);
    fake.recover();
    const [outcome] = await pushing;
    expect(outcome.external?.company).toBe(String(fake.companies()[0].id));
    const tries = calls('POST', 'Companies/query');
    expect(tries.length).toBeGreaterThanOrEqual(2);
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
    const autotask = await opened();
    fake.fail(503);
    const pending = autotask.upsertLeads([lead('lead_1')]);
    await waitFor('the first failed query', () => calls('POST', 'Companies/query').length === 1);
    fake.recover();
    expect((await pending)[0].external?.company).toBeDefined();

    fake.fail(502);
    await expect(autotask.upsertLeads([lead('lead_2', { company: 'Globex' })])).rejects.toThrow(/^Autotask answered 502/);
    expect(calls('POST', 'Companies/query').filter((request) => request.body.includes('Globex'))).toHaveLength(3);
    await expect(client().open()).rejects.toThrow(CrmUnavailable);
  });

  it('gives up on an Autotask that does not answer: CrmUnavailable within the deadline of each try', async () => {
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

  it('stops before the database’s hourly requests reach the reserve left to its other integrations', async () => {
    fake.requestThreshold = 40;
    const autotask = await opened({ autotaskReserve: 0.5 });
    const leads = Array.from({ length: 30 }, (_, i) => lead(`lead_${i}`, { company: `Company ${i}`, website: null, contactEmail: `x@company${i}.example` }));
    const error = await autotask.upsertLeads(leads).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmLimitReached);
    expect((error as Error).message).toMatch(/^Autotask's requests this hour are at \d+ of 40; the last 50 % is left/);
    // Half of 40, and never a 429 from Autotask.
    expect(fake.requests.filter((request) => !request.path.includes('zoneInformation')).length).toBeLessThanOrEqual(20);
  });
});

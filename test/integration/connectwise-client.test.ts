import { randomBytes } from 'node:crypto';
import { createConnectwiseClient, ConnectwiseOptions } from '../../src/modules/integrations/providers/connectwise-client';
import {
  CrmAuthRefused,
  CrmClient,
  CrmClientOptions,
  CrmDealFields,
  CrmLeadFields,
  CrmSetupIncomplete,
  CrmUnavailable,
  DeliveryOrder,
  OutboundDeal,
  OutboundLead,
} from '../../src/modules/integrations/providers/crm-client';
import type { ProviderSettings } from '../../src/modules/integrations/providers/provider-settings';
import { FakeConnectWise } from '../helpers/fakes';
import { waitFor } from '../helpers/wait';
import { providerSettings } from '../helpers/provider-settings';

/**
 * The ConnectWise PSA CrmClient against the loopback fake site (test/helpers/fakes/fake-connectwise*.ts,
 * played from ConnectWise's published OpenAPI document and Developer Guide) over real HTTP: what
 * it writes is read back from the fake's records, and its waits are proven by the fake's request
 * log, not by the clock.
 */

const API = '/v4_6_release/apis/3.0';

const settingsFor = (fake: FakeConnectWise, timeoutMs = 5_000): ProviderSettings => providerSettings({ connectwiseSiteUrl: fake.url }, timeoutMs);

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
const lead = (id: string, overrides: Partial<CrmLeadFields> = {}, external: Record<string, string> = {}): OutboundLead => ({
  id,
  fields: leadFields(overrides),
  external,
});
const dealFields = (overrides: Partial<CrmDealFields> = {}): CrmDealFields => ({
  name: 'Acme managed services',
  amount: 12500.5,
  currency: 'EUR',
  stage: 'Prospect',
  closeDate: '2025-03-31',
  owner: 'sam@msp.example',
  ...overrides,
});
const order: DeliveryOrder = {
  proposalId: 'prop_01JABCDEFGHJKMNPQRSTVWXYZ0',
  number: 'P-2026-000042',
  title: 'Managed services for Acme',
  currency: 'EUR',
  total: 12500.5,
  lines: [
    { description: 'Onboarding', quantity: 1, unitPrice: 2500, amount: 2500 },
    { description: 'Managed workstation', quantity: 25, unitPrice: 40, amount: 1000 },
    { description: 'Backup storage (TB)', quantity: 3, unitPrice: 3000.1667, amount: 9000.5 },
  ],
};

describe('the ConnectWise PSA CrmClient', () => {
  let fake: FakeConnectWise;
  let credentials: Record<string, string>;
  const client = (options: CrmClientOptions = {}, connectwise: ConnectwiseOptions = {}, timeoutMs?: number): CrmClient =>
    createConnectwiseClient(credentials, settingsFor(fake, timeoutMs), { ...options, ...connectwise });
  const calls = (method: string, path: string) => fake.seen(`${API}${path}`).filter((request) => request.method === method);
  const site = () => fake.site;

  /** An opened client with a lead pushed: the deal's lead, as the engine hands it over. */
  async function withLead(connectwise: ConnectwiseOptions = {}): Promise<{ psa: CrmClient; dealLead: OutboundDeal['lead'] }> {
    const psa = client({}, connectwise);
    await psa.open();
    const [pushed] = await psa.upsertLeads([lead('lead_1')]);
    return { psa, dealLead: { id: 'lead_1', external: pushed.external! } };
  }

  beforeEach(async () => {
    fake = await new FakeConnectWise().start();
    credentials = {
      site: 'api-na.myconnectwise.net',
      company_id: 'acmemsp',
      public_key: `pub${randomBytes(6).toString('hex')}`,
      private_key: `priv-${randomBytes(12).toString('hex')}`,
      client_id: `cw-client-${randomBytes(8).toString('hex')}`,
    };
    fake.accept({
      company_id: credentials.company_id,
      public_key: credentials.public_key,
      private_key: credentials.private_key,
      client_id: credentials.client_id,
    });
    fake.site.members.add({ identifier: 'sam', firstName: 'Sam', lastName: 'Seller', primaryEmail: 'sam@msp.example', inactiveFlag: false });
  });
  afterEach(async () => {
    await fake.close();
  });

  it("open() reads the site's sales stages and opportunity statuses with the member's keys and the clientId; a delivery record it does not know is refused", async () => {
    await client().open();
    const [stages] = calls('GET', '/sales/stages');
    const basic = Buffer.from(`acmemsp+${credentials.public_key}:${credentials.private_key}`).toString('base64');
    expect(stages.headers).toMatchObject({ authorization: `Basic ${basic}`, clientid: credentials.client_id });
    expect(calls('GET', '/sales/opportunities/statuses')).toHaveLength(1);

    const error = await client({}, { deliveryRecord: 'ticket' })
      .open()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmSetupIncomplete);
    expect((error as Error).message).toMatch(/delivery_record must be 'project' or 'agreement'/);
  });

  it('matches a lead’s company by name (any case), then by website or e-mail domain, else creates it with its contact; a second push makes nothing new', async () => {
    const byName = fake.addCompany({ name: 'ACME LTD', website: null });
    const byWebsite = fake.addCompany({ name: 'Globex Corporation', website: 'http://globex.example/' });
    const byEmail = fake.addCompany({ name: 'Initech LLC', website: 'https://www.initech.example' });
    fake.addCompany({ name: 'Not Umbrella', website: 'https://notumbrella.example' });
    const psa = client();
    await psa.open();
    const leads = [
      lead('lead_name', { company: 'acme ltd' }),
      lead('lead_web', { company: 'Globex', website: 'globex.example', contactEmail: 'hank@gmail.com' }),
      lead('lead_mail', { company: 'Initech', website: null, contactEmail: 'peter@initech.example' }),
      lead('lead_new', { company: 'Umbrella, Inc.', website: 'https://umbrella.example', contactEmail: 'alice@umbrella.example', country: 'GB' }),
      lead('lead_personal', { company: 'Hooli', website: null, contactEmail: 'gavin@gmail.com', country: null, contactName: null }),
    ];
    const first = await psa.upsertLeads(leads);
    expect(first.map((outcome) => outcome.error)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(first.slice(0, 3).map((outcome) => outcome.external?.company)).toEqual([String(byName.id), String(byWebsite.id), String(byEmail.id)]);

    const umbrella = site().companies.get(Number(first[3].external!.company))!;
    expect(umbrella).toMatchObject({
      identifier: 'UmbrellaInc',
      name: 'Umbrella, Inc.',
      website: 'https://umbrella.example',
      country: { name: 'United Kingdom' },
    });
    // A gmail.com address says nothing about the company; the site's default country stands in for the missing one.
    const hooli = site().companies.get(Number(first[4].external!.company))!;
    expect(hooli).toMatchObject({ identifier: 'Hooli', name: 'Hooli', country: { name: 'United States' } });
    // Found companies are the MSP's records: not renamed.
    expect(site().companies.get(byName.id)!.name).toBe('ACME LTD');

    const contact = site().contacts.get(Number(first[0].external!.contact))!;
    expect(contact).toMatchObject({
      firstName: 'Ada',
      lastName: 'Lovelace',
      company: { id: byName.id },
      communicationItems: [{ value: 'ada@acme.example', defaultFlag: true, communicationType: 'Email', type: { name: 'Email' } }],
    });
    expect(site().contacts.get(Number(first[4].external!.contact))).toMatchObject({ firstName: 'gavin' });

    // Pushed again without the links (a crash lost them): the same company and contact are found.
    const again = await psa.upsertLeads(leads);
    expect(again).toEqual(first);
    expect(site().companies.all()).toHaveLength(6);
    expect(site().contacts.all()).toHaveLength(5);
    // Linked: neither looked for nor written.
    const before = fake.requests.length;
    expect(await psa.upsertLeads([lead('lead_name', {}, first[0].external)])).toEqual([first[0]]);
    expect(fake.requests.length).toBe(before);
  });

  it('numbers a new identifier another company holds, and gives ConnectWise’s reason for a lead it refuses while writing the rest', async () => {
    fake.addCompany({ name: 'Acme (old)', identifier: 'AcmeLtd' });
    const psa = client();
    await psa.open();
    const outcomes = await psa.upsertLeads([lead('lead_1'), lead('lead_2', { company: '   ', contactEmail: 'x@blank.example', website: null })]);
    expect(site().companies.get(Number(outcomes[0].external!.company))).toMatchObject({ identifier: 'AcmeLtd2', name: 'Acme Ltd' });
    expect(outcomes[1]).toEqual({ id: 'lead_2', error: 'company: company object is invalid: The name field is required.' });
  });

  it('makes a deal an opportunity of its lead’s company and contact, with our id as its source and its amount as a forecast item, then follows stage and amount', async () => {
    const { psa, dealLead } = await withLead();
    const [made] = await psa.upsertDeals([{ id: 'deal_1', fields: dealFields(), external: {}, lead: dealLead }]);
    const opportunity = site().opportunities.get(Number(made.external!.opportunity))!;
    expect(made).toEqual({ id: 'deal_1', external: { opportunity: String(opportunity.id) } });
    expect(opportunity).toMatchObject({
      name: 'Acme managed services',
      company: { id: Number(dealLead!.external.company) },
      contact: { id: Number(dealLead!.external.contact) },
      primarySalesRep: { identifier: 'sam' },
      stage: { name: 'Prospect' },
      status: { name: 'Open' },
      expectedCloseDate: '2025-03-31T00:00:00Z',
      source: 'Sales Pipeline deal_1',
      closedDate: null,
    });
    const forecast = () =>
      site()
        .forecastItems.all()
        .filter((item) => item.opportunity.id === opportunity.id);
    expect(forecast()).toEqual([
      expect.objectContaining({
        forecastType: 'Service',
        forecastDescription: 'Sales Pipeline deal amount',
        revenue: 12500.5,
        status: expect.objectContaining({ name: 'Open' }),
      }),
    ]);

    const moved = await psa.upsertDeals([
      {
        id: 'deal_1',
        fields: dealFields({ stage: 'Negotiation', amount: 14000, name: 'Acme managed services (3y)' }),
        external: made.external!,
        lead: dealLead,
      },
    ]);
    expect(moved).toEqual([made]);
    expect(site().opportunities.get(opportunity.id)).toMatchObject({
      name: 'Acme managed services (3y)',
      stage: { name: 'Negotiation' },
      status: { name: 'Open' },
    });
    expect(forecast()).toEqual([expect.objectContaining({ revenue: 14000 })]);

    // Won: ConnectWise's way, the Won status; the stage stays where the deal got to.
    await psa.upsertDeals([{ id: 'deal_1', fields: dealFields({ stage: 'Won', amount: 14000 }), external: made.external!, lead: dealLead }]);
    expect(site().opportunities.get(opportunity.id)).toMatchObject({ stage: { name: 'Negotiation' }, status: { name: 'Won' }, closedDate: expect.any(String) });
    expect(forecast()).toEqual([expect.objectContaining({ revenue: 14000, status: expect.objectContaining({ name: 'Won' }) })]);
    expect(site().opportunities.all()).toHaveLength(1);
    expect(calls('POST', '/sales/opportunities')).toHaveLength(1);
  });

  it('refuses a deal without a synced lead, with a stage the site lacks, or without a sales rep, naming what to do; the integration’s sales rep stands in for an unknown owner', async () => {
    const { psa, dealLead } = await withLead();
    const outcomes = await psa.upsertDeals([
      { id: 'deal_nolead', fields: dealFields(), external: {}, lead: null },
      { id: 'deal_stage', fields: dealFields({ stage: 'Verbal Commit' }), external: {}, lead: dealLead },
      { id: 'deal_owner', fields: dealFields({ owner: 'nobody@elsewhere.example' }), external: {}, lead: dealLead },
    ]);
    expect(outcomes[0]).toEqual({ id: 'deal_nolead', error: expect.stringMatching(/^the deal has no lead synced to ConnectWise PSA; /) });
    expect(outcomes[1]).toEqual({
      id: 'deal_stage',
      error: expect.stringMatching(/^'Verbal Commit' is neither a sales stage nor an opportunity status in ConnectWise PSA/),
    });
    expect(outcomes[2]).toEqual({ id: 'deal_owner', error: expect.stringMatching(/needs a primary sales rep/) });
    expect(site().opportunities.all()).toEqual([]);

    const withRep = client({}, { salesRep: 'admin1' });
    await withRep.open();
    const [made] = await withRep.upsertDeals([{ id: 'deal_owner', fields: dealFields({ owner: null }), external: {}, lead: dealLead }]);
    expect(site().opportunities.get(Number(made.external!.opportunity))).toMatchObject({ primarySalesRep: { identifier: 'admin1' } });
  });

  it('makes a won deal’s proposal a project (the default): on the project board, linked to the opportunity, each line a phase; once', async () => {
    const { psa, dealLead } = await withLead();
    const won = { id: 'deal_1', fields: dealFields({ stage: 'Won' }), external: {}, lead: dealLead, delivery: order };
    const [made] = await psa.upsertDeals([won]);
    const project = site().projects.all()[0];
    expect(made).toEqual({ id: 'deal_1', external: { opportunity: expect.any(String), project: String(project.id) } });
    expect(project).toMatchObject({
      name: 'Acme managed services – P-2026-000042',
      company: { id: Number(dealLead!.external.company) },
      contact: { id: Number(dealLead!.external.contact) },
      opportunity: { id: Number(made.external!.opportunity) },
      board: { name: 'Professional Services' },
      billingMethod: 'FixedFee',
    });
    expect(project.description).toContain('Proposal P-2026-000042 "Managed services for Acme" (Sales Pipeline), 12500.50 EUR after discount and tax:');
    expect(
      site()
        .phases.all()
        .map((phase) => [phase.projectId, phase.description, phase.notes]),
    ).toEqual([
      [project.id, 'Onboarding', '1 × 2500.00 EUR = 2500.00 EUR'],
      [project.id, 'Managed workstation', '25 × 40.00 EUR = 1000.00 EUR'],
      [project.id, 'Backup storage (TB)', '3 × 3000.17 EUR = 9000.50 EUR'],
    ]);

    // Linked already: left alone.
    const before = calls('POST', '/project/projects').length + calls('GET', '/project/projects').length;
    await psa.upsertDeals([{ ...won, external: made.external! }]);
    expect(calls('POST', '/project/projects').length + calls('GET', '/project/projects').length).toBe(before);
    expect(site().projects.all()).toHaveLength(1);
  });

  it('makes it an agreement when settings say so: each line an addition of the catalog item of its name, the rest in the notes', async () => {
    const workstation = site().catalog.add({ identifier: 'MANAGED-WS', description: 'Managed workstation', inactiveFlag: false });
    const onboarding = site().catalog.add({ identifier: 'Onboarding', description: 'One-off onboarding', inactiveFlag: false });
    const { psa, dealLead } = await withLead({ deliveryRecord: 'agreement' });
    const [made] = await psa.upsertDeals([{ id: 'deal_1', fields: dealFields({ stage: 'Won' }), external: {}, lead: dealLead, delivery: order }]);
    const agreement = site().agreements.all()[0];
    expect(made.external).toEqual({ opportunity: expect.any(String), agreement: String(agreement.id) });
    expect(agreement).toMatchObject({
      name: 'Acme managed services – P-2026-000042',
      type: { name: 'Managed Services' },
      opportunity: { id: Number(made.external!.opportunity) },
      contact: { id: Number(dealLead!.external.contact) },
    });
    expect(agreement.internalNotes).toContain('- Backup storage (TB): 3 × 3000.17 EUR = 9000.50 EUR');
    expect(
      site()
        .additions.all()
        .map((addition) => [addition.product.id, addition.description, addition.quantity, addition.unitPrice, addition.billCustomer]),
    ).toEqual([
      [onboarding.id, 'Onboarding', 1, 2500, 'Billable'],
      [workstation.id, 'Managed workstation', 25, 40, 'Billable'],
    ]);
    expect(site().projects.all()).toEqual([]);

    // Pushed again with the links lost: the agreement is found by its opportunity, its additions by their lines.
    const [again] = await psa.upsertDeals([{ id: 'deal_1', fields: dealFields({ stage: 'Won' }), external: {}, lead: dealLead, delivery: order }]);
    expect(again).toEqual(made);
    expect(site().agreements.all()).toHaveLength(1);
    expect(site().additions.all()).toHaveLength(2);
  });

  it('duplicates nothing when a push is repeated after a crash lost the links: the opportunity by its source, the project by its opportunity, the phases by their lines', async () => {
    const { psa, dealLead } = await withLead();
    const won = { id: 'deal_1', fields: dealFields({ stage: 'Won' }), external: {}, lead: dealLead, delivery: order };
    const [first] = await psa.upsertDeals([won]);
    // A later run, the links lost: the engine hands the same deal over with nothing in external.
    const fresh = client();
    await fresh.open();
    const [second] = await fresh.upsertDeals([won]);
    expect(second).toEqual(first);
    expect(site().opportunities.all()).toHaveLength(1);
    expect(site().forecastItems.all()).toHaveLength(1);
    expect(site().projects.all()).toHaveLength(1);
    expect(site().phases.all()).toHaveLength(3);
    expect(calls('POST', '/sales/opportunities')).toHaveLength(1);
    expect(calls('POST', '/project/projects')).toHaveLength(1);
  });

  it('does not send a create again whose answer was lost (made at the site, a 500 here): the run fails, and the next push finds the record and finishes it', async () => {
    const { psa, dealLead } = await withLead();
    const won = { id: 'deal_1', fields: dealFields({ stage: 'Won' }), external: {}, lead: dealLead, delivery: order };
    fake.loseAnswerToNextCreate('/sales/opportunities');
    await expect(psa.upsertDeals([won])).rejects.toThrow(CrmUnavailable);
    expect(calls('POST', '/sales/opportunities')).toHaveLength(1);
    expect(site().opportunities.all()).toHaveLength(1);
    expect(site().forecastItems.all()).toEqual([]);

    expect(site().projects.all()).toEqual([]);
    fake.loseAnswerToNextCreate(/^\/project\/projects\/\d+\/phases$/);
    await expect(psa.upsertDeals([won])).rejects.toThrow(CrmUnavailable);
    expect(site().projects.all()).toHaveLength(1);
    expect(site().phases.all()).toHaveLength(1);

    const [done] = await psa.upsertDeals([won]);
    expect(done.external).toEqual({ opportunity: String(site().opportunities.all()[0].id), project: String(site().projects.all()[0].id) });
    expect(site().opportunities.all()).toHaveLength(1);
    expect(site().forecastItems.all()).toHaveLength(1);
    expect(site().projects.all()).toHaveLength(1);
    expect(
      site()
        .phases.all()
        .map((phase) => phase.description),
    ).toEqual(['Onboarding', 'Managed workstation', 'Backup storage (TB)']);
  });

  it('leaves companies alone when leads go, deletes a deal’s opportunity, closes one the site keeps as Lost; gone already is success', async () => {
    const { psa, dealLead } = await withLead();
    const [plain] = await psa.upsertDeals([{ id: 'deal_1', fields: dealFields(), external: {}, lead: dealLead }]);
    const [delivered] = await psa.upsertDeals([{ id: 'deal_2', fields: dealFields({ stage: 'Won' }), external: {}, lead: dealLead, delivery: order }]);
    const before = fake.requests.length;
    expect(await psa.archiveLeads([{ id: 'lead_1', external: dealLead!.external }])).toEqual([{ id: 'lead_1' }]);
    expect(fake.requests.length).toBe(before);
    expect(site().companies.all()).toHaveLength(1);

    const removals = [
      { id: 'deal_1', external: plain.external! },
      { id: 'deal_2', external: delivered.external! },
      { id: 'deal_never_pushed', external: {} },
    ];
    expect(await psa.archiveDeals(removals)).toEqual([{ id: 'deal_1' }, { id: 'deal_2' }, { id: 'deal_never_pushed' }]);
    expect(site().opportunities.get(Number(plain.external!.opportunity))).toBeUndefined();
    expect(site().opportunities.get(Number(delivered.external!.opportunity))).toMatchObject({ status: { name: 'Lost' } });
    expect(await psa.archiveDeals(removals.slice(0, 1))).toEqual([{ id: 'deal_1' }]);
  });

  it('reads nothing back: the change queries answer an empty page without a call', async () => {
    const psa = client();
    expect(await psa.changedLeads(null)).toEqual({ records: [], cursor: null, more: false });
    expect(await psa.changedDeals('anything')).toEqual({ records: [], cursor: null, more: false });
    expect(fake.requests).toEqual([]);
  });

  it("refuses with CrmAuthRefused and ConnectWise's reason once the key pair is revoked, never naming a key", async () => {
    fake.revoke(credentials.public_key);
    const error = await client()
      .open()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmAuthRefused);
    expect((error as Error).message).toBe('ConnectWise PSA refused the credentials: Incorrect public/private key');
    for (const value of Object.values(credentials)) expect((error as Error).message).not.toContain(value);
  });

  it('waits out a 429 for its Retry-After and sends the same request again', async () => {
    const { psa, dealLead } = await withLead();
    fake.rateLimit(1);
    const pushing = psa.upsertDeals([{ id: 'deal_1', fields: dealFields(), external: {}, lead: dealLead }]);
    // The deal's first call: its owner looked up among the site's members.
    await waitFor('the rate-limited member lookup', () => calls('GET', '/system/members').length === 1);
    fake.recover();
    const [outcome] = await pushing;
    expect(outcome.external?.opportunity).toBeDefined();
    const tries = calls('GET', '/system/members');
    expect(tries).toHaveLength(2);
    expect(tries[1].path).toBe(tries[0].path);
    expect(calls('POST', '/sales/opportunities')).toHaveLength(1);
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

  it('retries a 5xx to a read twice, then gives up with CrmUnavailable', async () => {
    fake.fail(503);
    const pending = client().open();
    await waitFor('the first failed call', () => fake.requests.length === 1);
    fake.recover();
    await pending;
    expect(calls('GET', '/sales/stages')).toHaveLength(2);

    fake.fail(503);
    const error = await client()
      .open()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmUnavailable);
    expect((error as Error).message).toBe('ConnectWise PSA answered 503 to GET /sales/stages (An unexpected error has occurred.)');
    expect(calls('GET', '/sales/stages')).toHaveLength(2 + 3);
  });

  it('gives up on a site that does not answer: CrmUnavailable within the deadline of each try', async () => {
    fake.hang();
    const started = Date.now();
    const error = await client({}, {}, 300)
      .open()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmUnavailable);
    expect((error as Error).message).toBe('ConnectWise PSA could not be reached (timed out)');
    expect(fake.requests).toHaveLength(3);
    // Three tries of 300 ms and two short pauses: a bound against a hang, not a speed check.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

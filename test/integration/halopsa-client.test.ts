import { randomBytes } from 'node:crypto';
import {
  CrmAuthRefused,
  CrmClient,
  CrmDealFields,
  CrmLeadFields,
  CrmSetupIncomplete,
  CrmUnavailable,
  DeliveryOrder,
  OutboundDeal,
  OutboundLead,
} from '../../src/modules/integrations/providers/crm-client';
import type { ProviderSettings } from '../../src/modules/integrations/providers/provider-settings';
import { createHaloPsaClient, DEFAULT_HaloPSA_STAGE_MAP, HaloPsaClientOptions } from '../../src/modules/integrations/providers/halopsa-client';
import { FakeHaloPsa } from '../helpers/fakes';
import { waitFor } from '../helpers/wait';
import { providerSettings } from '../helpers/provider-settings';

/**
 * The HaloPSA CrmClient (push only) against the loopback fake HaloPSA
 * (test/helpers/fakes/fake-halopsa.ts, played from the Halo API's OpenAPI document) over real
 * HTTP: what it writes is read back from the fake's records, and its waits are proven by the
 * fake's request log, not by the clock.
 */

const settingsFor = (fake: FakeHaloPsa, timeoutMs = 5_000): ProviderSettings => providerSettings({ halopsaInstanceUrl: fake.url }, timeoutMs);

const leadFields = (overrides: Partial<CrmLeadFields> = {}): CrmLeadFields => ({
  company: 'Umbrella Corporation',
  contactEmail: 'alice@umbrella.example',
  contactName: 'Alice Abernathy',
  industry: 'Biotech',
  employees: 250,
  website: 'https://www.umbrella.example/about',
  country: 'US',
  source: 'web',
  ...overrides,
});
const lead = (id: string, overrides: Partial<CrmLeadFields> = {}, external: Record<string, string> = {}): OutboundLead => ({
  id,
  fields: leadFields(overrides),
  external,
});
const dealFields = (overrides: Partial<CrmDealFields> = {}): CrmDealFields => ({
  name: 'Managed services for Umbrella',
  amount: 12500.5,
  currency: 'EUR',
  stage: DEFAULT_HaloPSA_STAGE_MAP.qualification,
  closeDate: '2026-03-31',
  owner: null,
  ...overrides,
});
const order: DeliveryOrder = {
  proposalId: 'prop_7f3a9c',
  number: 'P-2026-000042',
  title: 'Managed services, year one',
  currency: 'EUR',
  total: 13310,
  lines: [
    { description: 'Managed endpoints', quantity: 50, unitPrice: 20, amount: 1000 },
    { description: 'Onboarding project', quantity: 1, unitPrice: 11000, amount: 11000 },
  ],
};

describe('the HaloPSA CrmClient', () => {
  let fake: FakeHaloPsa;
  let credentials: Record<string, string>;
  const client = (options: HaloPsaClientOptions = {}, timeoutMs?: number): CrmClient => createHaloPsaClient(credentials, settingsFor(fake, timeoutMs), options);
  const calls = (method: string, path: string) => fake.seen(path).filter((request) => request.method === method);
  const deal = (companyId: string, overrides: Partial<OutboundDeal> = {}): OutboundDeal => ({
    id: 'deal_abc123',
    fields: dealFields(),
    external: {},
    lead: { id: 'lead_1', external: { company: companyId } },
    ...overrides,
  });

  beforeEach(async () => {
    fake = await new FakeHaloPsa().start();
    // A new application per test: the client's pacing is per application, like HaloPSA's limit.
    credentials = {
      instance_url: 'https://acme.halopsa.com',
      client_id: `halo-client-${randomBytes(6).toString('hex')}`,
      client_secret: `halo-secret-${randomBytes(12).toString('hex')}`,
    };
    fake.accept(credentials.client_id, credentials.client_secret);
  });
  afterEach(async () => {
    await fake.close();
  });

  it('open() takes a client-credentials token (scope all) and reads the statuses once', async () => {
    const halo = client();
    await halo.open();
    const [grant] = calls('POST', '/auth/token');
    expect(Object.fromEntries(new URLSearchParams(grant.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: credentials.client_id,
      client_secret: credentials.client_secret,
      scope: 'all',
    });
    await halo.upsertDeals([deal(String(fake.addClient({ name: 'Umbrella Corporation' }).id))]);
    expect(calls('GET', '/api/Status')).toHaveLength(1);
    expect(calls('POST', '/auth/token')).toHaveLength(1);
  });

  it('matches a lead’s company to a HaloPSA client by name (case and spacing aside), by website domain or by e-mail domain', async () => {
    const acme = fake.addClient({ name: 'Acme Corp', website: null });
    const globex = fake.addClient({ name: 'Globex Corporation', website: 'https://www.globex.example' });
    const initech = fake.addClient({ name: 'Initech Holdings', website: 'initech.example' });
    fake.addClient({ name: 'Acme Corp Subsidiary' });
    const halo = client();
    await halo.open();
    const outcomes = await halo.upsertLeads([
      lead('lead_1', { company: '  ACME   corp ', website: null, contactEmail: 'wile@gmail.com' }),
      lead('lead_2', { company: 'Globex', website: 'globex.example/contact', contactEmail: 'hank@gmail.com' }),
      lead('lead_3', { company: 'Initech LLC', website: null, contactEmail: 'peter@initech.example' }),
    ]);
    expect(outcomes).toEqual([
      { id: 'lead_1', external: { company: String(acme.id) } },
      { id: 'lead_2', external: { company: String(globex.id) } },
      { id: 'lead_3', external: { company: String(initech.id) } },
    ]);
    expect(calls('POST', '/api/Client')).toHaveLength(0);
    expect(fake.clients()).toHaveLength(4);
  });

  it('creates a client with the company’s name and website once for leads of one company, and uses a linked one as it is', async () => {
    const halo = client();
    await halo.open();
    const kept = fake.addClient({ name: 'Renamed by the MSP' });
    const outcomes = await halo.upsertLeads([
      lead('lead_1'),
      lead('lead_2', { contactEmail: 'carlos@umbrella.example' }),
      lead('lead_3', { company: 'Old name' }, { company: String(kept.id) }),
    ]);
    const created = fake.clients().find((record) => record.name === 'Umbrella Corporation')!;
    expect(created).toMatchObject({ website: 'https://www.umbrella.example/about', inactive: false });
    expect(outcomes).toEqual([
      { id: 'lead_1', external: { company: String(created.id) } },
      { id: 'lead_2', external: { company: String(created.id) } },
      { id: 'lead_3', external: { company: String(kept.id) } },
    ]);
    expect(calls('POST', '/api/Client')).toHaveLength(1);
    expect(fake.store.clients.get(kept.id)!.name).toBe('Renamed by the MSP');

    // A later run (a new client, after a crash before the link was written) finds it by its name.
    expect(await client().upsertLeads([lead('lead_1')])).toEqual([{ id: 'lead_1', external: { company: String(created.id) } }]);
    expect(calls('POST', '/api/Client')).toHaveLength(1);
  });

  it('answers an error for a lead it cannot place and goes on with the others', async () => {
    const halo = client();
    await halo.open();
    const outcomes = await halo.upsertLeads([lead('lead_1', { company: '   ' }), lead('lead_2')]);
    expect(outcomes[0]).toEqual({ id: 'lead_1', error: expect.stringMatching(/no company name/) });
    expect(outcomes[1].external?.company).toBeDefined();
  });

  it('makes an opportunity of the lead’s client with our deal id, then updates it by its id as the deal moves and is won', async () => {
    const umbrella = fake.addClient({ name: 'Umbrella Corporation' });
    const halo = client();
    await halo.open();
    const [first] = await halo.upsertDeals([deal(String(umbrella.id))]);
    const [opportunity] = fake.opportunities();
    expect(first).toEqual({ id: 'deal_abc123', external: { opportunity: String(opportunity.id) } });
    expect(opportunity).toMatchObject({
      summary: 'Managed services for Umbrella',
      client_id: umbrella.id,
      oppvalue: 12500.5,
      targetdate: '2026-03-31T00:00:00Z',
      third_party_id_string: 'deal_abc123',
      hasbeenclosed: false,
    });
    expect(fake.statusName(opportunity.status_id)).toBe('In Progress');
    // Looked for by our id before it was made.
    expect(calls('GET', '/api/Opportunities').map((request) => request.path)).toEqual([
      '/api/Opportunities?third_party_id_string=deal_abc123&pageinate=true&page_size=10&page_no=1',
    ]);

    const [won] = await halo.upsertDeals([
      deal(String(umbrella.id), { external: first.external!, fields: dealFields({ stage: DEFAULT_HaloPSA_STAGE_MAP.closedWon, amount: 13310 }) }),
    ]);
    expect(won).toEqual(first);
    expect(fake.opportunities()).toHaveLength(1);
    expect(fake.opportunities()[0]).toMatchObject({ id: opportunity.id, oppvalue: 13310, hasbeenclosed: true });
    expect(fake.statusName(fake.opportunities()[0].status_id)).toBe('Won');
    expect(JSON.parse(calls('POST', '/api/Opportunities')[1].body)).toEqual([expect.objectContaining({ id: opportunity.id })]);
    expect(calls('GET', '/api/Opportunities')).toHaveLength(1);

    const [lost] = await halo.upsertDeals([deal(String(umbrella.id), { external: first.external!, fields: dealFields({ stage: 'Lost' }) })]);
    expect(lost).toEqual(first);
    expect(fake.statusName(fake.opportunities()[0].status_id)).toBe('Lost');
  });

  it('answers why for a deal without a synced lead, a status the instance lacks, or an opportunity HaloPSA refuses, and writes the rest', async () => {
    const umbrella = fake.addClient({ name: 'Umbrella Corporation' });
    const halo = client();
    await halo.open();
    const outcomes = await halo.upsertDeals([
      deal(String(umbrella.id), { id: 'deal_no_lead', lead: null }),
      deal(String(umbrella.id), { id: 'deal_odd_stage', fields: dealFields({ stage: 'Verbal yes' }) }),
      deal('99999', { id: 'deal_gone_client' }),
      deal(String(umbrella.id), { id: 'deal_fine' }),
    ]);
    expect(outcomes[0]).toEqual({ id: 'deal_no_lead', error: expect.stringMatching(/^the deal has no lead synced to HaloPSA; /) });
    expect(outcomes[1]).toEqual({ id: 'deal_odd_stage', error: expect.stringMatching(/^HaloPSA has no status named "Verbal yes"; /) });
    expect(outcomes[2]).toEqual({ id: 'deal_gone_client', error: 'HaloPSA refused the opportunity: Please select a valid Client' });
    expect(outcomes[3].external?.opportunity).toBeDefined();
    expect(fake.opportunities().map((record) => record.third_party_id_string)).toEqual(['deal_fine']);
  });

  it('turns a won deal’s proposal into a client contract (the default) carrying its lines, linked to the client and the opportunity', async () => {
    const umbrella = fake.addClient({ name: 'Umbrella Corporation' });
    const halo = client();
    await halo.open();
    const won = deal(String(umbrella.id), { fields: dealFields({ stage: 'Won' }), delivery: order });
    const [outcome] = await halo.upsertDeals([won]);
    const [opportunity] = fake.opportunities();
    const [contract] = fake.contracts();
    expect(outcome).toEqual({ id: 'deal_abc123', external: { opportunity: String(opportunity.id), contract: String(contract.id) } });
    expect(contract).toMatchObject({
      client_id: umbrella.id,
      ref: 'P-2026-000042 Managed services for Umbrella',
      start_date: '2026-03-31T00:00:00Z',
      createdfrom_id: opportunity.id,
    });
    expect(contract.note.split('\n')).toEqual([
      'Proposal P-2026-000042: Managed services, year one',
      '1. Managed endpoints — 50 × 20.00 EUR = 1000.00 EUR',
      '2. Onboarding project — 1 × 11000.00 EUR = 11000.00 EUR',
      'Total (after discount and tax): 13310.00 EUR',
      '',
      'From Sales Pipeline: deal deal_abc123, proposal prop_7f3a9c.',
    ]);
    expect(fake.tickets()).toEqual([]);

    // Pushed again with its links: the contract is not made or looked for again.
    expect(await halo.upsertDeals([{ ...won, external: outcome.external! }])).toEqual([outcome]);
    expect(fake.contracts()).toHaveLength(1);
    expect(calls('GET', '/api/ClientContract')).toHaveLength(1);
  });

  it('makes a ticket instead when settings.delivery_record is "ticket", with our proposal id to find it by', async () => {
    const umbrella = fake.addClient({ name: 'Umbrella Corporation' });
    const halo = client({ deliveryRecord: 'ticket' });
    await halo.open();
    const [outcome] = await halo.upsertDeals([deal(String(umbrella.id), { fields: dealFields({ stage: 'Won' }), delivery: order })]);
    const [ticket] = fake.tickets();
    expect(outcome.external).toEqual({ opportunity: String(fake.opportunities()[0].id), ticket: String(ticket.id) });
    expect(ticket).toMatchObject({
      summary: 'Managed services for Umbrella — P-2026-000042',
      client_id: umbrella.id,
      third_party_id_string: 'prop_7f3a9c',
      createdfrom_id: fake.opportunities()[0].id,
    });
    expect(ticket.details).toContain('2. Onboarding project — 1 × 11000.00 EUR = 11000.00 EUR');
    expect(fake.contracts()).toEqual([]);
  });

  it.each(['contract', 'ticket'])('does not duplicate the opportunity or the %s when a push is repeated after a crash lost the links', async (kind) => {
    const umbrella = fake.addClient({ name: 'Umbrella Corporation' });
    const won = deal(String(umbrella.id), { fields: dealFields({ stage: 'Won' }), delivery: order });
    const [first] = await client({ deliveryRecord: kind }).upsertDeals([won]);
    // The engine crashed before it wrote the links: the next run pushes the same deal with none.
    const [again] = await client({ deliveryRecord: kind }).upsertDeals([{ ...won, external: {} }]);
    expect(again).toEqual(first);
    expect(fake.opportunities()).toHaveLength(1);
    expect(kind === 'contract' ? fake.contracts() : fake.tickets()).toHaveLength(1);
    expect(calls('POST', '/api/Opportunities')).toHaveLength(2);
    expect(JSON.parse(calls('POST', '/api/Opportunities')[1].body)).toEqual([expect.objectContaining({ id: Number(first.external!.opportunity) })]);
  });

  it('makes the opportunity again (found by our id, else new) when the one linked was deleted at HaloPSA', async () => {
    const umbrella = fake.addClient({ name: 'Umbrella Corporation' });
    const halo = client();
    const [first] = await halo.upsertDeals([deal(String(umbrella.id))]);
    await halo.archiveDeals([{ id: 'deal_abc123', external: first.external! }]);
    const [again] = await halo.upsertDeals([deal(String(umbrella.id), { external: first.external! })]);
    expect(again.external?.opportunity).not.toBe(first.external!.opportunity);
    expect(fake.opportunities().map((record) => String(record.id))).toEqual([again.external!.opportunity]);
  });

  it('archives: a lead’s client is never touched, a deal’s opportunity is deleted, gone already is success', async () => {
    const umbrella = fake.addClient({ name: 'Umbrella Corporation' });
    const halo = client();
    await halo.open();
    const [pushed] = await halo.upsertDeals([deal(String(umbrella.id))]);
    const before = fake.requests.length;
    expect(await halo.archiveLeads([{ id: 'lead_1', external: { company: String(umbrella.id) } }])).toEqual([{ id: 'lead_1' }]);
    expect(fake.requests).toHaveLength(before);
    expect(fake.clients()).toHaveLength(1);

    const removals = [
      { id: 'deal_abc123', external: pushed.external! },
      { id: 'deal_never_pushed', external: {} },
    ];
    expect(await halo.archiveDeals(removals)).toEqual([{ id: 'deal_abc123' }, { id: 'deal_never_pushed' }]);
    expect(fake.opportunities()).toEqual([]);
    expect(calls('DELETE', `/api/Opportunities/${pushed.external!.opportunity}`)).toHaveLength(1);
    expect(await halo.archiveDeals(removals)).toEqual([{ id: 'deal_abc123' }, { id: 'deal_never_pushed' }]);
  });

  it('is push only: change queries answer an empty page without calling', async () => {
    const halo = client();
    expect(await halo.changedLeads(null)).toEqual({ records: [], cursor: null, more: false });
    expect(await halo.changedDeals('anything')).toEqual({ records: [], cursor: null, more: false });
    expect(fake.requests).toEqual([]);
  });

  it('refuses an unknown settings.delivery_record at open()', async () => {
    await expect(client({ deliveryRecord: 'project' }).open()).rejects.toThrow(CrmSetupIncomplete);
    await expect(client({ deliveryRecord: 'project' }).open()).rejects.toThrow(/"contract", "ticket"/);
    expect(fake.requests).toEqual([]);
  });

  it('takes a new token when the one it has lapses, and refuses with CrmAuthRefused once the application is revoked, never naming a secret', async () => {
    const umbrella = fake.addClient({ name: 'Umbrella Corporation' });
    const halo = client();
    await halo.open();
    fake.expireTokens();
    expect((await halo.upsertDeals([deal(String(umbrella.id))]))[0].external?.opportunity).toBeDefined();
    expect(calls('POST', '/auth/token')).toHaveLength(2);

    fake.revoke(credentials.client_id);
    const midRun = await halo.upsertLeads([lead('lead_1')]).catch((caught: unknown) => caught);
    expect(midRun).toBeInstanceOf(CrmAuthRefused);
    const atOpen = await client()
      .open()
      .catch((caught: unknown) => caught);
    expect(atOpen).toBeInstanceOf(CrmAuthRefused);
    expect((atOpen as Error).message).toBe('HaloPSA refused the credentials: invalid_client: the application is unknown or inactive');
    for (const error of [midRun, atOpen]) {
      expect((error as Error).message).not.toContain(credentials.client_secret);
      expect((error as Error).message).not.toContain(credentials.client_id);
    }
  });

  it('waits out a 429 for its Retry-After and tries again', async () => {
    const halo = client();
    await halo.open();
    fake.rateLimit(1);
    const pushing = halo.upsertLeads([lead('lead_1')]);
    await waitFor('the rate-limited search', () => calls('GET', '/api/Client').length === 1);
    fake.recover();
    const [outcome] = await pushing;
    expect(outcome.external?.company).toBe(String(fake.clients()[0].id));
    // The name search was refused, waited out and asked again; the domain search followed once.
    const tries = calls('GET', '/api/Client').map((request) => request.path);
    expect(tries).toEqual([tries[0], tries[0], '/api/Client?search=umbrella.example&pageinate=true&page_size=100&page_no=1']);
    expect(tries[0]).toBe('/api/Client?search=Umbrella+Corporation&pageinate=true&page_size=100&page_no=1');
    expect(fake.clients()).toHaveLength(1);
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
    const halo = client();
    await halo.open();
    fake.fail(503);
    const pending = halo.upsertLeads([lead('lead_1')]);
    await waitFor('the first failed search', () => calls('GET', '/api/Client').length === 1);
    fake.recover();
    expect((await pending)[0].external?.company).toBeDefined();

    fake.fail(502);
    await expect(client().upsertLeads([lead('lead_2', { company: 'Globex' })])).rejects.toThrow(/^HaloPSA answered 502/);
    expect(calls('POST', '/auth/token')).toHaveLength(1 + 3);
  });

  it('never sends a write again after a 5xx (it may have been carried out); the next push finds the record instead of making a second', async () => {
    const halo = client();
    await halo.open();
    const [company] = await halo.upsertLeads([lead('lead_1')]);
    fake.loseAnswerToNextPost('/api/Opportunities');
    await expect(halo.upsertDeals([deal(company.external!.company, { id: 'deal_lost_answer' })])).rejects.toThrow(/^HaloPSA answered 500/);
    expect(calls('POST', '/api/Opportunities')).toHaveLength(1);
    const [again] = await client().upsertDeals([deal(company.external!.company, { id: 'deal_lost_answer' })]);
    expect(fake.opportunities().filter((ticket) => ticket.third_party_id_string === 'deal_lost_answer')).toEqual([
      expect.objectContaining({ id: Number(again.external!.opportunity) }),
    ]);
  });

  it('gives up on a HaloPSA that does not answer: CrmUnavailable within the deadline of each try', async () => {
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
});

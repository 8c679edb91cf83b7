import { randomUUID } from 'node:crypto';
import { startTestApp, TestAccount, TestApp } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import type { AutotaskUser } from '../helpers/fakes/fake-autotask';
import type { ConnectWiseKeys } from '../helpers/fakes/fake-connectwise';
import type { CwOpportunity } from '../helpers/fakes/fake-connectwise-site';
import type { FakeProvider } from '../helpers/fakes/fake-provider';
import { syncRuns } from '../helpers/sync-runs';
import { waitFor } from '../helpers/wait';

/**
 * The PSA hand-off through the sync engine, against loopback PSAs that keep state as the real ones
 * do (each played from its provider's API documentation): our service, database and sync worker
 * are the real ones. A lead's company becomes (or is found as) the PSA's company, a deal its
 * opportunity following stage and value, and a won deal's latest proposal the delivery record the
 * integration's settings name; the deal shows every record's id in `external_ids`.
 */

/** What a test reads of one PSA, in the PSA's own terms turned into ours. */
interface PsaView {
  provider: 'connectwise' | 'autotask' | 'halopsa';
  fake: (crms: FakeCrms) => FakeProvider;
  /** A fresh set of credentials. */
  credentials: () => Record<string, string>;
  /** The PSA accepts them (again). */
  accept: (crms: FakeCrms, credentials: Record<string, string>) => void;
  revoke: (crms: FakeCrms, credentials: Record<string, string>) => void;
  /** A company that exists at the PSA before we connect. */
  addCompany: (crms: FakeCrms, name: string, website: string) => string;
  companies: (crms: FakeCrms) => Array<{ id: string; name: string }>;
  /** The opportunities that carry our deal id. */
  opportunities: (crms: FakeCrms, dealId: string) => Array<{ id: string; companyId: string; name: string; value: number; stage: string }>;
  /** The delivery records of a kind made for a deal's opportunity or proposal, with the text or lines that carry the proposal's lines. */
  deliveries: (crms: FakeCrms, kind: string, ids: { dealId: string; proposalId: string; opportunityId: string }) => Array<{ id: string; lines: string }>;
  /** The PSA's value for our stages, as the default stage map has them. */
  stages: { qualification: string; negotiation: string; won: string };
  defaultDelivery: string;
  otherDelivery: string;
  /** Settings the PSA needs besides the defaults (ConnectWise: the fallback sales rep). */
  settings?: Record<string, unknown>;
}

const connectwiseOpportunity = (crms: FakeCrms, opportunity: CwOpportunity) => {
  const site = crms.connectwise.site;
  const forecast = site.forecastItems.all().find((item) => item.opportunity.id === opportunity.id);
  const status = site.statuses.get(opportunity.status.id)!;
  return {
    id: String(opportunity.id),
    companyId: String(opportunity.company.id),
    name: opportunity.name,
    value: forecast?.revenue ?? 0,
    stage: status.wonFlag || status.lostFlag ? status.name : (opportunity.stage?.name ?? ''),
  };
};

/** Autotask's opportunity status picklist (a system list). */
const AUTOTASK_STATUS: Record<number, string> = { 0: 'Not Ready To Buy', 1: 'Active', 2: 'Lost', 3: 'Closed', 4: 'Implemented' };

const PSAS: PsaView[] = [
  {
    provider: 'autotask',
    fake: (crms) => crms.autotask,
    credentials: () => ({
      username: `api-${randomUUID().slice(0, 8)}@acme-msp.example.com`,
      secret: `at-secret-${randomUUID()}`,
      integration_code: `AT-${randomUUID()}`,
    }),
    accept: (crms, credentials) => crms.autotask.accept(credentials as unknown as AutotaskUser),
    revoke: (crms, credentials) => crms.autotask.revoke(credentials.username),
    addCompany: (crms, name, website) => String(crms.autotask.addCompany({ companyName: name, webAddress: website }).id),
    companies: (crms) => crms.autotask.companies().map((company) => ({ id: String(company.id), name: String(company.companyName) })),
    opportunities: (crms, dealId) =>
      crms.autotask
        .opportunities()
        .filter((opportunity) => opportunity.promotionName === dealId)
        .map((opportunity) => ({
          id: String(opportunity.id),
          companyId: String(opportunity.companyID),
          name: String(opportunity.title),
          value: Number(opportunity.amount),
          stage: AUTOTASK_STATUS[Number(opportunity.status)],
        })),
    deliveries: (crms, kind, { opportunityId }) =>
      (kind === 'contract' ? crms.autotask.contracts() : crms.autotask.projects())
        .filter((record) => String(record.opportunityID) === opportunityId)
        .map((record) => ({
          id: String(record.id),
          lines: crms.autotask
            .charges(kind as 'contract' | 'project', record.id as number)
            .map((charge) => `${String(charge.name)} × ${String(charge.unitQuantity)}`)
            .join('\n'),
        })),
    stages: { qualification: 'Active', negotiation: 'Active', won: 'Closed' },
    defaultDelivery: 'contract',
    otherDelivery: 'project',
  },
  {
    provider: 'connectwise',
    fake: (crms) => crms.connectwise,
    credentials: () => ({
      site: 'api-na.myconnectwise.net',
      company_id: 'acmemsp',
      public_key: `pub${randomUUID().slice(0, 12)}`,
      private_key: `priv-${randomUUID()}`,
      client_id: randomUUID(),
    }),
    accept: (crms, credentials) => crms.connectwise.accept(credentials as unknown as ConnectWiseKeys),
    revoke: (crms, credentials) => crms.connectwise.revoke(credentials.public_key),
    addCompany: (crms, name, website) => String(crms.connectwise.addCompany({ name, website }).id),
    companies: (crms) => crms.connectwise.site.companies.all().map((company) => ({ id: String(company.id), name: company.name })),
    opportunities: (crms, dealId) =>
      crms.connectwise.site.opportunities
        .all()
        .filter((opportunity) => opportunity.source === `Sales Pipeline ${dealId}`)
        .map((opportunity) => connectwiseOpportunity(crms, opportunity)),
    deliveries: (crms, kind, { opportunityId }) => {
      const site = crms.connectwise.site;
      if (kind === 'project') {
        return site.projects
          .all()
          .filter((project) => String(project.opportunity?.id) === opportunityId)
          .map((project) => ({
            id: String(project.id),
            lines: site.phases
              .all()
              .filter((phase) => phase.projectId === project.id)
              .map((phase) => `${phase.description}: ${phase.notes ?? ''}`)
              .join('\n'),
          }));
      }
      return site.agreements
        .all()
        .filter((agreement) => String(agreement.opportunity?.id) === opportunityId)
        .map((agreement) => ({ id: String(agreement.id), lines: agreement.internalNotes ?? '' }));
    },
    stages: { qualification: 'Qualified Lead', negotiation: 'Negotiation', won: 'Won' },
    defaultDelivery: 'project',
    otherDelivery: 'agreement',
    settings: { sales_rep: 'admin1' },
  },
  {
    provider: 'halopsa',
    fake: (crms) => crms.halopsa,
    credentials: () => ({ instance_url: 'https://acme.halopsa.com', client_id: `halo-${randomUUID()}`, client_secret: `halo-secret-${randomUUID()}` }),
    accept: (crms, credentials) => crms.halopsa.accept(credentials.client_id, credentials.client_secret),
    revoke: (crms, credentials) => crms.halopsa.revoke(credentials.client_id),
    addCompany: (crms, name, website) => String(crms.halopsa.addClient({ name, website }).id),
    companies: (crms) => crms.halopsa.clients().map((client) => ({ id: String(client.id), name: client.name })),
    opportunities: (crms, dealId) =>
      crms.halopsa
        .opportunities()
        .filter((ticket) => ticket.third_party_id_string === dealId)
        .map((ticket) => ({
          id: String(ticket.id),
          companyId: String(ticket.client_id),
          name: ticket.summary,
          value: ticket.oppvalue ?? 0,
          stage: crms.halopsa.statusName(ticket.status_id) ?? `#${ticket.status_id}`,
        })),
    deliveries: (crms, kind, { proposalId, opportunityId }) =>
      kind === 'contract'
        ? crms.halopsa
            .contracts()
            .filter((contract) => String(contract.createdfrom_id) === opportunityId)
            .map((contract) => ({ id: String(contract.id), lines: contract.note }))
        : crms.halopsa
            .tickets()
            .filter((ticket) => ticket.third_party_id_string === proposalId)
            .map((ticket) => ({ id: String(ticket.id), lines: ticket.details })),
    stages: { qualification: 'In Progress', negotiation: 'In Progress', won: 'Won' },
    defaultDelivery: 'contract',
    otherDelivery: 'ticket',
  },
];

describe.each(PSAS)('PSA sync with $provider', (psa) => {
  let crms: FakeCrms;
  let app: TestApp;
  let account: TestAccount;
  let credentials: Record<string, string>;

  const api = (method: string, path: string, body?: unknown) => app.request(method, path, { key: account.testKey, body });
  const { settled, syncNow } = syncRuns(api);
  const connect = async (settings?: Record<string, unknown>) => {
    const made = await api('POST', '/v1/integrations', { type: 'psa', provider: psa.provider, credentials, settings: { ...psa.settings, ...settings } });
    expect(made.status).toBe(201);
    return made.body.id as string;
  };
  /** A lead and its deal, in qualification. */
  const leadAndDeal = async (company: string, website: string) => {
    const lead = (await api('POST', '/v1/leads', { company, contact_email: `buyer@${new URL(website).hostname}`, contact_name: 'Grace Hopper', website })).body;
    const deal = (await api('POST', '/v1/deals', { name: `${company} managed services`, value: 24000, lead_id: lead.id, stage: 'qualification' })).body;
    return { lead, deal };
  };
  const proposalFor = async (dealId: string) => {
    const made = await api('POST', '/v1/proposals', {
      deal_id: dealId,
      title: 'Managed services, year one',
      line_items: [
        { description: 'Managed endpoints', quantity: 40, unit_price: 35 },
        { description: 'Onboarding project', quantity: 1, unit_price: 4800 },
      ],
    });
    expect(made.status).toBe(201);
    return made.body;
  };
  const externalIds = async (dealId: string) => (await api('GET', `/v1/deals/${dealId}`)).body.external_ids as Array<Record<string, string>>;
  const deliveryLinked = (dealId: string, kind: string) =>
    waitFor(`the ${kind} linked to the deal`, async () => (await externalIds(dealId)).find((record) => record.record === kind));

  beforeAll(async () => {
    crms = await startFakeCrms();
    app = await startTestApp({ crms, sync: { leaseMs: 3_000 } });
  });
  beforeEach(async () => {
    await app.reset();
    account = await app.createAccount();
    psa.fake(crms).recover();
    credentials = psa.credentials();
    psa.accept(crms, credentials);
  });
  afterAll(async () => {
    await app.close();
    await crms.close();
  });

  it('hands a deal over: company made or matched, opportunity following stage and value, the won deal’s proposal as the delivery record, ids on the deal', async () => {
    const existing = psa.addCompany(crms, 'Northwind Traders', 'https://northwind.example');
    const matched = await leadAndDeal('Northwind Traders', 'https://northwind.example');
    const fresh = await leadAndDeal(`Contoso ${Date.now()}`, `https://contoso-${Date.now()}.example`);
    const integrationId = await connect();
    const run = await settled(integrationId);
    expect(run).toMatchObject({ trigger: 'connect', pushed: 4, failed: 0, pulled: 0 });

    // The existing company is used, not made twice; the new one is made.
    expect(psa.companies(crms).filter((company) => company.name === 'Northwind Traders')).toEqual([{ id: existing, name: 'Northwind Traders' }]);
    const made = psa.companies(crms).filter((company) => company.name === fresh.lead.company);
    expect(made).toHaveLength(1);
    const [matchedOpportunity] = psa.opportunities(crms, matched.deal.id);
    expect(matchedOpportunity).toMatchObject({ companyId: existing, value: 24000, stage: psa.stages.qualification });
    const [opportunity, ...more] = psa.opportunities(crms, fresh.deal.id);
    expect(more).toEqual([]);
    expect(opportunity).toMatchObject({ companyId: made[0].id, name: fresh.deal.name, value: 24000, stage: psa.stages.qualification });

    // The opportunity follows the deal's stage and value.
    expect((await api('PUT', `/v1/deals/${fresh.deal.id}`, { stage: 'negotiation', value: 26500 })).status).toBe(200);
    await waitFor('the opportunity to follow', () => psa.opportunities(crms, fresh.deal.id)[0]?.value === 26500);
    expect(psa.opportunities(crms, fresh.deal.id)).toEqual([expect.objectContaining({ id: opportunity.id, stage: psa.stages.negotiation })]);

    // Won: the latest proposal's lines become the delivery record, once.
    await proposalFor(fresh.deal.id);
    const proposal = await proposalFor(fresh.deal.id);
    expect((await api('PUT', `/v1/deals/${fresh.deal.id}`, { stage: 'closed_won' })).status).toBe(200);
    const ids = { dealId: fresh.deal.id, proposalId: proposal.id, opportunityId: opportunity.id };
    // Linked once its lines are all written: the link is made after the PSA's calls.
    await deliveryLinked(fresh.deal.id, psa.defaultDelivery);
    const [delivery, ...twice] = psa.deliveries(crms, psa.defaultDelivery, ids);
    expect(twice).toEqual([]);
    expect(delivery.lines).toContain('Managed endpoints');
    expect(delivery.lines).toContain('Onboarding project');
    await waitFor('the opportunity won', () => psa.opportunities(crms, fresh.deal.id)[0]?.stage === psa.stages.won);
    await settled(integrationId);
    expect(await externalIds(fresh.deal.id)).toEqual(
      expect.arrayContaining([
        { integration_id: integrationId, provider: psa.provider, record: 'opportunity', id: opportunity.id },
        { integration_id: integrationId, provider: psa.provider, record: psa.defaultDelivery, id: delivery.id },
      ]),
    );
    expect(await externalIds(fresh.deal.id)).toHaveLength(2);

    // Another change of the won deal pushes again and makes no second delivery record.
    expect((await api('PUT', `/v1/deals/${fresh.deal.id}`, { metadata: { po: '4711' }, owner: 'grace@msp.example' })).status).toBe(200);
    await syncNow(integrationId);
    expect(psa.deliveries(crms, psa.defaultDelivery, ids)).toHaveLength(1);
    expect(psa.opportunities(crms, fresh.deal.id)).toHaveLength(1);
  });

  it(`makes the other delivery record when settings.delivery_record says so`, async () => {
    const { deal } = await leadAndDeal(`Fabrikam ${Date.now()}`, `https://fabrikam-${Date.now()}.example`);
    const integrationId = await connect({ delivery_record: psa.otherDelivery });
    await settled(integrationId);
    const proposal = await proposalFor(deal.id);
    expect((await api('PUT', `/v1/deals/${deal.id}`, { stage: 'closed_won' })).status).toBe(200);
    const [opportunity] = psa.opportunities(crms, deal.id);
    const ids = { dealId: deal.id, proposalId: proposal.id, opportunityId: opportunity.id };
    await deliveryLinked(deal.id, psa.otherDelivery);
    const [delivery] = psa.deliveries(crms, psa.otherDelivery, ids);
    expect(delivery.lines).toContain('Managed endpoints');
    expect(psa.deliveries(crms, psa.defaultDelivery, ids)).toEqual([]);
    await settled(integrationId);
    expect(await externalIds(deal.id)).toContainEqual({ integration_id: integrationId, provider: psa.provider, record: psa.otherDelivery, id: delivery.id });
  });

  it('waits out a 429 and makes each record once; credentials revoked later move the integration to error and back', async () => {
    const integrationId = await connect();
    await settled(integrationId);
    const before = psa.fake(crms).requests.length;
    psa.fake(crms).rateLimit(1);
    const { deal } = await leadAndDeal(`Litware ${Date.now()}`, `https://litware-${Date.now()}.example`);
    await waitFor('a push to meet the 429', () => psa.fake(crms).requests.length > before);
    psa.fake(crms).recover();
    await waitFor('the opportunity', () => psa.opportunities(crms, deal.id).length > 0);
    await settled(integrationId);
    expect(psa.opportunities(crms, deal.id)).toHaveLength(1);

    psa.revoke(crms, credentials);
    await syncNow(integrationId, 'failed');
    const broken = (await api('GET', `/v1/integrations/${integrationId}`)).body;
    expect(broken).toMatchObject({ status: 'error', last_error: expect.any(String) });
    for (const secret of Object.values(credentials)) if (secret.length >= 12) expect(broken.last_error).not.toContain(secret);
    // The same keys work again (accepted anew at the PSA): the next run brings the integration back.
    psa.accept(crms, credentials);
    await syncNow(integrationId);
    expect((await api('GET', `/v1/integrations/${integrationId}`)).body.status).toBe('connected');
  });
});

describe('PSA settings', () => {
  let crms: FakeCrms;
  let app: TestApp;
  let account: TestAccount;
  beforeAll(async () => {
    crms = await startFakeCrms({ acceptAny: true });
    app = await startTestApp({ crms });
    account = await app.createAccount();
  });
  afterAll(async () => {
    await app.close();
    await crms.close();
  });

  it('refuses a delivery record the PSA does not make, and one for a CRM, naming settings.delivery_record', async () => {
    const halo = { instance_url: 'https://acme.halopsa.com', client_id: 'halo-any', client_secret: 'halo-secret-0001' };
    const refused = await app.request('POST', '/v1/integrations', {
      key: account.testKey,
      body: { type: 'psa', provider: 'halopsa', credentials: halo, settings: { delivery_record: 'agreement' } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'parameter_invalid', param: 'settings[delivery_record]' });
    expect(refused.body.error.message).toContain('halopsa takes contract or ticket');
    const crm = await app.request('POST', '/v1/integrations', {
      key: account.testKey,
      body: { type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-any-0001' }, settings: { delivery_record: 'project' } },
    });
    expect(crm.status).toBe(400);
    expect(crm.body.error.param).toBe('settings[delivery_record]');
    const unknown = await app.request('POST', '/v1/integrations', {
      key: account.testKey,
      body: { type: 'psa', provider: 'halopsa', credentials: halo, settings: { delivery_record: 'invoice' } },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('parameter_invalid');
  });
});

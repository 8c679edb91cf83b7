import { startTestApp, TestAccount, TestApp } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { SyncRunBody, syncRuns } from '../helpers/sync-runs';
import { waitFor } from '../helpers/wait';

/**
 * Two-way sync with a loopback HubSpot and Salesforce that keep state as the real ones do: our
 * service, database and sync worker are the real ones; only the providers are played.
 */

const HUBSPOT_TOKEN = 'pat-na1-sync-0001';
const SALESFORCE = { client_id: '3MVG9sync', client_secret: 'sync-secret-0001', refresh_token: '5Aep861sync0001' };

describe('CRM sync', () => {
  let crms: FakeCrms;
  let app: TestApp;
  let account: TestAccount;

  const api = (method: string, path: string, body?: unknown) => app.request(method, path, { key: account.testKey, body });
  const { runs, settled, startRun, syncNow } = syncRuns(api);
  const events = async (type: string) => (await api('GET', `/v1/events?type=${type}&limit=100`)).body.data as Array<{ data: { object: { id: string } } }>;

  beforeAll(async () => {
    crms = await startFakeCrms();
    crms.hubspot.accept(HUBSPOT_TOKEN);
    crms.salesforce.accept(SALESFORCE.client_id, SALESFORCE.client_secret, SALESFORCE.refresh_token);
    app = await startTestApp({ crms, sync: { leaseMs: 3_000 } });
  });
  beforeEach(async () => {
    await app.reset();
    account = await app.createAccount();
    crms.hubspot.recover();
    crms.salesforce.recover();
  });
  afterAll(async () => {
    await app.close();
    await crms.close();
  });

  const connectHubSpot = async () => {
    const made = await api('POST', '/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: HUBSPOT_TOKEN } });
    expect(made.status).toBe(201);
    return made.body.id as string;
  };
  const connectSalesforce = async () => {
    const made = await api('POST', '/v1/integrations', {
      type: 'crm',
      provider: 'salesforce',
      credentials: { ...SALESFORCE, instance_url: 'https://force.example.test' },
    });
    expect(made.status).toBe(201);
    return made.body.id as string;
  };

  describe('with HubSpot', () => {
    it('backfills on connect: existing leads and deals appear as associated contacts, companies and deals, with progress in the run', async () => {
      const lead = (
        await api('POST', '/v1/leads', {
          company: 'Backfill Ltd',
          contact_email: `ada-${Date.now()}@backfill.test`,
          contact_name: 'Ada Lovelace',
          website: 'https://backfill.test',
        })
      ).body;
      const deal = (await api('POST', '/v1/deals', { name: 'Backfill deal', value: 12500.5, lead_id: lead.id, stage: 'qualification' })).body;
      const integrationId = await connectHubSpot();
      const run = await settled(integrationId);
      expect(run).toMatchObject({ object: 'sync_run', integration_id: integrationId, trigger: 'connect', pushed: 2, failed: 0, to_push: 0 });
      const succeeded = (await events('integration.sync_succeeded')) as unknown as Array<{ data: { object: SyncRunBody } }>;
      expect(succeeded.map((event) => event.data.object)).toContainEqual(
        expect.objectContaining({ id: run.id, object: 'sync_run', status: 'succeeded', pushed: 2 }),
      );

      const contact = crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id)!;
      expect(contact.properties).toMatchObject({ email: lead.contact_email, firstname: 'Ada', lastname: 'Lovelace', company: 'Backfill Ltd' });
      const companyIds = crms.hubspot.associations('contacts', contact.id, 'companies');
      expect(companyIds).toHaveLength(1);
      const hubspotDeal = crms.hubspot.find('deals', 'sales_pipeline_id', deal.id)!;
      expect(hubspotDeal.properties).toMatchObject({ dealname: 'Backfill deal', dealstage: 'qualifiedtobuy', pipeline: 'default' });
      expect(Number(hubspotDeal.properties.amount)).toBe(12500.5);
      expect(crms.hubspot.associations('deals', hubspotDeal.id, 'contacts')).toEqual([contact.id]);
      expect(crms.hubspot.associations('deals', hubspotDeal.id, 'companies')).toEqual(companyIds);
      // The deal shows the record it became (REST external_ids, GraphQL externalIds).
      expect((await api('GET', `/v1/deals/${deal.id}`)).body.external_ids).toEqual([
        { integration_id: integrationId, provider: 'hubspot', record: 'deal', id: hubspotDeal.id },
      ]);
    });

    it('pushes creates and updates as they happen, maps stages as configured, and archives a deleted lead', async () => {
      const integrationId = await connectHubSpot();
      await settled(integrationId);
      const lead = (await api('POST', '/v1/leads', { company: 'Live Co', contact_email: `grace-${Date.now()}@live.test`, contact_name: 'Grace Hopper' })).body;
      const deal = (await api('POST', '/v1/deals', { name: 'Live deal', value: 900, lead_id: lead.id })).body;
      const hubspotDeal = await waitFor('the deal at HubSpot', () => crms.hubspot.find('deals', 'sales_pipeline_id', deal.id));
      expect(hubspotDeal.properties.dealstage).toBe('appointmentscheduled');

      expect((await api('PUT', `/v1/deals/${deal.id}`, { stage: 'proposal' })).status).toBe(200);
      await waitFor('the stage at HubSpot', () => crms.hubspot.find('deals', 'sales_pipeline_id', deal.id)?.properties.dealstage === 'presentationscheduled');

      // A custom pipeline's stage ids, every stage mapped; a map missing one is refused.
      const partial = await api('POST', `/v1/integrations/${integrationId}`, { settings: { stage_map: { prospecting: 'a' } } });
      expect(partial.status).toBe(400);
      expect(partial.body.error).toMatchObject({
        code: 'parameter_missing',
        param: expect.stringMatching(/^settings\[stage_map\]\[qualification\]$|stage_map/),
      });
      const stageMap = { prospecting: 's1', qualification: 's2', proposal: 's3', negotiation: 's4', closed_won: 's5', closed_lost: 's6' };
      // The stages of a pipeline of the account's own at HubSpot.
      for (const stage of Object.values(stageMap)) crms.hubspot.dealStages.add(stage);
      const updated = await api('POST', `/v1/integrations/${integrationId}`, { settings: { stage_map: stageMap } });
      expect(updated.status).toBe(200);
      expect(updated.body.settings.stage_map).toEqual(stageMap);
      expect((await api('PUT', `/v1/deals/${deal.id}`, { stage: 'negotiation' })).status).toBe(200);
      await waitFor('the custom stage at HubSpot', () => crms.hubspot.find('deals', 'sales_pipeline_id', deal.id)?.properties.dealstage === 's4');

      expect((await api('PUT', `/v1/leads/${lead.id}`, { company: 'Live Company' })).status).toBe(200);
      await waitFor('the company at HubSpot', () => crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id)?.properties.company === 'Live Company');

      const contactId = crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id)!.id;
      expect((await api('DELETE', `/v1/leads/${lead.id}`)).status).toBe(200);
      await waitFor('the contact archived', () => crms.hubspot.allObjects('contacts').find((contact) => contact.id === contactId)?.archived);
      // Once each: a retry would have updated, never duplicated.
      expect(crms.hubspot.allObjects('deals').filter((one) => one.properties.sales_pipeline_id === deal.id)).toHaveLength(1);
    });

    it('pulls a stage moved at HubSpot (with deal.stage_changed) and a contact made there, and does not echo its own writes', async () => {
      const integrationId = await connectHubSpot();
      const lead = (await api('POST', '/v1/leads', { company: 'Pull Co', contact_email: `pull-${Date.now()}@pull.test` })).body;
      const deal = (await api('POST', '/v1/deals', { name: 'Pull deal', value: 100, lead_id: lead.id })).body;
      await waitFor('the deal at HubSpot', () => crms.hubspot.find('deals', 'sales_pipeline_id', deal.id));
      await settled(integrationId);

      // Our own writes come back from the search as changed records: nothing is applied.
      const quiet = await syncNow(integrationId);
      expect(quiet).toMatchObject({ status: 'succeeded', pulled: 0, failed: 0 });
      expect(await events('lead.updated')).toHaveLength(0);

      crms.hubspot.userEdit('deals', crms.hubspot.find('deals', 'sales_pipeline_id', deal.id)!.id, { dealstage: 'contractsent' });
      const email = `made-in-hubspot-${Date.now()}@crm.test`;
      crms.hubspot.userCreate('contacts', { email, firstname: 'Made', lastname: 'There', company: 'CRM Born Inc' });
      const pulled = await syncNow(integrationId);
      expect(pulled).toMatchObject({ status: 'succeeded', pulled: 2, failed: 0 });

      expect((await api('GET', `/v1/deals/${deal.id}`)).body.stage).toBe('negotiation');
      const moves = await events('deal.stage_changed');
      expect(moves.map((event) => event.data.object.id)).toContain(deal.id);
      const born = (await api('GET', `/v1/leads?limit=100`)).body.data.find((one: { contact_email: string }) => one.contact_email === email);
      expect(born).toMatchObject({ company: 'CRM Born Inc', contact_name: 'Made There' });

      // Applying them wrote events, whose pushes find HubSpot already agreeing: a further run pulls nothing new.
      await settled(integrationId);
      expect(await syncNow(integrationId)).toMatchObject({ pulled: 0, failed: 0 });

      // The lead born in HubSpot, changed here, is written to its own record (by its HubSpot id), not made twice.
      const bornContact = crms.hubspot.find('contacts', 'email', email)!;
      expect((await api('PUT', `/v1/leads/${born.id}`, { company: 'CRM Born Renamed' })).status).toBe(200);
      await waitFor('the rename at HubSpot', () => crms.hubspot.find('contacts', 'email', email)?.properties.company === 'CRM Born Renamed');
      const contacts = crms.hubspot.objects('contacts').filter((contact) => contact.properties.email === email);
      expect(contacts.map((contact) => [contact.id, contact.properties.sales_pipeline_id])).toEqual([[bornContact.id, born.id]]);
    });

    it('a deal made in HubSpot arrives as a deal of ours, its stage mapped back', async () => {
      const integrationId = await connectHubSpot();
      await settled(integrationId);
      crms.hubspot.userCreate('deals', {
        dealname: 'Born in HubSpot',
        amount: '7300.25',
        dealstage: 'decisionmakerboughtin',
        pipeline: 'default',
        closedate: '2027-02-01T00:00:00.000Z',
      });
      expect(await syncNow(integrationId)).toMatchObject({ status: 'succeeded', pulled: 1, failed: 0 });
      const deals = (await api('GET', '/v1/deals?limit=100')).body.data as Array<Record<string, unknown>>;
      expect(deals.find((deal) => deal.name === 'Born in HubSpot')).toMatchObject({ value: 7300.25, stage: 'negotiation', expected_close_date: '2027-02-01' });
      expect((await events('deal.created')).length).toBe(1);
    });

    describe('a lead changed on both sides since they last agreed', () => {
      /** A lead at HubSpot, then HubSpot down, so a change made here stays owed (its run failed, backing off). */
      const agreedThenOffline = async () => {
        const integrationId = await connectHubSpot();
        const lead = (await api('POST', '/v1/leads', { company: 'Agreed Co', contact_email: `both-${Date.now()}@both.test` })).body;
        const contact = await waitFor('the contact', () => crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id));
        await settled(integrationId);
        return { integrationId, lead, contact };
      };
      const changeHereWhileDown = async (integrationId: string, leadId: string, company: string) => {
        crms.hubspot.fail(503);
        expect((await api('PUT', `/v1/leads/${leadId}`, { company })).status).toBe(200);
        await waitFor('the change run to fail', async () => (await runs(integrationId)).find((run) => run.trigger === 'change' && run.status === 'failed'));
        crms.hubspot.recover();
      };

      it('the newer change, made in HubSpot, wins', async () => {
        const { integrationId, lead, contact } = await agreedThenOffline();
        await changeHereWhileDown(integrationId, lead.id, 'Older Here');
        crms.hubspot.userEdit('contacts', contact.id, { company: 'Newer There' });
        await syncNow(integrationId);
        expect((await api('GET', `/v1/leads/${lead.id}`)).body.company).toBe('Newer There');
        expect(crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id)!.properties.company).toBe('Newer There');
      });

      it('the newer change, made here, wins', async () => {
        const { integrationId, lead, contact } = await agreedThenOffline();
        crms.hubspot.userEdit('contacts', contact.id, { company: 'Older There' });
        await changeHereWhileDown(integrationId, lead.id, 'Newer Here');
        await syncNow(integrationId);
        expect((await api('GET', `/v1/leads/${lead.id}`)).body.company).toBe('Newer Here');
        expect(crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id)!.properties.company).toBe('Newer Here');
      });
    });

    it('keeps what cannot come over as failures readable through GraphQL, and goes on', async () => {
      const integrationId = await connectHubSpot();
      await settled(integrationId);
      crms.hubspot.userCreate('contacts', { firstname: 'No', lastname: 'Email', company: 'Nameless' });
      crms.hubspot.userCreate('contacts', { email: `fine-${Date.now()}@crm.test`, company: 'Fine Co' });
      const run = await syncNow(integrationId);
      expect(run).toMatchObject({ status: 'succeeded', pulled: 1, failed: 1 });
      const read = await app.graphql(
        `query ($id: ID!) { integrationSyncRuns(id: $id, filter: { limit: 10 }) { data { id failures(limit: 10) { direction objectType externalId message } } } }`,
        { id: integrationId },
        account.testKey,
      );
      expect(read.body.errors).toBeUndefined();
      // That run's own (a run for the pushes its pull caused may have come after it).
      const [failure] = (read.body.data.integrationSyncRuns.data as Array<{ id: string; failures: unknown[] }>).find((one) => one.id === run.id)!
        .failures as Array<{
        message: string;
      }>;
      expect(failure).toMatchObject({ direction: 'pull', objectType: 'lead', externalId: expect.any(String) });
      expect(failure.message).toMatch(/contactEmail must be an email address/);
    });

    it('a revoked token moves the integration to error (integration.error), and a successful run brings it back with what was owed', async () => {
      const token = `pat-na1-revoke-${Date.now()}`;
      crms.hubspot.accept(token);
      const made = await api('POST', '/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: token } });
      const integrationId = made.body.id as string;
      await settled(integrationId);

      crms.hubspot.revoke(token);
      const lead = (await api('POST', '/v1/leads', { company: 'Owed Co', contact_email: `owed-${Date.now()}@owed.test` })).body;
      await waitFor('the integration in error', async () => (await api('GET', `/v1/integrations/${integrationId}`)).body.status === 'error');
      const shown = (await api('GET', `/v1/integrations/${integrationId}`)).body;
      expect(shown.last_error).toMatch(/HubSpot|authentication|credentials/i);
      expect(await events('integration.error')).toHaveLength(1);
      const failed = (await runs(integrationId)).find((run) => run.status === 'failed')!;
      expect(failed.error).toBe(shown.last_error);
      expect(await events('integration.sync_failed')).not.toHaveLength(0);

      crms.hubspot.accept(token);
      const back = await syncNow(integrationId);
      expect(back).toMatchObject({ status: 'succeeded', pushed: 1 });
      expect((await api('GET', `/v1/integrations/${integrationId}`)).body.status).toBe('connected');
      expect(crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id)).toBeDefined();
    });

    it('a HubSpot that keeps answering 429 fails the run without error state; the next run pushes what was owed', async () => {
      const integrationId = await connectHubSpot();
      await settled(integrationId);
      // Longer than the client waits at once (30 s): it gives up at once and says when to come back.
      crms.hubspot.rateLimit(120);
      const lead = (await api('POST', '/v1/leads', { company: 'Limited Co', contact_email: `limited-${Date.now()}@limited.test` })).body;
      const failed = await waitFor('the change run to fail', async () =>
        (await runs(integrationId)).find((run) => run.trigger === 'change' && run.status === 'failed'),
      );
      expect(failed.error).toMatch(/429|rate/i);
      // It waits before trying again (Retry-After 120 s here, else a backoff from 60 s): no run loops on a provider that refuses.
      const [{ resume_in_s }] = await app.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ resume_in_s: number }>>('select extract(epoch from resume_at - now())::int as resume_in_s from integration_sync_runs where id = ?', [
          failed.id,
        ]);
      expect(resume_in_s).toBeGreaterThan(100);
      expect((await api('GET', `/v1/integrations/${integrationId}`)).body.status).toBe('connected');
      expect(crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id)).toBeUndefined();
      crms.hubspot.recover();
      expect(await syncNow(integrationId)).toMatchObject({ status: 'succeeded', pushed: 1 });
      expect(crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id)).toBeDefined();
      expect((await runs(integrationId)).filter((run) => run.status === 'failed')).toHaveLength(1);
    });

    it('POST …/sync is 409 while a run is running, and the runs page by keyset', async () => {
      const integrationId = await connectHubSpot();
      await settled(integrationId);
      crms.hubspot.hang();
      const first = await startRun(integrationId);
      expect(first.status).toBe(202);
      expect(first.body).toMatchObject({ object: 'sync_run', status: 'running', trigger: 'manual', integration_id: integrationId });
      const second = await api('POST', `/v1/integrations/${integrationId}/sync`);
      expect(second.status).toBe(409);
      expect(second.body.error.code).toBe('resource_conflict');
      crms.hubspot.recover();
      await settled(
        integrationId,
        (await waitFor('the hung run to end', async () => (await runs(integrationId)).find((run) => run.id === first.body.id && run.status !== 'running')))
          .status,
      );

      await syncNow(integrationId);
      const all = await runs(integrationId);
      const page = await api('GET', `/v1/integrations/${integrationId}/sync_runs?limit=1`);
      expect(page.body).toMatchObject({ object: 'list', has_more: true });
      expect(page.body.data[0].id).toBe(all[0].id);
      const next = await api('GET', `/v1/integrations/${integrationId}/sync_runs?limit=1&cursor=${page.body.next_cursor}`);
      expect(next.body.data[0].id).toBe(all[1].id);
    });

    it("sets HubSpot up once: a second run makes no property call, and nothing sent or answered broke HubSpot's documents", async () => {
      const token = `pat-na1-setup-${Date.now()}`;
      crms.hubspot.accept(token);
      const made = await api('POST', '/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: token } });
      const integrationId = made.body.id as string;
      await settled(integrationId);
      const propertyCalls = () =>
        crms.hubspot.requests.filter((request) => request.headers.authorization === `Bearer ${token}` && request.path.startsWith('/crm/v3/properties/'));
      // The connect's run read the three properties (and made those an earlier run had not).
      const setUp = propertyCalls().length;
      expect(setUp).toBeGreaterThanOrEqual(3);
      // Later runs: the one for a new lead's change, then one on request.
      const lead = (await api('POST', '/v1/leads', { company: 'Second Run Co', contact_email: `second-run-${Date.now()}@crm.test` })).body;
      await waitFor('the lead at HubSpot', () => crms.hubspot.find('contacts', 'sales_pipeline_id', lead.id));
      expect(await syncNow(integrationId)).toMatchObject({ status: 'succeeded' });
      expect(propertyCalls()).toHaveLength(setUp);
      expect(crms.hubspot.conformance.violations).toEqual([]);
    });

    it('refuses to sync a disconnected integration (409)', async () => {
      const integrationId = await connectHubSpot();
      await settled(integrationId);
      expect((await api('DELETE', `/v1/integrations/${integrationId}`)).status).toBe(200);
      expect((await api('POST', `/v1/integrations/${integrationId}/sync`)).status).toBe(409);
    });
  });

  describe('with Salesforce', () => {
    it('pushes leads and deals as Leads and Opportunities, and pulls a StageName changed there with deal.stage_changed', async () => {
      const lead = (
        await api('POST', '/v1/leads', { company: 'Force Ltd', contact_email: `sf-${Date.now()}@force.test`, contact_name: 'Marc Force', employees: 120 })
      ).body;
      const integrationId = await connectSalesforce();
      await settled(integrationId);
      const record = crms.salesforce.find('Lead', 'Sales_Pipeline_Id__c', lead.id)!;
      expect(record).toMatchObject({ Company: 'Force Ltd', Email: lead.contact_email, LastName: 'Force', NumberOfEmployees: 120 });

      const deal = (await api('POST', '/v1/deals', { name: 'Force deal', value: 4200, lead_id: lead.id, stage: 'proposal', expected_close_date: '2027-03-31' }))
        .body;
      const opportunity = await waitFor('the Opportunity', () => crms.salesforce.find('Opportunity', 'Sales_Pipeline_Id__c', deal.id));
      expect(opportunity).toMatchObject({ Name: 'Force deal', StageName: 'Proposal/Price Quote', CloseDate: '2027-03-31' });
      expect(Number(opportunity.Amount)).toBe(4200);

      crms.salesforce.userEdit('Opportunity', opportunity.Id as string, { StageName: 'Negotiation/Review' });
      const run = await syncNow(integrationId);
      expect(run).toMatchObject({ status: 'succeeded', pulled: 1, failed: 0 });
      expect((await api('GET', `/v1/deals/${deal.id}`)).body.stage).toBe('negotiation');
      expect((await events('deal.stage_changed')).map((event) => event.data.object.id)).toContain(deal.id);
    });

    it("stops before the org's daily API limit is used up, without putting the integration in error", async () => {
      const integrationId = await connectSalesforce();
      await settled(integrationId);
      const saved = { ...crms.salesforce.dailyLimit };
      Object.assign(crms.salesforce.dailyLimit, { max: 15_000, used: 14_990 });
      try {
        const run = await syncNow(integrationId, 'failed');
        expect(run.error).toMatch(/daily API/i);
        expect((await api('GET', `/v1/integrations/${integrationId}`)).body.status).toBe('connected');
      } finally {
        Object.assign(crms.salesforce.dailyLimit, saved);
      }
    });
  });

  describe('on the schedule', () => {
    let scheduled: TestApp;
    beforeAll(async () => {
      // A short interval, so the schedule is seen working within a test.
      scheduled = await startTestApp({ crms, sync: { leaseMs: 3_000 }, env: { SYNC_INTERVAL_MS: '1000' } });
    });
    afterAll(() => scheduled.close());

    it("the first run pulls what the CRM already has, and later runs of the schedule bring the CRM's changes without a request", async () => {
      await scheduled.reset();
      const owner = await scheduled.createAccount();
      const call = (method: string, path: string, body?: unknown) => scheduled.request(method, path, { key: owner.testKey, body });
      const email = `before-connect-${Date.now()}@crm.test`;
      const contact = crms.hubspot.userCreate('contacts', { email, firstname: 'Early', lastname: 'Bird', company: 'Already There' });
      const made = await call('POST', '/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: HUBSPOT_TOKEN } });
      expect(made.status).toBe(201);
      const leadOf = async () =>
        ((await call('GET', '/v1/leads?limit=100')).body.data as Array<{ id: string; contact_email: string; company: string }>).find(
          (lead) => lead.contact_email === email,
        );
      const lead = await waitFor('the contact pulled by the first run', leadOf);
      expect(lead.company).toBe('Already There');

      crms.hubspot.userEdit('contacts', contact.id, { company: 'Renamed There' });
      await waitFor('the edit pulled by the schedule', async () => (await leadOf())?.company === 'Renamed There');
      const runs = (await call('GET', `/v1/integrations/${made.body.id}/sync_runs?limit=100`)).body.data as SyncRunBody[];
      expect(runs.map((run) => run.trigger)).toContain('schedule');
      expect(runs.map((run) => run.trigger)).not.toContain('manual');
    });
  });
});

import { MikroORM } from '@mikro-orm/postgresql';
import { createServiceFactory } from '../../src/app/composition';
import { loadConfig } from '../../src/config';
import { tenantFork } from '../../src/db/tenant';
import { createSchema } from '../../src/app/schema';
import { AccountService } from '../../src/modules/accounts/account.service';
import { DealCreateInput } from '../../src/modules/deals/deal.inputs';
import { DealStage } from '../../src/modules/deals/deal-stage';
import { IntegrationConnectInput } from '../../src/modules/integrations/integration.inputs';
import { LeadCreateInput } from '../../src/modules/leads/lead.inputs';
import type { ServiceFactory } from '../../src/modules/module';
import { PriorLeadScorer } from '../../src/modules/scoring/prior-model';
import { TEST_ENCRYPTION_KEY_HEX } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { truncateAll, workerOrm } from '../helpers/database';

/**
 * Services follow the transaction they run in: on a tenant fork (tenantFork), every service's
 * reads and writes inside `em.transactional(async () => …)` join it, with no EntityManager passed
 * along. Registering a deal for co-sell reads the Microsoft 365 integration: written earlier in
 * the same transaction, it is seen only if that read joined the transaction.
 */
describe('services inside a transaction', () => {
  let orm: MikroORM;
  let servicesFor: ServiceFactory;
  // Connecting Microsoft 365 proves the credentials: with a loopback Microsoft that accepts any.
  let crms: FakeCrms;

  beforeAll(async () => {
    orm = await workerOrm();
    crms = await startFakeCrms({ acceptAny: true });
    const config = loadConfig({ NODE_ENV: 'test', ENCRYPTION_KEY: TEST_ENCRYPTION_KEY_HEX, ...crms.env });
    servicesFor = createServiceFactory({ config, scorer: new PriorLeadScorer() }, await createSchema());
  });
  afterAll(async () => {
    await orm.close();
    await crms.close();
  });
  beforeEach(() => truncateAll(orm));

  it('see what the transaction wrote before, and leave nothing when it rolls back', async () => {
    const account = await new AccountService(orm.em.fork()).create({ email: `tx-${Date.now()}@example.test`, name: 'Tx' });
    const em = tenantFork(orm.em, { accountId: account.id, livemode: false });
    const services = servicesFor(em);
    const lead = await services.leads.create(Object.assign(new LeadCreateInput(), { company: 'Tx Co', contactEmail: 'buyer@tx.example' }));
    const deal = await services.deals.create(
      Object.assign(new DealCreateInput(), { name: 'Tx deal', value: 5000, leadId: lead.id, stage: DealStage.qualification }),
    );

    const connect = Object.assign(new IntegrationConnectInput(), {
      type: 'm365',
      provider: 'microsoft365',
      credentials: {
        tenant_id: '00000000-0000-0000-0000-000000000001',
        client_id: '00000000-0000-0000-0000-000000000002',
        client_secret: 'secret-in-tx',
        mailbox: 'sales@tx.example',
      },
    });
    const rolledBack = new Error('roll back');
    await expect(
      em.transactional(async () => {
        await services.integrations.connect(connect);
        const registered = await services.deals.register(deal.id);
        expect(registered.coSell?.status).toBe('accepted');
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);

    // Nothing of it stayed: the integration, the registration and their events were one transaction.
    const after = servicesFor(tenantFork(orm.em, { accountId: account.id, livemode: false }));
    expect((await after.integrations.list({})).data).toEqual([]);
    expect((await after.deals.read(deal.id)).coSell ?? null).toBeNull();
    expect((await after.events.list({ type: 'deal.registered' })).data).toEqual([]);
  });
});

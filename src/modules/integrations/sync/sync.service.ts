import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../../common/api-error';
import { findPage, Page } from '../../../common/pagination';
import { createScoped } from '../../../db/tenant';
import { outboxSignal } from '../../../events/outbox.subscriber';
import type { IntegrationService } from '../integration.service';
import { IntegrationStatus } from '../integration.entity';
import { RUN_PROVIDERS } from '../integration-kinds';
import type { SyncRunListInput } from '../integration.inputs';
import { SyncFailure, SyncRun, SyncTrigger } from './sync.entities';

/** At most this many failures of one run are read at once (GraphQL's `failures(limit:)`). */
export const MAX_FAILURES_READ = 100;

/** Starting and reading sync runs; the runs themselves are worked by SyncWorker. */
export class SyncService {
  constructor(
    private readonly em: EntityManager,
    private readonly integrations: IntegrationService,
  ) {}

  /**
   * Starts a run now (a CRM: pull, then push what is owed; a PSA: push what is owed; Microsoft 365:
   * read the mailbox, then deliver the agents' follow-ups owed to it). A disconnected one is 409
   * (what the integration is, not what was sent); a run already running is 409
   * (integration_sync_runs_one_running), so a client cannot stack them; an integration in error
   * may be synced, which is how it shows it is back.
   */
  async start(id: string): Promise<SyncRun> {
    const integration = await this.integrations.get(id);
    if (!RUN_PROVIDERS.includes(integration.provider)) {
      throw new ApiError('resource_conflict', `Integration ${id} is a ${integration.provider} integration, which does not sync`, { param: 'id' });
    }
    if (integration.status === IntegrationStatus.disconnected) {
      throw new ApiError('resource_conflict', `Integration ${id} is disconnected; connect the provider again to sync`, { param: 'id' });
    }
    const run = createScoped(this.em, SyncRun, { integration, trigger: SyncTrigger.manual });
    await this.em.flush();
    outboxSignal.emit('work');
    return run;
  }

  async runs(id: string, input: SyncRunListInput = {}): Promise<Page<SyncRun>> {
    const integration = await this.integrations.get(id);
    return findPage(this.em, SyncRun, [{ integration: integration.id }], input);
  }

  failures(run: SyncRun, limit: number): Promise<SyncFailure[]> {
    return this.em.find(SyncFailure, { run: run.id }, { orderBy: { id: 'asc' }, limit: Math.min(Math.max(limit, 1), MAX_FAILURES_READ) });
  }
}

import type { Knex } from '@mikro-orm/knex';
import { ActorType, actingAs } from '../../../events/acting';
import { EntityManager, LockMode, MikroORM } from '@mikro-orm/postgresql';
import { PollingWorker } from '../../../common/polling-worker';
import { isTransientDatabaseError } from '../../../db/database-errors';
import { tenantFork } from '../../../db/tenant';
import { FanOutConsumer, fanOutPending } from '../../../events/outbox-fan-out';
import { toApiError } from '../../../common/known-errors';
import type { ConflictMeanings } from '../../../db/database-errors';
import type { Logger } from '../../../logger';
import type { ServiceFactory } from '../../module';
import { CrmAuthRefused, CrmClient, CrmLimitReached, CrmSetupIncomplete, CrmUnavailable } from '../providers/crm-client';
import { RUN_PROVIDERS } from '../integration-kinds';
import { Integration, IntegrationStatus, IntegrationType } from '../integration.entity';
import { OBJECT_SYNC_TYPES } from './sync-fan-out';
import type { MailboxClient, MailboxClientFactory } from '../providers/m365-client';
import { ActionExecution, ActionHost } from './action-execution';
import { ExecutionHost, RunCounts, SyncExecution } from './sync-execution';
import { SyncRun, SyncRunStatus, SyncTrigger } from './sync.entities';

/** Makes the CRM client of an integration from its decrypted credentials (src/modules/integrations/providers/crm-clients.ts). */
export type CrmClientFactory = (integration: Integration, credentials: Record<string, string>) => CrmClient;

export interface SyncWorkerOptions {
  orm: MikroORM;
  logger: Logger;
  servicesFor: ServiceFactory;
  clients: CrmClientFactory;
  /** Makes the Microsoft 365 mailbox client of an integration (providers/m365-client.ts), for agents' follow-ups. */
  mailboxes: MailboxClientFactory;
  /** PUBLIC_URL: a follow-up's To Do task links to its deal there. */
  publicUrl: string;
  /** Everyone who owes work per event (src/app/workers.ts, outboxConsumers): one list per process. */
  consumers: readonly FanOutConsumer[];
  /** What the modules' unique constraints mean, for the failures a run records. */
  conflicts: ConflictMeanings;
  /** How often each CRM integration pulls on its own (SYNC_INTERVAL_MS, default 5 minutes). */
  intervalMs?: number;
  pollIntervalMs?: number;
  /** Runs worked at once by this instance (default 2). */
  concurrency?: number;
  /** How long a claimed run stays this instance's without a renewal (default 60 s; renewed every third of it). */
  leaseMs?: number;
  /** The first wait before a run the database failed transiently is taken up again (default 1 s; doubled each time). */
  retryDelayMs?: number;
}

/** The wait after a run that failed before the next for changes or the schedule (doubled per failure in a row). */
export const FAILED_RUN_BACKOFF_MS = 60_000;

/** Claims of one run (it was taken over after a crash or a database failure) before it is given up as failed. */
export const MAX_CLAIMS = 5;

interface RunClaim {
  id: string;
  integration_id: string;
  account_id: string;
  livemode: boolean;
  trigger: SyncTrigger;
  claims: number;
}

/** This instance no longer holds the run: another took it over when the lease lapsed. */
class LeaseLost extends Error {}

/** What working one claimed run needs, whatever the integration's type. */
interface RunWork {
  claim: RunClaim;
  integration: Integration;
  run: SyncRun;
  counts: RunCounts;
  /** A fresh EntityManager scoped to the run's account and mode. */
  fork: () => EntityManager;
  /** A call to the provider succeeded: an integration in error is connected again (once per run). */
  healthy: () => Promise<void>;
}

/**
 * Runs CRM syncs, and delivers agents' follow-ups to Microsoft 365 (`executions`: what a run of
 * each integration type does). Runs are rows: made by the connect (the backfill), POST …/sync, the
 * schedule and pending changes; at most one runs per integration (a partial unique index), and one
 * instance works it at a time, under a lease it renews. Every instance may run this worker: a run
 * whose instance died is taken over when its lease lapses, and goes on from its durable state.
 */
export class SyncWorker extends PollingWorker<RunClaim> {
  private readonly knex: Knex;
  private readonly consumers: readonly FanOutConsumer[];
  private readonly leaseMs: number;
  private readonly intervalMs: number;
  /** How a run is worked, by its integration's type (of RUN_PROVIDERS). */
  private readonly executions: Partial<Record<IntegrationType, (work: RunWork) => Promise<void>>> = {
    [IntegrationType.crm]: (work) => this.syncObjects(work),
    [IntegrationType.psa]: (work) => this.syncObjects(work),
    [IntegrationType.m365]: (work) => this.deliverActions(work),
  };

  constructor(private readonly options: SyncWorkerOptions) {
    super(options.logger, options.pollIntervalMs ?? 1_000, options.concurrency ?? 2);
    this.knex = options.orm.em.getKnex();
    this.consumers = options.consumers;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.intervalMs = options.intervalMs ?? 300_000;
  }

  protected async prepare(full: boolean): Promise<boolean> {
    const fanned = await fanOutPending(this.knex, this.consumers, () => this.isStopped);
    const owed = await this.startRuns(
      SyncTrigger.change,
      `i.status = '${IntegrationStatus.connected}' and exists (select 1 from integration_pending_changes p where p.integration_id = i.id)`,
    );
    // An integration in error is tried on the schedule too: a successful call brings it back. A CRM
    // pulls on it, a PSA proves its credentials; Microsoft 365 has nothing to pull, and is tried only
    // while something is owed to it.
    const scheduled = full
      ? await this.startRuns(
          SyncTrigger.schedule,
          `(i.type in (${OBJECT_SYNC_TYPES.map((type) => `'${type}'`).join(', ')}) or exists (select 1 from integration_pending_changes p where p.integration_id = i.id))
           and not exists (select 1 from integration_sync_runs r where r.integration_id = i.id and r.trigger <> '${SyncTrigger.change}'
             and r.started_at > now() - make_interval(secs => ${this.intervalMs / 1000}))`,
        )
      : 0;
    return fanned || owed + scheduled > 0;
  }

  /** A run for each integration the engine runs that is not disconnected, matches `condition`, and has none running (the index decides races). */
  private async startRuns(trigger: SyncTrigger, condition: string): Promise<number> {
    const providers = RUN_PROVIDERS.map((provider) => `'${provider}'`).join(', ');
    const result = await this.knex.raw<{ rowCount: number }>(
      `insert into integration_sync_runs (id, created_at, updated_at, account_id, livemode, integration_id, status, trigger, started_at, pushed, pulled, failed, to_push, lease_until, claims)
       select 'sync_' || replace(gen_random_uuid()::text, '-', ''), now(), now(), i.account_id, i.livemode, i.id, '${SyncRunStatus.running}', ?, now(), 0, 0, 0, 0, now(), 0
         from integrations i
        where i.provider in (${providers}) and i.status <> '${IntegrationStatus.disconnected}'
          and not exists (select 1 from integration_sync_runs r where r.integration_id = i.id
                            and (r.status = '${SyncRunStatus.running}' or r.resume_at > now()))
          and ${condition}
       on conflict (integration_id) where status = '${SyncRunStatus.running}' do nothing`,
      [trigger],
    );
    return result.rowCount ?? 0;
  }

  protected async claim(limit: number): Promise<RunClaim[]> {
    const result = await this.knex.raw<{ rows: RunClaim[] }>(
      `update integration_sync_runs set lease_until = now() + make_interval(secs => ?), claims = claims + 1, updated_at = now()
        where id in (select id from integration_sync_runs where status = '${SyncRunStatus.running}' and lease_until <= now()
                      order by started_at limit ? for update skip locked)
        returning id, integration_id, account_id, livemode, trigger, claims`,
      [this.leaseMs / 1000, limit],
    );
    return result.rows;
  }

  protected describe(claim: RunClaim) {
    return { syncRunId: claim.id, integrationId: claim.integration_id };
  }

  protected async work(claim: RunClaim): Promise<void> {
    const scope = { accountId: claim.account_id, livemode: claim.livemode };
    const fork = () => tenantFork(this.options.orm.em, scope);
    const em = fork();
    const [run, integration] = await Promise.all([em.findOneOrFail(SyncRun, { id: claim.id }), em.findOneOrFail(Integration, { id: claim.integration_id })]);
    const counts: RunCounts = { pushed: run.pushed, pulled: run.pulled, failed: run.failed, toPush: run.toPush };
    if (claim.claims > MAX_CLAIMS) {
      await this.finish(
        claim,
        counts,
        SyncRunStatus.failed,
        `the run was taken up ${MAX_CLAIMS} times without finishing; the next run goes on from where it stopped`,
      );
      return;
    }
    const renew = setInterval(() => void this.renew(claim).catch(() => undefined), this.leaseMs / 3);
    let healthy: Promise<void> | undefined;
    const markHealthy = async () => {
      const healthyEm = fork();
      await this.options.servicesFor(healthyEm).integrations.markHealthy(await healthyEm.findOneOrFail(Integration, { id: integration.id }));
    };
    try {
      if (integration.status === IntegrationStatus.disconnected) throw new CrmUnavailable('the integration was disconnected');
      const execute = this.executions[integration.type];
      if (!execute) throw new Error(`${integration.type} integrations have no sync runs`);
      await execute({ claim, integration, run, counts, fork, healthy: () => (healthy ??= markHealthy()) });
      await this.finish(claim, counts, SyncRunStatus.succeeded, null);
    } catch (error) {
      await this.failed(claim, counts, error);
    } finally {
      clearInterval(renew);
    }
  }

  /** A CRM's run: the backfill on connect, then pull and push. */
  private async syncObjects({ claim, integration, run, counts, fork, healthy }: RunWork): Promise<void> {
    let client: CrmClient | undefined;
    const host: ExecutionHost = {
      fork,
      servicesFor: this.options.servicesFor,
      conflicts: this.options.conflicts,
      client: async () => {
        if (client) return client;
        const credentials = await this.options.servicesFor(fork()).integrations.credentialsOf(integration);
        const opened = this.options.clients(integration, credentials);
        await opened.open();
        client = opened;
        // A call succeeded: an integration in error is connected again.
        await healthy();
        return client;
      },
      progress: (progress) => this.progress(claim, progress),
    };
    const execution = new SyncExecution(integration, run, host, counts);
    // Every run but one for pending changes proves the credentials first, so an integration in error learns it is back.
    if (claim.trigger !== SyncTrigger.change) await host.client();
    if (claim.trigger === SyncTrigger.connect) await execution.oweEverything();
    // Pull, then push: a record changed on both sides is settled by the pull (newer wins) before the push sends ours.
    if (claim.trigger !== SyncTrigger.change) await execution.pull();
    await execution.push();
  }

  /**
   * A Microsoft 365 run: the agents' follow-ups owed to the mailbox (action-execution.ts). The
   * integration is back from error after a Graph call succeeds, not after a token alone; a manual
   * run reads the mailbox first, so it shows that even with nothing owed.
   */
  private async deliverActions({ claim, integration, run, counts, fork, healthy }: RunWork): Promise<void> {
    let mailbox: MailboxClient | undefined;
    const host: ActionHost = {
      fork,
      healthy,
      mailbox: async () => {
        if (mailbox) return mailbox;
        const credentials = await this.options.servicesFor(fork()).integrations.credentialsOf(integration);
        const opened = this.options.mailboxes(integration, credentials);
        await opened.open();
        return (mailbox = opened);
      },
      progress: (progress) => this.progress(claim, progress),
    };
    if (claim.trigger === SyncTrigger.manual) {
      await (await host.mailbox()).probe();
      await healthy();
    }
    await new ActionExecution(integration, run, host, counts, this.options.publicUrl).push();
  }

  /** Sorts out why a run stopped: lost to another instance, the provider refusing or unusable, the database, or a bug. */
  private async failed(claim: RunClaim, counts: RunCounts, error: unknown): Promise<void> {
    if (error instanceof LeaseLost) {
      this.logger.warn({ syncRunId: claim.id }, 'sync run lost its lease; another instance goes on with it');
      return;
    }
    if (error instanceof CrmAuthRefused || error instanceof CrmSetupIncomplete) {
      await this.finish(claim, counts, SyncRunStatus.failed, error.message, error.message);
      return;
    }
    if (error instanceof CrmUnavailable || error instanceof CrmLimitReached) {
      await this.finish(claim, counts, SyncRunStatus.failed, error.message, undefined, error instanceof CrmUnavailable ? error.retryAfterMs : undefined);
      return;
    }
    const known = toApiError(error);
    if (isTransientDatabaseError(error) || known?.errorCode === 'service_unavailable') {
      // The database failed, not the sync: the run is taken up again later, from its durable state.
      this.logger.warn({ syncRunId: claim.id, err: error }, 'sync run met a transient database failure; will retry');
      const delayMs = (this.options.retryDelayMs ?? 1_000) * 2 ** (claim.claims - 1);
      await this.knex('integration_sync_runs')
        .where({ id: claim.id, claims: claim.claims })
        .update({ lease_until: new Date(Date.now() + delayMs), updated_at: new Date() });
      return;
    }
    this.logger.error({ syncRunId: claim.id, err: error }, 'sync run failed unexpectedly');
    const message = known ? `${known.errorCode}: ${known.message}` : 'The run failed unexpectedly; the details are in the service log.';
    await this.finish(claim, counts, SyncRunStatus.failed, message);
  }

  /**
   * How long after a failed run the next one waits (a manual run excepted): FAILED_RUN_BACKOFF_MS,
   * doubled for each failed run since the last success, at most the schedule's interval; so a CRM
   * that is down is asked about once a minute at first, then less, never in a loop.
   */
  private async backoffMs(em: EntityManager, integrationId: string): Promise<number> {
    const [{ failures }] = await em.getConnection().execute<Array<{ failures: number }>>(
      `select count(*)::int as failures from integration_sync_runs
        where integration_id = ? and status = '${SyncRunStatus.failed}'
          and started_at > coalesce((select max(started_at) from integration_sync_runs where integration_id = ? and status = '${SyncRunStatus.succeeded}'), '-infinity')`,
      [integrationId, integrationId],
    );
    return Math.min(FAILED_RUN_BACKOFF_MS * 2 ** failures, Math.max(this.intervalMs, FAILED_RUN_BACKOFF_MS));
  }

  /** Stores the run's progress and renews its lease, if this instance still holds it. */
  private async progress(claim: RunClaim, counts: RunCounts): Promise<void> {
    const updated = await this.knex('integration_sync_runs')
      .where({ id: claim.id, claims: claim.claims, status: SyncRunStatus.running })
      .update({
        pushed: counts.pushed,
        pulled: counts.pulled,
        failed: counts.failed,
        to_push: counts.toPush,
        lease_until: new Date(Date.now() + this.leaseMs),
        updated_at: new Date(),
      });
    if (updated === 0) throw new LeaseLost();
  }

  private async renew(claim: RunClaim): Promise<void> {
    await this.knex('integration_sync_runs')
      .where({ id: claim.id, claims: claim.claims, status: SyncRunStatus.running })
      .update({ lease_until: new Date(Date.now() + this.leaseMs) });
  }

  /**
   * Ends the run (if this instance still holds it) with its event, in one transaction; a refusal by
   * the provider (`refusal`) also moves the integration to error.
   */
  private async finish(
    claim: RunClaim,
    counts: RunCounts,
    status: SyncRunStatus,
    error: string | null,
    refusal?: string,
    retryAfterMs?: number,
  ): Promise<void> {
    const em = tenantFork(this.options.orm.em, { accountId: claim.account_id, livemode: claim.livemode });
    await em.transactional(async () => {
      const run = await em.findOne(SyncRun, { id: claim.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!run || run.claims !== claim.claims || run.status !== SyncRunStatus.running) return;
      const services = this.options.servicesFor(em, actingAs(ActorType.sync, claim.integration_id));
      Object.assign(run, counts, { status, error: error?.slice(0, 1000) ?? null, finishedAt: new Date() });
      if (status === SyncRunStatus.succeeded) run.toPush = 0;
      else run.resumeAt = new Date(Date.now() + Math.max(retryAfterMs ?? 0, await this.backoffMs(em, claim.integration_id)));
      services.recorder.record(status === SyncRunStatus.succeeded ? 'integration.sync_succeeded' : 'integration.sync_failed', run);
      if (refusal) await services.integrations.markError(await em.findOneOrFail(Integration, { id: claim.integration_id }), refusal);
      await em.flush();
    });
  }
}

import type { Knex } from '@mikro-orm/knex';
import { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { PollingWorker } from '../../common/polling-worker';
import { tenantFork } from '../../db/tenant';
import type { ServiceFactory } from '../module';
import type { Logger } from '../../logger';
import { DealStage } from '../deals/deal-stage';
import { MIN_CLOSED_LEADS, MIN_PER_OUTCOME, RETRAIN_AFTER } from './learned-model';
import { LeadModel } from './lead-model.entity';
import { scorerFor } from './scoring.service';

export interface ModelTrainerOptions {
  orm: MikroORM;
  logger: Logger;
  servicesFor: ServiceFactory;
  /** How often to look for accounts with enough new outcomes (default every 5 minutes). */
  pollIntervalMs?: number;
  /** Leads rescored per transaction (default 200). */
  rescoreBatchSize?: number;
}

interface Due {
  account_id: string;
  livemode: boolean;
  /** Enough new outcomes for a new model version. */
  train: boolean;
}

/**
 * Trains lead-score models in the background, never in a request: an account and mode is due at MIN_CLOSED_LEADS
 * closed leads (MIN_PER_OUTCOME of each outcome) without a model, or RETRAIN_AFTER more closed leads than its
 * newest model learned from. Rescoring commits each batch with its events and `rescored_through`, so a stop
 * part-way resumes there, on any instance. A transaction-scoped advisory lock per account and mode keeps two
 * instances from training or rescoring it at once.
 */
export class ModelTrainer extends PollingWorker<Due> {
  private readonly knex: Knex;
  /** Set by stop(): rescoring ends after the batch under way. */
  private halted = false;

  constructor(private readonly options: ModelTrainerOptions) {
    super(options.logger, options.pollIntervalMs ?? 300_000, 1, false);
    this.knex = options.orm.em.getKnex();
  }

  override async stop(): Promise<void> {
    this.halted = true;
    await super.stop();
  }

  protected async prepare(): Promise<boolean> {
    return false;
  }

  protected describe(due: Due) {
    return { accountId: due.account_id, livemode: due.livemode };
  }

  protected async claim(limit: number): Promise<Due[]> {
    const result = await this.knex.raw<{ rows: Due[] }>(
      `with closed as (
         select account_id, livemode, count(distinct lead_id)::int as leads,
                count(distinct lead_id) filter (where stage = ?)::int as won
           from deals where lead_id is not null and stage in (?, ?) group by account_id, livemode),
       latest as (
         select distinct on (account_id, livemode) account_id, livemode, won + lost as learned_from, rescored_at
           from lead_models order by account_id, livemode, version desc),
       due as (
         select coalesce(closed.account_id, latest.account_id) as account_id,
                coalesce(closed.livemode, latest.livemode) as livemode,
                coalesce(closed.leads >= ? and closed.won >= ? and closed.leads - closed.won >= ?
                  and (latest.learned_from is null or closed.leads - latest.learned_from >= ?), false) as train,
                latest.account_id is not null and latest.rescored_at is null as rescore
           from closed full join latest on latest.account_id = closed.account_id and latest.livemode = closed.livemode)
       select account_id, livemode, train from due where train or rescore
        order by account_id, livemode limit ?`,
      [DealStage.closed_won, DealStage.closed_won, DealStage.closed_lost, MIN_CLOSED_LEADS, MIN_PER_OUTCOME, MIN_PER_OUTCOME, RETRAIN_AFTER, limit],
    );
    return result.rows;
  }

  protected async work(due: Due): Promise<void> {
    const scope = { accountId: due.account_id, livemode: due.livemode };
    if (due.train) {
      const model = await this.locked(scope, (em) => this.options.servicesFor(em).scoring.train());
      if (model) {
        this.options.logger.info(
          { ...scope, modelVersion: model.modelVersion, trainingSize: model.trainingSize, auc: model.auc },
          'lead-score model trained; rescoring leads',
        );
      }
    }
    await this.rescore(scope);
  }

  /** Rescores the account's leads with its newest model, batch by batch, until done or stopped. */
  private async rescore(scope: { accountId: string; livemode: boolean }): Promise<void> {
    let rescored = 0;
    for (;;) {
      // Stopping leaves the rest to the next pass (after a restart, or on another instance).
      if (this.halted) return;
      const step = await this.locked(scope, async (em) => {
        const model = await em.findOne(LeadModel, {}, { orderBy: { version: 'desc' } });
        if (!model || model.rescoredAt) return null;
        const batch = await this.options
          .servicesFor(em)
          .leads.rescoreBatch(scorerFor(model), model.rescoredThrough ?? '', this.options.rescoreBatchSize ?? 200);
        model.rescoredThrough = batch.through ?? model.rescoredThrough;
        if (batch.done) model.rescoredAt = new Date();
        await em.flush();
        return { ...batch, modelVersion: model.modelVersion };
      });
      if (!step) return;
      rescored += step.changed;
      if (step.done) {
        this.options.logger.info({ ...scope, modelVersion: step.modelVersion, rescored }, 'leads rescored with the newest lead-score model');
        return;
      }
    }
  }

  /** Runs `work` in a transaction holding the account's trainer lock; null when another instance holds it. */
  private locked<T>(scope: { accountId: string; livemode: boolean }, work: (em: EntityManager) => Promise<T>): Promise<T | null> {
    const em = tenantFork(this.options.orm.em, scope);
    return em.transactional(async () => {
      const [lock] = await em
        .getConnection()
        .execute(
          'select pg_try_advisory_xact_lock(hashtext(?)) as locked',
          [`lead-model:${scope.accountId}:${scope.livemode}`],
          'all',
          em.getTransactionContext(),
        );
      return lock.locked ? work(em) : null;
    });
  }

  /** One pass now, and its work finished: for the CLI and tests. */
  async runOnce(): Promise<void> {
    for (const due of await this.claim(100)) await this.work(due);
  }
}

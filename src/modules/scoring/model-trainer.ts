import type { Knex } from '@mikro-orm/knex';
import { MikroORM } from '@mikro-orm/postgresql';
import { PollingWorker } from '../../common/polling-worker';
import { scopeTo } from '../../db/tenant';
import type { ServiceFactory } from '../../graphql/context';
import type { Logger } from '../../logger';
import { DealStage } from '../deals/deal-stage';
import { MIN_CLOSED_LEADS, MIN_PER_OUTCOME, RETRAIN_AFTER } from './learned-model';

export interface ModelTrainerOptions {
  orm: MikroORM;
  logger: Logger;
  servicesFor: ServiceFactory;
  /** How often to look for accounts with enough new outcomes (default every 5 minutes). */
  pollIntervalMs?: number;
}

interface Due {
  account_id: string;
  livemode: boolean;
}

/**
 * Trains lead-score models in the background, never in a request: an account and mode is due
 * once it has MIN_CLOSED_LEADS closed leads (MIN_PER_OUTCOME won and lost) and no model, or
 * RETRAIN_AFTER more closed leads than its newest model learned from. Training stores a new
 * version, then every lead of the account and mode is rescored with it. A transaction-scoped
 * advisory lock keeps two instances from training the same account at once.
 */
export class ModelTrainer extends PollingWorker<Due> {
  private readonly knex: Knex;

  constructor(private readonly options: ModelTrainerOptions) {
    super(options.logger, options.pollIntervalMs ?? 300_000, 1, false);
    this.knex = options.orm.em.getKnex();
  }

  protected async prepare(): Promise<void> {}

  protected describe(due: Due) {
    return { accountId: due.account_id, livemode: due.livemode };
  }

  protected async claim(limit: number): Promise<Due[]> {
    const result = await this.knex.raw<{ rows: Due[] }>(
      `with closed as (
         select account_id, livemode, count(distinct lead_id)::int as leads,
                count(distinct lead_id) filter (where stage = ?)::int as won
           from deals where lead_id is not null and stage in (?, ?) group by account_id, livemode)
       select closed.account_id, closed.livemode from closed
         left join lateral (
           select won + lost as learned_from from lead_models
            where lead_models.account_id = closed.account_id and lead_models.livemode = closed.livemode
            order by version desc limit 1) latest on true
        where closed.leads >= ? and closed.won >= ? and closed.leads - closed.won >= ?
          and (latest.learned_from is null or closed.leads - latest.learned_from >= ?)
        order by closed.account_id, closed.livemode limit ?`,
      [DealStage.closed_won, DealStage.closed_won, DealStage.closed_lost, MIN_CLOSED_LEADS, MIN_PER_OUTCOME, MIN_PER_OUTCOME, RETRAIN_AFTER, limit],
    );
    return result.rows;
  }

  protected async work(due: Due): Promise<void> {
    const scope = { accountId: due.account_id, livemode: due.livemode };
    const model = await scopeTo(this.options.orm.em.fork(), scope).transactional(async (em) => {
      const [lock] = await em.getConnection().execute(
        'select pg_try_advisory_xact_lock(hashtext(?)) as locked',
        [`lead-model:${due.account_id}:${due.livemode}`],
        'all',
        em.getTransactionContext(),
      );
      if (!lock.locked) return null; // another instance is training this account right now
      return this.options.servicesFor(em).scoring.train();
    });
    if (!model) return;
    const em = scopeTo(this.options.orm.em.fork(), scope);
    const services = this.options.servicesFor(em);
    const rescored = await services.leads.rescoreAll(await services.scoring.current());
    this.options.logger.info(
      { accountId: due.account_id, livemode: due.livemode, modelVersion: model.modelVersion, trainingSize: model.trainingSize, auc: model.auc, rescored },
      'lead-score model trained; leads rescored',
    );
  }

  /** One pass now, and its work finished: for the CLI and tests. */
  async runOnce(): Promise<void> {
    for (const due of await this.claim(100)) await this.work(due);
  }
}

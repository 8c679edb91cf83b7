import type { Knex } from '@mikro-orm/knex';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger';
import { PollingWorker } from './polling-worker';

export interface AgeRetentionOptions {
  orm: MikroORM;
  logger: Logger;
  /** Days a row is kept. */
  retentionDays?: number;
  /** How often to look for expired rows (default every 10 minutes). */
  pollIntervalMs?: number;
  /** Rows removed per statement: each statement's locks are short, whatever the backlog. */
  batchSize?: number;
}

/** What a table's retention is: the table (with an index on created_at), what its rows are called in the log, and its defaults. */
interface RetainedTable {
  table: string;
  rows: string;
  retentionDays: number;
  batchSize: number;
}

/**
 * Removes a table's rows older than the retention period, across every tenant (plain SQL, no
 * tenant filter: it deletes by age only). Each batch is one short statement that takes the oldest
 * expired rows it can lock (SKIP LOCKED, so instances running it at once take different rows and
 * never wait). It wakes only on its timer. EventRetention and RequestLogRetention are its uses.
 */
export class AgeRetention extends PollingWorker<never> {
  private readonly knex: Knex;
  private readonly retentionDays: number;
  private readonly batchSize: number;

  constructor(
    private readonly retained: RetainedTable,
    options: AgeRetentionOptions,
  ) {
    super(options.logger, options.pollIntervalMs ?? 600_000, 1, false);
    this.knex = options.orm.em.getKnex();
    this.retentionDays = options.retentionDays ?? retained.retentionDays;
    this.batchSize = options.batchSize ?? retained.batchSize;
  }

  /** Deletes expired rows batch by batch until none is left (or the worker stops); there is nothing to claim. */
  protected async prepare(): Promise<boolean> {
    let removed = 0;
    while (!this.isStopped) {
      const batch = await this.removeBatch();
      removed += batch;
      if (batch < this.batchSize) break;
    }
    if (removed > 0) this.logger.info({ removed, retentionDays: this.retentionDays }, `expired ${this.retained.rows} removed`);
    return false;
  }

  /** One batch: the oldest expired rows (by the created_at index), at most batchSize. */
  async removeBatch(): Promise<number> {
    const result = await this.knex.raw<{ rowCount: number }>(
      `delete from ?? where id in (
         select id from ?? where created_at < now() - make_interval(days => ?)
          order by created_at limit ? for update skip locked)`,
      [this.retained.table, this.retained.table, this.retentionDays, this.batchSize],
    );
    return result.rowCount;
  }

  protected claim(): Promise<never[]> {
    return Promise.resolve([]);
  }

  protected work(): Promise<void> {
    return Promise.resolve();
  }

  protected describe(): Record<string, unknown> {
    return {};
  }
}

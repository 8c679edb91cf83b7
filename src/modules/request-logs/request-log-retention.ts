import type { Knex } from '@mikro-orm/knex';
import type { MikroORM } from '@mikro-orm/postgresql';
import { PollingWorker } from '../../common/polling-worker';
import type { Logger } from '../../logger';

/** How long request logs are kept (docs/API.md, "Request logs"). */
export const REQUEST_LOG_RETENTION_DAYS = 7;

export interface RequestLogRetentionOptions {
  orm: MikroORM;
  logger: Logger;
  /** Days a request log is kept (default REQUEST_LOG_RETENTION_DAYS). */
  retentionDays?: number;
  /** How often to look for expired rows (default every 10 minutes). */
  pollIntervalMs?: number;
  /** Rows removed per statement (default 5,000): each statement's locks are short, whatever the backlog. */
  batchSize?: number;
}

/**
 * Removes request logs older than the retention period, across every tenant, as EventRetention
 * removes events: by age only (plain SQL, no tenant filter), in batches of the oldest rows it can
 * lock (SKIP LOCKED, so instances running it at once take different rows and never wait).
 */
export class RequestLogRetention extends PollingWorker<never> {
  private readonly knex: Knex;
  private readonly retentionDays: number;
  private readonly batchSize: number;

  constructor(options: RequestLogRetentionOptions) {
    super(options.logger, options.pollIntervalMs ?? 600_000, 1, false);
    this.knex = options.orm.em.getKnex();
    this.retentionDays = options.retentionDays ?? REQUEST_LOG_RETENTION_DAYS;
    this.batchSize = options.batchSize ?? 5_000;
  }

  /** Deletes expired rows batch by batch until none is left (or the worker stops); there is nothing to claim. */
  protected async prepare(): Promise<boolean> {
    let removed = 0;
    while (!this.isStopped) {
      const batch = await this.removeBatch();
      removed += batch;
      if (batch < this.batchSize) break;
    }
    if (removed > 0) this.logger.info({ removed, retentionDays: this.retentionDays }, 'expired request logs removed');
    return false;
  }

  /** One batch: the oldest expired rows (the request_logs_created_at index), at most batchSize. */
  async removeBatch(): Promise<number> {
    const result = await this.knex.raw<{ rowCount: number }>(
      `delete from request_logs where id in (
         select id from request_logs where created_at < now() - make_interval(days => ?)
          order by created_at limit ? for update skip locked)`,
      [this.retentionDays, this.batchSize],
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

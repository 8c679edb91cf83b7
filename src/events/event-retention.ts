import type { Knex } from '@mikro-orm/knex';
import type { MikroORM } from '@mikro-orm/postgresql';
import { PollingWorker } from '../common/polling-worker';
import type { Logger } from '../logger';

/** How long events are kept (README, docs/API.md): older ones are removed with their webhook deliveries and attempts. */
export const EVENT_RETENTION_DAYS = 30;

export interface EventRetentionOptions {
  orm: MikroORM;
  logger: Logger;
  /** Days an event is kept (default EVENT_RETENTION_DAYS). */
  retentionDays?: number;
  /** How often to look for expired events (default every 10 minutes). */
  pollIntervalMs?: number;
  /** Events removed per statement (default 500): each statement's locks are short, whatever the backlog. */
  batchSize?: number;
}

/**
 * Removes events older than the retention period, across every tenant (plain SQL, no tenant
 * filter: it deletes by age only). Each batch is one short statement that takes the oldest expired
 * events it can lock (SKIP LOCKED, so instances running it at once take different rows and never
 * wait); the foreign keys cascade to the events' webhook deliveries, their attempts and agent tasks.
 * It wakes only on its timer, not on writes of events.
 */
export class EventRetention extends PollingWorker<never> {
  private readonly knex: Knex;
  private readonly retentionDays: number;
  private readonly batchSize: number;

  constructor(options: EventRetentionOptions) {
    super(options.logger, options.pollIntervalMs ?? 600_000, 1, false);
    this.knex = options.orm.em.getKnex();
    this.retentionDays = options.retentionDays ?? EVENT_RETENTION_DAYS;
    this.batchSize = options.batchSize ?? 500;
  }

  /** Deletes expired events batch by batch until none is left (or the worker stops); there is nothing to claim. */
  protected async prepare(): Promise<boolean> {
    let removed = 0;
    while (!this.isStopped) {
      const batch = await this.removeBatch();
      removed += batch;
      if (batch < this.batchSize) break;
    }
    if (removed > 0) this.logger.info({ removed, retentionDays: this.retentionDays }, 'expired events removed');
    return false;
  }

  /** One batch: the oldest expired events (the events_created_at index), at most batchSize. */
  async removeBatch(): Promise<number> {
    const result = await this.knex.raw<{ rowCount: number }>(
      `delete from events where id in (
         select id from events where created_at < now() - make_interval(days => ?)
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

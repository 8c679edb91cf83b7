import { AgeRetention, AgeRetentionOptions } from '../common/age-retention';

/** How long events are kept (README, docs/API.md): older ones are removed with their webhook deliveries and attempts. */
export const EVENT_RETENTION_DAYS = 30;

export type EventRetentionOptions = AgeRetentionOptions;

/**
 * Removes events older than EVENT_RETENTION_DAYS, 500 a statement; the foreign keys cascade to the
 * events' webhook deliveries, their attempts and agent tasks. It wakes only on its timer, not on
 * writes of events.
 */
export class EventRetention extends AgeRetention {
  constructor(options: EventRetentionOptions) {
    super({ table: 'events', rows: 'events', retentionDays: EVENT_RETENTION_DAYS, batchSize: 500 }, options);
  }
}

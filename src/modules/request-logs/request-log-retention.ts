import { AgeRetention, AgeRetentionOptions } from '../../common/age-retention';

/** How long request logs are kept (docs/API.md, "Request logs"). */
export const REQUEST_LOG_RETENTION_DAYS = 7;

export type RequestLogRetentionOptions = AgeRetentionOptions;

/** Removes request logs older than REQUEST_LOG_RETENTION_DAYS, 5,000 a statement, as EventRetention removes events. */
export class RequestLogRetention extends AgeRetention {
  constructor(options: RequestLogRetentionOptions) {
    super({ table: 'request_logs', rows: 'request logs', retentionDays: REQUEST_LOG_RETENTION_DAYS, batchSize: 5_000 }, options);
  }
}

import { AgeRetention, AgeRetentionOptions } from '../../common/age-retention';
import { SECURITY_LOG_RETENTION_DAYS } from './security-event.entity';

/** Removes security log entries older than 400 days, 1,000 a statement (the log's only deletion). */
export class SecurityLogRetention extends AgeRetention {
  constructor(options: AgeRetentionOptions) {
    super({ table: 'security_events', rows: 'security log entries', retentionDays: SECURITY_LOG_RETENTION_DAYS, batchSize: 1_000 }, options);
  }
}

import { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { findPage, NEWEST_FIRST, Page } from '../../common/pagination';
import type { Lean } from '../../db/lean';
import { RequestLog } from './request-log.entity';
import { RequestLogListInput } from './request-log.inputs';

/** Reads the account's request logs (tenant-scoped EntityManager); RequestLogWriter writes them. */
export class RequestLogService {
  constructor(private readonly em: EntityManager) {}

  /** Newest first; `errors: true` is the partial index request_logs_errors (status >= 400). */
  list(input: RequestLogListInput = {}): Promise<Page<Lean<RequestLog>>> {
    const conditions: FilterQuery<RequestLog>[] = [];
    if (input.errors === true) conditions.push({ status: { $gte: 400 } });
    if (input.errors === false) conditions.push({ status: { $lt: 400 } });
    if (input.status !== undefined && input.status !== null) conditions.push({ status: input.status });
    if (input.method) conditions.push({ method: input.method });
    return findPage(this.em, RequestLog, conditions, input, NEWEST_FIRST, { lean: true });
  }
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../common/ids';
import { selectRows } from '../../db/lean';
import type { Metrics } from '../../http/metrics';
import type { Logger } from '../../logger';

/** One request as the access log hands it over when the answer has been sent. */
export interface RequestLogRecord {
  accountId: string;
  livemode: boolean;
  method: string;
  route: string;
  operationName: string | null;
  status: number;
  requestId: string;
  keyPrefix: string | null;
  latencyMs: number;
  createdAt: Date;
}

/** What tests and operators may tune; the writer's defaults suit the service. */
export type RequestLogBounds = Pick<RequestLogWriterOptions, 'flushIntervalMs' | 'batchSize' | 'maxBuffered'>;

export interface RequestLogWriterOptions {
  /** The ORM's global EntityManager: the writer runs one statement on its pool, outside any request. */
  em: EntityManager;
  logger: Logger;
  metrics: Metrics;
  /** How often the buffer is written (default 250 ms). */
  flushIntervalMs?: number;
  /** Rows per insert (default 500); a full batch is written at once, without waiting for the timer. */
  batchSize?: number;
  /** The most rows held while the database is slow or down (default 10,000); beyond it the oldest are dropped. */
  maxBuffered?: number;
}

/**
 * Stores request logs off the request path: a request only appends to an in-memory buffer, which this writer
 * empties in multi-row inserts, one at a time. A full buffer drops its oldest records and a failed insert its
 * batch, counted (request_logs_dropped_total) and never retried, so a slow or absent database never holds a
 * request nor grows the process: request logs are a convenience, the requests are what matter.
 */
export class RequestLogWriter {
  private buffer: RequestLogRecord[] = [];
  private writing: Promise<void> | null = null;
  private timer?: NodeJS.Timeout;
  private droppedSinceWarning = { buffer_full: 0, write_failed: 0 };
  private readonly em: EntityManager;
  private readonly logger: Logger;
  private readonly metrics: Metrics;
  private readonly flushIntervalMs: number;
  private readonly batchSize: number;
  private readonly maxBuffered: number;

  constructor(options: RequestLogWriterOptions) {
    this.em = options.em;
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.flushIntervalMs = options.flushIntervalMs ?? 250;
    this.batchSize = options.batchSize ?? 500;
    this.maxBuffered = Math.max(options.maxBuffered ?? 10_000, 1);
  }

  start(): void {
    if (this.timer) return;
    // unref: a pending write never keeps a process alive that is otherwise done (CLI, tests).
    this.timer = setInterval(() => void this.flush(), this.flushIntervalMs).unref();
  }

  /** Called on every answered request: constant time, never waits. */
  add(record: RequestLogRecord): void {
    if (this.buffer.length >= this.maxBuffered) {
      this.buffer.shift();
      this.droppedSinceWarning.buffer_full += 1;
      this.metrics.requestLogsGivenUp('buffer_full', 1);
    }
    this.buffer.push(record);
    if (this.buffer.length >= this.batchSize && !this.writing) void this.flush();
  }

  /** Writes what is buffered, batch by batch; a call while a write is under way joins it. */
  flush(): Promise<void> {
    this.writing ??= this.writeAll().finally(() => {
      this.writing = null;
    });
    return this.writing;
  }

  /** Stops the timer and writes what is left (main.ts: after the HTTP server closed, before the pool). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
    // A request that finished while the last pass ran is in the buffer still.
    if (this.buffer.length) await this.flush();
  }

  private async writeAll(): Promise<void> {
    while (this.buffer.length) {
      const batch = this.buffer.splice(0, this.batchSize);
      try {
        await this.insert(batch);
        this.metrics.requestLogsStored(batch.length);
      } catch (error) {
        this.droppedSinceWarning.write_failed += batch.length;
        this.metrics.requestLogsGivenUp('write_failed', batch.length);
        this.logger.debug({ err: error instanceof Error ? error.message : String(error), rows: batch.length }, 'request log batch not written');
        break; // the database is failing: the next pass (the timer) tries again with what has come since
      }
    }
    const dropped = this.droppedSinceWarning;
    if (dropped.buffer_full || dropped.write_failed) {
      this.logger.warn(
        { bufferFull: dropped.buffer_full, writeFailed: dropped.write_failed, maxBuffered: this.maxBuffered },
        'request logs dropped: the database did not keep up (counted in request_logs_dropped_total)',
      );
      this.droppedSinceWarning = { buffer_full: 0, write_failed: 0 };
    }
  }

  /**
   * One statement per batch, its rows as one array parameter per column (`unnest`): PostgreSQL
   * stores them for about a third less CPU a row than from one JSON parameter
   * (`json_populate_recordset`), and this process spends no more on them than on `JSON.stringify`
   * (docs/benchmark.md, twenty-second pass). Rows of an account deleted since the request are
   * skipped, not a foreign-key error that would lose the whole batch.
   */
  private async insert(batch: RequestLogRecord[]): Promise<void> {
    const columns: unknown[][] = [[], [], [], [], [], [], [], [], [], [], []];
    const [ids, createdAt, accountIds, livemodes, methods, routes, operationNames, statuses, requestIds, keyPrefixes, latencies] = columns;
    for (const record of batch) {
      // Minted here, not the request id: a client may send the same X-Request-Id twice.
      ids.push(newId('rlog'));
      createdAt.push(record.createdAt.toISOString());
      accountIds.push(record.accountId);
      livemodes.push(record.livemode);
      methods.push(record.method);
      routes.push(record.route);
      operationNames.push(record.operationName);
      statuses.push(record.status);
      requestIds.push(record.requestId);
      keyPrefixes.push(record.keyPrefix);
      latencies.push(record.latencyMs);
    }
    // A prepared statement (selectRows): the same text every batch, parsed and planned once per connection.
    await selectRows(
      this.em,
      `insert into request_logs (id, created_at, updated_at, account_id, livemode, method, route, operation_name, status, request_id, key_prefix, latency_ms)
       select r.id, r.created_at, r.created_at, r.account_id, r.livemode, r.method, r.route, r.operation_name, r.status, r.request_id, r.key_prefix, r.latency_ms
         from unnest(?::text[], ?::timestamptz[], ?::text[], ?::boolean[], ?::text[], ?::text[], ?::text[], ?::smallint[], ?::text[], ?::text[], ?::float8[])
              as r (id, created_at, account_id, livemode, method, route, operation_name, status, request_id, key_prefix, latency_ms)
        where exists (select 1 from accounts a where a.id = r.account_id)`,
      columns,
    );
  }
}

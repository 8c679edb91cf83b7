import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Piscina } from 'piscina';
import { ApiError } from '../../common/api-error';
import type { TenantScope } from '../../db/tenant';
import { requestError } from '../../graphql/request-error';
import { KeyedConcurrencyGate, Release } from '../../limits/concurrency-gate';
import type { ProposalDocument } from './proposal-pdf';

export interface PdfPoolBounds {
  /** Worker threads of this instance. */
  threads: number;
  /** Renders that may wait for a thread, all accounts together; past that, 503. */
  queue: number;
  /** Renders one account and mode may have handed to the threads at once. */
  perAccount: number;
  /** Renders of one account and mode that may wait behind those; past that, 429. */
  waitingPerAccount: number;
}

/**
 * One thread fewer than the machine has (the main thread keeps a core for requests), at most two:
 * PDFs are occasional, and each thread loads pdfkit and the fonts of its own. An account may
 * have at most as many renders in the threads as there are threads, up to two: another account's
 * render then waits for one thread to free up, never for the first account's whole backlog.
 */
export function defaultPdfPoolBounds(cores = availableParallelism()): PdfPoolBounds {
  const threads = Math.max(1, Math.min(2, cores - 1));
  return { threads, queue: 8 * threads, perAccount: Math.min(2, threads), waitingPerAccount: 4 };
}

/** What the pool tells the metrics. */
export interface PdfPoolObserver {
  pdfRendered(): void;
  pdfRefused(reason: 'account_busy' | 'queue_full'): void;
}

/** How long threads stay after their last render: a burst reuses them, a quiet instance gives the memory back. */
const IDLE_THREAD_MS = 60_000;

/**
 * The compiled worker: beside this file in dist/, or in dist/ when this file runs from the
 * TypeScript sources (jest through @swc/jest), because a worker thread is plain Node and cannot
 * load .ts; the tests' global setup compiles dist/ first.
 */
export function pdfWorkerFile(): string {
  const compiledDir = path.extname(__filename) === '.ts' ? path.resolve(__dirname, '../../../dist/src/modules/proposals') : __dirname;
  return path.join(compiledDir, 'proposal-pdf.worker.js');
}

/**
 * Renders proposals in worker threads (piscina), so the event loop never runs pdfkit: /healthz and
 * every other request keep answering while a long PDF renders. Work is bounded twice per instance:
 * per account and mode (KeyedConcurrencyGate: 429 past its queue) and for the pool (503 past its
 * queue), each with a Retry-After estimated from recent render times.
 */
export class ProposalPdfPool {
  private pool?: Piscina<ProposalDocument, Uint8Array>;
  private readonly accounts: KeyedConcurrencyGate;
  /** Renders handed to piscina: running, or waiting there for a thread. */
  private admitted = 0;
  /** Recent render time (exponential average), for Retry-After; a guess until the first render. */
  private renderSeconds = 1;
  private closed = false;

  constructor(
    readonly bounds: PdfPoolBounds = defaultPdfPoolBounds(),
    private readonly observer?: PdfPoolObserver,
    private readonly onPoolError: (error: Error) => void = () => undefined,
    private readonly workerFile = pdfWorkerFile(),
  ) {
    // Checked at start: a missing build would otherwise surface as a 500 on the first PDF.
    if (!existsSync(workerFile)) throw new Error(`the PDF worker ${workerFile} is missing: compile with npm run build`);
    this.accounts = new KeyedConcurrencyGate(bounds.perAccount, bounds.waitingPerAccount);
  }

  /** Renders running or queued in the threads, and renders waiting behind their account's bound. */
  stats(): { admitted: number; waitingForAccount: number } {
    return { admitted: this.admitted, waitingForAccount: this.accounts.waiting };
  }

  /**
   * Runs `work` once the account and mode has a render slot (it may wait behind the account's
   * other renders); refused with 429 when too many wait already.
   */
  async forAccount<T>(scope: TenantScope, work: () => Promise<T>): Promise<T> {
    const slot = this.accounts.tryAcquire(`${scope.accountId}:${scope.livemode ? 'live' : 'test'}`);
    if (!slot) {
      this.observer?.pdfRefused('account_busy');
      const { perAccount, waitingPerAccount } = this.bounds;
      throw requestError(
        new ApiError(
          'rate_limit_exceeded',
          `Too many PDFs rendering for this account and mode: at most ${perAccount} at once and ${waitingPerAccount} waiting`,
          {
            retryAfterS: this.estimateSeconds(perAccount + waitingPerAccount, perAccount),
          },
        ),
      );
    }
    let release: Release | undefined;
    try {
      release = await slot;
      return await work();
    } finally {
      release?.();
    }
  }

  /** Renders in a worker thread; 503 when the pool's queue is full. */
  async render(document: ProposalDocument): Promise<Buffer> {
    const { threads, queue } = this.bounds;
    if (this.closed) throw requestError(new ApiError('service_unavailable', 'The service is shutting down; retry shortly', { retryAfterS: 1 }));
    if (this.admitted >= threads + queue) {
      this.observer?.pdfRefused('queue_full');
      throw requestError(
        new ApiError('service_unavailable', 'PDF rendering is at capacity on this instance; retry shortly', {
          retryAfterS: this.estimateSeconds(this.admitted, threads),
        }),
      );
    }
    this.admitted += 1;
    const started = process.hrtime.bigint();
    try {
      const bytes = await this.threads().run(document);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Includes time queued for a thread, so under load the estimate errs long: the safe side for Retry-After.
      this.renderSeconds = 0.7 * this.renderSeconds + 0.3 * seconds;
      this.observer?.pdfRendered();
      // Structured cloning hands the worker's Buffer over as a plain Uint8Array.
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } finally {
      this.admitted -= 1;
    }
  }

  /** Lets renders under way finish, drops queued ones, and ends the threads. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.close({ force: true });
  }

  /** Made at the first render, so apps that never render a PDF start no thread. */
  private threads(): Piscina<ProposalDocument, Uint8Array> {
    if (!this.pool) {
      const { threads, queue } = this.bounds;
      this.pool = new Piscina<ProposalDocument, Uint8Array>({
        filename: this.workerFile,
        minThreads: 0,
        maxThreads: threads,
        // Never reached (render() counts admissions first); a second bound should that change.
        maxQueue: threads + queue,
        idleTimeout: IDLE_THREAD_MS,
      });
      // piscina emits 'error' for a failure no task owns; without a listener that would end the process.
      this.pool.on('error', this.onPoolError);
    }
    return this.pool;
  }

  /** Seconds until `ahead` renders, `parallel` at a time, are likely done. */
  private estimateSeconds(ahead: number, parallel: number): number {
    return Math.max(1, Math.ceil((this.renderSeconds * ahead) / Math.max(1, parallel)));
  }
}

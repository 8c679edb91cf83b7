import { AsyncLocalStorage } from 'node:async_hooks';
import { outboxSignal } from '../events/outbox.subscriber';
import type { Logger } from '../logger';

/** How long after a write of events a worker looks for the work they cause (see onEvents). */
export const EVENT_WAKE_DELAY_MS = 25;

/**
 * What woke a pass: the timer, finished work or new work ('all': prepare, then claim), or a write
 * of events ('events': prepare, and claim only if preparing made work).
 */
type Wake = 'all' | 'events';

/**
 * A background worker that claims work from PostgreSQL: a pass prepares (fans out, schedules),
 * claims as much as it has room for, and works each claim concurrently. Passes run on a timer,
 * whenever this process writes events, and whenever a fan-out in this process made work; a pass
 * never overlaps another. Writes of events that make no work (nobody subscribes) cost only the
 * fan-out, not a claim by every worker. `stop()` stops claiming and waits for the work under way,
 * so nothing is cut off mid-way.
 */
export abstract class PollingWorker<Claim> {
  private stopped = true;
  private timer?: NodeJS.Timeout;
  private pass: Promise<void> | null = null;
  /**
   * The async context the worker was made in (start-up: no transaction). Every pass runs in it, so
   * a pass woken by a write inside some transaction does not inherit that transaction through
   * AsyncLocalStorage: its work would otherwise run on a transaction that finishes under it
   * ("Transaction query already complete"), leaving the claim leased for minutes.
   */
  private readonly ownContext = AsyncLocalStorage.snapshot();
  private passAgain: Wake | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private fullPasses = 0;
  private readonly onTimer = () => this.nudge();
  private soon?: NodeJS.Timeout;
  /**
   * Writes of events start a pass a moment later, not at once: under a burst of writes, one pass
   * (a transaction and a few queries) then serves every event written meanwhile, instead of
   * passes running back to back for each one and competing with requests for the CPU.
   */
  private readonly onEvents = () => {
    if (this.soon || this.stopped) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.nudge('events');
    }, EVENT_WAKE_DELAY_MS);
  };
  private readonly onWork = () => this.nudge();

  protected constructor(
    protected readonly logger: Logger,
    private readonly pollIntervalMs: number,
    private readonly concurrency: number,
    /** Whether writes of events and fan-outs in this process start a pass (work that follows events), or only the timer does. */
    private readonly wakeOnEvents = true,
  ) {}

  /**
   * Work to do before claiming, such as fanning out new events; says whether it made work to
   * claim. `full` is false in a pass that only a write of events woke.
   */
  protected abstract prepare(full: boolean): Promise<boolean>;
  protected abstract claim(limit: number): Promise<Claim[]>;
  protected abstract work(claim: Claim): Promise<void>;
  protected abstract describe(claim: Claim): Record<string, unknown>;

  protected get isStopped(): boolean {
    return this.stopped;
  }

  /** How many full passes (a full prepare, then a claim) have ended, so a test can wait for one begun after what it did instead of sleeping. */
  get passes(): number {
    return this.fullPasses;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    if (this.wakeOnEvents) {
      outboxSignal.on('written', this.onEvents);
      outboxSignal.on('work', this.onWork);
    }
    this.timer = setInterval(this.onTimer, this.pollIntervalMs);
    this.timer.unref();
    this.nudge();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    outboxSignal.off('written', this.onEvents);
    outboxSignal.off('work', this.onWork);
    clearInterval(this.timer);
    clearTimeout(this.soon);
    this.soon = undefined;
    await this.pass;
    await Promise.all([...this.inFlight]);
  }

  /** Look for work now (a pass already running looks again when it ends). */
  nudge(wake: Wake = 'all'): void {
    if (this.stopped) return;
    if (this.pass) {
      this.passAgain = this.passAgain === 'all' || wake === 'all' ? 'all' : 'events';
      return;
    }
    this.pass = this.ownContext(() => this.runPass(wake))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'worker pass failed; retrying at the next poll'))
      .finally(() => {
        this.pass = null;
        const again = this.passAgain;
        this.passAgain = null;
        if (again) this.nudge(again);
      });
  }

  private async runPass(wake: Wake): Promise<void> {
    const made = await this.prepare(wake === 'all');
    if (wake === 'events' && !made) return;
    const free = this.concurrency - this.inFlight.size;
    if (this.stopped || free <= 0) return;
    for (const claim of await this.claim(free)) {
      const job = this.work(claim)
        .catch((error: unknown) =>
          // The claim's lease runs out and the work is taken again: nothing is lost.
          this.logger.error({ err: error, ...this.describe(claim) }, 'claimed work failed before it was recorded'),
        )
        .finally(() => {
          this.inFlight.delete(job);
          this.nudge();
        });
      this.inFlight.add(job);
    }
    if (wake === 'all') this.fullPasses += 1;
  }
}

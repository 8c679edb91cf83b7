import { TransactionContext, type EntityManager } from '@mikro-orm/core';
import { PollingWorker } from '../../src/common/polling-worker';
import { createLogger } from '../../src/logger';
import { eventually } from '../helpers/wait';

/** The smallest worker: one claim, whose work notes the transaction it finds itself in. */
class OneClaim extends PollingWorker<number> {
  readonly seen: Array<number | null> = [];
  /** Claims asked for, and whether the one claim is there to take yet. */
  claims = 0;
  open = false;
  private given = false;
  constructor() {
    super(createLogger('silent'), 3_600_000, 1);
  }
  protected async prepare(): Promise<boolean> {
    return true;
  }
  protected async claim(): Promise<number[]> {
    this.claims += 1;
    if (!this.open || this.given) return [];
    this.given = true;
    return [1];
  }
  protected async work(): Promise<void> {
    this.seen.push(TransactionContext.currentTransactionContext()?.id ?? null);
  }
  protected describe(): Record<string, unknown> {
    return {};
  }
}

/** A worker whose claims wait until the test lets them go, and whose preparing makes work only when told to. */
class GatedClaims extends PollingWorker<never> {
  prepares = 0;
  makesWork = false;
  private release?: () => void;
  constructor() {
    super(createLogger('silent'), 3_600_000, 1);
  }
  /** Whether a pass is waiting in claim() for letClaimGo(). */
  get claiming(): boolean {
    return this.release !== undefined;
  }
  letClaimGo(): void {
    const release = this.release;
    this.release = undefined;
    release?.();
  }
  protected async prepare(): Promise<boolean> {
    this.prepares += 1;
    return this.makesWork;
  }
  protected async claim(): Promise<never[]> {
    await new Promise<void>((resolve) => (this.release = resolve));
    return [];
  }
  protected async work(): Promise<void> {}
  protected describe(): Record<string, unknown> {
    return {};
  }
}

describe('a polling worker', () => {
  it('counts a full pass in `passes` once it has claimed, and not a pass that only a write of events woke', async () => {
    const worker = new GatedClaims();
    worker.start();
    try {
      await eventually(() => expect(worker.claiming).toBe(true));
      expect(worker.passes).toBe(0); // under way, not ended
      worker.nudge(); // asked for while a pass runs: the next one begins when it ends
      worker.letClaimGo();
      await eventually(() => expect(worker.claiming).toBe(true));
      expect(worker.passes).toBe(1);

      worker.letClaimGo();
      await eventually(() => expect(worker.passes).toBe(2));
      // Woken by a write of events that made no work: it prepares but does not claim, and is not counted.
      const prepares = worker.prepares;
      worker.nudge('events');
      await eventually(() => expect(worker.prepares).toBe(prepares + 1));
      // Woken by a write of events that made work: it claims, but did not prepare fully, and is not counted either.
      worker.makesWork = true;
      worker.nudge('events');
      await eventually(() => expect(worker.claiming).toBe(true));
      worker.letClaimGo();
      worker.nudge(); // passes never overlap: once this one claims, the events' passes have ended
      await eventually(() => expect(worker.claiming).toBe(true));
      expect(worker.passes).toBe(2);
      worker.letClaimGo();
      await eventually(() => expect(worker.passes).toBe(3));
    } finally {
      worker.letClaimGo();
      await worker.stop();
    }
  });

  it('runs a pass woken inside a transaction outside it: work never borrows the waker’s transaction', async () => {
    const worker = new OneClaim();
    worker.start();
    try {
      // The pass start() began finds nothing and ends.
      await eventually(() => expect(worker.claims).toBe(1));
      await new Promise((resolve) => setImmediate(resolve));
      // What happens when a run's own write of events wakes the runner: the nudge comes from inside
      // that run's transaction (MikroORM keeps it in AsyncLocalStorage).
      const inside = TransactionContext.create({ name: 'default', _id: 7 } as unknown as EntityManager, () => {
        worker.open = true;
        worker.nudge();
        return TransactionContext.currentTransactionContext()?.id;
      });
      expect(inside).toBe(7);
      await eventually(() => expect(worker.seen).toHaveLength(1));
      expect(worker.seen).toEqual([null]);
    } finally {
      await worker.stop();
    }
  });
});

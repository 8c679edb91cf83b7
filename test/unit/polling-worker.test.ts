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

describe('a polling worker', () => {
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

/** Gives a slot back; calling it again does nothing. */
export type Release = () => void;

interface KeyState {
  running: number;
  waiting: Array<(release: Release) => void>;
}

/**
 * At most `maxRunning` holders per key at once, and at most `maxWaiting` more queued behind them
 * in arrival order; anyone past that is refused at once rather than queued without end, so one key
 * cannot pile up work (or open requests) that everyone else then waits behind. Per process.
 */
export class KeyedConcurrencyGate {
  private readonly keys = new Map<string, KeyState>();
  private queued = 0;

  constructor(
    readonly maxRunning: number,
    readonly maxWaiting: number,
  ) {
    if (maxRunning < 1 || maxWaiting < 0) throw new Error('KeyedConcurrencyGate: maxRunning must be at least 1, maxWaiting at least 0');
  }

  /** Resolves with the slot's release once the key has one free; undefined when the key's queue is full. */
  tryAcquire(key: string): Promise<Release> | undefined {
    let state = this.keys.get(key);
    if (!state) this.keys.set(key, (state = { running: 0, waiting: [] }));
    if (state.running < this.maxRunning) {
      state.running += 1;
      return Promise.resolve(this.releaseOf(key, state));
    }
    if (state.waiting.length >= this.maxWaiting) return undefined;
    this.queued += 1;
    return new Promise((resolve) => state.waiting.push(resolve));
  }

  /** Callers queued behind a busy key, all keys together (for the metrics). */
  get waiting(): number {
    return this.queued;
  }

  private releaseOf(key: string, state: KeyState): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = state.waiting.shift();
      if (next) {
        // The slot passes straight to the next in line, so a newcomer cannot jump the queue.
        this.queued -= 1;
        next(this.releaseOf(key, state));
        return;
      }
      state.running -= 1;
      if (state.running === 0) this.keys.delete(key);
    };
  }
}

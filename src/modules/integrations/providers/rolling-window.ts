import { createHash } from 'node:crypto';

/**
 * How a provider's request-count limit is kept from our side: a rolling window of slots. A slot
 * is taken when a request is sent and counts until `windowMs` after its answer came (not after it
 * was sent): the provider counts a request when it arrives, which is between the two, so a window
 * measured from the answer can never hold more than `limit` arrivals, however the network delays them.
 */
export class RollingWindow {
  private readonly slots: Array<{ expiresAt: number }> = [];
  private readonly waiters = new Set<() => void>();
  private pausedUntil = 0;

  constructor(
    public limit: number,
    readonly windowMs: number,
  ) {}

  /** Waits for a free slot and takes it; call the returned function when the answer (or the failure) came. */
  async take(): Promise<() => void> {
    for (;;) {
      const now = Date.now();
      for (let i = this.slots.length - 1; i >= 0; i--) if (this.slots[i].expiresAt <= now) this.slots.splice(i, 1);
      if (now >= this.pausedUntil && this.slots.length < this.limit) {
        const slot = { expiresAt: Infinity };
        this.slots.push(slot);
        return () => {
          slot.expiresAt = Date.now() + this.windowMs;
          for (const wake of [...this.waiters]) wake();
        };
      }
      const nextExpiry = Math.min(...this.slots.map((slot) => slot.expiresAt));
      const until = now < this.pausedUntil ? this.pausedUntil : nextExpiry;
      // Every slot in flight (Infinity): a release wakes us.
      await this.sleep(Number.isFinite(until) ? until - now : undefined);
    }
  }

  /** No request for `ms` (the provider said to wait, or the app's budget is spent by other tools). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
  }

  /** Whether our own requests fill the window. */
  get full(): boolean {
    const now = Date.now();
    return this.slots.filter((slot) => slot.expiresAt > now).length >= this.limit;
  }

  private sleep(ms: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}

/** Windows by app: a limit is the app's or the tenant's, not one client's, and a sync run makes a new client. */
const windows = new Map<string, RollingWindow>();

/**
 * The one window in this process of the limit `key` names (the limit, then the app: its base URL
 * and token, its instance and client id), made with `limit` the first time; hashed, so no token is
 * kept as a key.
 */
export function sharedWindow(key: string[], limit: number, windowMs: number): RollingWindow {
  const id = createHash('sha256').update(key.join('\n')).digest('hex');
  let window = windows.get(id);
  if (!window) {
    window = new RollingWindow(limit, windowMs);
    windows.set(id, window);
  }
  return window;
}

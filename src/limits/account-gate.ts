import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { AccountGateBounds, DEFAULT_ACCOUNT_GATE_BOUNDS } from './account-gate-bounds';
import type { Authenticated } from '../modules/accounts/api-key.service';

export { type AccountGateBounds, DEFAULT_ACCOUNT_GATE_BOUNDS };

/** Root-field time an account may run ahead of its share (a burst), in ms. */
const TIME_BURST_MS = 100;

/** An account is active for this long after its last request started. */
export const ACTIVE_MS = 1_000;
/** Root fields one account may have waiting: more than its running requests can select (25 each). */
const ROOT_FIELDS_WAITING = 10_000;

const keyOf = (auth: Pick<Authenticated, 'account' | 'livemode'>): string => `${auth.account.id}:${auth.livemode ? 'live' : 'test'}`;

const tooMany = (what: string, detail: string) =>
  new ApiError('rate_limit_exceeded', `Too many ${what} of this account at once (${detail}); retry after the number of seconds in Retry-After.`, {
    retryAfterS: 1,
  });

/** One account's line: what runs, and what waits in arrival order. */
interface Line {
  running: number;
  waiting: Array<() => void>;
}

/**
 * Lines per account and mode, each with two limits: `alone` while the account is the only one
 * active on the instance, `shared` while others are active too. A slot passes straight to the next
 * in line, so a newcomer cannot jump the queue; one already running is never stopped.
 */
class Lines {
  private readonly lines = new Map<string, Line>();
  waitingCount = 0;

  constructor(
    private readonly limit: () => number,
    private readonly maxWaiting: number,
  ) {}

  /** `now` when the key's line lets one more run at once; else a promise of its turn; undefined when its queue is full. */
  enter(key: string): 'now' | Promise<void> | undefined {
    let line = this.lines.get(key);
    if (!line) this.lines.set(key, (line = { running: 0, waiting: [] }));
    if (!line.waiting.length && line.running < this.limit()) {
      line.running += 1;
      return 'now';
    }
    if (line.waiting.length >= this.maxWaiting) return undefined;
    const admitted = new Promise<void>((resolve) => line!.waiting.push(resolve));
    this.waitingCount += 1;
    this.drain(key, line);
    return admitted;
  }

  leave(key: string): void {
    const line = this.lines.get(key);
    if (!line) return;
    line.running -= 1;
    this.drain(key, line);
  }

  private drain(key: string, line: Line): void {
    const limit = this.limit();
    while (line.waiting.length && line.running < limit) {
      line.running += 1;
      this.waitingCount -= 1;
      line.waiting.shift()!();
    }
    if (line.running === 0 && !line.waiting.length) this.lines.delete(key);
  }
}

/**
 * What one account and mode may hold of an instance, so an account over its share waits behind itself
 * (docs/RELIABILITY.md, "A noisy neighbour"). Alone it may use all of it; while another account is active (a
 * request within the last second) it runs at most `sharedRequests` requests and `sharedRootFields` root fields
 * at once. A request waits before its body is read and a root field before it touches the database, so nothing
 * waiting holds a connection; at most `waiting` requests wait per account (429 past that).
 */
export class AccountGate {
  private readonly requestLines: Lines;
  private readonly rootFieldLines: Lines;
  /** When each account last started a request, for telling whether it is alone. */
  private readonly lastSeen = new Map<string, number>();
  private lastPruned = 0;
  /** Each account's root-field time in hand (a token bucket of milliseconds, refilled at sharedTime per ms), while shared. */
  private readonly time = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly bounds: AccountGateBounds = DEFAULT_ACCOUNT_GATE_BOUNDS,
    private readonly now: () => number = Date.now,
  ) {
    if (bounds.sharedRequests < 1 || bounds.requests < bounds.sharedRequests) throw new Error('AccountGate: sharedRequests must be from 1 to requests');
    if (bounds.sharedRootFields < 1 || bounds.rootFields < bounds.sharedRootFields)
      throw new Error('AccountGate: sharedRootFields must be from 1 to rootFields');
    this.requestLines = new Lines(() => (this.shared() ? bounds.sharedRequests : bounds.requests), bounds.waiting);
    this.rootFieldLines = new Lines(() => (this.shared() ? bounds.sharedRootFields : bounds.rootFields), ROOT_FIELDS_WAITING);
  }

  /** Requests and root fields queued behind their account's, all accounts together (for the metrics). */
  get waiting(): number {
    return this.requestLines.waitingCount + this.rootFieldLines.waitingCount;
  }

  /** Accounts that started a request within ACTIVE_MS. */
  activeAccounts(): number {
    const now = this.now();
    if (now - this.lastPruned >= ACTIVE_MS / 4) {
      this.lastPruned = now;
      for (const [key, seen] of this.lastSeen) if (now - seen > ACTIVE_MS) this.lastSeen.delete(key);
    }
    return this.lastSeen.size;
  }

  private shared(): boolean {
    return this.activeAccounts() > 1;
  }

  /**
   * The express middleware, after authentication: admits the request when its account's line lets
   * it, queues it otherwise (its body still unread), and refuses it with 429 when the queue is full.
   * The slot is given back when the answer is sent or the client hangs up.
   */
  admit(onError: (res: Response, error: ApiError) => void) {
    return (_req: Request, res: Response, next: NextFunction): void => {
      const auth = res.locals.auth as Authenticated | undefined;
      if (!auth) return next();
      const key = keyOf(auth);
      this.lastSeen.set(key, this.now());
      const admitted = this.requestLines.enter(key);
      if (!admitted) return onError(res, tooMany('requests', `${this.bounds.waiting} may wait per instance`));
      const run = () => {
        let left = false;
        const leave = () => {
          if (left) return;
          left = true;
          this.requestLines.leave(key);
        };
        if (res.writableEnded || res.destroyed) return leave();
        // Root fields of a request whose client hung up do not start (rootField below).
        const abandoned = new AbortController();
        res.locals.abandoned = abandoned.signal;
        res.once('finish', leave);
        res.once('close', () => {
          if (!res.writableFinished) abandoned.abort();
          leave();
        });
        next();
      };
      if (admitted === 'now') return run();
      void admitted.then(run);
    };
  }

  /** Runs one root field of the account's once its line lets it; not at all once `signal` is aborted (the client hung up). */
  async rootField<T>(auth: Pick<Authenticated, 'account' | 'livemode'>, run: () => Promise<T> | T, signal?: AbortSignal): Promise<T> {
    const key = keyOf(auth);
    const admitted = this.rootFieldLines.enter(key);
    if (!admitted) throw tooMany('operations', `${ROOT_FIELDS_WAITING} may wait`);
    if (admitted !== 'now') await admitted;
    const started = this.now();
    try {
      const wait = this.timeOwed(key, started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (signal?.aborted) throw new ApiError('request_timeout', 'The client closed the connection before this operation started; it did not run.');
      const begun = this.now();
      try {
        return await run();
      } finally {
        this.spend(key, begun, this.now());
      }
    } finally {
      this.rootFieldLines.leave(key);
    }
  }

  /** While shared, how long the account must wait before its time in hand is positive again (0 while alone). */
  private timeOwed(key: string, now: number): number {
    const bucket = this.time.get(key);
    if (!bucket) return 0;
    const share = this.bounds.sharedTime;
    bucket.tokens = Math.min(TIME_BURST_MS, bucket.tokens + (now - bucket.at) * share);
    bucket.at = now;
    if (bucket.tokens >= 0 || !this.shared()) {
      if (bucket.tokens >= TIME_BURST_MS) this.time.delete(key);
      return 0;
    }
    return share > 0 ? Math.ceil(-bucket.tokens / share) : 0;
  }

  /** Takes a root field's running time (from `begun` to `ended`) out of the account's time in hand, which the wall-clock time since refilled. */
  private spend(key: string, begun: number, ended: number): void {
    if (!this.shared() && !this.time.has(key)) return;
    const bucket = this.time.get(key) ?? { tokens: TIME_BURST_MS, at: begun };
    const ran = ended - begun;
    // Refilled up to the start (at most the burst), then drained by what the run took beyond its share.
    bucket.tokens = Math.min(TIME_BURST_MS, bucket.tokens + Math.max(0, begun - bucket.at) * this.bounds.sharedTime) - ran * (1 - this.bounds.sharedTime);
    bucket.at = ended;
    this.time.set(key, bucket);
  }
}

import { ACTIVE_MS, AccountGate, AccountGateBounds } from '../../src/limits/account-gate';

/**
 * What one account may hold of an instance (issue 64): alone, all of it; beside another active
 * account, its line of one root field at a time for half of the time; requests queue before their
 * bodies are read, 429 past the queue; a root field of a request whose client left never starts.
 */

const account = (id: string) => ({ account: { id } as never, livemode: true });
const A = account('acct_a');
const B = account('acct_b');
const BOUNDS: AccountGateBounds = { requests: 4, sharedRequests: 1, waiting: 1, rootFields: 3, sharedRootFields: 1, sharedTime: 0.5 };

/** A root field that runs until released, noting when it started. */
function blocker(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    run: () => {
      started.push(name);
      return done;
    },
    release,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Makes the gate see `who` active, as a request of theirs passing the middleware would. */
function seen(gate: AccountGate, who: typeof A): void {
  const res = { locals: { auth: who }, once: () => undefined, writableEnded: false, destroyed: false };
  gate.admit(() => undefined)({} as never, res as never, () => undefined);
}

describe('AccountGate', () => {
  it('lets an account alone on the instance run as many root fields as the pool has connections', async () => {
    const gate = new AccountGate(BOUNDS);
    seen(gate, B);
    const started: string[] = [];
    const fields = ['b1', 'b2', 'b3', 'b4'].map((name) => blocker(started, name));
    const runs = fields.map((field) => gate.rootField(B, field.run));
    await settle();
    expect(started).toEqual(['b1', 'b2', 'b3']);
    fields[0].release();
    await settle();
    expect(started).toEqual(['b1', 'b2', 'b3', 'b4']);
    fields.forEach((field) => field.release());
    await Promise.all(runs);
  });

  it("runs an account's root fields one at a time while another account is active, and never holds the other account's", async () => {
    let clock = 1_000_000;
    const gate = new AccountGate(BOUNDS, () => clock);
    seen(gate, A);
    seen(gate, B);
    expect(gate.activeAccounts()).toBe(2);
    const started: string[] = [];
    const b = ['b1', 'b2'].map((name) => blocker(started, name));
    const bRuns = b.map((field) => gate.rootField(B, field.run));
    await settle();
    expect(started).toEqual(['b1']);
    // A's root field is not behind B's line.
    const a = blocker(started, 'a1');
    const aRun = gate.rootField(A, a.run);
    await settle();
    expect(started).toEqual(['b1', 'a1']);
    expect(gate.waiting).toBe(1);
    a.release();
    b[0].release();
    await settle();
    expect(started).toEqual(['b1', 'a1', 'b2']);
    b[1].release();
    await Promise.all([aRun, ...bRuns]);
    // A second after A's last request, B is alone again.
    clock += ACTIVE_MS + 1;
    seen(gate, B);
    expect(gate.activeAccounts()).toBe(1);
  });

  it('does not start a root field whose client hung up while it waited', async () => {
    const gate = new AccountGate(BOUNDS);
    seen(gate, A);
    seen(gate, B);
    const started: string[] = [];
    const first = blocker(started, 'b1');
    const firstRun = gate.rootField(B, first.run);
    const gone = new AbortController();
    const second = gate.rootField(B, () => started.push('b2'), gone.signal);
    gone.abort();
    first.release();
    await firstRun;
    await expect(second).rejects.toMatchObject({ extensions: { errorCode: 'request_timeout' } });
    expect(started).toEqual(['b1']);
  });

  it('holds an account to its share of the time while shared: past a short burst, its next root field waits', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    try {
      const gate = new AccountGate(BOUNDS);
      seen(gate, A);
      seen(gate, B);
      // B runs a root field of 300 ms: 100 ms of burst and 150 ms earned meanwhile at half the time leave it 50 ms short, which takes 100 ms to earn.
      const long = gate.rootField(B, () => new Promise((resolve) => setTimeout(resolve, 300)));
      await jest.advanceTimersByTimeAsync(300);
      await long;
      seen(gate, A);
      seen(gate, B);
      let ran = false;
      const next = gate.rootField(B, () => (ran = true));
      await jest.advanceTimersByTimeAsync(90);
      expect(ran).toBe(false);
      await jest.advanceTimersByTimeAsync(20);
      await next;
      expect(ran).toBe(true);
      // A, which used none of its time, is not held.
      let aRan = false;
      await gate.rootField(A, () => (aRan = true));
      expect(aRan).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('queues requests past the shared limit before their bodies are read, and answers 429 past the queue', () => {
    const gate = new AccountGate(BOUNDS);
    seen(gate, A);
    const refusals: unknown[] = [];
    const admitted: string[] = [];
    const listeners: Array<() => void> = [];
    const request = (name: string) => {
      const res = {
        locals: { auth: B },
        writableEnded: false,
        writableFinished: true,
        destroyed: false,
        once: (event: string, listener: () => void) => event === 'finish' && listeners.push(listener),
      };
      gate.admit((_res, error) => refusals.push(error))({} as never, res as never, () => admitted.push(name));
    };
    request('r1');
    request('r2');
    request('r3');
    expect(admitted).toEqual(['r1']);
    expect(refusals).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ errorCode: 'rate_limit_exceeded', retryAfter: 1 }) })]);
    listeners[0]();
    return settle().then(() => expect(admitted).toEqual(['r1', 'r2']));
  });
});

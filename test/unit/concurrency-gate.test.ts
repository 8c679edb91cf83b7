import { KeyedConcurrencyGate, Release } from '../../src/limits/concurrency-gate';
import { defaultPdfPoolBounds } from '../../src/modules/proposals/proposal-pdf.pool';

/** The per-account bound of PDF renders: holders per key, a short queue in arrival order, refusals past it. */
describe('KeyedConcurrencyGate', () => {
  it('admits maxRunning per key, queues maxWaiting more, and refuses the rest; keys are independent', async () => {
    const gate = new KeyedConcurrencyGate(2, 1);
    const first = await gate.tryAcquire('a')!;
    const second = await gate.tryAcquire('a')!;
    const queued = gate.tryAcquire('a');
    expect(queued).toBeDefined();
    expect(gate.tryAcquire('a')).toBeUndefined();
    expect(gate.waiting).toBe(1);
    // Another key has its own slots.
    const other = await gate.tryAcquire('b')!;
    expect(typeof other).toBe('function');
    for (const release of [first, second, other]) release();
    expect(gate.waiting).toBe(0);
    (await queued!)();
  });

  it('hands a freed slot to the first in line, so a newcomer cannot jump the queue', async () => {
    const gate = new KeyedConcurrencyGate(1, 2);
    const holder = await gate.tryAcquire('a')!;
    const order: string[] = [];
    const waiters = ['w1', 'w2'].map((name) => gate.tryAcquire('a')!.then((release) => (order.push(name), release)));
    holder();
    // The slot went to w1: a newcomer now waits (the queue has room for one more) instead of running.
    const newcomer = gate.tryAcquire('a')!;
    let newcomerRan = false;
    void newcomer.then(() => (newcomerRan = true));
    const w1 = await waiters[0];
    expect(order).toEqual(['w1']);
    expect(newcomerRan).toBe(false);
    w1();
    (await waiters[1])();
    (await newcomer)();
    expect(order).toEqual(['w1', 'w2']);
    expect(newcomerRan).toBe(true);
  });

  it('ignores a second release of one slot', async () => {
    const gate = new KeyedConcurrencyGate(1, 0);
    const release: Release = await gate.tryAcquire('a')!;
    release();
    release();
    const again = await gate.tryAcquire('a')!;
    // Had the second release counted, the key would admit two at once.
    expect(gate.tryAcquire('a')).toBeUndefined();
    again();
  });
});

describe('defaultPdfPoolBounds', () => {
  it('keeps a core for the main thread, at most two render threads, and an account to at most the threads there are', () => {
    expect(defaultPdfPoolBounds(1)).toMatchObject({ threads: 1, perAccount: 1 });
    expect(defaultPdfPoolBounds(2)).toMatchObject({ threads: 1, perAccount: 1 });
    expect(defaultPdfPoolBounds(3)).toMatchObject({ threads: 2, perAccount: 2 });
    expect(defaultPdfPoolBounds(16)).toMatchObject({ threads: 2, perAccount: 2, queue: 16, waitingPerAccount: 4 });
  });
});

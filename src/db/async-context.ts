import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactionContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * MikroORM keeps two contexts in an AsyncLocalStorage each: the EntityManager of the transaction
 * under way (`TransactionContext`, which `em.transactional` runs its callback in) and "inside a
 * flush" (UnitOfWork's guard against a flush from a flush hook). Both are read only while a
 * transaction or a flush runs.
 *
 * On Node 20 an AsyncLocalStorage is built on async hooks: once it has run, it stays enabled, and
 * an init hook then runs for every promise the process creates, in every request, for the rest of
 * the process's life. A process's first `em.flush()` turns that on; side by side, a single read
 * then cost about 8 % more CPU than with the storages off (docs/benchmark.md, "Eighth pass").
 *
 * Each storage here is turned off again (`disable()`) when its last run has ended, and back on by
 * its next `run`, which is Node's own behaviour for `run`. While any run is under way the storage
 * stays enabled, so every promise of that run carries the context as before; only when none is
 * left does the process stop paying for it. Node 24's AsyncLocalStorage (AsyncContextFrame) costs
 * nothing when idle and has no `_enable`; there this does nothing.
 */
const HOOK_BASED = typeof (AsyncLocalStorage.prototype as unknown as { _enable?: unknown })._enable === 'function';
const switched = new WeakSet<AsyncLocalStorage<unknown>>();

/** Makes `storage` enabled only while one of its runs is under way (the run's callback, to the end of the promise it returns). */
function enabledOnlyWhileRunning(storage: AsyncLocalStorage<unknown>): void {
  if (!HOOK_BASED || switched.has(storage)) return;
  switched.add(storage);
  const run = storage.run;
  let running = 0;
  const ended = () => {
    running -= 1;
    if (running === 0) storage.disable();
  };
  storage.run = function runCounted<R, A extends unknown[]>(store: unknown, callback: (...args: A) => R, ...args: A): R {
    running += 1;
    let result: R;
    try {
      result = run.call(storage, store, callback, ...args) as R;
    } catch (error) {
      ended();
      throw error;
    }
    if (result instanceof Promise) {
      return result.then(
        (value: unknown) => {
          ended();
          return value;
        },
        (error: unknown) => {
          ended();
          throw error;
        },
      ) as R;
    }
    ended();
    return result;
  };
  storage.disable();
}

let found: Promise<AsyncLocalStorage<unknown>[]> | undefined;

/**
 * MikroORM's context storages, both private to it and one per process: found, on the first call,
 * by recording which storage `TransactionContext.create` (its public entry) and an empty flush run
 * in. Both call `run` synchronously, so the recorder is in place for no longer than those two calls.
 */
export function mikroOrmStorages(orm: MikroORM): Promise<AsyncLocalStorage<unknown>[]> {
  found ??= findStorages(orm);
  return found;
}

async function findStorages(orm: MikroORM): Promise<AsyncLocalStorage<unknown>[]> {
  const seen = new Set<AsyncLocalStorage<unknown>>();
  const run = AsyncLocalStorage.prototype.run;
  AsyncLocalStorage.prototype.run = function recordRun(this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof run>) {
    seen.add(this);
    return run.apply(this, args);
  } as typeof run;
  let flushed: Promise<void>;
  try {
    TransactionContext.create(orm.em.fork(), () => undefined);
    flushed = orm.em.fork().flush();
  } finally {
    AsyncLocalStorage.prototype.run = run;
  }
  await flushed; // nothing to write: no query
  return [...seen];
}

/** Applies enabledOnlyWhileRunning to MikroORM's context storages (initOrm, once per process). */
export async function contextsOnlyWhileRunning(orm: MikroORM): Promise<void> {
  (await mikroOrmStorages(orm)).forEach(enabledOnlyWhileRunning);
}

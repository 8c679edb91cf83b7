import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactionContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * MikroORM keeps the transaction's EntityManager and its "inside a flush" guard in two AsyncLocalStorages.
 * On Node 20 a storage that has run once hooks every promise of the process for good, so each is turned off
 * when its last run ends and on again by its next, while every promise of a run still carries its context
 * (docs/ARCHITECTURE.md, "Transactions"). Node 24's storages cost nothing idle and have no `_enable`: there this
 * does nothing.
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

import type { AsyncLocalStorage } from 'node:async_hooks';
import { TransactionContext } from '@mikro-orm/core';
import { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { mikroOrmStorages } from '../../src/db/async-context';
import { AccountService } from '../../src/modules/accounts/account.service';
import { Lead } from '../../src/modules/leads/lead.entity';
import { truncateAll, workerOrm } from '../helpers/database';

/**
 * MikroORM's context storages are on only while a transaction or flush runs (src/db/async-context.ts):
 * each run still sees its own EntityManager, concurrent runs keep theirs when another ends, and
 * when the last has ended (committed or failed) both storages are off again.
 */
const hookBased = Number(process.versions.node.split('.')[0]) < 24;
const enabled = (storage: AsyncLocalStorage<unknown>) => (storage as unknown as { enabled: boolean }).enabled;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

(hookBased ? describe : describe.skip)('MikroORM context storages on a real database', () => {
  let orm: MikroORM;
  let accountId: string;
  let storages: AsyncLocalStorage<unknown>[];

  beforeAll(async () => {
    orm = await workerOrm();
    await truncateAll(orm);
    accountId = (await new AccountService(orm.em.fork()).create({ name: 'Context', email: 'context@async.test' })).id;
    storages = await mikroOrmStorages(orm);
  });
  afterAll(() => orm.close());

  const lead = (em: EntityManager, n: number) =>
    em.create(Lead, {
      account: accountId,
      livemode: false,
      company: `Context ${n}`,
      contactEmail: `c${n}@async.test`,
      score: 50,
      scoreLabel: 'warm',
      scoreSignals: [],
      scoreBase: 40,
      modelVersion: 'prior-v1',
      scoredAt: new Date(),
    } as never);
  const count = async () => orm.em.fork().count(Lead, { company: { $like: 'Context %' } }, { filters: false });

  it('finds both storages, the transaction context among them, and leaves them off after start', () => {
    expect(storages).toHaveLength(2);
    expect(storages).toContain((TransactionContext as unknown as { storage: AsyncLocalStorage<unknown> }).storage);
    expect(storages.map(enabled)).toEqual([false, false]);
  });

  it('keeps each of two overlapping transactions in its own context, and turns the storages off when both have ended', async () => {
    const firstMayEnd = deferred();
    const secondStarted = deferred();
    const firstEnded = deferred();
    const seen: string[] = [];

    const first = orm.em.fork().transactional(async (em) => {
      try {
        lead(em, 1);
        await em.flush();
      } finally {
        secondStarted.resolve(); // a failure here fails the test instead of leaving the second waiting
      }
      await firstMayEnd.promise;
      seen.push(TransactionContext.getEntityManager()?.id === em.id ? 'first: own context' : 'first: lost its context');
    });
    const second = orm.em.fork().transactional(async (em) => {
      await secondStarted.promise;
      firstMayEnd.resolve();
      await firstEnded.promise; // the first has committed and left its run
      expect(enabled(storages[0]) || enabled(storages[1])).toBe(true);
      seen.push(TransactionContext.getEntityManager()?.id === em.id ? 'second: own context' : 'second: lost its context');
      lead(em, 2);
      await em.flush();
    });
    await first.finally(firstEnded.resolve);
    await second;

    expect(seen).toEqual(['first: own context', 'second: own context']);
    expect(await count()).toBe(2);
    expect(storages.map(enabled)).toEqual([false, false]);
  });

  it('turns them off after a failed transaction too, which wrote nothing', async () => {
    await expect(
      orm.em.fork().transactional(async (em) => {
        lead(em, 3);
        await em.flush();
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await count()).toBe(2);
    expect(storages.map(enabled)).toEqual([false, false]);
  });

  it('turns them back on for the next flush, which still writes', async () => {
    const em = orm.em.fork();
    lead(em, 4);
    const flushing = em.flush();
    expect(storages.some(enabled)).toBe(true);
    await flushing;
    expect(await count()).toBe(3);
    expect(storages.map(enabled)).toEqual([false, false]);
  });
});

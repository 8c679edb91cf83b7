import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Runs `work` in a savepoint of `outer`, the transaction `em` is in: released when `work`
 * succeeds, rolled back when it throws, so a failed write (a duplicate contact_email, answered 409)
 * is undone alone instead of leaving the whole transaction aborted. `work`'s own error is the one
 * reported; a failed rollback leaves the outer transaction aborted, which its commit reports.
 */
export async function inSavepoint<T>(em: EntityManager, outer: Knex.Transaction, work: (savepoint: Knex.Transaction) => Promise<T>): Promise<T> {
  const connection = em.getConnection();
  const savepoint = await connection.begin({ ctx: outer });
  try {
    const result = await work(savepoint);
    await connection.commit(savepoint);
    return result;
  } catch (error) {
    await connection.rollback(savepoint).catch(() => undefined);
    throw error;
  }
}

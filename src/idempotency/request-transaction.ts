import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Makes every flush of `em`, an EntityManager inside a request's transaction, a savepoint of its
 * own. Without an Idempotency-Key each flush is its own transaction, and this keeps that: a flush
 * that fails (a duplicate contact_email, answered 409) is undone alone instead of leaving the
 * whole transaction aborted, so the answer can still be recorded with it, and a later mutation of
 * the same GraphQL document still runs. Services' own `em.transactional` calls nest as savepoints
 * already (MikroORM's default propagation, NESTED).
 */
export function flushInSavepoints<E extends EntityManager>(em: E): E {
  const flush = em.flush.bind(em);
  em.flush = async () => {
    const connection = em.getConnection();
    const outer = em.getTransactionContext<Knex.Transaction>();
    if (!outer) return flush();
    const savepoint = await connection.begin({ ctx: outer });
    em.setTransactionContext(savepoint);
    try {
      await flush();
      await connection.commit(savepoint);
    } catch (error) {
      // The flush's own error is the one to report; a failed rollback leaves the outer transaction aborted, which its commit reports.
      await connection.rollback(savepoint).catch(() => undefined);
      throw error;
    } finally {
      em.setTransactionContext(outer);
    }
  };
  return em;
}

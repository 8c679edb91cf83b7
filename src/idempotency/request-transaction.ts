import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@mikro-orm/postgresql';
import { inSavepoint } from '../db/savepoint';

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
    const outer = em.getTransactionContext<Knex.Transaction>();
    if (!outer) return flush();
    await inSavepoint(em, outer, async (savepoint) => {
      em.setTransactionContext(savepoint);
      try {
        await flush();
      } finally {
        em.setTransactionContext(outer);
      }
    });
  };
  return em;
}

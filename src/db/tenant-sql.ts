import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@mikro-orm/postgresql';
import { converted } from './lean';
import { tenantOf } from './tenant';

/**
 * The one way to write raw SQL over tenant tables in a request or a tenant's job (docs/ARCHITECTURE.md, "Tenant
 * scope"): `{table}` reads only the tenant's rows of it, `{tenant}` gives the tenant's values for an insert. Other
 * values are named bindings (`:agent`), so casts are written `cast(x as int)`, never `::`. Runs in the
 * EntityManager's transaction when it has one; test/integration/tenant-scope.test.ts fails on an unscoped read.
 */
export async function tenantQuery<Row = Record<string, unknown>>(em: EntityManager, sql: string, bindings: Record<string, unknown> = {}): Promise<Row[]> {
  const { accountId, livemode } = tenantOf(em);
  const text = sql.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'tenant'
      ? ':tenantAccount, :tenantLivemode'
      : `(select * from "${name}" where "account_id" = :tenantAccount and "livemode" = :tenantLivemode) as "${name}"`,
  );
  const query = em.getKnex().raw(text, { ...bindings, tenantAccount: accountId, tenantLivemode: livemode });
  const trx = em.getTransactionContext<Knex.Transaction>();
  const result = await converted(em, async () => (await (trx ? query.transacting(trx) : query)) as { rows: Row[] });
  return result.rows;
}

/** A row's tenant, as the columns a row owed to it carries (fan-outs copy it from the event to the work). */
export const tenantColumns = (row: { account_id: string; livemode: boolean }): { account_id: string; livemode: boolean } => ({
  account_id: row.account_id,
  livemode: row.livemode,
});

/** Whether two rows belong to the same tenant (an event and a subscription, an event and an agent). */
export const sameTenant = (a: { account_id: string; livemode: boolean }, b: { account_id: string; livemode: boolean }): boolean =>
  a.account_id === b.account_id && a.livemode === b.livemode;

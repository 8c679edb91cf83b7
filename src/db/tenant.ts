import { EntityClass, EntityData, EntityManager, RequiredEntityData } from '@mikro-orm/core';
import { TENANT_ACCOUNT_ENTITY, TenantAccount, TenantEntity } from './base.entity';
import { createLean, LeanReference } from './lean';
import { tenantOf } from './tenant-scope';

export { ACCOUNT_FILTER, accountFilter, scopeTo, TENANT_FILTER, tenantFilter, tenantFork, tenantOf, type TenantScope } from './tenant-scope';

/**
 * Creates a tenant row stamped with the EntityManager's account and mode, persisted on the next
 * flush; with `persist: false`, an instance no EntityManager tracks (createLean: its account a
 * LeanReference), for insertLean (src/db/lean-insert.ts) to write.
 */
export function createScoped<T extends TenantEntity<any>>( // eslint-disable-line @typescript-eslint/no-explicit-any -- any set of optional props
  em: EntityManager,
  entity: EntityClass<T>,
  data: Omit<RequiredEntityData<T>, 'account' | 'livemode'> & EntityData<T>,
  options: { persist?: boolean } = {},
): T {
  const scope = tenantOf(em);
  if (options.persist === false) {
    // Stamped after the data, as a spread of both would, without copying the data into a new object first.
    const lean = createLean(em, entity, data);
    // A lean instance's relations are LeanReference ids (src/db/lean.ts), not MikroORM's Ref.
    (lean as unknown as { account: LeanReference }).account = new LeanReference(scope.accountId);
    lean.livemode = scope.livemode;
    return lean;
  }
  return em.create(
    entity,
    {
      ...data,
      account: em.getReference<TenantAccount>(TENANT_ACCOUNT_ENTITY, scope.accountId),
      livemode: scope.livemode,
    } as unknown as RequiredEntityData<T>,
    { persist: options.persist },
  );
}

import type { EntityManager } from '@mikro-orm/core';

/** Whose data a request may see: one account, one mode. */
export interface TenantScope {
  accountId: string;
  livemode: boolean;
}

export const TENANT_FILTER = 'tenant';

/**
 * The single tenant-scoping mechanism: a MikroORM filter, on by default for every tenant entity.
 * It has no default parameters, so a query made on an EntityManager that was not scoped fails
 * instead of reading every account's rows. Background jobs that must cross tenants say so with
 * `filters: false`.
 */
export const tenantFilter = {
  name: TENANT_FILTER,
  cond: (args: TenantScope) => ({ account: args.accountId, livemode: args.livemode }),
  default: true,
};

export const ACCOUNT_FILTER = 'account';

/** The same mechanism for rows both modes share (AccountScopedEntity: an account's members): the account alone. */
export const accountFilter = {
  name: ACCOUNT_FILTER,
  cond: (args: TenantScope) => ({ account: args.accountId }),
  default: true,
};

export function scopeTo<E extends EntityManager>(em: E, scope: TenantScope): E {
  em.setFilterParams(TENANT_FILTER, scope);
  em.setFilterParams(ACCOUNT_FILTER, scope);
  return em;
}

/**
 * The EntityManager services work on: a fork of `em` scoped to the tenant, that follows the
 * transaction it is in. Inside `em.transactional(async () => …)` every call on it, from any service
 * holding it, goes to the transaction (MikroORM's `useContext`, through AsyncLocalStorage), so a
 * service never needs the transaction's EntityManager passed along, and cannot read outside it.
 */
export function tenantFork<E extends EntityManager>(em: E, scope: TenantScope, options: { keepTransactionContext?: boolean } = {}): E {
  return scopeTo(em.fork({ useContext: true, ...options }) as E, scope);
}

export function tenantOf(em: EntityManager): TenantScope {
  const scope = em.getFilterParams<TenantScope>(TENANT_FILTER);
  // Worded as MikroORM words a filter without parameters, so every unscoped read fails alike.
  if (!scope?.accountId) throw new Error("No arguments provided for filter 'tenant': this EntityManager is not scoped to a tenant");
  return scope;
}

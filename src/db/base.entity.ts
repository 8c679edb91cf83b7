import { Entity, ManyToOne, OptionalProps, Property, Ref } from '@mikro-orm/core';
import { Field, ObjectType } from 'type-graphql';

/** Timestamps with millisecond precision, so keyset cursors (which carry JS Dates) compare exactly. */
@ObjectType({ simpleResolvers: true })
@Entity({ abstract: true })
export abstract class TimestampedEntity<Optional = never> {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | Optional;

  @Field({ description: 'ISO 8601 UTC time of creation.' })
  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Field({ description: 'ISO 8601 UTC time of the last change.' })
  @Property({ type: 'datetime', length: 3, onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

/**
 * What a tenant row's `account` refers to: the accounts module's Account entity, named rather than
 * imported so that db/ does not depend on a module (MikroORM resolves the name at discovery).
 */
export interface TenantAccount {
  id: string;
}

export const TENANT_ACCOUNT_ENTITY = 'Account';

/**
 * Every row of tenant data belongs to one account and one mode. The `tenant` filter (db/tenant.ts)
 * scopes every query of these entities; nothing else has to remember a where clause.
 */
@ObjectType({ simpleResolvers: true })
@Entity({ abstract: true })
export abstract class TenantEntity<Optional = never> extends TimestampedEntity<Optional> {
  @ManyToOne(TENANT_ACCOUNT_ENTITY, { ref: true, deleteRule: 'cascade', index: false })
  account!: Ref<TenantAccount>;

  @Field({ description: 'false for data made with a test key (sk_test_), true for live data.' })
  @Property({ type: 'boolean' })
  livemode!: boolean;
}

/**
 * A row of an account shared by both modes (its members): the `account` filter, fed by the same
 * tenant scope as the `tenant` filter, scopes every query of these entities by account alone.
 */
@ObjectType({ simpleResolvers: true })
@Entity({ abstract: true })
export abstract class AccountScopedEntity<Optional = never> extends TimestampedEntity<Optional> {
  @ManyToOne(TENANT_ACCOUNT_ENTITY, { ref: true, deleteRule: 'cascade', index: false })
  account!: Ref<TenantAccount>;
}

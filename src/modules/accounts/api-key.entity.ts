import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Ref, Unique } from '@mikro-orm/core';
import { newId } from '../../common/ids';
import type { KeyPermissions } from './key-permissions';
import { Account } from './account.entity';

export enum KeyType {
  test = 'test',
  live = 'live',
}

/**
 * An API key. Only a SHA-256 hash of the secret is stored; the full key is shown once. A restricted
 * key (`rk_`) has `permissions`; a secret key (`sk_`) has none and full access. Rolling gives the key
 * a new secret and keeps the old one's hash until it expires.
 */
@Entity({ tableName: 'api_keys' })
@Index({ properties: ['account', 'createdAt'] })
export class ApiKey {
  [OptionalProps]?: 'createdAt' | 'livemode';

  @PrimaryKey({ type: 'text' })
  id: string = newId('key');

  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade', index: false })
  account!: Ref<Account>;

  @Property({ type: 'text' })
  name!: string;

  @Enum({ items: () => KeyType })
  type!: KeyType;

  /** `sk_test_`, `sk_live_`, `rk_test_` or `rk_live_`, shown with the last 4 characters so people can tell keys apart. */
  @Property({ type: 'text' })
  prefix!: string;

  @Property({ type: 'text' })
  last4!: string;

  @Unique({ name: 'api_keys_secret_hash_unique' })
  @Property({ type: 'text', hidden: true })
  secretHash!: string;

  /** The secret before the last roll, accepted until `previousSecretExpiresAt`. */
  @Unique({ name: 'api_keys_previous_secret_hash_unique' })
  @Property({ type: 'text', hidden: true, nullable: true })
  previousSecretHash?: string | null;

  @Property({ type: 'datetime', length: 3, nullable: true })
  previousSecretExpiresAt?: Date | null;

  /** A level per resource for a restricted key; null for a secret key (full access). */
  @Property({ type: 'json', nullable: true })
  permissions?: KeyPermissions | null;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', length: 3, nullable: true })
  lastUsedAt?: Date | null;

  @Property({ type: 'datetime', length: 3, nullable: true })
  revokedAt?: Date | null;

  get livemode(): boolean {
    return this.type === KeyType.live;
  }
}

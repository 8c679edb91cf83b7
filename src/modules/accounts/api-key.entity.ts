import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Ref, Unique } from '@mikro-orm/core';
import { newId } from '../../common/ids';
import { Account } from './account.entity';

export enum KeyType {
  test = 'test',
  live = 'live',
}

/** An API key. Only a SHA-256 hash of the secret is stored; the full key is shown once. */
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

  /** `sk_test_` or `sk_live_`, shown with the last 4 characters so people can tell keys apart. */
  @Property({ type: 'text' })
  prefix!: string;

  @Property({ type: 'text' })
  last4!: string;

  @Unique({ name: 'api_keys_secret_hash_unique' })
  @Property({ type: 'text', hidden: true })
  secretHash!: string;

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

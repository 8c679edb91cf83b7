import { Collection, Entity, Index, ManyToOne, OneToMany, OptionalProps, PrimaryKey, Property, Ref, Unique } from '@mikro-orm/core';
import { newId } from '../../common/ids';
import { Account } from '../accounts/account.entity';
import type { Role } from '../accounts/key-permissions';

/**
 * An account's OpenID Connect sign-in (Microsoft Entra ID, Google Workspace, Okta: any issuer with
 * discovery): one per account, set by its owners and admins. People whose address is in one of its
 * domains sign in through the issuer; the client secret is kept encrypted and never shown again.
 */
@Entity({ tableName: 'sso_connections' })
export class SsoConnection {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | 'requireSso';

  @PrimaryKey({ type: 'text' })
  id: string = newId('sso');

  @Unique({ name: 'sso_connections_account_unique' })
  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade', index: false })
  account!: Ref<Account>;

  /** The issuer identifier; its discovery document is read from `{issuerUrl}/.well-known/openid-configuration`. */
  @Property({ type: 'text' })
  issuerUrl!: string;

  @Property({ type: 'text' })
  clientId!: string;

  /** `{secret}` encrypted under ENCRYPTION_KEY (src/common/crypto.ts). */
  @Property({ type: 'text', hidden: true, lazy: true })
  clientSecretEncrypted!: string;

  /** The role of a person made a member by their first sign-in (never owner). */
  @Property({ type: 'text' })
  defaultRole!: Role;

  /** People of the domains cannot sign in with a password: the password form points them here. */
  @Property({ type: 'boolean' })
  requireSso: boolean = false;

  @OneToMany(() => SsoDomain, (domain) => domain.connection, { orderBy: { domain: 'asc' } })
  domains = new Collection<SsoDomain>(this);

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', length: 3, onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

/** An e-mail domain a connection covers: one connection per domain across all accounts (the key), so an address leads to one issuer. */
@Entity({ tableName: 'sso_domains' })
@Index({ name: 'sso_domains_connection', properties: ['connection'] })
export class SsoDomain {
  @PrimaryKey({ type: 'text' })
  domain!: string;

  @ManyToOne(() => SsoConnection, { ref: true, deleteRule: 'cascade', index: false })
  connection!: Ref<SsoConnection>;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();
}

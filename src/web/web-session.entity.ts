import { Entity, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { Account } from '../modules/accounts/account.entity';
import { User } from '../modules/accounts/user.entity';
import { SsoConnection } from '../modules/sso/sso-connection.entity';

/**
 * A signed-in browser. Only a SHA-256 of the cookie's random token is stored (like API keys), so a
 * copy of the table cannot be replayed; the CSRF token guards every form and the dashboard's
 * GraphQL calls.
 */
@Entity({ tableName: 'web_sessions' })
@Index({ name: 'web_sessions_account', properties: ['account'] })
@Index({ name: 'web_sessions_user', properties: ['user'] })
export class WebSession {
  @PrimaryKey({ type: 'text' })
  tokenHash!: string;

  /** Who signed in. */
  @ManyToOne(() => User, { ref: true, deleteRule: 'cascade', index: false })
  user!: Ref<User>;

  /** The account the person works in now (one they are an active member of; they switch between them). */
  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade', index: false })
  account!: Ref<Account>;

  /**
   * The account's single sign-on that vouched for this session; null after a password. Such a
   * session stays in that account (its issuer speaks for it alone) and ends when the connection is removed.
   */
  @ManyToOne(() => SsoConnection, { ref: true, deleteRule: 'cascade', nullable: true, index: false })
  ssoConnection?: Ref<SsoConnection> | null;

  @Property({ type: 'text' })
  csrfToken!: string;

  /** The dashboard's test / live switch. */
  @Property({ type: 'boolean' })
  livemode: boolean = false;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', length: 3 })
  expiresAt!: Date;

  /**
   * A key just generated, encrypted under ENCRYPTION_KEY, until the page after the redirect shows
   * it once (post, redirect, get: reloading never generates a second key).
   */
  @Property({ type: 'text', nullable: true })
  newKeyEncrypted?: string | null;
}

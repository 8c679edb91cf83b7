import { Entity, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { newId } from '../../common/ids';

/**
 * A person who signs in to the web app: one e-mail and one password (or single sign-on) for every
 * account they are a member of (src/modules/members). Not tenant data: an account sees its people
 * only through its members.
 */
@Entity({ tableName: 'users' })
export class User {
  [OptionalProps]?: 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'text' })
  id: string = newId('usr');

  @Unique({ name: 'users_email_unique' })
  @Property({ type: 'text' })
  email!: string;

  @Property({ type: 'text' })
  name!: string;

  /** scrypt hash; null for a person who has not chosen one (invited, not yet accepted). */
  @Property({ type: 'text', nullable: true, hidden: true, lazy: true })
  passwordHash?: string | null;

  /** When the person followed a verification, reset or invitation link; sign-in waits for it. */
  @Property({ type: 'datetime', length: 3, nullable: true })
  emailVerifiedAt?: Date | null;

  /**
   * The TOTP secret of two-step sign-in (src/modules/two-factor), encrypted under ENCRYPTION_KEY:
   * being set up while `totpEnabledAt` is null, in force once a first code confirmed it.
   */
  @Property({ type: 'text', nullable: true, hidden: true, lazy: true })
  totpSecretEncrypted?: string | null;

  @Property({ type: 'datetime', length: 3, nullable: true })
  totpEnabledAt?: Date | null;

  /** The 30-second step of the last code accepted: a code is good once, so one seen over a shoulder cannot be replayed. */
  @Property({ type: 'integer', nullable: true, hidden: true })
  totpLastStep?: number | null;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', length: 3, onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

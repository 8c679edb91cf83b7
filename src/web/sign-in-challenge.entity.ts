import { Entity, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { Account } from '../modules/accounts/account.entity';
import { User } from '../modules/accounts/user.entity';

/**
 * A sign-in waiting for its second step: the password was right, the code is still to come. The
 * browser holds a random token in a short-lived cookie; only its SHA-256 is stored (like sessions).
 * It lasts minutes and takes a few wrong codes, then the sign-in starts over from the password.
 */
@Entity({ tableName: 'sign_in_challenges' })
@Index({ name: 'sign_in_challenges_user', properties: ['user'] })
export class SignInChallenge {
  @PrimaryKey({ type: 'text' })
  tokenHash!: string;

  @ManyToOne(() => User, { ref: true, deleteRule: 'cascade', index: false })
  user!: Ref<User>;

  /** Where the session will work once the code is right. */
  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade', index: false })
  account!: Ref<Account>;

  /** Wrong codes given so far. */
  @Property({ type: 'integer' })
  attempts: number = 0;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', length: 3 })
  expiresAt!: Date;
}

import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { Account } from './account.entity';
import { User } from './user.entity';

export enum EmailTokenPurpose {
  verifyEmail = 'verify_email',
  resetPassword = 'reset_password',
  /** An invitation to join an account (its `account`), accepted by choosing a password. */
  invitation = 'invitation',
}

/**
 * The token of a link e-mailed to a person (a user). Only its SHA-256 is stored (like session
 * tokens and API keys), so a copy of the table opens nothing; `usedAt` makes each link single use.
 */
@Entity({ tableName: 'account_email_tokens' })
@Index({ name: 'account_email_tokens_account', properties: ['account'] })
@Index({ name: 'account_email_tokens_user', properties: ['user'] })
export class AccountEmailToken {
  @PrimaryKey({ type: 'text' })
  tokenHash!: string;

  @ManyToOne(() => User, { ref: true, deleteRule: 'cascade', index: false })
  user!: Ref<User>;

  /** The account an invitation is to; null for a verification or reset link. */
  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade', index: false, nullable: true })
  account?: Ref<Account> | null;

  @Enum({ items: () => EmailTokenPurpose, nativeEnumName: undefined })
  purpose!: EmailTokenPurpose;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', length: 3 })
  expiresAt!: Date;

  @Property({ type: 'datetime', length: 3, nullable: true })
  usedAt?: Date | null;
}

import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { Account } from './account.entity';

export enum EmailTokenPurpose {
  verifyEmail = 'verify_email',
  resetPassword = 'reset_password',
}

/**
 * The token of a link e-mailed to an account's owner. Only its SHA-256 is stored (like session
 * tokens and API keys), so a copy of the table opens nothing; `usedAt` makes each link single use.
 */
@Entity({ tableName: 'account_email_tokens' })
@Index({ name: 'account_email_tokens_account', properties: ['account'] })
export class AccountEmailToken {
  @PrimaryKey({ type: 'text' })
  tokenHash!: string;

  @ManyToOne(() => Account, { ref: true, deleteRule: 'cascade', index: false })
  account!: Ref<Account>;

  @Enum({ items: () => EmailTokenPurpose, nativeEnumName: undefined })
  purpose!: EmailTokenPurpose;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', length: 3 })
  expiresAt!: Date;

  @Property({ type: 'datetime', length: 3, nullable: true })
  usedAt?: Date | null;
}

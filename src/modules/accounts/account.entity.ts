import { Entity, Enum, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { newId } from '../../common/ids';
import { Plan, PLAN_LIMITS, RateLimits } from './plan';

/** Contract-specific limits that replace the plan's (negotiated by enterprise customers). */
export interface CustomLimits {
  perMinute?: number;
  /** null: no daily cap; absent: the plan's. */
  perDay?: number | null;
}

@Entity({ tableName: 'accounts' })
export class Account {
  [OptionalProps]?: 'plan' | 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'text' })
  id: string = newId('acct');

  @Property({ type: 'text' })
  name!: string;

  @Unique({ name: 'accounts_email_unique' })
  @Property({ type: 'text' })
  email!: string;

  @Enum({ items: () => Plan, nativeEnumName: undefined })
  plan: Plan = Plan.starter;

  @Property({ type: 'json', nullable: true })
  customLimits?: CustomLimits | null;

  /** scrypt hash for the web app's sign-in; null for accounts made without a password. */
  @Property({ type: 'text', nullable: true, hidden: true, lazy: true })
  passwordHash?: string | null;

  /** When the owner followed the verification link (or a reset link); the web app's sign-in waits for it. */
  @Property({ type: 'datetime', length: 3, nullable: true })
  emailVerifiedAt?: Date | null;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', length: 3, onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  /** Live-mode limits in force: the plan's, overridden field by field by custom limits. */
  liveLimits(): RateLimits {
    const plan = PLAN_LIMITS[this.plan];
    return {
      perMinute: this.customLimits?.perMinute ?? plan.perMinute,
      perDay: this.customLimits && 'perDay' in this.customLimits ? (this.customLimits.perDay ?? null) : plan.perDay,
    };
  }
}

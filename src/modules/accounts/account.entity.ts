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
  [OptionalProps]?: 'plan' | 'createdAt' | 'updatedAt' | 'requireTwoFactor';

  @PrimaryKey({ type: 'text' })
  id: string = newId('acct');

  @Property({ type: 'text' })
  name!: string;

  /** The account's contact address (its first owner's sign-in when it was made); people sign in as users (user.entity.ts). */
  @Unique({ name: 'accounts_email_unique' })
  @Property({ type: 'text' })
  email!: string;

  @Enum({ items: () => Plan, nativeEnumName: undefined })
  plan: Plan = Plan.starter;

  @Property({ type: 'json', nullable: true })
  customLimits?: CustomLimits | null;

  /** An owner's choice: every member signs in with a second step (a TOTP code); one without it sets it up before anything else. */
  @Property({ type: 'boolean' })
  requireTwoFactor: boolean = false;

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

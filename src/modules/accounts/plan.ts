import { registerEnumType } from 'type-graphql';

export enum Plan {
  starter = 'starter',
  professional = 'professional',
  enterprise = 'enterprise',
}

registerEnumType(Plan, { name: 'Plan', description: 'Subscription plan; sets live-mode rate limits.' });

export interface RateLimits {
  perMinute: number;
  /** null: no daily cap. */
  perDay: number | null;
}

/** Live-mode limits per plan (spec §8, CONTRACT §11). */
export const PLAN_LIMITS: Record<Plan, RateLimits> = {
  starter: { perMinute: 60, perDay: 10_000 },
  professional: { perMinute: 300, perDay: 100_000 },
  enterprise: { perMinute: 1_000, perDay: null },
};

/** Test keys: 100 per minute whatever the plan, no daily cap. */
export const TEST_MODE_LIMITS: RateLimits = { perMinute: 100, perDay: null };

export function isPlan(value: string): value is Plan {
  return Object.values(Plan).includes(value as Plan);
}

/** Members (invited or active) an account may have, per plan; null: no cap. Test mode shares the account's members. */
export const PLAN_SEATS: Record<Plan, number | null> = {
  starter: 3,
  professional: 25,
  enterprise: null,
};

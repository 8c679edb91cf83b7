import { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { Member, MemberStatus } from '../members/member.entity';
import { Account, CustomLimits } from './account.entity';
import { User } from './user.entity';
import { OPERATOR_ACTOR, recordSecurityEvent } from '../security/security-log';
import { hashPassword } from './password';
import { Plan } from './plan';

export interface CreateAccountInput {
  name: string;
  email: string;
  plan?: Plan;
  password?: string;
  /** False for the web app's sign-up, whose owner must follow the e-mailed link; accounts an operator makes are verified. */
  emailVerified?: boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class AccountService {
  constructor(private readonly em: EntityManager) {}

  async create(input: CreateAccountInput): Promise<Account> {
    return (await this.createWithOwner(input)).account;
  }

  /**
   * An account and its first owner member: the person signing in with `email` (made here, or one
   * who already signs in and now owns another account too; their password stays theirs).
   */
  async createWithOwner(input: CreateAccountInput): Promise<{ account: Account; owner: User }> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw new ApiError('parameter_invalid', 'email must be an email address', { param: 'email' });
    if (!input.name.trim()) throw new ApiError('parameter_invalid', 'name must not be empty', { param: 'name' });
    if (input.password !== undefined && input.password.length < 8) {
      throw new ApiError('parameter_invalid', 'password must be at least 8 characters', { param: 'password' });
    }
    const account = this.em.create(Account, { name: input.name.trim(), email, plan: input.plan ?? Plan.starter });
    const owner =
      (await this.em.findOne(User, { email })) ??
      this.em.create(User, {
        email,
        name: input.name.trim(),
        passwordHash: input.password ? await hashPassword(input.password) : null,
        emailVerifiedAt: input.emailVerified === false ? null : new Date(),
      });
    this.em.create(Member, { account, user: owner, role: 'owner', status: MemberStatus.active });
    await this.em.flush();
    return { account, owner };
  }

  async byEmail(email: string): Promise<Account> {
    const account = await this.em.findOne(Account, { email: email.trim().toLowerCase() });
    if (!account) throw new ApiError('resource_missing', `No account with email ${email}`, { param: 'email' });
    return account;
  }

  /** Changes the plan (the operator's command line), with its entry in the account's security log. */
  async setPlan(email: string, plan: Plan): Promise<Account> {
    const account = await this.byEmail(email);
    if (account.plan !== plan)
      recordSecurityEvent(this.em, account.id, { type: 'account.plan_changed', actor: OPERATOR_ACTOR, details: { from: account.plan, to: plan } });
    account.plan = plan;
    await this.em.flush();
    return account;
  }

  /** Contract-specific limits; `undefined` fields keep their current value, `reset` returns to the plan's. */
  async setLimits(email: string, limits: CustomLimits | 'reset'): Promise<Account> {
    const account = await this.byEmail(email);
    account.customLimits = limits === 'reset' ? null : { ...account.customLimits, ...limits };
    await this.em.flush();
    return account;
  }
}

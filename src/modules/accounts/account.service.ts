import { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { Account, CustomLimits } from './account.entity';
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
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw new ApiError('parameter_invalid', 'email must be an email address', { param: 'email' });
    if (!input.name.trim()) throw new ApiError('parameter_invalid', 'name must not be empty', { param: 'name' });
    if (input.password !== undefined && input.password.length < 8) {
      throw new ApiError('parameter_invalid', 'password must be at least 8 characters', { param: 'password' });
    }
    const account = this.em.create(Account, {
      name: input.name.trim(),
      email,
      plan: input.plan ?? Plan.starter,
      passwordHash: input.password ? await hashPassword(input.password) : null,
      emailVerifiedAt: input.emailVerified === false ? null : new Date(),
    });
    await this.em.flush();
    return account;
  }

  async byEmail(email: string): Promise<Account> {
    const account = await this.em.findOne(Account, { email: email.trim().toLowerCase() });
    if (!account) throw new ApiError('resource_missing', `No account with email ${email}`, { param: 'email' });
    return account;
  }

  async setPlan(email: string, plan: Plan): Promise<Account> {
    const account = await this.byEmail(email);
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

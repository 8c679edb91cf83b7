import { createHash, randomBytes } from 'node:crypto';
import { EntityManager, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import type { Logger } from '../../logger';
import type { Mailer, MailMessage } from '../../mail/mailer';
import { AccountEmailToken, EmailTokenPurpose } from './account-email-token.entity';
import { Account } from './account.entity';
import { AccountService } from './account.service';
import { User } from './user.entity';
import { hashPassword, verifyPassword } from './password';

/** How long each link works: a verification link a week, a reset link an hour (it opens the account). */
export const TOKEN_LIFETIME_MS: Record<EmailTokenPurpose, number> = {
  [EmailTokenPurpose.verifyEmail]: 7 * 86_400_000,
  [EmailTokenPurpose.resetPassword]: 3_600_000,
  [EmailTokenPurpose.invitation]: 7 * 86_400_000,
};
export const MIN_PASSWORD_LENGTH = 10;

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * A new single-use link for a person (an invitation's also names its account); only the token's
 * SHA-256 is stored. Flushed by the caller.
 */
export function newEmailLink(em: EntityManager, publicUrl: string, to: { user: User; purpose: EmailTokenPurpose; path: string; accountId?: string }): string {
  const token = randomBytes(32).toString('base64url');
  const now = new Date();
  em.create(AccountEmailToken, {
    tokenHash: hash(token),
    user: to.user,
    account: to.accountId ? em.getReference(Account, to.accountId) : null,
    purpose: to.purpose,
    createdAt: now,
    expiresAt: new Date(now.getTime() + TOKEN_LIFETIME_MS[to.purpose]),
  });
  return `${publicUrl}${to.path}?token=${token}`;
}

/** The stored row of a link that still works (not used, not expired), with its user; it is not used up by looking. */
export async function usableEmailLink(em: EntityManager, token: string | undefined, purpose: EmailTokenPurpose): Promise<AccountEmailToken | null> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 100) return null;
  const row = await em.findOne(AccountEmailToken, { tokenHash: hash(token), purpose }, { populate: ['user', 'user.passwordHash'] });
  return row && !row.usedAt && row.expiresAt.getTime() > Date.now() ? row : null;
}

/** Uses a link up; of two requests with the same link at once, only one gets it. */
export async function consumeEmailLink(em: EntityManager, token: string | undefined, purpose: EmailTokenPurpose): Promise<AccountEmailToken | null> {
  const row = await usableEmailLink(em, token, purpose);
  if (!row) return null;
  const taken = await em.nativeUpdate(AccountEmailToken, { tokenHash: row.tokenHash, usedAt: null, expiresAt: { $gt: new Date() } }, { usedAt: new Date() });
  return taken === 1 ? row : null;
}

export interface AccountEmailContext {
  mailer: Mailer;
  /** PUBLIC_URL: links are built from it, never from the request's Host (which a client chooses). */
  publicUrl: string;
  logger: Logger;
}

/**
 * The account's e-mail flows: sign-up with a verification link, a forgotten password's reset link,
 * and a password change. Whether an address has an account never shows in an answer: the caller
 * gets the same result either way, and only the address's owner learns the difference, by e-mail.
 */
export class AccountEmailService {
  constructor(
    private readonly em: EntityManager,
    private readonly context: AccountEmailContext,
  ) {}

  /**
   * A new address gets an unverified account and a verification link; a taken one gets a message
   * telling its owner someone tried (with a reset link, in case it was them). Invalid input is
   * refused (ApiError with `param`) before the address is looked up, so a refusal says nothing.
   */
  async signUp(input: { name: string; email: string; password: string }): Promise<void> {
    const email = input.email.trim().toLowerCase();
    if (!input.name.trim()) throw new ApiError('parameter_invalid', 'name must not be empty', { param: 'name' });
    if (input.password.length < MIN_PASSWORD_LENGTH) {
      throw new ApiError('parameter_invalid', `password must be at least ${MIN_PASSWORD_LENGTH} characters`, { param: 'password' });
    }
    // A person with a sign-in, or an account's contact address: taken either way.
    const existing = (await this.em.findOne(User, { email })) ?? (await this.em.findOne(Account, { email }));
    if (existing) return this.tellOwnerOfSignUp(existing.email, input.password);
    let user: User;
    try {
      ({ owner: user } = await new AccountService(this.em).createWithOwner({ name: input.name, email, password: input.password, emailVerified: false }));
    } catch (error) {
      // Taken between the look-up and the insert: the same as found taken.
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      this.em.clear();
      return this.tellOwnerOfSignUp(email, input.password);
    }
    const link = await this.link(user, EmailTokenPurpose.verifyEmail, '/verify-email');
    this.deliver({
      to: user.email,
      subject: 'Verify your e-mail address',
      link,
      text: `Welcome to Sales Pipeline, ${user.name}.\n\nTo finish creating your account, verify your address by opening this link (it works for 7 days, once):\n\n${link}\n\nIf you did not sign up, ignore this message: the account cannot be used until the address is verified.\n`,
    });
  }

  private async tellOwnerOfSignUp(email: string, password: string): Promise<void> {
    // The same work as creating an account (a password hash), so the answer takes as long.
    await hashPassword(password);
    const user = await this.em.findOne(User, { email });
    // An account's contact address that nobody signs in with: there is no one to reset.
    if (!user) return;
    const link = await this.link(user, EmailTokenPurpose.resetPassword, '/reset-password');
    this.deliver({
      to: user.email,
      subject: 'Someone tried to sign up with your address',
      link,
      text: `Someone (perhaps you) tried to create a Sales Pipeline account with ${user.email}, which already has one. Nothing was changed.\n\nIf it was you and you forgot your password, choose a new one here (the link works for 1 hour, once):\n\n${link}\n\nIf it was not you, ignore this message.\n`,
    });
  }

  /** Sends a reset link when the address signs in here; does nothing else either way. */
  async requestPasswordReset(email: string): Promise<void> {
    const user = await this.em.findOne(User, { email: email.trim().toLowerCase() });
    if (!user) return;
    const link = await this.link(user, EmailTokenPurpose.resetPassword, '/reset-password');
    this.deliver({
      to: user.email,
      subject: 'Reset your password',
      link,
      text: `Someone (perhaps you) asked to reset the password of the Sales Pipeline sign-in ${user.email}.\n\nChoose a new password here (the link works for 1 hour, once):\n\n${link}\n\nIf it was not you, ignore this message: your password stays as it is.\n`,
    });
  }

  /** Marks the person's address verified; false when the link is unknown, expired or used. */
  async verifyEmail(token: string | undefined): Promise<boolean> {
    const user = (await consumeEmailLink(this.em, token, EmailTokenPurpose.verifyEmail))?.user.getEntity();
    if (!user) return false;
    user.emailVerifiedAt ??= new Date();
    await this.em.flush();
    return true;
  }

  /** Whether a reset link still works (the form is shown only then); it is not used up by looking. */
  async resetLinkWorks(token: string | undefined): Promise<boolean> {
    return (await usableEmailLink(this.em, token, EmailTokenPurpose.resetPassword)) !== null;
  }

  /**
   * Sets a new password through a reset link, which also proves the address (so it counts as
   * verified) and uses up every other reset link of the person. The caller ends their sessions.
   */
  async resetPassword(token: string | undefined, password: string): Promise<User | null> {
    if (password.length < MIN_PASSWORD_LENGTH) {
      throw new ApiError('parameter_invalid', `password must be at least ${MIN_PASSWORD_LENGTH} characters`, { param: 'password' });
    }
    const user = (await consumeEmailLink(this.em, token, EmailTokenPurpose.resetPassword))?.user.getEntity();
    if (!user) return null;
    user.passwordHash = await hashPassword(password);
    user.emailVerifiedAt ??= new Date();
    await this.em.flush();
    await this.em.nativeUpdate(AccountEmailToken, { user, purpose: EmailTokenPurpose.resetPassword, usedAt: null }, { usedAt: new Date() });
    return user;
  }

  /** Changes the password of a signed-in person, who must give their current one. */
  async changePassword(userId: string, current: string, next: string): Promise<void> {
    const user = await this.em.findOneOrFail(User, { id: userId }, { populate: ['passwordHash'] });
    if (!user.passwordHash || !(await verifyPassword(current, user.passwordHash))) {
      throw new ApiError('parameter_invalid', 'current password is incorrect', { param: 'current_password' });
    }
    if (next.length < MIN_PASSWORD_LENGTH) {
      throw new ApiError('parameter_invalid', `new password must be at least ${MIN_PASSWORD_LENGTH} characters`, { param: 'new_password' });
    }
    user.passwordHash = await hashPassword(next);
    await this.em.flush();
  }

  private async link(user: User, purpose: EmailTokenPurpose, path: string): Promise<string> {
    const link = newEmailLink(this.em, this.context.publicUrl, { user, purpose, path });
    await this.em.flush();
    return link;
  }

  /**
   * Sends off the request path: the answer does not wait for (or reveal the time of) a delivery,
   * and a failed delivery is logged, not shown to whoever typed the address.
   */
  private deliver(message: MailMessage): void {
    this.context.mailer.send(message).catch((error: unknown) => {
      this.context.logger.error({ err: error, to: message.to, subject: message.subject }, 'account e-mail could not be delivered');
    });
  }
}

import { EntityManager, LockMode } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { EmailTokenPurpose } from '../accounts/account-email-token.entity';
import { consumeEmailLink, MIN_PASSWORD_LENGTH, usableEmailLink } from '../accounts/account-email.service';
import { Account } from '../accounts/account.entity';
import { hashPassword, verifyPassword } from '../accounts/password';
import { User } from '../accounts/user.entity';
import { Member, MemberStatus } from './member.entity';
import { ActorType } from '../../events/acting';
import { recordSecurityEvent } from '../security/security-log';

/** An invitation as its page shows it. */
export interface OpenInvitation {
  accountName: string;
  email: string;
  hasPassword: boolean;
}

const BROKEN = 'The invitation link has expired, was already used, or was replaced by a newer invitation.';

/**
 * Accepting an invitation (the e-mailed link, from the web app): not tenant-scoped, since the
 * person is not signed in; the link's row names the person and the account.
 */
export class InvitationService {
  constructor(private readonly em: EntityManager) {}

  /** The invitation behind a link that still works, or why it does not. */
  async open(token: string | undefined): Promise<OpenInvitation | { refused: string }> {
    const row = await usableEmailLink(this.em, token, EmailTokenPurpose.invitation);
    const member = row?.account && (await this.memberOf(row.account.id, row.user.id));
    if (!row || !member || member.status !== MemberStatus.invited) return { refused: BROKEN };
    const user = row.user.getEntity();
    const account = await this.em.findOneOrFail(Account, { id: row.account!.id });
    return { accountName: account.name, email: user.email, hasPassword: Boolean(user.passwordHash) };
  }

  /**
   * Uses the link: a person without a password sets one, one with a password gives it; the member
   * becomes active and the address counts as verified. Answers the person and the account to sign
   * them in to; `refused` when the link does not work (nothing changes); ApiError (param password) for
   * a password that is too short or wrong, the link unused.
   */
  async accept(token: string | undefined, password: string): Promise<{ user: User; accountId: string } | { refused: string }> {
    const opened = await usableEmailLink(this.em, token, EmailTokenPurpose.invitation);
    if (!opened?.account) return { refused: BROKEN };
    const user = opened.user.getEntity();
    if (user.passwordHash) {
      if (!(await verifyPassword(password, user.passwordHash))) throw new ApiError('parameter_invalid', 'The password is incorrect.', { param: 'password' });
    } else if (password.length < MIN_PASSWORD_LENGTH) {
      throw new ApiError('parameter_invalid', `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`, { param: 'password' });
    }
    const newHash = user.passwordHash ? undefined : await hashPassword(password);
    return this.em.transactional(async (em) => {
      const row = await consumeEmailLink(em, token, EmailTokenPurpose.invitation);
      const accountId = row?.account?.id;
      const member = accountId && (await em.findOne(Member, { account: accountId, user: user.id }, { filters: false, lockMode: LockMode.PESSIMISTIC_WRITE }));
      if (!row || !accountId || !member || member.status !== MemberStatus.invited) return { refused: BROKEN };
      member.status = MemberStatus.active;
      recordSecurityEvent(em, accountId, {
        type: 'member.joined',
        actor: { type: ActorType.member, id: user.id },
        memberId: user.id,
        details: { role: member.role },
      });
      const person = await em.findOneOrFail(User, { id: user.id }, { populate: ['passwordHash'] });
      if (newHash) person.passwordHash = newHash;
      person.emailVerifiedAt ??= new Date();
      await em.flush();
      return { user: person, accountId };
    });
  }

  private memberOf(accountId: string, userId: string): Promise<Member | null> {
    return this.em.findOne(Member, { account: accountId, user: userId }, { filters: false });
  }
}

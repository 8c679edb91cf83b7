import { EntityManager, FilterQuery, LockMode } from '@mikro-orm/postgresql';
import { ApiError, notFound } from '../../common/api-error';
import { isId } from '../../common/ids';
import { findPage, Page } from '../../common/pagination';
import { tenantOf } from '../../db/tenant';
import type { Logger } from '../../logger';
import type { Mailer } from '../../mail/mailer';
import { EmailTokenPurpose } from '../accounts/account-email-token.entity';
import { newEmailLink } from '../accounts/account-email.service';
import { Account } from '../accounts/account.entity';
import type { Role } from '../accounts/key-permissions';
import { PLAN_SEATS } from '../accounts/plan';
import { User } from '../accounts/user.entity';
import { Member, MemberStatus } from './member.entity';
import type { Acting } from '../../events/acting';
import { recordSecurityEvent, SecurityEntry } from '../security/security-log';
import { checkOwner } from './ownership';
import type { MemberInviteInput, MemberListInput, MemberUpdateInput } from './member.inputs';

/**
 * Who changes the members: a signed-in member (with their role), an API key with the `members`
 * permission (which acts as an admin: it cannot make or change owners), or the operator's command
 * line (as an owner).
 */
export type MemberActor = { kind: 'member'; userId: string; role: Role } | { kind: 'api_key' } | { kind: 'operator' };

export interface MemberSettings {
  /** Who acts, for the security log (the request's caller; the operator on the command line). */
  acting: Acting;
  mailer: Mailer;
  /** PUBLIC_URL: invitation links are built from it. */
  publicUrl: string;
  logger?: Logger;
}

/** What members own (src/modules/leads, src/modules/deals), by entity name. */
const OWNED = ['Lead', 'Deal'] as const;

/** The web app's session entity (src/web/web-session.entity.ts). */
const SESSION_ENTITY = 'WebSession';

const canManageOwners = (actor: MemberActor) => actor.kind === 'operator' || (actor.kind === 'member' && actor.role === 'owner');

/**
 * An account's members: invitations (a single-use e-mailed link, 7 days), roles, deactivation.
 * The account keeps at least one active owner, and no more invited or active members than its
 * plan's seats (PLAN_SEATS). Changes that count or guard owners lock the account's row, so two
 * at once cannot both take the last seat or both demote one of two owners.
 */
export class MemberService {
  constructor(
    private readonly em: EntityManager,
    private readonly settings: MemberSettings,
  ) {}

  async list(input: MemberListInput = {}): Promise<Page<Member>> {
    const filters: Array<FilterQuery<Member>> = [];
    if (input.role) filters.push({ role: input.role });
    if (input.status) filters.push({ status: input.status });
    const page = await findPage(this.em, Member, filters, input);
    await this.em.populate(page.data, ['user']);
    return page;
  }

  /** The member by the person's id (usr_…). */
  async get(id: string): Promise<Member> {
    const member = isId('usr', id) ? await this.em.findOne(Member, { user: id }, { populate: ['user'], refresh: true }) : null;
    if (!member) throw notFound('member', id);
    return member;
  }

  /** The member signing in with `email` (the command line names people by address). */
  async byEmail(email: string): Promise<Member> {
    const member = await this.em.findOne(Member, { user: { email: email.trim().toLowerCase() } }, { populate: ['user'], refresh: true });
    if (!member) throw new ApiError('resource_missing', `No member of this account signs in with ${email}`, { param: 'email' });
    return member;
  }

  /**
   * Invites a person (found by address, or made without a password): a new member, or an invited
   * one invited again (a fresh link; the old one stops working when this one is used), or a
   * deactivated one brought back. Answers the member and the link (the command line prints it; the
   * API never shows it: it goes by e-mail).
   */
  async invite(input: MemberInviteInput, actor: MemberActor): Promise<{ member: Member; link: string }> {
    if (input.role === 'owner' && !canManageOwners(actor)) throw new ApiError('permission_denied', 'Only an owner can invite an owner.', { param: 'role' });
    const email = input.email.trim().toLowerCase();
    const { member, link, account } = await this.em.transactional(async () => {
      const account = await this.lockAccount();
      const user =
        (await this.em.findOne(User, { email })) ??
        this.em.create(User, { email, name: input.name?.trim() || email.split('@')[0], passwordHash: null, emailVerifiedAt: null });
      let member = await this.em.findOne(Member, { user }, { refresh: true });
      if (member?.status === MemberStatus.active) {
        throw new ApiError('resource_conflict', `${email} is already an active member of this account.`, { param: 'email' });
      }
      if (member?.status !== MemberStatus.invited) await this.checkSeat(account);
      if (member) {
        member.role = input.role;
        member.status = MemberStatus.invited;
      } else {
        member = this.em.create(Member, { account, user, role: input.role, status: MemberStatus.invited });
      }
      member.invitedBy = actor.kind === 'member' ? actor.userId : null;
      this.log(account.id, { type: 'member.invited', memberId: user.id, details: { email, role: input.role } });
      const link = newEmailLink(this.em, this.settings.publicUrl, {
        user,
        purpose: EmailTokenPurpose.invitation,
        path: '/invitations/accept',
        accountId: account.id,
      });
      await this.em.flush();
      return { member, link, account };
    });
    this.deliver(member.email, account.name, link);
    return { member, link };
  }

  /**
   * A person the account's single sign-on signed in (src/modules/sso): an active member from then
   * on. A newcomer joins with `role` (a seat permitting), an invited member with the role they were
   * invited with; a deactivated member stays out (an owner or admin deactivated them on purpose).
   */
  async admit(userId: string, role: Role): Promise<Member> {
    return this.em.transactional(async () => {
      const account = await this.lockAccount();
      const member = await this.em.findOne(Member, { user: userId }, { refresh: true });
      if (member?.status === MemberStatus.deactivated) {
        throw new ApiError('permission_denied', `You were deactivated in ${account.name}: ask an owner or admin of the account to invite you again.`);
      }
      if (member) {
        member.status = MemberStatus.active;
      } else {
        await this.checkSeat(account);
        this.em.create(Member, { account, user: userId, role, status: MemberStatus.active });
      }
      await this.em.flush();
      return this.em.findOneOrFail(Member, { user: userId });
    });
  }

  /** Changes a member's role or name. */
  async update(id: string, input: MemberUpdateInput, actor: MemberActor): Promise<Member> {
    await this.get(id); // 404 before anything else
    return this.em.transactional(async () => {
      await this.lockAccount();
      const member = await this.get(id);
      if (input.role !== undefined && input.role !== member.role) {
        if ((member.role === 'owner' || input.role === 'owner') && !canManageOwners(actor)) {
          throw new ApiError('permission_denied', "Only an owner can change an owner's role or make an owner.", { param: 'role' });
        }
        if (member.role === 'owner') await this.keepAnOwner(member, 'role');
        this.log(tenantOf(this.em).accountId, { type: 'member.role_changed', memberId: member.user.id, details: { from: member.role, to: input.role } });
        member.role = input.role;
      }
      if (input.name !== undefined) member.user.getEntity().name = input.name.trim();
      await this.em.flush();
      return member;
    });
  }

  /**
   * Deactivates a member: they cannot sign in to this account, and their sessions in it end at once.
   * Their leads and deals (both modes) go to `transferTo`, an active member, which is required when
   * they own any: nothing is left owned by someone who can no longer work on it.
   */
  async deactivate(id: string, actor: MemberActor, transferTo?: string): Promise<Member> {
    await this.get(id);
    return this.em.transactional(async () => {
      await this.lockAccount();
      const member = await this.get(id);
      if (member.role === 'owner' && !canManageOwners(actor))
        throw new ApiError('permission_denied', 'Only an owner can deactivate an owner.', { param: 'id' });
      if (member.status === MemberStatus.deactivated) return member;
      if (member.role === 'owner') await this.keepAnOwner(member, 'id');
      await this.handOver(member, transferTo);
      member.status = MemberStatus.deactivated;
      this.log(tenantOf(this.em).accountId, { type: 'member.deactivated', memberId: member.user.id, details: { transferTo: transferTo ?? null } });
      await this.em.flush();
      // By name: the web app's sessions build on members, not the other way round.
      await this.em.nativeDelete(SESSION_ENTITY, { user: member.user.id, account: tenantOf(this.em).accountId });
      return member;
    });
  }

  /**
   * Gives the leaving member's leads and deals, in both modes, to `transferTo`. By entity name: the
   * records build on members, not the other way round. One statement per table, so a hand-over of
   * thousands of records is quick; it records no per-record events (docs/DECISIONS.md).
   */
  private async handOver(member: Member, transferTo: string | undefined): Promise<void> {
    const { accountId } = tenantOf(this.em);
    const owned = { account: accountId, ownerId: member.user.id };
    const counts = await Promise.all(OWNED.map((entity) => this.em.count(entity, owned, { filters: false })));
    if (counts.every((count) => count === 0)) return;
    if (!transferTo) {
      const what = OWNED.map((entity, i) => `${counts[i]} ${entity === 'Lead' ? 'lead' : 'deal'}${counts[i] === 1 ? '' : 's'}`).join(' and ');
      throw new ApiError('resource_conflict', `${member.email} owns ${what}: name an active member to hand them to (transferTo).`, { param: 'transferTo' });
    }
    if (transferTo === member.user.id)
      throw new ApiError('parameter_invalid', 'transferTo must be another member than the one deactivated.', { param: 'transferTo' });
    await checkOwner(this.em, transferTo, 'transferTo');
    for (const entity of OWNED) await this.em.nativeUpdate(entity, owned, { ownerId: transferTo }, { filters: false });
  }

  /** An entry of the security log, by whoever acts, flushed with the change. */
  private log(accountId: string, entry: Omit<SecurityEntry, 'actor' | 'address' | 'userAgent'>): void {
    const { actor, client } = this.settings.acting;
    recordSecurityEvent(this.em, accountId, { ...entry, actor, address: client?.address, userAgent: client?.userAgent });
  }

  /** The account's row, locked until the transaction ends. */
  private async lockAccount(): Promise<Account> {
    const { accountId } = tenantOf(this.em);
    return this.em.findOneOrFail(Account, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  private async checkSeat(account: Account): Promise<void> {
    const seats = PLAN_SEATS[account.plan];
    if (seats === null) return;
    const taken = await this.em.count(Member, { status: { $in: [MemberStatus.invited, MemberStatus.active] } });
    if (taken >= seats) {
      throw new ApiError(
        'seat_limit_reached',
        `The ${account.plan} plan includes ${seats} seats (invited and active members), and all are taken: deactivate a member or change the plan.`,
        { param: 'email' },
      );
    }
  }

  /** 409 when `member` is the account's last active owner. */
  private async keepAnOwner(member: Member, param: string): Promise<void> {
    if (member.status !== MemberStatus.active) return;
    const owners = await this.em.count(Member, { role: 'owner', status: MemberStatus.active });
    if (owners <= 1) throw new ApiError('resource_conflict', 'An account keeps at least one active owner: make another member an owner first.', { param });
  }

  /** Sends off the request path; a failed delivery is logged (without the link), and the invitation can be sent again. */
  private deliver(to: string, accountName: string, link: string): void {
    this.settings.mailer
      .send({
        to,
        subject: `You are invited to ${accountName} on Sales Pipeline`,
        link,
        text: `You have been invited to join ${accountName} on Sales Pipeline.\n\nAccept here (the link works for 7 days, once):\n\n${link}\n\nIf you did not expect this, ignore this message.\n`,
      })
      .catch((error: unknown) => this.settings.logger?.error({ err: error, to }, 'invitation e-mail could not be delivered'));
  }
}

import { createHash, randomBytes } from 'node:crypto';
import { EntityManager } from '@mikro-orm/postgresql';
import { decryptJson, encryptJson } from '../common/crypto';
import { Account } from '../modules/accounts/account.entity';
import type { User } from '../modules/accounts/user.entity';
import { Member, MemberStatus } from '../modules/members/member.entity';
import { SsoConnection } from '../modules/sso/sso-connection.entity';
import type { ShownKey } from './key-views';
import { WebSession } from './web-session.entity';

export const SESSION_DAYS = 14;
const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/** last_seen_at is a hint for people: written at most once a minute per member. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

export interface SignedIn {
  session: WebSession;
  /** The account the session works in now. */
  account: Account;
  /** Who signed in, and their place in that account (always active: a deactivated member's session is no session). */
  user: User;
  member: Member;
  /**
   * The account requires two-step sign-in and this person has not set it up (nor signed in through
   * the account's single sign-on, whose provider asks its own second step): until they do, the
   * session opens the set-up page only (src/web/web-guards.ts).
   */
  twoFactorSetupNeeded: boolean;
}

export class WebSessionService {
  constructor(private readonly em: EntityManager) {}

  /** A new session of `user` in `account` (one they are an active member of); the token goes into the cookie and is never stored. */
  async start(user: User, account: Account | string, options: { ssoConnectionId?: string } = {}): Promise<{ token: string; session: WebSession }> {
    const token = randomBytes(32).toString('base64url');
    const session = this.em.create(WebSession, {
      tokenHash: hash(token),
      user,
      account: typeof account === 'string' ? this.em.getReference(Account, account) : account,
      ssoConnection: options.ssoConnectionId ? this.em.getReference(SsoConnection, options.ssoConnectionId) : null,
      csrfToken: randomBytes(24).toString('base64url'),
      livemode: false,
      createdAt: new Date(),
      expiresAt: new Date(Date.now() + SESSION_DAYS * 86_400_000),
    });
    await this.em.flush();
    return { token, session };
  }

  async resolve(token: string | undefined): Promise<SignedIn | null> {
    if (!token || token.length > 100) return null;
    const session = await this.em.findOne(WebSession, { tokenHash: hash(token), expiresAt: { $gt: new Date() } }, { populate: ['account', 'user'] });
    if (!session) return null;
    const member = await this.em.findOne(
      Member,
      { account: session.account.id, user: session.user.id, status: MemberStatus.active },
      { filters: false, populate: ['user'] },
    );
    if (!member) return null;
    if (!member.lastSeenAt || Date.now() - member.lastSeenAt.getTime() > LAST_SEEN_RESOLUTION_MS) {
      member.lastSeenAt = new Date();
      await this.em.nativeUpdate(Member, { id: member.id }, { lastSeenAt: member.lastSeenAt }, { filters: false });
    }
    const [account, user] = [session.account.getEntity(), session.user.getEntity()];
    // A session single sign-on started has had the issuer's own second step, if the organization wants one.
    const twoFactorSetupNeeded = account.requireTwoFactor && !user.totpEnabledAt && !session.ssoConnection;
    return { session, account, user, member, twoFactorSetupNeeded };
  }

  /**
   * The accounts `user` may work in (active memberships), the one they used last first: where a
   * sign-in lands, and what the account switcher offers.
   */
  async accountsOf(userId: string): Promise<Member[]> {
    return this.em.find(
      Member,
      { user: userId, status: MemberStatus.active },
      { filters: false, populate: ['account'], orderBy: { lastSeenAt: 'desc nulls last', createdAt: 'asc' } },
    );
  }

  /** Moves the session to another account of its person (an active membership), in test mode; not a session single sign-on started. */
  async switchAccount(session: WebSession, accountId: string): Promise<boolean> {
    // An account's issuer vouches for its own account, never for the person's others.
    if (session.ssoConnection && accountId !== session.account.id) return false;
    const member = await this.em.findOne(Member, { user: session.user.id, account: accountId, status: MemberStatus.active }, { filters: false });
    if (!member) return false;
    await this.em.nativeUpdate(WebSession, { tokenHash: session.tokenHash }, { account: accountId, livemode: false, newKeyEncrypted: null });
    return true;
  }

  async end(token: string | undefined): Promise<void> {
    if (token) await this.em.nativeDelete(WebSession, { tokenHash: hash(token) });
  }

  /** Keeps a new key value (generated or rolled) for the next page only. */
  async stashNewKey(session: WebSession, key: ShownKey, encryptionKey: Buffer): Promise<void> {
    await this.em.nativeUpdate(WebSession, { tokenHash: session.tokenHash }, { newKeyEncrypted: encryptJson(key, encryptionKey) });
  }

  /** The key stashed by the last generation, removed as it is read: it is shown exactly once. */
  async takeNewKey(session: WebSession, encryptionKey: Buffer): Promise<ShownKey | undefined> {
    if (!session.newKeyEncrypted) return undefined;
    const taken = await this.em.nativeUpdate(WebSession, { tokenHash: session.tokenHash, newKeyEncrypted: session.newKeyEncrypted }, { newKeyEncrypted: null });
    return taken === 1 ? decryptJson<ShownKey>(session.newKeyEncrypted, encryptionKey) : undefined;
  }

  async setMode(session: WebSession, livemode: boolean): Promise<void> {
    session.livemode = livemode;
    await this.em.flush();
  }
}

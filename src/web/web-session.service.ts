import { createHash, randomBytes } from 'node:crypto';
import { EntityManager } from '@mikro-orm/postgresql';
import { decryptJson, encryptJson } from '../common/crypto';
import { Account } from '../modules/accounts/account.entity';
import type { User } from '../modules/accounts/user.entity';
import { Member, MemberStatus } from '../modules/members/member.entity';
import { ActorType } from '../events/acting';
import { recordSecurityEvent, type SecurityEntry } from '../modules/security/security-log';
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
  /** Every account the person is an active member of (this one too): what the account switcher offers. */
  accounts: Account[];
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
    // All of the person's memberships in one query: this account's, and the others the switcher offers.
    const memberships = await this.accountsOf(session.user.id);
    const member = memberships.find((membership) => membership.account.id === session.account.id);
    if (!member) return null;
    if (!member.lastSeenAt || Date.now() - member.lastSeenAt.getTime() > LAST_SEEN_RESOLUTION_MS) {
      member.lastSeenAt = new Date();
      await this.em.nativeUpdate(Member, { id: member.id }, { lastSeenAt: member.lastSeenAt }, { filters: false });
    }
    const [account, user] = [session.account.getEntity(), session.user.getEntity()];
    // A session single sign-on started has had the issuer's own second step, if the organization wants one.
    const twoFactorSetupNeeded = account.requireTwoFactor && !user.totpEnabledAt && !session.ssoConnection;
    return {
      session,
      account,
      user,
      member,
      // Populated by accountsOf: a member's account is typed by the db layer's name for it (base.entity.ts).
      accounts: memberships.map((membership) => membership.account.getEntity() as Account),
      twoFactorSetupNeeded,
    };
  }

  /**
   * The accounts `user` may work in (active memberships), the one they used last first: where a
   * sign-in lands, and what the account switcher offers.
   */
  async accountsOf(userId: string): Promise<Member[]> {
    return this.em.find(
      Member,
      { user: userId, status: MemberStatus.active },
      { filters: false, populate: ['account', 'user'], orderBy: { lastSeenAt: 'desc nulls last', createdAt: 'asc' } },
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

/** The signed-in member as the security log names who acted. */
export const byMember = (who: SignedIn) => ({ actor: { type: ActorType.member, id: who.user.id } });

/**
 * An entry in the session's account's security log, for a change made outside any service that
 * logs its own (single sign-on settings, two-step sign-in), written at once.
 */
export async function logFromSession(
  orm: { em: EntityManager },
  who: SignedIn,
  req: { get(name: string): string | undefined },
  address: string,
  entry: Pick<SecurityEntry, 'type' | 'details'>,
): Promise<void> {
  const em = orm.em.fork();
  recordSecurityEvent(em, who.account.id, {
    ...entry,
    actor: { type: ActorType.member, id: who.user.id },
    memberId: who.user.id,
    address,
    userAgent: req.get('user-agent') ?? null,
  });
  await em.flush();
}

import { createHash, randomBytes } from 'node:crypto';
import { EntityManager } from '@mikro-orm/postgresql';
import { decryptJson, encryptJson } from '../common/crypto';
import { Account } from '../modules/accounts/account.entity';
import type { ShownKey } from './key-views';
import { WebSession } from './web-session.entity';

export const SESSION_DAYS = 14;
const hash = (token: string) => createHash('sha256').update(token).digest('hex');

export interface SignedIn {
  session: WebSession;
  account: Account;
}

export class WebSessionService {
  constructor(private readonly em: EntityManager) {}

  /** A new session; the token goes into the cookie and is never stored. */
  async start(account: Account): Promise<{ token: string; session: WebSession }> {
    const token = randomBytes(32).toString('base64url');
    const session = this.em.create(WebSession, {
      tokenHash: hash(token),
      account,
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
    const session = await this.em.findOne(WebSession, { tokenHash: hash(token), expiresAt: { $gt: new Date() } }, { populate: ['account'] });
    return session ? { session, account: session.account.getEntity() } : null;
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

import { createHash } from 'node:crypto';
import { EntityManager } from '@mikro-orm/postgresql';
import { Secret, TOTP } from 'otpauth';
import { decryptJson, encryptJson } from '../../common/crypto';
import { Account } from '../accounts/account.entity';
import { User } from '../accounts/user.entity';
import { Member, MemberStatus } from '../members/member.entity';
import { RecoveryCode } from './recovery-code.entity';

/** What authenticator apps show as the entry's name, beside the person's address. */
const ISSUER = 'Sales Pipeline';
/** RFC 6238's defaults, which every authenticator app reads from the otpauth:// URI. */
const PERIOD_S = 30;
/** A code of the step before or after now is accepted too: phones' clocks drift, and typing takes time. */
const WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;

/** The secret being set up, as the page shows it: the text to type into an app, and the URI an app can import. */
export interface TotpSetup {
  secret: string;
  uri: string;
}

/** How a second step was passed. */
export type SecondStep = 'totp' | 'recovery_code';

const totpOf = (secret: string, email: string) => new TOTP({ issuer: ISSUER, label: email, secret: Secret.fromBase32(secret), period: PERIOD_S });
const hashCode = (code: string) => createHash('sha256').update(code).digest('hex');
/** What people type, as stored: lower case, without the dashes and spaces the codes are shown with. */
const normalizeRecoveryCode = (text: string) => text.toLowerCase().replace(/[^a-z2-7]/g, '');
const isTotpCode = (text: string) => /^\d{6}$/.test(text.replace(/\s/g, ''));

/**
 * A person's two-step sign-in: a TOTP secret (RFC 6238, with the otpauth library) kept encrypted,
 * confirmed by a first code before it counts, and recovery codes kept as hashes, each good once.
 * A TOTP code is good once too: the step of the last one accepted is kept, and only a later step
 * passes, in one conditional update (two requests with one code cannot both pass).
 */
export class TwoFactorService {
  constructor(
    private readonly em: EntityManager,
    private readonly encryptionKey: Buffer,
  ) {}

  /** A new secret, replacing one not confirmed yet; refused (null) while two-step sign-in is on. */
  async begin(userId: string): Promise<TotpSetup | null> {
    const user = await this.user(userId);
    if (user.totpEnabledAt) return null;
    const secret = new Secret({ size: 20 }).base32;
    await this.em.nativeUpdate(User, { id: userId, totpEnabledAt: null }, { totpSecretEncrypted: encryptJson({ secret }, this.encryptionKey) });
    return { secret, uri: totpOf(secret, user.email).toString() };
  }

  /** The secret being set up (begun, not confirmed), if any. */
  async pending(userId: string): Promise<TotpSetup | null> {
    const user = await this.user(userId);
    const secret = this.secretOf(user);
    if (user.totpEnabledAt || !secret) return null;
    return { secret, uri: totpOf(secret, user.email).toString() };
  }

  /**
   * Turns two-step sign-in on when `code` comes from the secret being set up: answers the recovery
   * codes, shown once (only their hashes are kept); null for a wrong code or nothing being set up.
   */
  async confirm(userId: string, code: string): Promise<string[] | null> {
    const user = await this.user(userId);
    const secret = this.secretOf(user);
    if (user.totpEnabledAt || !secret) return null;
    const step = this.stepOf(secret, user.email, code);
    if (step === null) return null;
    return this.em.transactional(async (em) => {
      const turnedOn = await em.nativeUpdate(
        User,
        { id: userId, totpEnabledAt: null, totpSecretEncrypted: user.totpSecretEncrypted },
        { totpEnabledAt: new Date(), totpLastStep: step },
      );
      return turnedOn === 1 ? this.replaceRecoveryCodes(em, userId) : null;
    });
  }

  /**
   * Checks a second step: a code from the app (six digits, not used before) or an unused recovery
   * code (used up by this call). null when neither, or when two-step sign-in is off.
   */
  async verify(userId: string, code: string): Promise<SecondStep | null> {
    const user = await this.user(userId);
    const secret = this.secretOf(user);
    if (!user.totpEnabledAt || !secret) return null;
    if (isTotpCode(code)) {
      const step = this.stepOf(secret, user.email, code);
      if (step === null) return null;
      const used = await this.em.nativeUpdate(User, { id: userId, $or: [{ totpLastStep: null }, { totpLastStep: { $lt: step } }] }, { totpLastStep: step });
      return used === 1 ? 'totp' : null;
    }
    const normalized = normalizeRecoveryCode(code);
    if (!normalized) return null;
    const deleted = await this.em.nativeDelete(RecoveryCode, { user: userId, codeHash: hashCode(normalized) });
    return deleted === 1 ? 'recovery_code' : null;
  }

  /** New recovery codes (the old ones stop working), after a second step proves the person has their app or a code. */
  async regenerateRecoveryCodes(userId: string, code: string): Promise<string[] | null> {
    if (!(await this.verify(userId, code))) return null;
    return this.em.transactional((em) => this.replaceRecoveryCodes(em, userId));
  }

  /** Turns two-step sign-in off (secret and recovery codes gone), after a second step. */
  async disable(userId: string, code: string): Promise<boolean> {
    if (!(await this.verify(userId, code))) return false;
    await this.em.transactional(async (em) => {
      await em.nativeUpdate(User, { id: userId }, { totpSecretEncrypted: null, totpEnabledAt: null, totpLastStep: null });
      await em.nativeDelete(RecoveryCode, { user: userId });
    });
    return true;
  }

  async remainingRecoveryCodes(userId: string): Promise<number> {
    return this.em.count(RecoveryCode, { user: userId });
  }

  /** The accounts the person is an active member of that require two-step sign-in (turning it off would lock them out of those). */
  async requiredBy(userId: string): Promise<Account[]> {
    const members = await this.em.find(Member, { user: userId, status: MemberStatus.active }, { filters: false, populate: ['account'] });
    return members.map((member) => member.account.getEntity() as Account).filter((account) => account.requireTwoFactor);
  }

  private async user(userId: string): Promise<User> {
    return this.em.findOneOrFail(User, { id: userId }, { populate: ['totpSecretEncrypted'], refresh: true });
  }

  private secretOf(user: User): string | null {
    return user.totpSecretEncrypted ? decryptJson<{ secret: string }>(user.totpSecretEncrypted, this.encryptionKey).secret : null;
  }

  /** The 30-second step `code` belongs to, within the window around now; null when it is no code of this secret. */
  private stepOf(secret: string, email: string, code: string): number | null {
    const token = code.replace(/\s/g, '');
    if (!isTotpCode(token)) return null;
    const now = Date.now();
    const delta = totpOf(secret, email).validate({ token, timestamp: now, window: WINDOW });
    return delta === null ? null : Math.floor(now / 1000 / PERIOD_S) + delta;
  }

  private async replaceRecoveryCodes(em: EntityManager, userId: string): Promise<string[]> {
    await em.nativeDelete(RecoveryCode, { user: userId });
    // 10 random bytes each: 80 bits, written as 16 base32 letters in groups of four.
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => new Secret({ size: 10 }).base32.toLowerCase().match(/.{4}/g)!.join('-'));
    await em.insertMany(
      RecoveryCode,
      codes.map((code) => ({ codeHash: hashCode(normalizeRecoveryCode(code)), user: userId, createdAt: new Date() })),
    );
    return codes;
  }
}

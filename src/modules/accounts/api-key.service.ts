import { createHash, randomBytes } from 'node:crypto';
import { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { hydrateLean, Lean, selectRows } from '../../db/lean';
import { Account } from './account.entity';
import { ApiKey, KeyType } from './api-key.entity';
import { type KeyPermissions, type Role, ROLE_PERMISSIONS } from './key-permissions';
import { bearerToken } from '../../http/bearer';
import { ActorType } from '../../events/acting';
import { recordSecurityEvent, type SecurityEntry } from '../security/security-log';

const KEY_SHAPE = /^[sr]k_(test|live)_[A-Za-z0-9]{32}$/;
/** How long a rolled key's old value may keep working: 0 (at once) to 7 days, as Stripe's dashboard offers. */
export const MAX_ROLL_EXPIRY_HOURS = 168;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** last_used_at is a hint for people, not an audit log: write it at most once a minute per key. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface Authenticated {
  /** Read-only (lean) as the gate reads it; a change loads the account through its service. */
  account: Lean<Account>;
  /** null when the web app's session cookie signed the request in. */
  key: Lean<ApiKey> | null;
  /** The signed-in member (user id and role) when the web app's session signed the request in. */
  member?: { id: string; role: Role };
  livemode: boolean;
  /** When the value used expires: set only for the old value of a rolled key. */
  expiresAt?: Date;
  /** The SHA-256 (hashKey) of the value the key was found by; the gate remembers keys by it for a database outage. */
  keyHash?: string;
}

/**
 * What the caller may do: a restricted key's permissions, a session member's role's (ROLE_PERMISSIONS),
 * or null for full access (a secret key, an owner or admin).
 */
export function callerPermissions(auth: Pick<Authenticated, 'key' | 'member'> | undefined): KeyPermissions | null {
  if (auth?.key) return auth.key.permissions ?? null;
  return auth?.member ? ROLE_PERMISSIONS[auth.member.role] : null;
}

/** 32 base62 characters: about 190 bits, so a plain SHA-256 of the key is a safe stored form. */
function randomSecret(): string {
  const bytes = randomBytes(64);
  let out = '';
  for (const byte of bytes) {
    if (byte < 248) out += BASE62[byte % 62]; // 248 = 4 × 62: rejection keeps the draw uniform
    if (out.length === 32) return out;
  }
  return out + randomSecret().slice(out.length);
}

export function hashKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** The hash a well-formed key in an Authorization header is looked up by; undefined when there is none (authenticate says why). */
export function keyHashOf(authorization: string | undefined): string | undefined {
  const secret = authorization ? bearerToken(authorization) : undefined;
  return secret && KEY_SHAPE.test(secret) ? hashKey(secret) : undefined;
}

/** The key lookup's two statements and how their account columns come back (`account:<column>`); built once from the metadata. */
interface KeyLookup {
  /** The key whose current value has the hash. */
  current: string;
  /** The key whose previous (rolled) value has the hash. */
  previous: string;
  accountRow(row: Record<string, unknown>): Record<string, unknown>;
}
let keyLookup: KeyLookup | undefined;

/**
 * The key by the hash of its current value, with its account's columns, in one statement: all a request with a
 * valid key runs; only when it finds nothing is the hash looked up among previous values. Two unique-index lookups,
 * since an `or` or a `union all` of both columns cost every request more (docs/benchmark.md, sixteenth pass).
 * The account's columns are named (no `row_to_json`), lazy ones left out: the password hash never leaves the
 * database on an API request.
 */
function keyLookupOf(em: EntityManager): KeyLookup {
  if (keyLookup) return keyLookup;
  const columns = em
    .getMetadata()
    .get(Account.name)
    .hydrateProps.filter((prop) => !prop.lazy)
    .map((prop) => prop.fieldNames[0]);
  // Names from the entity's metadata, never from input.
  const select = `select k.*, ${columns.map((column) => `a."${column}" as "account:${column}"`).join(', ')}
       from api_keys k join accounts a on a.id = k.account_id`;
  keyLookup = {
    current: `${select} where k.secret_hash = ?`,
    previous: `${select} where k.previous_secret_hash = ?`,
    accountRow(row) {
      const account: Record<string, unknown> = {};
      for (const column of columns) account[column] = row[`account:${column}`];
      return account;
    },
  };
  return keyLookup;
}

export class ApiKeyService {
  constructor(
    private readonly em: EntityManager,
    /** Who changes keys, for the security log (a member in the web app, the operator on the command line); reads need none. */
    private readonly by?: Pick<SecurityEntry, 'actor' | 'address' | 'userAgent'>,
  ) {}

  /** The change's entry in the account's security log, flushed with it. */
  private log(accountId: string, type: 'api_key.created' | 'api_key.rolled' | 'api_key.revoked', key: ApiKey): void {
    recordSecurityEvent(this.em, accountId, {
      type,
      actor: this.by?.actor ?? { type: ActorType.system, id: null },
      address: this.by?.address,
      userAgent: this.by?.userAgent,
      details: { key: key.id, name: key.name, prefix: key.prefix, last4: key.last4 },
    });
  }

  /**
   * Creates a key and returns its full value, which is never available again: a secret key
   * (`sk_`, full access) or, with permissions, a restricted key (`rk_`).
   */
  async create(account: Account, type: KeyType, name: string, permissions: KeyPermissions | null = null): Promise<{ key: ApiKey; secret: string }> {
    if (!name.trim()) throw new ApiError('parameter_invalid', 'name must not be empty', { param: 'name' });
    if (name.length > 100) throw new ApiError('parameter_invalid', 'name must be at most 100 characters', { param: 'name' });
    const prefix = `${permissions ? 'rk' : 'sk'}_${type}_`;
    const secret = prefix + randomSecret();
    const key = this.em.create(ApiKey, {
      account,
      name: name.trim(),
      type,
      prefix,
      last4: secret.slice(-4),
      secretHash: hashKey(secret),
      permissions,
    });
    this.log(account.id, 'api_key.created', key);
    await this.em.flush();
    return { key, secret };
  }

  /**
   * Gives the key a new value (same id, name, type and permissions) and returns it, shown once. The
   * old value keeps working for `expiresInHours` (0: refused at once); a value from an earlier roll
   * that had not expired yet is refused from now on, since only the last one is kept.
   */
  async roll(id: string, expiresInHours = 0, account?: Account): Promise<{ key: ApiKey; secret: string }> {
    if (!Number.isInteger(expiresInHours) || expiresInHours < 0 || expiresInHours > MAX_ROLL_EXPIRY_HOURS) {
      throw new ApiError('parameter_invalid', `expires_in_hours must be a whole number from 0 to ${MAX_ROLL_EXPIRY_HOURS}`, { param: 'expiresInHours' });
    }
    const key = await this.find(id, account);
    if (key.revokedAt) throw new ApiError('resource_conflict', `API key ${id} is revoked and cannot be rolled`, { param: 'id' });
    const secret = key.prefix + randomSecret();
    key.previousSecretHash = key.secretHash;
    key.previousSecretExpiresAt = new Date(Date.now() + expiresInHours * 3_600_000);
    key.secretHash = hashKey(secret);
    key.last4 = secret.slice(-4);
    this.log(key.account.id, 'api_key.rolled', key);
    await this.em.flush();
    return { key, secret };
  }

  /** The account's keys, newest first; of one mode only when `type` is given (the web app's page per mode). */
  list(account: Account, type?: KeyType): Promise<ApiKey[]> {
    return this.em.find(ApiKey, type ? { account, type } : { account }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  }

  async revoke(id: string, account?: Account): Promise<ApiKey> {
    const key = await this.find(id, account);
    if (!key.revokedAt) this.log(key.account.id, 'api_key.revoked', key);
    key.revokedAt ??= new Date();
    await this.em.flush();
    return key;
  }

  private async find(id: string, account?: Account): Promise<ApiKey> {
    const key = await this.em.findOne(ApiKey, account ? { id, account } : { id });
    if (!key) throw new ApiError('resource_missing', `No such API key: '${id}'`, { param: 'id' });
    return key;
  }

  /**
   * Resolves an Authorization header to an account and mode. The key is looked up by its hash, so
   * the comparison never touches the secret itself and takes the same time whatever it contains.
   */
  async authenticate(authorization: string | undefined): Promise<Authenticated> {
    if (!authorization) {
      throw new ApiError('api_key_missing', 'No API key provided. Send it as "Authorization: Bearer sk_test_…".');
    }
    const hash = keyHashOf(authorization);
    if (!hash) {
      throw new ApiError('api_key_invalid', 'Invalid API key provided. Use "Authorization: Bearer <key>".');
    }
    // Every request runs this, so it is one statement (two for an old or wrong value) and read-only rows (src/db/lean.ts).
    const lookup = keyLookupOf(this.em);
    let [row] = await selectRows(this.em, lookup.current, [hash]);
    row ??= (await selectRows(this.em, lookup.previous, [hash]))[0];
    if (!row) throw new ApiError('api_key_invalid', 'Invalid API key provided.');
    const key = hydrateLean(this.em, ApiKey, row);
    if (key.revokedAt) throw new ApiError('api_key_revoked', 'This API key has been revoked.');
    const expiresAt = key.secretHash === hash ? null : key.previousSecretExpiresAt;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw new ApiError('api_key_revoked', `This API key was rolled; its old value expired at ${expiresAt.toISOString()}. Use its new value.`);
    }
    this.touch(key);
    const account = hydrateLean(this.em, Account, lookup.accountRow(row));
    return { account, key, livemode: key.type === KeyType.live, keyHash: hash, ...(expiresAt ? { expiresAt } : {}) };
  }

  /** Notes the key's use (`last_used_at`), at most once a minute, without waiting and without failing the request. */
  touch(key: Lean<ApiKey>): void {
    const now = Date.now();
    if (key.lastUsedAt && now - key.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    key.lastUsedAt = new Date(now);
    // Outside the request's unit of work and not awaited: a failed hint must not fail the request.
    void this.em
      .fork()
      .nativeUpdate(ApiKey, { id: key.id }, { lastUsedAt: key.lastUsedAt })
      .catch(() => undefined);
  }
}

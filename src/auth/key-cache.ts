import { randomUUID } from 'node:crypto';
import { ChangeSetType, EventSubscriber, FlushEventArgs, TransactionEventArgs } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import { Account } from '../modules/accounts/account.entity';
import { ApiKey } from '../modules/accounts/api-key.entity';
import type { Authenticated } from '../modules/accounts/api-key.service';

/**
 * The longest a key found valid is answered from memory, whatever the stamp says: the bound on a
 * change made where no stamp is written (an UPDATE by hand in SQL, the CLI without REDIS_URL, or
 * Redis failing at the moment of the change).
 */
export const KEY_CACHE_TTL_MS = 10_000;
/** Keys kept per process; the oldest are forgotten first. */
const MAX_KEYS = 10_000;

interface Entry {
  auth: Authenticated;
  /** The stamp read before the lookup that found the key valid. */
  stamp: string;
  until: number;
}

/** Every instance's caches, in this process, whose stamp a committed change of a key or an account renews. */
const registered = new Set<KeyCache>();

/**
 * The gate's memory of keys found valid (docs/DECISIONS.md, "API keys answered from memory"): a kept key is
 * used only while Redis's stamp (`<namespace>:auth-stamp`), renewed by every committed change of a key or an
 * account, is unchanged. The stamp is read *before* a lookup whose result is kept, so a change committing
 * during the lookup makes it stale at once. Without Redis nothing is kept; while Redis fails, every request
 * looks its key up.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    namespace: string,
    /** Told when a renewal fails (Redis unreachable): the TTL then bounds how long a kept key outlives the change. */
    readonly onRenewalFailed: (error: unknown) => void = () => undefined,
    private readonly ttlMs = KEY_CACHE_TTL_MS,
  ) {
    this.key = `${namespace}:auth-stamp`;
  }

  /** Renews this cache's stamp on every committed change of a key or an account in this process. */
  register(): this {
    registered.add(this);
    return this;
  }

  unregister(): void {
    registered.delete(this);
    this.entries.clear();
  }

  /** The kept lookup for a key's hash, unless it is too old or the value it was found by has expired. */
  find(hash: string): Entry | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    const now = Date.now();
    if (entry.until > now && !(entry.auth.expiresAt && entry.auth.expiresAt.getTime() <= now)) return entry;
    this.entries.delete(hash);
    return undefined;
  }

  keep(hash: string, auth: Authenticated, stamp: string): void {
    this.entries.delete(hash);
    this.entries.set(hash, { auth, stamp, until: Date.now() + this.ttlMs });
    if (this.entries.size > MAX_KEYS) this.entries.delete(this.entries.keys().next().value as string);
  }

  forget(hash: string): void {
    this.entries.delete(hash);
  }

  /**
   * The stamp before a lookup whose result may be kept: written first when Redis has none (a new or
   * emptied Redis). undefined when Redis fails: the result is then not kept.
   */
  async stampBeforeLookup(): Promise<string | undefined> {
    try {
      const fresh = randomUUID();
      // SET … NX GET (Redis 7): the stamp in place, or this one if there was none, in one round trip.
      const previous = await this.redis.set(this.key, fresh, 'NX', 'GET');
      return previous ?? fresh;
    } catch {
      return undefined;
    }
  }

  /**
   * Whether a kept entry's stamp is still the current one. A failure of Redis answers no and
   * forgets every kept key, so that while it fails each request looks its key up.
   */
  async stillCurrent(entry: Entry): Promise<boolean> {
    try {
      return (await this.redis.get(this.key)) === entry.stamp;
    } catch {
      this.entries.clear();
      return false;
    }
  }

  /** A new stamp: every instance looks each key up again on its next request. */
  async renew(): Promise<void> {
    this.entries.clear();
    await this.redis.set(this.key, randomUUID());
  }
}

/** Renews every registered cache's stamp; a failure is reported, and the TTL bounds what it leaves. */
async function renewAll(): Promise<void> {
  await Promise.all([...registered].map((cache) => cache.renew().catch(cache.onRenewalFailed)));
}

/** A savepoint's transaction names its parent under MikroORM's `parentTransaction` symbol; the root has none. */
function rootTransaction(transaction: object): object {
  let current = transaction as Record<symbol, unknown>;
  for (;;) {
    const parent = Object.getOwnPropertySymbols(current).find((symbol) => symbol.description === 'parentTransaction');
    if (!parent || !current[parent]) return current;
    current = current[parent] as Record<symbol, unknown>;
  }
}

const changesAuthentication = ({ uow }: FlushEventArgs) =>
  uow.getChangeSets().some((cs) => cs.type !== ChangeSetType.CREATE && (cs.entity instanceof ApiKey || cs.entity instanceof Account));

/**
 * Renews the stamp after a change of an API key or an account has committed: after the flush when
 * it ran its own transaction, else when the root transaction it ran in commits (a service's
 * `em.transactional`, a request's Idempotency-Key transaction). Never before the commit: an
 * instance that looked a key up between a renewal and the commit would keep the old row under the
 * new stamp. Creating a key or an account renews nothing, since nothing kept can name it.
 */
export class AuthChangeSubscriber implements EventSubscriber {
  private readonly pending = new WeakSet<object>();

  async afterFlush(args: FlushEventArgs): Promise<void> {
    if (!registered.size || !changesAuthentication(args)) return;
    const transaction = args.em.isInTransaction() ? (args.em.getTransactionContext() as object | undefined) : undefined;
    if (transaction) this.pending.add(rootTransaction(transaction));
    else await renewAll();
  }

  async afterTransactionCommit({ transaction }: TransactionEventArgs): Promise<void> {
    if (!transaction || !this.pending.has(transaction as object)) return;
    this.pending.delete(transaction as object);
    await renewAll();
  }
}

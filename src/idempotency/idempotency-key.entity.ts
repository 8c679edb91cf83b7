import { Entity, Enum, Index, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { newId } from '../common/ids';
import { TenantEntity } from '../db/base.entity';

/** An Idempotency-Key is 1 to this many characters (Stripe's bound). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export enum IdempotencyState {
  /** Only ever committed by earlier versions, which claimed a key before running its request. */
  running = 'running',
  done = 'done',
}

/**
 * A POST's Idempotency-Key (CONTRACT §12): the first request's fingerprint and its response,
 * committed in the request's own transaction (src/idempotency/idempotency.middleware.ts).
 */
@Entity({ tableName: 'idempotency_keys' })
@Unique({ name: 'idempotency_keys_key_unique', properties: ['account', 'livemode', 'principal', 'key'] })
@Index({ name: 'idempotency_keys_expires_at', properties: ['expiresAt'] })
export class IdempotencyKey extends TenantEntity<'state'> {
  @PrimaryKey({ type: 'text' })
  id: string = newId('idem');

  @Property({ type: 'text' })
  key!: string;

  /**
   * Who sent it: the API key's id (a rolled key keeps it), or `web` for the web app's session.
   * Keys are scoped per caller, so an answer is never replayed to another key (src/idempotency/principal.ts).
   * `''` marks a key stored before keys were scoped this way, which any caller of its tenant matches until it expires.
   */
  @Property({ type: 'text' })
  principal!: string;

  /** SHA-256 of method, path and canonical JSON body: the same key with another body is refused. */
  @Property({ type: 'text' })
  requestHash!: string;

  @Enum({ items: () => IdempotencyState })
  state: IdempotencyState = IdempotencyState.running;

  /** When the request that answered started (for a `running` claim of an earlier version: when it claimed the key). */
  @Property({ type: 'datetime', length: 3 })
  lockedAt!: Date;

  @Property({ type: 'datetime', length: 3 })
  expiresAt!: Date;

  @Property({ type: 'smallint', nullable: true })
  responseStatus?: number | null;

  @Property({ type: 'text', nullable: true })
  responseType?: string | null;

  @Property({ type: 'text', nullable: true })
  responseBody?: string | null;
}

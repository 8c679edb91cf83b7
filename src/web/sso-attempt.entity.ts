import { Entity, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { SsoConnection } from '../modules/sso/sso-connection.entity';

/**
 * A single sign-on under way: between the redirect to the issuer and its answer at /sso/callback.
 * The browser holds a random token in a 10-minute cookie (only its SHA-256 is stored); the values
 * the answer must match (state, nonce, the PKCE verifier) stay here, encrypted. It is deleted as the
 * answer arrives, so an answer replayed finds nothing.
 */
@Entity({ tableName: 'sso_attempts' })
export class SsoAttempt {
  @PrimaryKey({ type: 'text' })
  tokenHash!: string;

  @ManyToOne(() => SsoConnection, { ref: true, deleteRule: 'cascade', index: true })
  connection!: Ref<SsoConnection>;

  /** `{state, nonce, codeVerifier}` encrypted under ENCRYPTION_KEY. */
  @Property({ type: 'text' })
  secretsEncrypted!: string;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', length: 3 })
  expiresAt!: Date;
}

import { Entity, Enum, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';
import { IntegrationSettings } from './sync/stage-map';
import { IntegrationProvider, IntegrationType } from './integration-kinds';

// The kinds and providers live in a file of their own that the browser bundle shares.
export { IntegrationProvider, IntegrationType, PROVIDERS_BY_TYPE } from './integration-kinds';

registerEnumType(IntegrationType, { name: 'IntegrationType' });
registerEnumType(IntegrationProvider, { name: 'IntegrationProvider' });

export enum IntegrationStatus {
  connected = 'connected',
  /** Connected, but the provider refused the credentials since (a revoked token): syncing pauses until a call succeeds. */
  error = 'error',
  disconnected = 'disconnected',
}
registerEnumType(IntegrationStatus, { name: 'IntegrationStatus' });

/**
 * A connection to a CRM, PSA, Microsoft 365, Partner Center or a model provider. Credentials are stored only encrypted
 * (AES-256-GCM under ENCRYPTION_KEY), never returned, and destroyed on disconnect. A partial
 * unique index allows one integration that is not disconnected (connected or in error) per
 * provider, account and mode.
 */
@ObjectType({ simpleResolvers: true, description: 'A connected CRM, PSA, Microsoft 365 tenant or model provider.' })
@Entity({ tableName: 'integrations' })
@Index({ name: 'integrations_list', properties: ['account', 'livemode', 'createdAt', 'id'] })
@Index({
  name: 'integrations_connected_provider_unique',
  expression:
    'create unique index "integrations_connected_provider_unique" on "integrations" ("account_id", "livemode", "provider") where "status" <> \'disconnected\'',
})
export class Integration extends TenantEntity<'object' | 'status' | 'settings' | 'syncCursors'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('int');

  @Field({ description: 'Always "integration".' })
  get object(): 'integration' {
    return 'integration';
  }

  @Field(() => IntegrationType)
  @Enum({ items: () => IntegrationType })
  type!: IntegrationType;

  @Field(() => IntegrationProvider)
  @Enum({ items: () => IntegrationProvider })
  provider!: IntegrationProvider;

  @Field(() => IntegrationStatus)
  @Enum({ items: () => IntegrationStatus })
  status: IntegrationStatus = IntegrationStatus.connected;

  @Field(() => String, { nullable: true, description: 'A name for people, e.g. the tenant or instance.' })
  @Property({ type: 'text', nullable: true })
  name?: string | null;

  /** AES-256-GCM: base64 of iv (12 bytes) + auth tag (16 bytes) + ciphertext; null once disconnected. */
  @Property({ type: 'text', nullable: true, hidden: true, lazy: true })
  credentialsEncrypted?: string | null;

  @Field(() => String, { nullable: true, description: 'Last 4 characters of the main secret, so people can tell credentials apart.' })
  @Property({ type: 'text', nullable: true })
  credentialsHint?: string | null;

  @Field()
  @Property({ type: 'datetime', length: 3 })
  connectedAt: Date = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', length: 3, nullable: true })
  disconnectedAt?: Date | null;

  @Field(() => String, { nullable: true, description: 'Why the provider last refused or failed, in its own words (never a secret); kept after recovery.' })
  @Property({ type: 'text', nullable: true })
  lastError?: string | null;

  @Field(() => Date, { nullable: true, description: 'When lastError happened.' })
  @Property({ type: 'datetime', length: 3, nullable: true })
  lastErrorAt?: Date | null;

  @Field(() => Date, { nullable: true, description: 'When a call to the provider last succeeded for a sync; null until the first.' })
  @Property({ type: 'datetime', length: 3, nullable: true })
  lastSyncedAt?: Date | null;

  @Field(() => IntegrationSettings, { description: 'How the integration syncs (CRMs: stage_map).' })
  @Property({ type: 'json' })
  settings: IntegrationSettings = {};

  /** Where each inbound pull stopped, per object kind: the client's opaque cursor. */
  @Property({ type: 'json', hidden: true })
  syncCursors: Partial<Record<'lead' | 'deal', string | null>> = {};
}

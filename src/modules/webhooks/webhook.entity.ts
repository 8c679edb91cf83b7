import { Entity, Enum, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';

export enum WebhookStatus {
  enabled = 'enabled',
  disabled = 'disabled',
}
registerEnumType(WebhookStatus, { name: 'WebhookStatus', description: 'Only enabled subscriptions receive events.' });

/**
 * A webhook subscription (CONTRACT §10). The signing secret is stored encrypted (AES-256-GCM under
 * ENCRYPTION_KEY), because signing needs it back; it is shown once, in the create response.
 */
@ObjectType({ simpleResolvers: true, description: "A URL that receives the account's events of one mode." })
@Entity({ tableName: 'webhooks' })
@Index({ name: 'webhooks_list', properties: ['account', 'livemode', 'createdAt', 'id'] })
export class Webhook extends TenantEntity<
  | 'object'
  | 'status'
  | 'description'
  | 'disabledReason'
  | 'consecutiveFailures'
  | 'backoffUntil'
  | 'lastClaimedAt'
  | 'previousSecretEncrypted'
  | 'previousSecretExpiresAt'
> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('wh');

  @Field({ description: 'Always "webhook".' })
  get object(): 'webhook' {
    return 'webhook';
  }

  @Field({ description: 'http(s) URL that receives a POST per event.' })
  @Property({ type: 'text' })
  url!: string;

  @Field(() => [String], { description: 'Event names it receives, or ["*"] for all.' })
  @Property({ type: 'text[]' })
  events!: string[];

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description?: string | null;

  @Field(() => WebhookStatus)
  @Enum({ items: () => WebhookStatus })
  status: WebhookStatus = WebhookStatus.enabled;

  @Field(() => String, { nullable: true, description: 'Why the service disabled it (e.g. the endpoint answered 410 Gone); null otherwise.' })
  @Property({ type: 'text', nullable: true })
  disabledReason?: string | null;

  /** Failed attempts since the last success; each one doubles the endpoint's backoff (webhook-dispatcher.ts). */
  @Property({ type: 'integer', hidden: true })
  consecutiveFailures: number = 0;

  /** No attempt is claimed for this endpoint before then, so a failing endpoint does not burn its deliveries' retries. */
  @Property({ type: 'datetime', length: 3, nullable: true, hidden: true })
  backoffUntil?: Date | null;

  /** When the dispatcher last took work for it: the tie-break that makes claims take accounts and endpoints in turn. */
  @Property({ type: 'datetime', length: 3, nullable: true, hidden: true })
  lastClaimedAt?: Date | null;

  /** AES-256-GCM of {secret}; see common/crypto.ts. */
  @Property({ type: 'text', hidden: true, lazy: true })
  secretEncrypted!: string;

  /** The secret before the last roll (encrypted like secretEncrypted): deliveries are signed with it too until it expires. */
  @Property({ type: 'text', nullable: true, hidden: true, lazy: true })
  previousSecretEncrypted?: string | null;

  /** When the previous secret stops signing; null when there is none. */
  @Property({ type: 'datetime', length: 3, nullable: true, hidden: true })
  previousSecretExpiresAt?: Date | null;
}

/** The response that created a subscription, or rolled its secret: the only ones that show a secret. */
@ObjectType({ simpleResolvers: true, description: 'A webhook subscription with its new signing secret (shown only in the create and roll_secret answers).' })
export class CreatedWebhook extends Webhook {
  @Field({ description: 'whsec_…: verifies the webhook-signature header (Standard Webhooks). Shown only once.' })
  secret!: string;
}

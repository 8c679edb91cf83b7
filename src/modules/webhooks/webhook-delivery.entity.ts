import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Ref, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';
import { Event } from '../../events/event.entity';
import { Webhook } from './webhook.entity';

export enum DeliveryStatus {
  pending = 'pending',
  succeeded = 'succeeded',
  failed = 'failed',
  canceled = 'canceled',
}
registerEnumType(DeliveryStatus, {
  name: 'WebhookDeliveryStatus',
  description: 'pending (due or waiting to retry), succeeded, failed (attempts used up or 410), canceled (the subscription was disabled).',
});

/**
 * One event owed to one subscription. The dispatcher claims due rows with FOR UPDATE SKIP LOCKED,
 * marks them leased and pushes next_attempt_at past the send's timeout (a lease): a dispatcher
 * that dies mid-send leaves the row due again once the lease runs out, so nothing is lost. Rows
 * leased and not yet due are the attempts in flight that the fair claim counts.
 */
@ObjectType({ simpleResolvers: true, description: 'An event owed to a webhook subscription, and how sending it went.' })
@Entity({ tableName: 'webhook_deliveries' })
@Index({
  name: 'webhook_deliveries_due',
  expression: 'create index "webhook_deliveries_due" on "webhook_deliveries" ("next_attempt_at") where "status" = \'pending\'',
})
@Index({
  name: 'webhook_deliveries_pending',
  expression: 'create index "webhook_deliveries_pending" on "webhook_deliveries" ("webhook_id", "next_attempt_at") where "status" = \'pending\'',
})
@Index({
  name: 'webhook_deliveries_leased',
  expression: 'create index "webhook_deliveries_leased" on "webhook_deliveries" ("webhook_id") where "leased_at" is not null',
})
@Index({ name: 'webhook_deliveries_by_webhook', properties: ['webhook', 'createdAt', 'id'] })
@Unique({ name: 'webhook_deliveries_event_webhook_unique', properties: ['event', 'webhook'] })
export class WebhookDelivery extends TenantEntity<'status' | 'attemptCount' | 'deliveredAt' | 'nextAttemptAt' | 'leasedAt' | 'eventId'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('whdel');

  @ManyToOne(() => Event, { ref: true, deleteRule: 'cascade', index: false })
  event!: Ref<Event>;

  @ManyToOne(() => Webhook, { ref: true, deleteRule: 'cascade', index: false })
  webhook!: Ref<Webhook>;

  @Field(() => ID)
  get eventId(): string {
    return this.event.id;
  }

  @Field(() => DeliveryStatus)
  @Enum({ items: () => DeliveryStatus })
  status: DeliveryStatus = DeliveryStatus.pending;

  @Field(() => Int)
  @Property({ type: 'integer' })
  attemptCount: number = 0;

  @Field(() => Date, { nullable: true, description: 'When the next attempt is due; null once settled.' })
  @Property({ type: 'datetime', length: 3, nullable: true })
  nextAttemptAt?: Date | null = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', length: 3, nullable: true })
  deliveredAt?: Date | null;

  /** When the attempt under way was claimed; null when none is. It is in flight while next_attempt_at (its lease) is ahead. */
  @Property({ type: 'datetime', length: 3, nullable: true, hidden: true })
  leasedAt?: Date | null;
}

/** One HTTP attempt, kept for dashboards and support: what the endpoint answered and how fast. */
@ObjectType({ simpleResolvers: true, description: 'One attempt to send a delivery.' })
@Entity({ tableName: 'webhook_attempts' })
@Index({ name: 'webhook_attempts_by_webhook', properties: ['webhook', 'createdAt', 'id'] })
@Index({ name: 'webhook_attempts_by_delivery', properties: ['delivery', 'createdAt', 'id'] })
export class WebhookAttempt extends TenantEntity<'object'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('whatt');

  @Field({ description: 'Always "webhook_attempt".' })
  get object(): 'webhook_attempt' {
    return 'webhook_attempt';
  }

  @ManyToOne(() => WebhookDelivery, { ref: true, deleteRule: 'cascade', index: false })
  delivery!: Ref<WebhookDelivery>;

  @ManyToOne(() => Webhook, { ref: true, deleteRule: 'cascade', index: false })
  webhook!: Ref<Webhook>;

  @Field(() => ID)
  get deliveryId(): string {
    return this.delivery.id;
  }

  @Field(() => ID, { description: 'The event sent; its id is the webhook-id header of every attempt.' })
  @Property({ type: 'text' })
  eventId!: string;

  @Field(() => Int, { description: '1 for the first attempt.' })
  @Property({ type: 'integer' })
  attemptNumber!: number;

  @Field()
  @Property({ type: 'text' })
  url!: string;

  @Field(() => Int, { nullable: true, description: 'HTTP status answered; null when no answer came (network error, timeout, refused URL).' })
  @Property({ type: 'integer', nullable: true })
  responseStatus?: number | null;

  @Field(() => Int, { description: 'Milliseconds from sending to the end of the answer (or the failure).' })
  @Property({ type: 'integer' })
  latencyMs!: number;

  @Field(() => String, { nullable: true, description: 'Why the attempt failed, when it did.' })
  @Property({ type: 'text', nullable: true })
  error?: string | null;

  @Field(() => String, { nullable: true, description: "The first 1,000 characters of the answer's body." })
  @Property({ type: 'text', nullable: true })
  responseSnippet?: string | null;

  @Field()
  @Property({ type: 'boolean' })
  succeeded!: boolean;
}

import { ArrayNotEmpty, ArrayUnique, IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';
import { Field, ID, InputType, Int, registerEnumType } from 'type-graphql';
import { PageInput } from '../../common/page.input';
import { NotNull, rules } from '../../common/validation';
import { IsEventType } from '../../events/event-catalog';
import { IsWebhookUrl } from './url-guard';
import { WebhookStatus } from './webhook.entity';

/** Enabled subscriptions an account may have per mode (Stripe caps endpoints alike): each one is owed a share of delivery slots. */
export const MAX_ENABLED_WEBHOOKS = 16;

/** The rules of the fields a subscription has on create and update alike, whether required (create) or NotNull (update). */
const URL_TEXT = () => rules(MaxLength(2048, { message: '$property must be at most 2048 characters' }), IsWebhookUrl());
const EVENT_NAMES = () =>
  rules(
    ArrayNotEmpty({ message: '$property must name at least one event, or "*"' }),
    ArrayUnique({ message: '$property names an event more than once' }),
    IsEventType({ each: true, subscribable: true }),
  );

/** The optional fields of a subscription, alike on create and update. An input type only so that they are inherited; not in the schema. */
@InputType()
abstract class WebhookOptionalFields {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 500, { message: '$property must be at most 500 characters' })
  description?: string | null;
}

@InputType({
  description: `A new subscription: the URL and the events it receives. The response shows the signing secret once. At most ${MAX_ENABLED_WEBHOOKS} subscriptions per account and mode can be enabled.`,
})
export class WebhookCreateInput extends WebhookOptionalFields {
  @Field({ description: 'http(s) URL. Unless WEBHOOK_ALLOW_PRIVATE_URLS is set, it must resolve to a public address.' })
  @IsString()
  @URL_TEXT()
  url!: string;

  @Field(() => [String], { description: 'Event names (CONTRACT §10), or ["*"] for every event.' })
  @EVENT_NAMES()
  events!: string[];
}

@InputType({ description: 'A partial update: only the fields sent change. Setting status enabled re-enables a subscription the service disabled.' })
export class WebhookUpdateInput extends WebhookOptionalFields {
  @Field(() => String, { nullable: true })
  @NotNull()
  @URL_TEXT()
  url?: string;

  @Field(() => [String], { nullable: true })
  @NotNull()
  @EVENT_NAMES()
  events?: string[];

  @Field(() => WebhookStatus, { nullable: true })
  @NotNull()
  @IsIn(Object.values(WebhookStatus), { message: '$property must be enabled or disabled' })
  status?: WebhookStatus;
}

@InputType({ description: 'Pagination and filters for listing webhook subscriptions, newest first.' })
export class WebhookListInput extends PageInput {
  @Field(() => WebhookStatus, { nullable: true })
  @IsOptional()
  status?: WebhookStatus;
}

export enum WebhookAttemptStatus {
  succeeded = 'succeeded',
  failed = 'failed',
}
registerEnumType(WebhookAttemptStatus, { name: 'WebhookAttemptStatus', description: 'succeeded: the endpoint answered 2xx; failed: anything else.' });

@InputType({ description: "Pagination and filters for listing a subscription's attempts, newest first." })
export class WebhookAttemptListInput extends PageInput {
  @Field(() => WebhookAttemptStatus, { nullable: true })
  @IsOptional()
  status?: WebhookAttemptStatus;
}

@InputType({ description: 'The event to send to the subscription again.' })
export class WebhookResendInput {
  @Field(() => ID, { description: 'An evt_… of the same account and mode, of a type the subscription receives.' })
  @IsString()
  @MaxLength(64, { message: '$property is not an event id' })
  eventId!: string;
}

/** How long a rolled-over secret keeps signing deliveries, at most (Stripe allows a similar window). */
export const MAX_SECRET_OVERLAP_HOURS = 72;
export const DEFAULT_SECRET_OVERLAP_HOURS = 24;

@InputType({ description: 'Options of a secret roll.' })
export class WebhookRollSecretInput {
  @Field(() => Int, {
    nullable: true,
    description: `Hours (0–${MAX_SECRET_OVERLAP_HOURS}, default ${DEFAULT_SECRET_OVERLAP_HOURS}) during which deliveries are signed with the old secret too; 0 ends it at once.`,
  })
  @IsOptional()
  @IsInt({ message: '$property must be a whole number of hours' })
  @Min(0, { message: `$property must be between 0 and ${MAX_SECRET_OVERLAP_HOURS}` })
  @Max(MAX_SECRET_OVERLAP_HOURS, { message: `$property must be between 0 and ${MAX_SECRET_OVERLAP_HOURS}` })
  expiresInHours?: number;
}

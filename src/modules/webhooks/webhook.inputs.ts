import { ArrayNotEmpty, ArrayUnique, IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
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
    IsEventType({ each: true, orAll: true }),
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

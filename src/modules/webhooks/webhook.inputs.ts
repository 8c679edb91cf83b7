import { ArrayNotEmpty, ArrayUnique, IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { PageInput } from '../../common/page.input';
import { NotNull } from '../../common/validation';
import { IsEventType } from '../../events/event-catalog';
import { WebhookStatus } from './webhook.entity';


@InputType({ description: 'A new subscription: the URL and the events it receives. The response shows the signing secret once.' })
export class WebhookCreateInput {
  @Field({ description: 'http(s) URL. In production it must resolve to a public address.' })
  @IsString()
  @MaxLength(2048, { message: '$property must be at most 2048 characters' })
  url!: string;

  @Field(() => [String], { description: 'Event names (CONTRACT §10), or ["*"] for every event.' })
  @ArrayNotEmpty({ message: '$property must name at least one event, or "*"' })
  @ArrayUnique({ message: '$property names an event more than once' })
  @IsEventType({ each: true, orAll: true })
  events!: string[];

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 500, { message: '$property must be at most 500 characters' })
  description?: string | null;
}

@InputType({ description: 'A partial update: only the fields sent change. Setting status enabled re-enables a subscription the service disabled.' })
export class WebhookUpdateInput {
  @Field(() => String, { nullable: true })
  @NotNull()
  @MaxLength(2048, { message: '$property must be at most 2048 characters' })
  url?: string;

  @Field(() => [String], { nullable: true })
  @NotNull()
  @ArrayNotEmpty({ message: '$property must name at least one event, or "*"' })
  @ArrayUnique({ message: '$property names an event more than once' })
  @IsEventType({ each: true, orAll: true })
  events?: string[];

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 500, { message: '$property must be at most 500 characters' })
  description?: string | null;

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

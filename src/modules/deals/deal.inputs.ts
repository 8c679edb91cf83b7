import { IsIn, IsISO4217CurrencyCode, IsOptional, IsString, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, InputType } from 'type-graphql';
import { IsMetadata } from '../../common/metadata';
import { SortedPageInput } from '../../common/page.input';
import type { SortableField } from '../../common/pagination';
import { CoSellStatus } from './deal.entity';
import { DealStage } from './deal-stage';
import { MAX_VALUE } from './money';
import { OWNER_FILTER, OWNER_FILTER_DESCRIPTION } from '../members/ownership';
import { IsCalendarDate, MaxDecimals, NOT_BLANK, NotNull, rules } from '../../common/validation';
import { FieldValuesInput } from '../fields/field.inputs';

/** The rules of the fields a deal has on create and update alike, whether required (create) or NotNull (update). */
const NAME = () => rules(Length(1, 200, { message: '$property must be 1 to 200 characters' }), Matches(NOT_BLANK, { message: '$property must not be blank' }));
const AMOUNT_MESSAGE = `$property must be an amount from 0 to ${MAX_VALUE} with at most 2 decimals`;
/** An amount in major units (src/modules/deals/money.ts): 0 to MAX_VALUE, at most 2 decimals. */
export const AMOUNT = () => rules(Min(0, { message: AMOUNT_MESSAGE }), Max(MAX_VALUE, { message: AMOUNT_MESSAGE }), MaxDecimals(2, AMOUNT_MESSAGE));
const VALUE = AMOUNT;
const CURRENCY = () => IsISO4217CurrencyCode({ message: '$property must be an ISO 4217 currency code such as USD' });

/**
 * The optional fields of a deal, alike on create and update (null leaves one empty on a create and
 * clears it on an update). An input type only so that its fields are inherited; no field takes it,
 * so it is not in the schema.
 */
@InputType()
abstract class DealOptionalFields {
  @Field(() => ID, { nullable: true, description: 'A lead of the same account and mode; null on an update unlinks it.' })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a lead id' })
  leadId?: string | null;

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD.' })
  @IsOptional()
  @IsCalendarDate('$property must be a date as YYYY-MM-DD')
  expectedCloseDate?: string | null;

  @Field(() => String, { nullable: true, description: 'Deprecated: free text; use ownerId.' })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  owner?: string | null;

  @Field(() => ID, { nullable: true, description: 'An active member of the account (usr_…); null on an update clears it.' })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a member id' })
  ownerId?: string | null;

  @FieldValuesInput()
  fields?: Record<string, unknown> | null;
}

@InputType({ description: 'A new deal. name and value are required; stage defaults to prospecting.' })
export class DealCreateInput extends DealOptionalFields {
  @Field()
  @IsString()
  @NAME()
  name!: string;

  @Field(() => Float, { description: 'Amount in major units, at most 2 decimals.' })
  @VALUE()
  value!: number;

  @Field(() => String, { nullable: true, description: 'ISO 4217, default USD.' })
  @IsOptional()
  @CURRENCY()
  currency?: string | null;

  @Field(() => DealStage, { nullable: true })
  @IsOptional()
  stage?: DealStage | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @IsOptional()
  @IsMetadata({ allowNullValues: false })
  metadata?: Record<string, string> | null;
}

@InputType({ description: 'A partial update: only the fields sent change; null clears an optional field.' })
export class DealUpdateInput extends DealOptionalFields {
  @Field({ nullable: true })
  @NotNull()
  @NAME()
  name?: string;

  @Field(() => Float, { nullable: true })
  @NotNull()
  @VALUE()
  value?: number;

  @Field(() => String, { nullable: true })
  @NotNull()
  @CURRENCY()
  currency?: string;

  @Field(() => DealStage, { nullable: true })
  @NotNull()
  @IsIn(Object.values(DealStage), { message: `$property must be one of ${Object.values(DealStage).join(', ')}` })
  stage?: DealStage;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Merged into the current metadata; a null value removes its key.' })
  @NotNull()
  @IsMetadata({ allowNullValues: true })
  metadata?: Record<string, string | null>;
}

/** The fields a list can be sorted by (CONTRACT §4), by their REST names, and how each sorts. */
export const DEAL_SORTS: Record<string, SortableField> = {
  created_at: { property: 'createdAt', kind: 'date' },
  value: { property: 'valueMinor', kind: 'number' },
  expected_close_date: { property: 'expectedCloseDate', kind: 'day', nullable: true },
  owner_id: { property: 'ownerId', kind: 'string', nullable: true },
};

@InputType({ description: 'Pagination, sort and filters for listing deals (CONTRACT §4).' })
export class DealListInput extends SortedPageInput(DEAL_SORTS) {
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'Custom field filters by key: a value or a comma list (any of them), or {gt, gte, lt, lte} for number, money, date and datetime fields. REST: fields[seats][gte]=100, fields[tier]=gold,silver.',
  })
  @IsOptional()
  fields?: Record<string, unknown>;

  @Field(() => String, { nullable: true, description: OWNER_FILTER_DESCRIPTION })
  @IsOptional()
  @MaxLength(1000, { message: '$property is too long' })
  @Matches(OWNER_FILTER, { message: '$property must be member ids (usr_…) or none, comma-separated' })
  ownerId?: string;

  @Field(() => [DealStage], { nullable: true, description: 'One stage, or several (REST: a comma list).' })
  @IsOptional()
  stage?: DealStage[];

  @Field(() => ID, { nullable: true })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a lead id' })
  leadId?: string;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @AMOUNT()
  minValue?: number;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @AMOUNT()
  maxValue?: number;

  @Field(() => CoSellStatus, { nullable: true })
  @IsOptional()
  coSellStatus?: CoSellStatus;
}

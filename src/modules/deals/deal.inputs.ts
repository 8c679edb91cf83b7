import { IsIn, IsISO4217CurrencyCode, IsISO8601, IsOptional, IsString, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, InputType } from 'type-graphql';
import { IsMetadata } from '../../common/metadata';
import { SortedPageInput } from '../../common/page.input';
import { CoSellStatus } from './deal.entity';
import { DealStage } from './deal-stage';
import { MAX_VALUE } from './money';
import { NOT_BLANK, NotNull } from '../../common/validation';

/** YYYY-MM-DD from year 0001 (PostgreSQL has no year 0); IsISO8601 strict then refuses days a month lacks (2026-02-30). */
const DATE = /^(?!0000)\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const CALENDAR_DATE = { strict: true } as const;

@InputType({ description: 'A new deal. name and value are required; stage defaults to prospecting.' })
export class DealCreateInput {
  @Field()
  @IsString()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  name!: string;

  @Field(() => ID, { nullable: true, description: 'A lead of the same account and mode.' })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a lead id' })
  leadId?: string | null;

  @Field(() => Float, { description: 'Amount in major units, at most 2 decimals.' })
  @Min(0, { message: '$property must be 0 or more' })
  @Max(MAX_VALUE, { message: `$property must be at most ${MAX_VALUE}` })
  value!: number;

  @Field(() => String, { nullable: true, description: 'ISO 4217, default USD.' })
  @IsOptional()
  @IsISO4217CurrencyCode({ message: '$property must be an ISO 4217 currency code such as USD' })
  currency?: string | null;

  @Field(() => DealStage, { nullable: true })
  @IsOptional()
  stage?: DealStage | null;

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD.' })
  @IsOptional()
  @Matches(DATE, { message: '$property must be a date as YYYY-MM-DD' })
  @IsISO8601(CALENDAR_DATE, { message: '$property must be a date as YYYY-MM-DD' })
  expectedCloseDate?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  owner?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @IsOptional()
  @IsMetadata({ allowNullValues: false })
  metadata?: Record<string, string> | null;
}

@InputType({ description: 'A partial update: only the fields sent change; null clears an optional field.' })
export class DealUpdateInput {
  @Field({ nullable: true })
  @NotNull()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  name?: string;

  @Field(() => ID, { nullable: true, description: 'null unlinks the lead.' })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a lead id' })
  leadId?: string | null;

  @Field(() => Float, { nullable: true })
  @NotNull()
  @Min(0, { message: '$property must be 0 or more' })
  @Max(MAX_VALUE, { message: `$property must be at most ${MAX_VALUE}` })
  value?: number;

  @Field(() => String, { nullable: true })
  @NotNull()
  @IsISO4217CurrencyCode({ message: '$property must be an ISO 4217 currency code such as USD' })
  currency?: string;

  @Field(() => DealStage, { nullable: true })
  @NotNull()
  @IsIn(Object.values(DealStage), { message: `$property must be one of ${Object.values(DealStage).join(', ')}` })
  stage?: DealStage;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Matches(DATE, { message: '$property must be a date as YYYY-MM-DD' })
  @IsISO8601(CALENDAR_DATE, { message: '$property must be a date as YYYY-MM-DD' })
  expectedCloseDate?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  owner?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Merged into the current metadata; a null value removes its key.' })
  @NotNull()
  @IsMetadata({ allowNullValues: true })
  metadata?: Record<string, string | null>;
}

export const DEAL_SORTS = ['created_at', 'value', 'expected_close_date'] as const;

@InputType({ description: 'Pagination, sort and filters for listing deals (CONTRACT §4).' })
export class DealListInput extends SortedPageInput {
  @Field(() => [DealStage], { nullable: true, description: 'One stage, or several (REST: a comma list).' })
  @IsOptional()
  stage?: DealStage[];

  @Field(() => ID, { nullable: true })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a lead id' })
  leadId?: string;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @Min(0, { message: '$property must be 0 or more' })
  minValue?: number;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @Min(0, { message: '$property must be 0 or more' })
  maxValue?: number;

  @Field(() => CoSellStatus, { nullable: true })
  @IsOptional()
  coSellStatus?: CoSellStatus;
}

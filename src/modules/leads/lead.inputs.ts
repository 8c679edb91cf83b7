import {
  IsEmail,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinDate,

} from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType, Int } from 'type-graphql';
import { IsMetadata } from '../../common/metadata';
import { SortedPageInput } from '../../common/page.input';
import { LeadScoreLabel } from './lead.entity';
import { LeadStatus } from './lead-status';
import { IsWebsite, NOT_BLANK, NotNull } from '../../common/validation';

const MAX_EMPLOYEES = 10_000_000;

/** PostgreSQL has no year 0 (ISO 8601's 0000 is 1 BC), so a filter time starts at year 1. */
const FIRST_DAY = new Date('0001-01-01T00:00:00.000Z');
const FROM_YEAR_1 = '$property must be a time from the year 0001 on';

@InputType({ description: 'Fields of a new lead. company and contactEmail are required.' })
export class LeadCreateInput {
  @Field()
  @IsString()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  company!: string;

  @Field()
  @MaxLength(254, { message: '$property must be at most 254 characters' })
  @IsEmail({}, { message: '$property must be an email address' })
  contactEmail!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  contactName?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  industry?: string | null;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @IsInt()
  @Min(0, { message: '$property must be 0 or more' })
  @Max(MAX_EMPLOYEES, { message: `$property must be at most ${MAX_EMPLOYEES}` })
  employees?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 2048, { message: '$property must be 1 to 2048 characters' })
  @IsWebsite()
  website?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  country?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  source?: string | null;

  @Field(() => LeadStatus, { nullable: true, description: 'Defaults to new; converted cannot be set.' })
  @IsOptional()
  @IsIn([LeadStatus.new, LeadStatus.contacted, LeadStatus.qualified, LeadStatus.disqualified], {
    message: '$property must be new, contacted, qualified or disqualified',
  })
  status?: LeadStatus | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @IsOptional()
  @IsMetadata({ allowNullValues: false })
  metadata?: Record<string, string> | null;
}

@InputType({ description: 'A partial update: only the fields sent change; null clears an optional field.' })
export class LeadUpdateInput {
  @Field({ nullable: true })
  @NotNull()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  company?: string;

  @Field({ nullable: true })
  @NotNull()
  @MaxLength(254, { message: '$property must be at most 254 characters' })
  @IsEmail({}, { message: '$property must be an email address' })
  contactEmail?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  contactName?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  industry?: string | null;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @IsInt()
  @Min(0, { message: '$property must be 0 or more' })
  @Max(MAX_EMPLOYEES, { message: `$property must be at most ${MAX_EMPLOYEES}` })
  employees?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 2048, { message: '$property must be 1 to 2048 characters' })
  @IsWebsite()
  website?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  country?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  source?: string | null;

  @Field(() => LeadStatus, { nullable: true })
  @NotNull()
  @IsIn([LeadStatus.new, LeadStatus.contacted, LeadStatus.qualified, LeadStatus.disqualified], {
    message: '$property must be new, contacted, qualified or disqualified',
  })
  status?: LeadStatus;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Merged into the current metadata; a null value removes its key.' })
  @NotNull()
  @IsMetadata({ allowNullValues: true })
  metadata?: Record<string, string | null>;
}

export const LEAD_SORTS = ['created_at', 'score', 'company', 'employees'] as const;

@InputType({ description: 'Pagination, sort and filters for listing leads (CONTRACT §4).' })
export class LeadListInput extends SortedPageInput {
  @Field(() => String, { nullable: true, description: 'Exact industry, case-insensitive.' })
  @IsOptional()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  industry?: string;

  @Field(() => LeadStatus, { nullable: true })
  @IsOptional()
  status?: LeadStatus;

  @Field(() => LeadScoreLabel, { nullable: true })
  @IsOptional()
  scoreLabel?: LeadScoreLabel;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(0, { message: '$property must be between 0 and 100' })
  @Max(100, { message: '$property must be between 0 and 100' })
  minScore?: number;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(0, { message: '$property must be between 0 and 100' })
  @Max(100, { message: '$property must be between 0 and 100' })
  maxScore?: number;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(0, { message: '$property must be 0 or more' })
  minEmployees?: number;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(0, { message: '$property must be 0 or more' })
  maxEmployees?: number;

  @Field({ nullable: true, description: 'Only leads created at or after this time.' })
  @IsOptional()
  @MinDate(FIRST_DAY, { message: FROM_YEAR_1 })
  createdAfter?: Date;

  @Field({ nullable: true, description: 'Only leads created before this time.' })
  @IsOptional()
  @MinDate(FIRST_DAY, { message: FROM_YEAR_1 })
  createdBefore?: Date;

  @Field(() => String, { nullable: true, description: 'Case-insensitive match on company or contact email.' })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  q?: string;
}

import { IsEmail, IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int } from 'type-graphql';
import { OWNER_FILTER, OWNER_FILTER_DESCRIPTION } from '../members/ownership';
import { IsMetadata } from '../../common/metadata';
import { SortedPageInput } from '../../common/page.input';
import type { SortableField } from '../../common/pagination';
import { LeadScoreLabel } from './lead.entity';
import { LeadStatus } from './lead-status';
import { FromYear1, IsWebsite, NOT_BLANK, NotNull, rules } from '../../common/validation';
import { FieldValuesInput } from '../fields/field.inputs';

const MAX_EMPLOYEES = 10_000_000;

/** The rules of the fields a lead has on create and update alike, whether required (create) or NotNull (update). */
const COMPANY = () =>
  rules(Length(1, 200, { message: '$property must be 1 to 200 characters' }), Matches(NOT_BLANK, { message: '$property must not be blank' }));
const CONTACT_EMAIL = () =>
  rules(MaxLength(254, { message: '$property must be at most 254 characters' }), IsEmail({}, { message: '$property must be an email address' }));
const SETTABLE_STATUS = () =>
  IsIn([LeadStatus.new, LeadStatus.contacted, LeadStatus.qualified, LeadStatus.disqualified], {
    message: '$property must be new, contacted, qualified or disqualified',
  });

/**
 * The optional fields of a lead, alike on create and update (null leaves one empty on a create and
 * clears it on an update). An input type only so that its fields are inherited; no field takes it,
 * so it is not in the schema.
 */
@InputType()
abstract class LeadOptionalFields {
  @Field(() => ID, { nullable: true, description: 'An active member of the account (usr_…); null on an update clears it.' })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a member id' })
  ownerId?: string | null;

  @FieldValuesInput()
  fields?: Record<string, unknown> | null;

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
}

@InputType({ description: 'Fields of a new lead. company and contactEmail are required.' })
export class LeadCreateInput extends LeadOptionalFields {
  @Field()
  @IsString()
  @COMPANY()
  company!: string;

  @Field()
  @CONTACT_EMAIL()
  contactEmail!: string;

  @Field(() => LeadStatus, { nullable: true, description: 'Defaults to new; converted cannot be set.' })
  @IsOptional()
  @SETTABLE_STATUS()
  status?: LeadStatus | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @IsOptional()
  @IsMetadata({ allowNullValues: false })
  metadata?: Record<string, string> | null;
}

@InputType({ description: 'A partial update: only the fields sent change; null clears an optional field.' })
export class LeadUpdateInput extends LeadOptionalFields {
  @Field({ nullable: true })
  @NotNull()
  @COMPANY()
  company?: string;

  @Field({ nullable: true })
  @NotNull()
  @CONTACT_EMAIL()
  contactEmail?: string;

  @Field(() => LeadStatus, { nullable: true })
  @NotNull()
  @SETTABLE_STATUS()
  status?: LeadStatus;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Merged into the current metadata; a null value removes its key.' })
  @NotNull()
  @IsMetadata({ allowNullValues: true })
  metadata?: Record<string, string | null>;
}

/** The fields a list can be sorted by (CONTRACT §4), by their REST names, and how each sorts. */
export const LEAD_SORTS: Record<string, SortableField> = {
  created_at: { property: 'createdAt', kind: 'date' },
  score: { property: 'score', kind: 'number' },
  company: { property: 'company', kind: 'string' },
  employees: { property: 'employees', kind: 'number', nullable: true },
};

@InputType({ description: 'Pagination, sort and filters for listing leads (CONTRACT §4).' })
export class LeadListInput extends SortedPageInput(LEAD_SORTS) {
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
  @FromYear1()
  createdAfter?: Date;

  @Field({ nullable: true, description: 'Only leads created before this time.' })
  @IsOptional()
  @FromYear1()
  createdBefore?: Date;

  @Field(() => String, { nullable: true, description: 'Case-insensitive match on company or contact email.' })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  q?: string;
}

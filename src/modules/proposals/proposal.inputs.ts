import { ArrayMaxSize, ArrayNotEmpty, IsInt, IsPositive, IsOptional, IsString, Length, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, InputType, Int } from 'type-graphql';
import { IsMetadata } from '../../common/metadata';
import { PageInput } from '../../common/page.input';
import { MaxDecimals, NOT_BLANK } from '../../common/validation';
import { AMOUNT } from '../deals/deal.inputs';
import { MAX_VALUE } from '../deals/money';
import { MAX_QUANTITY } from './proposal-totals';

export const MAX_LINE_ITEMS = 500;

@InputType({ description: 'One line: amount = quantity × unit_price, rounded to the cent.' })
export class ProposalLineItemInput {
  @Field()
  @IsString()
  @Length(1, 500, { message: '$property must be 1 to 500 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  description!: string;

  @Field(() => Float, { description: `More than 0, at most ${MAX_QUANTITY}, up to 3 decimals.` })
  @IsPositive({ message: '$property must be more than 0' })
  @Max(MAX_QUANTITY, { message: `$property must be at most ${MAX_QUANTITY}` })
  @MaxDecimals(3, '$property must have at most 3 decimals')
  quantity!: number;

  @Field(() => Float, { description: "Major units in the deal's currency, at most 2 decimals." })
  @AMOUNT()
  unitPrice!: number;
}

@InputType({ description: 'Generates a proposal from a deal. Without line_items, one line comes from the deal (its name and value).' })
export class ProposalCreateInput {
  @Field(() => ID)
  @IsString()
  @MaxLength(64, { message: '$property is not a deal id' })
  dealId!: string;

  @Field(() => String, { nullable: true, description: 'Default: "Proposal: <deal name>".' })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  title?: string | null;

  @Field(() => [ProposalLineItemInput], {
    nullable: true,
    description: `1 to ${MAX_LINE_ITEMS} lines. Each line's amount, and their sum, must stay within ${MAX_VALUE}.`,
  })
  @IsOptional()
  @ArrayNotEmpty({ message: '$property must have at least one line, or be left out to use the deal' })
  @ArrayMaxSize(MAX_LINE_ITEMS, { message: `$property must have at most ${MAX_LINE_ITEMS} lines` })
  @ValidateNested({ each: true })
  lineItems?: ProposalLineItemInput[] | null;

  @Field(() => Float, { nullable: true, description: 'Percent off the subtotal, 0–100, up to 3 decimals. Default 0.' })
  @IsOptional()
  @Min(0, { message: '$property must be between 0 and 100' })
  @Max(100, { message: '$property must be between 0 and 100' })
  @MaxDecimals(3, '$property must have at most 3 decimals')
  discountPercent?: number | null;

  @Field(() => Float, { nullable: true, description: 'Percent on the discounted subtotal, 0–100, up to 3 decimals. Default 0.' })
  @IsOptional()
  @Min(0, { message: '$property must be between 0 and 100' })
  @Max(100, { message: '$property must be between 0 and 100' })
  @MaxDecimals(3, '$property must have at most 3 decimals')
  taxPercent?: number | null;

  @Field(() => Int, { nullable: true, description: 'Days the offer stands, 1–365. Default 30.' })
  @IsOptional()
  @IsInt({ message: '$property must be a whole number of days' })
  @Min(1, { message: '$property must be between 1 and 365' })
  @Max(365, { message: '$property must be between 1 and 365' })
  validDays?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 5000, { message: '$property must be 1 to 5000 characters' })
  notes?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @IsOptional()
  @IsMetadata({ allowNullValues: false })
  metadata?: Record<string, string> | null;
}

@InputType({ description: 'Pagination and filters for listing proposals, newest first.' })
export class ProposalListInput extends PageInput {
  @Field(() => ID, { nullable: true, description: "Only this deal's proposals (on Deal.proposals, the deal itself already is the filter)." })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a deal id' })
  dealId?: string;
}

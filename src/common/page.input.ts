import { IsOptional, Max, MaxLength, Min } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { MAX_PAGE_SIZE } from './pagination';

/** `limit` and `cursor` of every list (CONTRACT §4); list inputs extend it with their filters. */
@InputType()
export class PageInput {
  @Field(() => Int, { nullable: true, description: `1–${MAX_PAGE_SIZE}, default 20.` })
  @IsOptional()
  @Min(1, { message: `$property must be between 1 and ${MAX_PAGE_SIZE}` })
  @Max(MAX_PAGE_SIZE, { message: `$property must be between 1 and ${MAX_PAGE_SIZE}` })
  limit?: number;

  @Field(() => String, { nullable: true, description: 'next_cursor of the previous page.' })
  @IsOptional()
  @MaxLength(1000, { message: '$property is not a cursor this API returned' })
  cursor?: string;
}

/** A page with `sort`: a field name, `-` for descending (the sortable fields are per resource). */
@InputType()
export class SortedPageInput extends PageInput {
  @Field(() => String, { nullable: true, description: 'A sortable field of the resource; prefix - for descending. Default -created_at.' })
  @IsOptional()
  @MaxLength(40, { message: '$property is not a sortable field' })
  sort?: string;
}

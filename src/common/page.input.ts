import { IsOptional, Max, MaxLength, Min, ValidateBy } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { MAX_PAGE_SIZE, SortableField, sortKeyOf, sortRefusal } from './pagination';

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

/**
 * A page with `sort`: one of the resource's sortable fields, `-` for descending. A mixin (a class
 * made per resource) so that the input itself refuses a field the resource cannot sort by, with
 * the fields it can, before anything runs.
 */
export function SortedPageInput(sortable: Record<string, SortableField>) {
  const names = Object.keys(sortable);
  @InputType()
  abstract class SortedPage extends PageInput {
    @Field(() => String, { nullable: true, description: `${names.join(', ')}; prefix - for descending. Default -created_at.` })
    @IsOptional()
    @MaxLength(40, { message: sortRefusal(names) })
    @IsSortKey(names)
    sort?: string;
  }
  return SortedPage;
}

function IsSortKey(names: readonly string[]): PropertyDecorator {
  return ValidateBy({
    name: 'isSortKey',
    constraints: [names],
    validator: { validate: (value: unknown) => typeof value === 'string' && sortKeyOf(value, names) !== undefined, defaultMessage: () => sortRefusal(names) },
  });
}

import { IsOptional, MaxLength } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { PageInput } from '../common/page.input';
import { FromYear1 } from '../common/validation';
import { IsEventType } from './event-catalog';

@InputType({ description: 'Pagination and filters for listing events, newest first.' })
export class EventListInput extends PageInput {
  /** Text, not a list, so that documents written when it took one name (`$type: String`) still run. */
  @Field(() => String, { nullable: true, description: 'One event name, e.g. deal.won, or a comma list of them: deal.won,deal.lost.' })
  @IsOptional()
  @MaxLength(2000, { message: '$property is too long to be a list of event names' })
  @IsEventType({ commaList: true })
  type?: string;

  @Field({ nullable: true, description: 'Only events created at or after this time.' })
  @IsOptional()
  @FromYear1()
  createdAfter?: Date;

  @Field({ nullable: true, description: 'Only events created before this time.' })
  @IsOptional()
  @FromYear1()
  createdBefore?: Date;

  @Field(() => ID, { nullable: true, description: 'Only events about this object (data.object.id), e.g. a deal_… id.' })
  @IsOptional()
  @MaxLength(64, { message: '$property is not an object id' })
  objectId?: string;
}

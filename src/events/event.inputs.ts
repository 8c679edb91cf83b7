import { ArrayMaxSize, IsOptional, MaxLength } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { PageInput } from '../common/page.input';
import { FromYear1 } from '../common/validation';
import { IsEventType } from './event-catalog';

@InputType({ description: 'Pagination and filters for listing events, newest first.' })
export class EventListInput extends PageInput {
  @Field(() => [String], { nullable: true, description: 'One event name, e.g. deal.won, or several (REST: a comma list).' })
  @IsOptional()
  @ArrayMaxSize(50, { message: '$property must name at most 50 events' })
  @IsEventType({ each: true })
  type?: string[];

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

import { IsIn, IsOptional } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { PageInput } from '../common/page.input';
import { EVENT_TYPES } from './event-types';

@InputType({ description: 'Pagination and filters for listing events, newest first.' })
export class EventListInput extends PageInput {
  @Field(() => String, { nullable: true, description: 'One event name, e.g. deal.won.' })
  @IsOptional()
  @IsIn(EVENT_TYPES, { message: `$property must be one of ${EVENT_TYPES.join(', ')}` })
  type?: string;
}

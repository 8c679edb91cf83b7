import { IsOptional } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { PageInput } from '../common/page.input';
import { IsEventType } from './event-catalog';

@InputType({ description: 'Pagination and filters for listing events, newest first.' })
export class EventListInput extends PageInput {
  @Field(() => String, { nullable: true, description: 'One event name, e.g. deal.won.' })
  @IsOptional()
  @IsEventType()
  type?: string;
}

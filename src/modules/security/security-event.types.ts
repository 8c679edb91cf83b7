import { ArrayMaxSize, IsIn, IsOptional, MaxLength } from 'class-validator';
import { Field, InputType, ObjectType } from 'type-graphql';
import { PageInput } from '../../common/page.input';
import { ListPage } from '../../common/pagination';
import { SECURITY_EVENT_TYPES, SecurityEvent, SecurityEventType } from './security-event.entity';

@ObjectType({ simpleResolvers: true })
export class SecurityEventList extends ListPage(SecurityEvent) {}

@InputType({ description: 'Pagination and filters for the security log, newest first.' })
export class SecurityEventListInput extends PageInput {
  @Field(() => [String], { nullable: true, description: 'One type, or several (REST: a comma list).' })
  @IsOptional()
  @ArrayMaxSize(SECURITY_EVENT_TYPES.length, { message: '$property names too many types' })
  @IsIn(SECURITY_EVENT_TYPES, { each: true, message: `$property must be among ${SECURITY_EVENT_TYPES.join(', ')}` })
  type?: SecurityEventType[];

  @Field(() => String, { nullable: true, description: 'The member (usr_…) the entries concern.' })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a member id' })
  memberId?: string;
}

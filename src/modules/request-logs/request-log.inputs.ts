import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { PageInput } from '../../common/page.input';

/** The methods the API answers; a filter on any other could only ever match nothing. */
export const LOGGED_METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'] as const;

@InputType({ description: 'Pagination and filters for listing request logs, newest first.' })
export class RequestLogListInput extends PageInput {
  @Field(() => Boolean, { nullable: true, description: 'true: only failed requests (status 400 and above); false: only the others.' })
  @IsOptional()
  errors?: boolean;

  @Field(() => Int, { nullable: true, description: 'Only requests answered with this HTTP status, e.g. 404.' })
  @IsOptional()
  @IsInt({ message: '$property must be an HTTP status (100–599)' })
  @Min(100, { message: '$property must be an HTTP status (100–599)' })
  @Max(599, { message: '$property must be an HTTP status (100–599)' })
  status?: number;

  @Field(() => String, { nullable: true, description: `Only requests with this method: ${LOGGED_METHODS.join(', ')}.` })
  @IsOptional()
  @IsIn(LOGGED_METHODS, { message: `$property must be one of ${LOGGED_METHODS.join(', ')}` })
  method?: string;
}

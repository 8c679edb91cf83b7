import { IsOptional, Length, Matches } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { PageInput } from '../../common/page.input';
import { NOT_BLANK, rules } from '../../common/validation';
import { SuggestionStatus } from './agent-suggestion.entity';
import { BODY_MAX, BRIEF_MAX, NEXT_STEP_MAX, SUBJECT_MAX } from './agent-writings';

@InputType({ description: "Pagination and a status filter for an agent's suggestions, newest first." })
export class SuggestionListInput extends PageInput {
  @Field(() => SuggestionStatus, { nullable: true })
  @IsOptional()
  status?: SuggestionStatus;
}

const edited = (max: number) =>
  rules(Length(1, max, { message: `$property must be 1 to ${max} characters` }), Matches(NOT_BLANK, { message: '$property must not be blank' }));

@InputType({
  description:
    'Edits made while approving (each optional; what is not given stays as the agent wrote it): subject and body for a follow_up_email, brief and next_step for a lead_brief.',
})
export class SuggestionApproveInput {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @edited(SUBJECT_MAX)
  subject?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @edited(BODY_MAX)
  body?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @edited(BRIEF_MAX)
  brief?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @edited(NEXT_STEP_MAX)
  nextStep?: string | null;
}

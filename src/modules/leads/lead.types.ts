import { Field, ID, Int, ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { Lead, LeadScoreLabel } from './lead.entity';

@ObjectType({ simpleResolvers: true })
export class LeadList extends ListPage(Lead) {}

@ObjectType('ScoreSignal', { simpleResolvers: true, description: "One feature's contribution to a lead's score." })
export class ScoreSignalType {
  @Field()
  name!: string;

  @Field()
  value!: string;

  @Field(() => Int, { description: 'Signed points this signal added to or removed from the base score.' })
  impact!: number;

  @Field()
  description!: string;
}

@ObjectType({ simpleResolvers: true, description: "A lead's score explained: score = base_score + the sum of the signals' impacts." })
export class LeadScore {
  @Field(() => ID)
  leadId!: string;

  @Field(() => Int)
  score!: number;

  @Field(() => LeadScoreLabel)
  scoreLabel!: LeadScoreLabel;

  @Field(() => Int)
  baseScore!: number;

  @Field()
  modelVersion!: string;

  @Field()
  scoredAt!: Date;

  @Field(() => [ScoreSignalType], { description: 'Largest effect first.' })
  signals!: ScoreSignalType[];
}

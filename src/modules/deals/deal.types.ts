import { Field, Float, Int, ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { Deal } from './deal.entity';
import { DealStage } from './deal-stage';

@ObjectType({ simpleResolvers: true })
export class DealList extends ListPage(Deal) {}

@ObjectType({ simpleResolvers: true, description: 'Deals in one stage and currency: count, total and probability-weighted value.' })
export class PipelineStageSummary {
  @Field(() => DealStage)
  stage!: DealStage;

  @Field()
  currency!: string;

  @Field(() => Int)
  count!: number;

  @Field(() => Float, { description: 'Sum of values, in major units.' })
  totalValue!: number;

  @Field(() => Float, { description: 'Sum of value × stage probability, in major units (rounded to cents).' })
  weightedValue!: number;

  @Field(() => Int, { description: 'Win probability of the stage, in percent.' })
  probability!: number;
}

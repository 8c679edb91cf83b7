import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
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

@ObjectType({ simpleResolvers: true, description: 'One rule of co-sell eligibility a deal fails.' })
export class CoSellReason {
  @Field({
    description:
      'stage, value, lead, and m365_integration (test mode) or, in live mode, partner_center_integration, expected_close_date, contact_name and country (what a Partner Center referral requires).',
  })
  rule!: string;

  @Field()
  message!: string;
}

@ObjectType({ simpleResolvers: true, description: 'Whether a deal may be registered for co-sell now, and every reason it may not.' })
export class CoSellEligibility {
  @Field({ description: 'Always "co_sell_eligibility".' })
  get object(): 'co_sell_eligibility' {
    return 'co_sell_eligibility';
  }

  @Field(() => ID)
  dealId!: string;

  @Field({ description: 'true when registering now would pass every rule (it may still be 409 already_registered).' })
  eligible!: boolean;

  @Field(() => [CoSellReason], { description: 'The same reasons a refused registration lists in error.reasons; empty when eligible.' })
  reasons!: CoSellReason[];

  @Field({ description: 'Whether the deal is registered already.' })
  registered!: boolean;
}

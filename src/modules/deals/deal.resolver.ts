import { Arg, Ctx, Extensions, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import { DeletedObject } from '../../common/deleted';
import type { RequestContext } from '../../graphql/context';
import { AGGREGATE_COST, listComplexity, MUTATION_COST } from '../../graphql/checks/cost-limit';
import { OperationLimited } from '../../limits/operation-limit';
import { Deal, DealStageChange } from './deal.entity';
import { DealCreateInput, DealListInput, DealUpdateInput } from './deal.inputs';
import { CoSellEligibility, DealList, PipelineStageSummary } from './deal.types';

@Resolver(() => Deal)
export class DealResolver {
  @RequiresPermission('deals:read')
  @Query(() => DealList, {
    description: "Deals of the key's account and mode, newest first by default.",
    complexity: listComplexity,
  })
  deals(@Arg('filter', () => DealListInput, { nullable: true }) filter: DealListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.deals.list(filter);
  }

  @RequiresPermission('deals:read')
  @Query(() => Deal)
  deal(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.deals.read(id);
  }

  @RequiresPermission('deals:read')
  @Query(() => [PipelineStageSummary], { description: 'Count, total and weighted value per stage and currency, for dashboards.', complexity: AGGREGATE_COST })
  pipelineSummary(@Ctx() ctx: RequestContext) {
    return ctx.services.deals.pipelineSummary();
  }

  @RequiresPermission('deals:write')
  @Mutation(() => Deal, { complexity: MUTATION_COST })
  createDeal(@Arg('input', () => DealCreateInput) input: DealCreateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.deals.create(input);
  }

  @RequiresPermission('deals:write')
  @Mutation(() => Deal, { complexity: MUTATION_COST })
  updateDeal(@Arg('id', () => ID) id: string, @Arg('input', () => DealUpdateInput) input: DealUpdateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.deals.update(id, input);
  }

  @RequiresPermission('deals:write')
  @Mutation(() => DeletedObject, {
    complexity: MUTATION_COST,
    description: 'Deletes a deal and its stage history; a deal with a proposal is kept (409 resource_conflict).',
  })
  async deleteDeal(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return new DeletedObject(await ctx.services.deals.delete(id), 'deal');
  }

  @RequiresPermission('deals:write')
  @Mutation(() => Deal, {
    complexity: MUTATION_COST,
    description:
      'Registers the deal for co-sell, answering at once with the deal and its coSell. Test mode: through the microsoft365 integration, accepted at once, nothing sent anywhere. ' +
      'Live mode: through the partner_center integration; the registration answers submitted (with referralId null) and a Partner Center referral is created in the background ' +
      "(a Shared referral with the customer, consent and deal details, and the registration's id as its external reference id), whose status is then read every CO_SELL_POLL_INTERVAL_MS: " +
      'each change of coSell after registering (its referralId arriving, its status, its statusReason) records deal.co_sell_updated and deal.updated. ' +
      'Not eligible is deal_not_eligible listing every failed rule (stage, value, lead, m365_integration in test mode; in live mode partner_center_integration, expected_close_date, contact_name and country instead of m365_integration).',
  })
  @OperationLimited('registerDeal', { windowS: 60, max: 10 })
  registerDeal(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.deals.register(id);
  }

  @RequiresPermission('deals:read')
  @Query(() => CoSellEligibility, {
    description:
      'Whether the deal may be registered for co-sell now, and every reason it may not (the reasons registerDeal would refuse with, the live-mode rules of Partner Center included), without registering.',
  })
  dealCoSellEligibility(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.deals.coSellEligibility(id);
  }

  @Extensions({ rest: false })
  @FieldResolver(() => [DealStageChange], { description: 'Every stage change, oldest first (GraphQL only).', complexity: 5 })
  history(@Root() deal: Deal, @Ctx() ctx: RequestContext) {
    return ctx.services.deals.history(deal);
  }
}

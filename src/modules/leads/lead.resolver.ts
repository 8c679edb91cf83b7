import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import { DeletedObject } from '../../common/deleted';
import type { RequestContext } from '../../graphql/context';
import { listComplexity, MUTATION_COST } from '../../graphql/checks/cost-limit';
import { OperationLimited } from '../../limits/operation-limit';
import { Lead } from './lead.entity';
import { LeadCreateInput, LeadListInput, LeadUpdateInput } from './lead.inputs';
import { LeadList, LeadScore } from './lead.types';

@Resolver(() => Lead)
export class LeadResolver {
  @RequiresPermission('leads:read')
  @Query(() => LeadList, {
    description: "Leads of the key's account and mode, newest first by default.",
    complexity: listComplexity,
  })
  leads(@Arg('filter', () => LeadListInput, { nullable: true }) filter: LeadListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.leads.list(filter);
  }

  @RequiresPermission('leads:read')
  @Query(() => Lead)
  lead(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.leads.read(id);
  }

  @RequiresPermission('leads:read')
  @Query(() => LeadScore, { description: "The lead's score and the signals that explain it." })
  @OperationLimited('leadScore', { windowS: 60, max: 60 })
  leadScore(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.leads.score(id);
  }

  @RequiresPermission('leads:write')
  @Mutation(() => Lead, { complexity: MUTATION_COST })
  createLead(@Arg('input', () => LeadCreateInput) input: LeadCreateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.leads.create(input);
  }

  @RequiresPermission('leads:write')
  @Mutation(() => Lead, { complexity: MUTATION_COST })
  updateLead(@Arg('id', () => ID) id: string, @Arg('input', () => LeadUpdateInput) input: LeadUpdateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.leads.update(id, input);
  }

  @RequiresPermission('leads:write')
  @Mutation(() => DeletedObject, { complexity: MUTATION_COST })
  async deleteLead(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return new DeletedObject(await ctx.services.leads.delete(id), 'lead');
  }
}

import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { DeletedObject } from '../../common/deleted';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../common/pagination';
import type { RequestContext } from '../../graphql/context';
import { OperationLimited } from '../../limits/operation-limit';
import { Lead } from './lead.entity';
import { LeadCreateInput, LeadListInput, LeadUpdateInput } from './lead.inputs';
import { LeadList, LeadScore } from './lead.types';

/** Rows a list asks for, as the cost estimate counts them (a limit over the maximum is refused by validation). */
const pageSize = (filter?: { limit?: number | null }): number => Math.min(filter?.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);

/** Mutations write; each costs more than a read of a field (see graphql/plugins/cost-limit.ts). */
const MUTATION_COST = 10;

@Resolver(() => Lead)
export class LeadResolver {
  @Query(() => LeadList, {
    description: 'Leads of the key\'s account and mode, newest first by default.',
    complexity: ({ args, childComplexity }) => 1 + pageSize(args.filter as LeadListInput | undefined) * childComplexity,
  })
  leads(@Arg('filter', () => LeadListInput, { nullable: true }) filter: LeadListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.leads.list(filter);
  }

  @Query(() => Lead)
  lead(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.leads.get(id);
  }

  @Query(() => LeadScore, { description: 'The lead\'s score and the signals that explain it.' })
  @OperationLimited('leadScore')
  leadScore(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.leads.score(id);
  }

  @Mutation(() => Lead, { complexity: MUTATION_COST })
  createLead(@Arg('input', () => LeadCreateInput) input: LeadCreateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.leads.create(input);
  }

  @Mutation(() => Lead, { complexity: MUTATION_COST })
  updateLead(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => LeadUpdateInput) input: LeadUpdateInput,
    @Ctx() ctx: RequestContext,
  ) {
    return ctx.services.leads.update(id, input);
  }

  @Mutation(() => DeletedObject, { complexity: MUTATION_COST })
  async deleteLead(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return new DeletedObject(await ctx.services.leads.delete(id), 'lead');
  }
}

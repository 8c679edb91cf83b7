import { Arg, Ctx, Extensions, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import { FileDownload } from '../../common/file-download';
import type { RequestContext } from '../../graphql/context';
import { listComplexity, MUTATION_COST } from '../../graphql/checks/cost-limit';
import { OperationLimited } from '../../limits/operation-limit';
import { Deal } from '../deals/deal.entity';
import { Proposal } from './proposal.entity';
import { ProposalCreateInput, ProposalListInput } from './proposal.inputs';
import { ProposalList } from './proposal.types';

/**
 * A PDF may cost a render (hundreds of milliseconds of a worker thread) and a few hundred kB of
 * base64, against microseconds for a field. Priced so only a handful fit one document (four under a
 * cost limit of 10,000): aliases cannot turn one request into a storm of renders.
 */
const PDF_COST = 2000;

@Resolver(() => Proposal)
export class ProposalResolver {
  @RequiresPermission('proposals:read')
  @Query(() => ProposalList, { description: "Proposals of the key's account and mode, newest first.", complexity: listComplexity })
  proposals(@Arg('filter', () => ProposalListInput, { nullable: true }) filter: ProposalListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.proposals.list(filter);
  }

  @RequiresPermission('proposals:read')
  @Query(() => Proposal)
  proposal(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.proposals.get(id);
  }

  @RequiresPermission('proposals:read')
  @Query(() => FileDownload, { description: 'The proposal as a PDF (base64 here; GET /v1/proposals/{id}/pdf sends the bytes).', complexity: PDF_COST })
  @OperationLimited('proposalPdf', { windowS: 60, max: 120 })
  proposalPdf(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.proposals.pdf(id);
  }

  @RequiresPermission('proposals:write')
  @Mutation(() => Proposal, { complexity: MUTATION_COST, description: 'Generates a numbered proposal from a deal, frozen as the deal is now.' })
  @OperationLimited('generateProposal', { windowS: 60, max: 20 })
  createProposal(@Arg('input', () => ProposalCreateInput) input: ProposalCreateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.proposals.create(input);
  }
}

/** A deal's proposals, for dashboards (GraphQL only). */
@Resolver(() => Deal)
export class DealProposalsResolver {
  @Extensions({ rest: false })
  @RequiresPermission('proposals:read')
  @FieldResolver(() => ProposalList, { description: 'Proposals generated from this deal, newest first (GraphQL only).', complexity: listComplexity })
  proposals(@Root() deal: Deal, @Arg('filter', () => ProposalListInput, { nullable: true }) filter: ProposalListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.proposals.forDeal(deal, filter);
  }
}

import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import type { RequestContext } from '../../graphql/context';
import { listComplexity, MUTATION_COST } from '../../graphql/checks/cost-limit';
import { OperationLimited } from '../../limits/operation-limit';
import { AgentSuggestion } from './agent-suggestion.entity';
import { SuggestionApproveInput, SuggestionListInput } from './suggestion.inputs';
import { AgentSuggestionList } from './agent.types';

@Resolver(() => AgentSuggestion)
export class SuggestionResolver {
  @RequiresPermission('agents:read')
  @Query(() => AgentSuggestionList, { description: "An agent's suggestions, newest first, by status.", complexity: listComplexity })
  async agentSuggestions(
    @Arg('id', () => ID) id: string,
    @Arg('filter', () => SuggestionListInput, { nullable: true }) filter: SuggestionListInput | undefined,
    @Ctx() ctx: RequestContext,
  ) {
    return ctx.services.suggestions.list(await ctx.services.agents.get(id), filter);
  }

  @RequiresPermission('agents:read')
  @Query(() => AgentSuggestion)
  suggestion(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.suggestions.get(id);
  }

  @RequiresPermission('agents:write')
  @Mutation(() => AgentSuggestion, {
    complexity: MUTATION_COST,
    description:
      'Approves a pending suggestion, with optional edits, and performs it (an e-mail becomes an Outlook draft when a Microsoft 365 mailbox is connected); a decided or expired one is 409.',
  })
  @OperationLimited('approveSuggestion', { windowS: 60, max: 120 })
  approveSuggestion(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => SuggestionApproveInput, { nullable: true }) input: SuggestionApproveInput | undefined,
    @Ctx() ctx: RequestContext,
  ) {
    return ctx.services.suggestions.approve(id, input);
  }

  @RequiresPermission('agents:write')
  @Mutation(() => AgentSuggestion, {
    complexity: MUTATION_COST,
    description: 'Rejects a pending suggestion: nothing is done with it; a decided or expired one is 409.',
  })
  @OperationLimited('rejectSuggestion', { windowS: 60, max: 120 })
  rejectSuggestion(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.suggestions.reject(id);
  }
}

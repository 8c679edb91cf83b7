import { Arg, Ctx, Extensions, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import { DeletedObject } from '../../common/deleted';
import type { RequestContext } from '../../graphql/context';
import { listComplexity, MUTATION_COST, windowComplexity } from '../../graphql/checks/cost-limit';
import { OperationLimited } from '../../limits/operation-limit';
import { Agent } from './agent.entity';
import { AgentCreateInput, AgentDeployInput, AgentListInput, AgentMetricsInput, AgentRunListInput, AgentUpdateInput } from './agent.inputs';
import { AgentList, AgentMetrics, AgentRunList } from './agent.types';
import { AgentSimulateInput, AgentSimulation } from './agent-simulation.types';

@Resolver(() => Agent)
export class AgentResolver {
  @RequiresPermission('agents:read')
  @Query(() => AgentList, { description: "Agents of the key's account and mode, newest first.", complexity: listComplexity })
  agents(@Arg('filter', () => AgentListInput, { nullable: true }) filter: AgentListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.agents.list(filter);
  }

  @RequiresPermission('agents:read')
  @Query(() => Agent)
  agent(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.agents.get(id);
  }

  @RequiresPermission('agents:read')
  @Query(() => AgentMetrics, { description: 'Runs, actions, errors, latency and outcomes over 24h, 7d or 30d.', complexity: windowComplexity })
  agentMetrics(
    @Arg('id', () => ID) id: string,
    @Arg('filter', () => AgentMetricsInput, { nullable: true }) filter: AgentMetricsInput | undefined,
    @Ctx() ctx: RequestContext,
  ) {
    return ctx.services.agents.metrics(id, filter?.window);
  }

  @RequiresPermission('agents:write')
  @Mutation(() => Agent, { complexity: MUTATION_COST, description: 'Creates an agent in draft; its config is checked against its type.' })
  createAgent(@Arg('input', () => AgentCreateInput) input: AgentCreateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.agents.create(input);
  }

  @RequiresPermission('agents:write')
  @Mutation(() => Agent, { complexity: MUTATION_COST, description: 'Changes the name or working config (GraphQL only; deploy again to run the change).' })
  updateAgent(@Arg('id', () => ID) id: string, @Arg('input', () => AgentUpdateInput) input: AgentUpdateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.agents.update(id, input);
  }

  @RequiresPermission('agents:write')
  @Mutation(() => Agent, {
    complexity: MUTATION_COST,
    description: "Deploys the config (or an earlier version's, with version) as a new version; 422 agent_config_invalid when it does not hold.",
  })
  @OperationLimited('deployAgent', { windowS: 60, max: 10 })
  deployAgent(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => AgentDeployInput, { nullable: true }) input: AgentDeployInput | undefined,
    @Ctx() ctx: RequestContext,
  ) {
    return ctx.services.agents.deploy(id, input);
  }

  @RequiresPermission('agents:write')
  @Mutation(() => Agent, {
    complexity: MUTATION_COST,
    description: 'Pauses a deployed agent: it acts on nothing until resumed (a paused agent is answered as it is; a draft is 409).',
  })
  @OperationLimited('pauseAgent', { windowS: 60, max: 30 })
  pauseAgent(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.agents.pause(id);
  }

  @RequiresPermission('agents:write')
  @Mutation(() => Agent, {
    complexity: MUTATION_COST,
    description: 'Resumes a paused agent with its deployed version (a deployed agent is answered as it is; a draft is 409).',
  })
  @OperationLimited('resumeAgent', { windowS: 60, max: 30 })
  resumeAgent(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.agents.resume(id);
  }

  // agents:write although nothing is written: it spends the account's model calls and briefly locks the rows it replays over, as a deploy would.
  @RequiresPermission('agents:write')
  @Mutation(() => AgentSimulation, {
    complexity: windowComplexity,
    description:
      "Replays the window's recorded events against a config (the working config when none is given) and answers what the agent would have done; nothing is written, sent or recorded.",
  })
  @OperationLimited('simulateAgent', { windowS: 60, max: 10 })
  simulateAgent(@Arg('id', () => ID) id: string, @Arg('input', () => AgentSimulateInput) input: AgentSimulateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.agentSimulations.simulate(id, input);
  }

  @RequiresPermission('agents:write')
  @Mutation(() => DeletedObject, {
    complexity: MUTATION_COST,
    description: 'Deletes a draft agent with its runs; a deployed agent is kept (409 resource_conflict).',
  })
  async deleteAgent(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return new DeletedObject(await ctx.services.agents.delete(id), 'agent');
  }

  @Extensions({ rest: false })
  @FieldResolver(() => AgentRunList, { description: 'Recorded runs, newest first (GraphQL only).', complexity: listComplexity })
  runs(@Root() agent: Agent, @Arg('filter', () => AgentRunListInput, { nullable: true }) filter: AgentRunListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.agents.runs(agent, filter);
  }
}

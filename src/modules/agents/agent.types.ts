import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { Agent, AgentRun } from './agent.entity';
import { AgentSuggestion } from './agent-suggestion.entity';

@ObjectType({ simpleResolvers: true })
export class AgentList extends ListPage(Agent) {}

@ObjectType({ simpleResolvers: true })
export class AgentRunList extends ListPage(AgentRun) {}

@ObjectType({ simpleResolvers: true })
export class AgentSuggestionList extends ListPage(AgentSuggestion) {}

@ObjectType({ simpleResolvers: true, description: "What the agent did in the window, counted from its recorded runs and the pipeline's outcomes." })
export class AgentOutcomes {
  @Field(() => Int)
  leadsQualified!: number;

  @Field(() => Int)
  leadsDisqualified!: number;

  @Field(() => Int)
  dealsOpened!: number;

  @Field(() => Int)
  proposalsDrafted!: number;

  @Field(() => Int)
  idleDealsFlagged!: number;

  @Field(() => Int, { description: 'Leads this agent qualified in the window that have a won deal now.' })
  qualifiedLeadsWon!: number;

  @Field(() => Int, { description: 'Suggestions the agent made in the window (writer agents), whatever became of them.' })
  suggestionsMade!: number;

  @Field(() => Int, { description: 'Leads a lead_router gave an owner in the window.' })
  leadsRouted!: number;

  @Field(() => GraphQLJSONObject, { description: 'Leads a lead_router gave an owner in the window, by member (usr_…).' })
  leadsRoutedByMember!: Record<string, number>;
}

@ObjectType({ simpleResolvers: true, description: "The model's use by the runs of the window, from each run's recorded usage." })
export class AgentModelUsageFigures {
  @Field(() => Int, { description: 'Completions asked for, answered or not.' })
  calls!: number;

  @Field(() => Int, { description: 'Completions that gave nothing usable (the template wrote instead).' })
  failures!: number;

  @Field(() => Int)
  promptTokens!: number;

  @Field(() => Int)
  completionTokens!: number;

  @Field(() => Int, { description: 'Prompt and completion tokens together, as the daily_token_budget counts them.' })
  totalTokens!: number;
}

@ObjectType({ simpleResolvers: true, description: "One model's share of the window's usage." })
export class AgentModelUsageByModel extends AgentModelUsageFigures {
  @Field(() => String, { nullable: true, description: 'The model that answered; null for runs whose every call failed before a model answered.' })
  model!: string | null;

  @Field(() => Int, { description: 'Runs that asked this model.' })
  runs!: number;
}

@ObjectType({ simpleResolvers: true, description: "The model's use by the runs of the window, in all and by model." })
export class AgentModelUsage extends AgentModelUsageFigures {
  @Field(() => [AgentModelUsageByModel], { description: 'By the model that answered, by name (null last).' })
  byModel!: AgentModelUsageByModel[];
}

@ObjectType({
  simpleResolvers: true,
  description: 'What became of the suggestions made in the window, as of now: a pending one past its expires_at counts as expired.',
})
export class AgentSuggestionFigures {
  @Field(() => Int)
  pending!: number;

  @Field(() => Int, { description: 'Approved by a person or automatically (act_without_approval).' })
  approved!: number;

  @Field(() => Int, { description: 'Of the approved, those approved automatically.' })
  approvedAutomatically!: number;

  @Field(() => Int)
  rejected!: number;

  @Field(() => Int)
  expired!: number;

  @Field(() => Float, { nullable: true, description: 'approved / (approved + rejected + expired), 0–1; null while none is decided.' })
  approvalRate!: number | null;

  @Field(() => Float, {
    nullable: true,
    description: 'Median time from made to approved by a person, in whole milliseconds (a Float: it may pass 32 bits); null when none.',
  })
  p50TimeToApprovalMs!: number | null;

  @Field(() => Float, { nullable: true, description: '95th percentile of the time from made to approved by a person, in whole milliseconds; null when none.' })
  p95TimeToApprovalMs!: number | null;
}

@ObjectType({ simpleResolvers: true, description: "An agent's performance over a window (CONTRACT §8)." })
export class AgentMetrics {
  @Field({ description: 'Always "agent_metrics".' })
  object!: string;

  @Field(() => ID)
  agentId!: string;

  @Field({ description: '24h, 7d or 30d.' })
  window!: string;

  @Field()
  from!: Date;

  @Field()
  to!: Date;

  @Field(() => Int)
  runs!: number;

  @Field(() => Int)
  errors!: number;

  @Field(() => Float, { nullable: true, description: 'Share of runs that ended without error, 0–1; null without runs.' })
  successRate!: number | null;

  @Field(() => GraphQLJSONObject, { description: 'Actions taken, by kind.' })
  actionsByKind!: Record<string, number>;

  @Field(() => Int, { nullable: true, description: 'Median run time in milliseconds.' })
  p50LatencyMs!: number | null;

  @Field(() => Int, { nullable: true })
  p95LatencyMs!: number | null;

  @Field(() => Date, { nullable: true, description: 'The latest run, at any time.' })
  lastRunAt!: Date | null;

  @Field(() => AgentOutcomes)
  outcomes!: AgentOutcomes;

  @Field(() => AgentModelUsage)
  modelUsage!: AgentModelUsage;

  @Field(() => AgentSuggestionFigures)
  suggestions!: AgentSuggestionFigures;
}

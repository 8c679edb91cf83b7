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
}

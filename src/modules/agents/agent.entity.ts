import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Ref, Unique } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';
import { Event } from '../../events/event.entity';
import { AgentType } from './agent-config';

registerEnumType(AgentType, {
  name: 'AgentType',
  description:
    'lead_qualifier, deal_follow_up or proposal_drafter (CONTRACT §8); follow_up_writer or lead_researcher (writers: suggestions to approve); lead_router (gives new leads an owner).',
});

export enum AgentStatus {
  draft = 'draft',
  deployed = 'deployed',
  /** Deployed, then paused: keeps its version and history, acts on nothing until resumed. */
  paused = 'paused',
}
registerEnumType(AgentStatus, { name: 'AgentStatus', description: 'draft until deployed; only deployed agents act; a paused agent waits to be resumed.' });

export enum RunOutcome {
  acted = 'acted',
  no_action = 'no_action',
  error = 'error',
}
registerEnumType(RunOutcome, { name: 'AgentRunOutcome' });

export enum RunTrigger {
  event = 'event',
  schedule = 'schedule',
}
registerEnumType(RunTrigger, { name: 'AgentRunTrigger' });

/** An AI sales agent of one account and mode. `config` is the working copy; deploying freezes it as a version. */
/** A run's use of the model, recorded on the run (`AgentRun.usage`). */
export interface RunUsage {
  model: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  /** Completions asked for, answered or not. */
  calls: number;
  /** Completions that gave nothing usable (the template wrote instead). */
  failures: number;
}

@ObjectType({ simpleResolvers: true, description: 'An agent that works the pipeline: qualifies leads, follows up idle deals or drafts proposals.' })
@Entity({ tableName: 'agents' })
@Index({ name: 'agents_list', properties: ['account', 'livemode', 'createdAt', 'id'] })
export class Agent extends TenantEntity<'object' | 'status' | 'version' | 'deployedAt'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('agent');

  @Field({ description: 'Always "agent".' })
  get object(): 'agent' {
    return 'agent';
  }

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field(() => AgentType)
  @Enum({ items: () => AgentType })
  type!: AgentType;

  @Field(() => AgentStatus)
  @Enum({ items: () => AgentStatus })
  status: AgentStatus = AgentStatus.draft;

  @Field(() => GraphQLJSONObject, { description: 'Settings of its type (snake_case), defaults filled in. Deploying freezes them as a version.' })
  @Property({ type: 'json' })
  config!: Record<string, unknown>;

  @Field(() => Int, { description: 'The deployed version (1, 2, …); 0 before the first deploy.' })
  @Property({ type: 'integer' })
  version: number = 0;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', length: 3, nullable: true })
  deployedAt?: Date | null;
}

/** A deployed config, frozen: runs name the version they ran with. */
@Entity({ tableName: 'agent_versions' })
export class AgentVersion {
  @ManyToOne(() => Agent, { primary: true, deleteRule: 'cascade', ref: true })
  agent!: Ref<Agent>;

  @PrimaryKey({ type: 'integer' })
  version!: number;

  @Property({ type: 'json' })
  config!: Record<string, unknown>;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();
}

/** One action an agent took, e.g. {kind: "lead_qualified", object_id: "lead_…"}. */
export interface AgentAction {
  kind: 'lead_qualified' | 'lead_disqualified' | 'deal_opened' | 'proposal_drafted' | 'deal_idle' | 'follow_up_email' | 'lead_brief' | 'lead_routed';
  object_id: string;
  [detail: string]: unknown;
}

/** One run of an agent: what started it, what it did, how it ended and how long it took. */
@ObjectType({ simpleResolvers: true, description: 'One run of an agent.' })
@Entity({ tableName: 'agent_runs' })
@Index({ name: 'agent_runs_by_agent', properties: ['agent', 'createdAt', 'id'] })
export class AgentRun extends TenantEntity<'object' | 'error' | 'eventId' | 'eventType' | 'agentId' | 'usage'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('arun');

  @Field({ description: 'Always "agent_run".' })
  get object(): 'agent_run' {
    return 'agent_run';
  }

  @ManyToOne(() => Agent, { ref: true, deleteRule: 'cascade', index: false })
  agent!: Ref<Agent>;

  @Field(() => ID)
  get agentId(): string {
    return this.agent.id;
  }

  @Field(() => Int, { description: 'The agent version that ran.' })
  @Property({ type: 'integer' })
  version!: number;

  @Field(() => RunTrigger)
  @Enum({ items: () => RunTrigger })
  trigger!: RunTrigger;

  @Field(() => String, { nullable: true, description: 'The event that started it, for event runs.' })
  @Property({ type: 'text', nullable: true })
  eventId?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  eventType?: string | null;

  @Field(() => RunOutcome)
  @Enum({ items: () => RunOutcome })
  outcome!: RunOutcome;

  @Field(() => [GraphQLJSONObject], { description: 'What it did: {kind, object_id, …} each.' })
  @Property({ type: 'json' })
  actions!: AgentAction[];

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  error?: string | null;

  @Field(() => Int)
  @Property({ type: 'integer' })
  durationMs!: number;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'The model it used: {model, prompt_tokens, completion_tokens, calls, failures}; null when it asked the model nothing.',
  })
  @Property({ type: 'json', nullable: true })
  usage?: RunUsage | null;
}

/**
 * Work owed to a deployed agent: an event to react to, or a scheduled scan. Claimed with FOR
 * UPDATE SKIP LOCKED and a lease, like webhook deliveries; finished in the same transaction as
 * the run it produced, so an action is taken once.
 */
@Entity({ tableName: 'agent_tasks' })
@Index({ name: 'agent_tasks_due', expression: 'create index "agent_tasks_due" on "agent_tasks" ("next_attempt_at") where "done_at" is null' })
@Unique({ name: 'agent_tasks_event_unique', properties: ['agent', 'event'] })
@Unique({ name: 'agent_tasks_slot_unique', properties: ['agent', 'scheduleSlot'] })
export class AgentTask extends TenantEntity<'doneAt' | 'attemptCount' | 'scheduleSlot' | 'event' | 'nextAttemptAt'> {
  @PrimaryKey({ type: 'text' })
  id: string = newId('atask');

  @ManyToOne(() => Agent, { ref: true, deleteRule: 'cascade', index: false })
  agent!: Ref<Agent>;

  @ManyToOne(() => Event, { ref: true, deleteRule: 'cascade', nullable: true, index: false })
  event?: Ref<Event> | null;

  /** The version deployed when the work arose: an event is judged by the rules in force when it happened. */
  @Property({ type: 'integer' })
  agentVersion!: number;

  /** For scheduled scans: which interval this is, so several instances create one task per interval. */
  @Property({ type: 'bigint', nullable: true })
  scheduleSlot?: string | null;

  @Property({ type: 'integer' })
  attemptCount: number = 0;

  @Property({ type: 'datetime', length: 3 })
  nextAttemptAt: Date = new Date();

  @Property({ type: 'datetime', length: 3, nullable: true })
  doneAt?: Date | null;
}

/** A deal the follow-up agent has raised for its current stage: raised once per stage entered. */
@Entity({ tableName: 'agent_follow_ups' })
export class AgentFollowUp {
  @ManyToOne(() => Agent, { primary: true, deleteRule: 'cascade', ref: true })
  agent!: Ref<Agent>;

  @PrimaryKey({ type: 'text' })
  dealId!: string;

  @PrimaryKey({ type: 'datetime', length: 3 })
  stageChangedAt!: Date;

  @Property({ type: 'datetime', length: 3 })
  createdAt: Date = new Date();
}

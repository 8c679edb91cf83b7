import { IsIn, IsObject, IsOptional } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { RefineSchema, SchemaRefinement, JsonSchema } from '../../common/json-schema';
import { AgentType, configSchema } from './agent-config';

export const SIMULATION_WINDOWS = ['7d', '30d'] as const;
export type SimulationWindow = (typeof SIMULATION_WINDOWS)[number];

/** The document lists the settings of each type for config, as on update and deploy. */
const configOfAnyType: SchemaRefinement = (schema) => {
  const properties = schema.properties as Record<string, JsonSchema>;
  const { type, additionalProperties, ...rest } = properties.config;
  void type;
  void additionalProperties;
  return { ...schema, properties: { ...properties, config: { ...rest, anyOf: [...Object.values(AgentType).map(configSchema), { type: 'null' }] } } };
};

@InputType({ description: "What to simulate: a config (the agent's working config when left out) over the last 7 or 30 days of events." })
@RefineSchema(configOfAnyType)
export class AgentSimulateInput {
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: "Settings of the agent's type, as on deploy (defaults fill what is left out); 422 agent_config_invalid when they do not hold.",
  })
  @IsOptional()
  @IsObject({ message: '$property must be a JSON object' })
  config?: Record<string, unknown> | null;

  @Field(() => String, { description: '7d or 30d: the events recorded in this window are replayed, oldest first.' })
  @IsIn(SIMULATION_WINDOWS, { message: '$property must be 7d or 30d' })
  window!: SimulationWindow;
}

@ObjectType({
  simpleResolvers: true,
  description:
    'What the agent would have done with a config over a window of recorded events, replayed against the pipeline as it is now; nothing of it was written.',
})
export class AgentSimulation {
  @Field({ description: 'Always "agent_simulation".' })
  object!: string;

  @Field(() => ID)
  agentId!: string;

  @Field(() => GraphQLJSONObject, { description: 'The config simulated, with defaults filled in.' })
  config!: Record<string, unknown>;

  @Field({ description: '7d or 30d.' })
  window!: string;

  @Field()
  from!: Date;

  @Field()
  to!: Date;

  @Field(() => Int, { description: "Events of the agent's triggers in the window that were replayed (at most 500, oldest first)." })
  eventsReplayed!: number;

  @Field({ description: 'Whether the window held more events than were replayed.' })
  truncated!: boolean;

  @Field(() => Int, { description: 'Scheduled scans replayed: one, at the end of the window, for types that scan (deal_follow_up, follow_up_writer).' })
  scans!: number;

  @Field(() => Int, { description: 'Replays that would have ended in an error (a run recorded with outcome error).' })
  errors!: number;

  @Field(() => Int, { description: 'Actions it would have taken.' })
  actionsTotal!: number;

  @Field(() => GraphQLJSONObject, { description: 'Actions it would have taken, by kind.' })
  actionsByKind!: Record<string, number>;

  @Field(() => [GraphQLJSONObject], {
    description:
      'The first actions (at most 10), as a run records them, with event_id and event_type; what a writer wrote is in `written`. Ids of what would have been created are left out: nothing was.',
  })
  sample!: Array<Record<string, unknown>>;

  @Field(() => [ID], { description: 'Existing leads the actions are about, in the order first named.' })
  leadsAffected!: string[];

  @Field(() => [ID], { description: 'Existing deals the actions are about, in the order first named.' })
  dealsAffected!: string[];

  @Field(() => Int, { description: "Completions asked of the account's model (at most 3; templates write the rest)." })
  modelCalls!: number;

  @Field(() => GraphQLJSONObject, { description: 'Pieces written, by what wrote them: {model, template}.' })
  generatedBy!: Record<string, number>;
}

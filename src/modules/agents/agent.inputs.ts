import { IsIn, IsInt, IsObject, IsOptional, Length, Matches, Min } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType, Int } from 'type-graphql';
import { PageInput } from '../../common/page.input';
import { NOT_BLANK, rules } from '../../common/validation';
import { JsonSchema, RefineSchema, SchemaRefinement } from '../../common/json-schema';
import { AgentType, configSchema } from './agent-config';
import { AgentStatus } from './agent.entity';

export const METRIC_WINDOWS = ['24h', '7d', '30d'] as const;
export type MetricWindow = (typeof METRIC_WINDOWS)[number];

const CONFIG_HELP =
  'Settings of the type, snake_case. lead_qualifier: qualify_at (0–100, default 70), disqualify_below (default 20), ' +
  'open_deal (default false), deal_stage (prospecting | qualification), deal_value (default 0); deal_follow_up: ' +
  'idle_days ({stage: days}, defaults prospecting 14, qualification 14, proposal 7, negotiation 7), deliver_to (none | outlook_draft | ' +
  'todo_task, default none: a follow-up also becomes an Outlook draft or a To Do task in the Microsoft 365 mailbox); proposal_drafter: ' +
  'valid_days (default 30), discount_percent, tax_percent (default 0), notes, cover_note (default false: a written cover note heads the notes); ' +
  'follow_up_writer: idle_days (as deal_follow_up), on_lead_qualified (default true); writers (follow_up_writer, lead_researcher): ' +
  'suggestion_ttl_days (1–90, default 7), act_without_approval (kinds approved without a person: follow_up_email or lead_brief, default none); ' +
  'agents that write (writers, proposal_drafter): daily_token_budget (tokens a UTC day, default 50000), instructions (your guidance to the model); ' +
  'lead_router: rules ([{country?, industry?, source?, min_employees?, max_employees?, owner_id}], the first match assigns), round_robin ' +
  '(member ids taking turns with the rest), fallback_owner_id (or null).';

/** The agent's config, on create, update and deploy alike. An input type only so that it is inherited; not in the schema. */
@InputType()
abstract class AgentConfigField {
  @Field(() => GraphQLJSONObject, { nullable: true, description: CONFIG_HELP })
  @IsOptional()
  @IsObject({ message: '$property must be a JSON object' })
  config?: Record<string, unknown> | null;
}

const TYPES = Object.values(AgentType);
const withConfig = (schema: JsonSchema, config: JsonSchema[]): JsonSchema => {
  const { type, additionalProperties, ...rest } = (schema.properties as Record<string, JsonSchema>).config;
  void type;
  void additionalProperties;
  return { ...rest, anyOf: [...config, { type: 'null' }] };
};
/** On create, the type says which settings config takes (a branch per type). */
const configByType: SchemaRefinement = (schema) => ({
  ...schema,
  oneOf: TYPES.map((type) => ({ title: type, properties: { type: { const: type }, config: withConfig(schema, [configSchema(type)]) } })),
});
/**
 * Later, the agent's type decides; the document lists the settings of each. Which of them fits is
 * decided by the stored agent's type, which no schema of the body can see: another type's keys are
 * 422 agent_config_invalid.
 */
const configOfAnyType: SchemaRefinement = (schema) => ({
  ...schema,
  properties: { ...(schema.properties as object), config: withConfig(schema, TYPES.map(configSchema)) },
});
/** A deploy gives a config or an earlier version, not both (null is leaving one out). */
const configOrVersion: SchemaRefinement = (schema, resolve) => ({
  ...configOfAnyType(schema, resolve),
  not: { required: ['config', 'version'], properties: { config: { type: 'object' }, version: { type: 'integer' } } },
});

const AGENT_NAME = () =>
  rules(Length(1, 200, { message: '$property must be 1 to 200 characters' }), Matches(NOT_BLANK, { message: '$property must not be blank' }));

@InputType({ description: 'A new agent, in draft until deployed.' })
@RefineSchema(configByType)
export class AgentCreateInput extends AgentConfigField {
  @Field()
  @AGENT_NAME()
  name!: string;

  @Field(() => AgentType)
  type!: AgentType;
}

@InputType({
  description:
    'Changes the name or the working copy of the config (replaced whole: defaults fill what is left out); a deployed agent keeps running its deployed version until deployed again.',
})
@RefineSchema(configOfAnyType)
export class AgentUpdateInput extends AgentConfigField {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @AGENT_NAME()
  name?: string | null;
}

@InputType({
  description:
    "Deploys the working config as a new version; a config given here replaces it first. `version` deploys an earlier version's config again instead (a rollback), as a new version.",
})
@RefineSchema(configOrVersion)
export class AgentDeployInput extends AgentConfigField {
  @Field(() => Int, { nullable: true, description: 'An earlier deployed version (1, 2, …) whose config to deploy again; not with config.' })
  @IsOptional()
  @IsInt({ message: '$property must be an integer' })
  @Min(1, { message: '$property must be at least 1' })
  version?: number | null;
}

@InputType({ description: 'Pagination and filters for listing agents, newest first.' })
export class AgentListInput extends PageInput {
  @Field(() => AgentStatus, { nullable: true })
  @IsOptional()
  status?: AgentStatus;

  @Field(() => AgentType, { nullable: true })
  @IsOptional()
  type?: AgentType;
}

@InputType()
export class AgentMetricsInput {
  @Field(() => String, { nullable: true, description: '24h, 7d or 30d (default 7d).' })
  @IsOptional()
  @IsIn(METRIC_WINDOWS, { message: '$property must be 24h, 7d or 30d' })
  window?: MetricWindow;
}

@InputType({ description: "Pagination for an agent's runs, newest first." })
export class AgentRunListInput extends PageInput {}

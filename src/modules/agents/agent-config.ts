import type { JsonSchema } from '../../common/json-schema';
import { DealStage, OPEN_STAGES } from '../deals/deal-stage';
import { MAX_VALUE } from '../deals/money';

/** The kinds of agent: CONTRACT §8's three rule-based ones, and the writers (suggestions for people to approve). */
export enum AgentType {
  lead_qualifier = 'lead_qualifier',
  deal_follow_up = 'deal_follow_up',
  proposal_drafter = 'proposal_drafter',
  follow_up_writer = 'follow_up_writer',
  lead_researcher = 'lead_researcher',
  lead_router = 'lead_router',
}

/** What writers propose (agent-suggestion.entity.ts SuggestionKind), by the writer that proposes it. */
export const SUGGESTION_KINDS = { follow_up_writer: ['follow_up_email'], lead_researcher: ['lead_brief'] } as const;

export interface LeadQualifierConfig {
  /** Leads scoring at least this become qualified. */
  qualify_at: number;
  /** Leads scoring below this become disqualified; in between they are left alone. */
  disqualify_below: number;
  /** Whether a qualified lead without a deal gets one. */
  open_deal: boolean;
  deal_stage: DealStage;
  deal_value: number;
}

/**
 * Where a deal_follow_up agent's follow-ups go besides its `agent.action` event: nowhere else
 * (`none`), or into the mailbox of the account's Microsoft 365 integration in the same mode, as an
 * Outlook draft to the deal's contact or a Microsoft To Do task (src/modules/integrations/sync/action-fan-out.ts).
 */
export const DELIVER_TO = ['none', 'outlook_draft', 'todo_task'] as const;
export type DeliverTo = (typeof DELIVER_TO)[number];

export interface DealFollowUpConfig {
  /** Days a deal may sit in each open stage before the agent raises it. */
  idle_days: Record<string, number>;
  deliver_to: DeliverTo;
}

/** What every agent that calls the account's model takes. */
export interface ModelConfig {
  /** Tokens (prompt and completion) the agent may spend per UTC day; past it, the built-in template writes. */
  daily_token_budget: number;
  /** The account's own guidance added to the model's instructions (tone, signature, offer); null for none. */
  instructions: string | null;
}

export interface ProposalDrafterConfig extends ModelConfig {
  valid_days: number;
  discount_percent: number;
  tax_percent: number;
  notes: string | null;
  /** Whether the drafted proposal gets a written cover note (its notes: the cover note, then `notes`). */
  cover_note: boolean;
}

/** What writers share: how long a suggestion waits for a person, and the kinds they may act on without one. */
export interface WriterConfig extends ModelConfig {
  suggestion_ttl_days: number;
  act_without_approval: string[];
}

export interface FollowUpWriterConfig extends WriterConfig {
  /** Days a deal may sit in each open stage before an e-mail is drafted (as deal_follow_up's). */
  idle_days: Record<string, number>;
  /** Whether a lead that has just become qualified gets an e-mail drafted. */
  on_lead_qualified: boolean;
}

export type LeadResearcherConfig = WriterConfig;

/** A lead_router rule: the lead matches when every criterion given matches (none given: every lead). */
export interface RoutingRule {
  /** ISO country codes, any case. */
  country?: string[];
  industry?: string[];
  source?: string[];
  min_employees?: number;
  max_employees?: number;
  /** The member (usr_…) who gets the leads it matches. */
  owner_id: string;
}

export interface LeadRouterConfig {
  /** Tried in order; the first that matches (and whose owner is an active member) assigns the lead. */
  rules: RoutingRule[];
  /** Members (usr_…) who take turns with the leads no rule matched. */
  round_robin: string[];
  /** Who gets a lead nothing else assigned; null leaves it without an owner. */
  fallback_owner_id: string | null;
}

export type AgentConfig = LeadQualifierConfig | DealFollowUpConfig | ProposalDrafterConfig | FollowUpWriterConfig | LeadResearcherConfig | LeadRouterConfig;

export interface ConfigProblem {
  /** The key inside `config`, e.g. `qualify_at` or `idle_days.proposal`. */
  field: string;
  message: string;
}

export const DEFAULT_CONFIG: Record<AgentType, AgentConfig> = {
  lead_qualifier: { qualify_at: 70, disqualify_below: 20, open_deal: false, deal_stage: DealStage.qualification, deal_value: 0 },
  deal_follow_up: { idle_days: { prospecting: 14, qualification: 14, proposal: 7, negotiation: 7 }, deliver_to: 'none' },
  proposal_drafter: { valid_days: 30, discount_percent: 0, tax_percent: 0, notes: null, cover_note: false, daily_token_budget: 50_000, instructions: null },
  follow_up_writer: {
    idle_days: { prospecting: 14, qualification: 14, proposal: 7, negotiation: 7 },
    on_lead_qualified: true,
    suggestion_ttl_days: 7,
    act_without_approval: [],
    daily_token_budget: 50_000,
    instructions: null,
  },
  lead_researcher: { suggestion_ttl_days: 7, act_without_approval: [], daily_token_budget: 50_000, instructions: null },
  lead_router: { rules: [], round_robin: [], fallback_owner_id: null },
};

type Check = (value: unknown) => string | null;

/** One setting: its check and, from the same bounds, its JSON Schema (the OpenAPI document's config, per agent type). */
interface Setting {
  check: Check;
  schema: JsonSchema;
}

const integer = (min: number, max: number): Setting => ({
  check: (value) => (Number.isInteger(value) && (value as number) >= min && (value as number) <= max ? null : `must be a whole number from ${min} to ${max}`),
  schema: { type: 'integer', minimum: min, maximum: max },
});
const percent: Setting = {
  check: (value) =>
    typeof value === 'number' && value >= 0 && value <= 100 && /^\d+(\.\d{1,3})?$/.test(String(value))
      ? null
      : 'must be a percentage from 0 to 100 with at most 3 decimals',
  schema: { type: 'number', minimum: 0, maximum: 100, multipleOf: 0.001 },
};
const boolean: Setting = { check: (value) => (typeof value === 'boolean' ? null : 'must be true or false'), schema: { type: 'boolean' } };
const amount: Setting = {
  check: (value) =>
    typeof value === 'number' && value >= 0 && value <= MAX_VALUE && /^\d+(\.\d{1,2})?$/.test(String(value))
      ? null
      : 'must be an amount of 0 or more with at most 2 decimals',
  schema: { type: 'number', minimum: 0, maximum: MAX_VALUE, multipleOf: 0.01 },
};
const oneOf = (options: readonly string[]): Setting => ({
  check: (value) => (typeof value === 'string' && options.includes(value) ? null : `must be one of ${options.join(', ')}`),
  schema: { type: 'string', enum: options },
});
const text = (max: number): Setting => ({
  check: (value) => (value === null || (typeof value === 'string' && value.length <= max) ? null : `must be text of at most ${max} characters, or null`),
  schema: { type: ['string', 'null'], maxLength: max },
});
const someOf = (options: readonly string[]): Setting => ({
  check: (value) =>
    Array.isArray(value) && value.every((item) => typeof item === 'string' && options.includes(item)) && new Set(value).size === value.length
      ? null
      : `must be a list of distinct values from ${options.join(', ')}`,
  schema: { type: 'array', items: { type: 'string', enum: options }, uniqueItems: true },
});
const IDLE_DAYS = integer(1, 365);
const idleDays: Setting = {
  check: (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object of open stage to days';
    for (const [stage, days] of Object.entries(value)) {
      if (!(OPEN_STAGES as string[]).includes(stage)) return `has ${stage}, which is not an open stage (${OPEN_STAGES.join(', ')})`;
      if (IDLE_DAYS.check(days)) return `.${stage} must be a whole number of days from 1 to 365`;
    }
    return null;
  },
  schema: { type: 'object', properties: Object.fromEntries(OPEN_STAGES.map((stage) => [stage, IDLE_DAYS.schema])), additionalProperties: false },
};

const MEMBER_ID = /^usr_[0-9A-HJKMNP-TV-Z]{26}$/;
const memberIdSchema: JsonSchema = { type: 'string', pattern: MEMBER_ID.source };
const isMemberId = (value: unknown) => typeof value === 'string' && MEMBER_ID.test(value);
const words = (max: number): JsonSchema => ({ type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, minItems: 1, maxItems: max });
const isWords = (value: unknown, max: number) =>
  Array.isArray(value) && value.length >= 1 && value.length <= max && value.every((item) => typeof item === 'string' && item.length >= 1 && item.length <= 100);
const RULE_FIELDS: Record<string, (value: unknown) => boolean> = {
  country: (value) => isWords(value, 50),
  industry: (value) => isWords(value, 50),
  source: (value) => isWords(value, 50),
  min_employees: (value) => Number.isInteger(value) && (value as number) >= 0,
  max_employees: (value) => Number.isInteger(value) && (value as number) >= 0,
  owner_id: isMemberId,
};
const routingRules: Setting = {
  check: (value) => {
    if (!Array.isArray(value) || value.length > 50) return 'must be a list of at most 50 rules';
    for (const [i, rule] of value.entries()) {
      if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) return `[${i}] must be an object`;
      if (!isMemberId((rule as Record<string, unknown>).owner_id)) return `[${i}].owner_id must be a member id (usr_…)`;
      for (const [name, given] of Object.entries(rule)) {
        const check = RULE_FIELDS[name];
        if (!check) return `[${i}] has ${name}, which is not a rule's criterion (${Object.keys(RULE_FIELDS).join(', ')})`;
        if (!check(given))
          return `[${i}].${name} is not valid: ${name.endsWith('employees') ? 'a whole number of 0 or more' : name === 'owner_id' ? 'a member id' : 'a list of 1 to 50 texts'}`;
      }
      const { min_employees: min, max_employees: max } = rule as RoutingRule;
      if (min !== undefined && max !== undefined && min > max) return `[${i}].min_employees must not be above max_employees`;
    }
    return null;
  },
  schema: {
    type: 'array',
    maxItems: 50,
    items: {
      type: 'object',
      required: ['owner_id'],
      additionalProperties: false,
      properties: {
        country: words(50),
        industry: words(50),
        source: words(50),
        min_employees: { type: 'integer', minimum: 0 },
        max_employees: { type: 'integer', minimum: 0 },
        owner_id: memberIdSchema,
      },
    },
  },
};
const memberList: Setting = {
  check: (value) =>
    Array.isArray(value) && value.length <= 100 && value.every(isMemberId) && new Set(value).size === value.length
      ? null
      : 'must be a list of at most 100 distinct member ids (usr_…)',
  schema: { type: 'array', items: memberIdSchema, maxItems: 100, uniqueItems: true },
};
const optionalMember: Setting = {
  check: (value) => (value === null || isMemberId(value) ? null : 'must be a member id (usr_…) or null'),
  schema: { type: ['string', 'null'], pattern: MEMBER_ID.source },
};

const MODEL_FIELDS = { daily_token_budget: integer(0, 10_000_000), instructions: text(2000) };
const writerFields = (type: keyof typeof SUGGESTION_KINDS) => ({
  ...MODEL_FIELDS,
  suggestion_ttl_days: integer(1, 90),
  act_without_approval: someOf(SUGGESTION_KINDS[type]),
});

const FIELDS: Record<AgentType, Record<string, Setting>> = {
  lead_qualifier: {
    qualify_at: integer(0, 100),
    disqualify_below: integer(0, 100),
    open_deal: boolean,
    deal_stage: oneOf([DealStage.prospecting, DealStage.qualification]),
    deal_value: amount,
  },
  deal_follow_up: { idle_days: idleDays, deliver_to: oneOf(DELIVER_TO) },
  proposal_drafter: { valid_days: integer(1, 365), discount_percent: percent, tax_percent: percent, notes: text(5000), cover_note: boolean, ...MODEL_FIELDS },
  follow_up_writer: { idle_days: idleDays, on_lead_qualified: boolean, ...writerFields('follow_up_writer') },
  lead_researcher: writerFields('lead_researcher'),
  lead_router: { rules: routingRules, round_robin: memberList, fallback_owner_id: optionalMember },
};

/** The config an agent of `type` takes, as JSON Schema: its settings, each optional (defaults fill the rest), nothing else. */
export function configSchema(type: AgentType): JsonSchema {
  const properties = Object.fromEntries(Object.entries(FIELDS[type]).map(([name, setting]) => [name, setting.schema]));
  const rule = type === AgentType.lead_qualifier ? { description: 'disqualify_below must not be above qualify_at (with the defaults filled in).' } : {};
  return { type: 'object', title: type, properties, additionalProperties: false, ...rule };
}

/**
 * The agent's config with defaults for what was left out, and every problem found: unknown keys,
 * values of the wrong kind, and rules across fields. Keys are snake_case in REST and GraphQL alike
 * (config is the client's JSON, never renamed).
 */
export function checkAgentConfig(type: AgentType, raw: Record<string, unknown> | null | undefined): { config: AgentConfig; problems: ConfigProblem[] } {
  const given = raw ?? {};
  const fields = FIELDS[type];
  const problems: ConfigProblem[] = [];
  for (const [name, value] of Object.entries(given)) {
    const check = fields[name];
    if (!check) {
      problems.push({ field: name, message: `${name} is not a setting of ${type} agents (settings: ${Object.keys(fields).join(', ')})` });
      continue;
    }
    const problem = check.check(value);
    // "rules[0].owner_id …", "idle_days.proposal …": a part of the setting is named as a path.
    if (problem) problems.push({ field: name, message: `${name}${/^[.[]/.test(problem) ? '' : ' '}${problem}` });
  }
  // A copy: a caller changing its config must never change the defaults.
  const defaults = structuredClone(DEFAULT_CONFIG[type]) as unknown as Record<string, unknown>;
  const config = { ...defaults, ...given } as Record<string, unknown>;
  if ((type === AgentType.deal_follow_up || type === AgentType.follow_up_writer) && given.idle_days && !problems.length) {
    config.idle_days = { ...(defaults.idle_days as object), ...(given.idle_days as object) };
  }
  if (type === AgentType.lead_qualifier && !problems.length && (config.disqualify_below as number) > (config.qualify_at as number)) {
    problems.push({ field: 'disqualify_below', message: 'disqualify_below must not be above qualify_at' });
  }
  return { config: config as unknown as AgentConfig, problems };
}

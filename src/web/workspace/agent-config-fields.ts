import type { AgentType, Config } from './agents-api';

/**
 * The settings the create form offers for each agent type: the common ones of
 * src/modules/agents/agent-config.ts, with its defaults. The API checks them; the form only turns
 * what was typed into config JSON (numbers as numbers, ticks as booleans), leaving the judging to it.
 */

export const OPEN_STAGES = ['prospecting', 'qualification', 'proposal', 'negotiation'] as const;

export type ConfigField =
  | { key: string; label: string; kind: 'number'; initial: number; hint?: string }
  | { key: string; label: string; kind: 'boolean'; initial: boolean; hint?: string }
  | { key: string; label: string; kind: 'select'; initial: string; options: readonly string[]; hint?: string }
  | { key: string; label: string; kind: 'text'; initial: string; hint?: string }
  /** idle_days: days per open stage. */
  | { key: string; label: string; kind: 'stage_days'; initial: Record<string, number>; hint?: string }
  /** act_without_approval: the kinds a writer may act on without a person (a tick). */
  | { key: string; label: string; kind: 'auto_approve'; initial: string[]; option: string; hint?: string }
  /** A lead_router's rules: a row of criteria and the member who gets the leads it matches, per rule. */
  | { key: string; label: string; kind: 'routing_rules'; initial: RuleValues[]; hint?: string }
  /** Several members (usr_…), ticked. */
  | { key: string; label: string; kind: 'members'; initial: string[]; hint?: string }
  /** One member, or nobody (""). */
  | { key: string; label: string; kind: 'member'; initial: string; none: string; hint?: string };

/** A routing rule as its inputs hold it: lists as typed ("IE, GB"), numbers as typed, the member's id. */
export type RuleValues = Record<(typeof RULE_KEYS)[number], string>;
/** A rule's criteria that are lists (comma-separated in the form), then its numbers, then whom it gives leads to. */
export const RULE_LISTS = ['country', 'industry', 'source'] as const;
export const RULE_NUMBERS = ['min_employees', 'max_employees'] as const;
export const RULE_KEYS = [...RULE_LISTS, ...RULE_NUMBERS, 'owner_id'] as const;
export const emptyRule = (): RuleValues => Object.fromEntries(RULE_KEYS.map((key) => [key, ''])) as RuleValues;

const IDLE_DAYS: ConfigField = {
  key: 'idle_days',
  label: 'Days idle before acting, per stage',
  kind: 'stage_days',
  initial: { prospecting: 14, qualification: 14, proposal: 7, negotiation: 7 },
};
const MODEL: ConfigField[] = [
  {
    key: 'daily_token_budget',
    label: 'Daily token budget',
    kind: 'number',
    initial: 50_000,
    hint: 'Model tokens a UTC day; past it the built-in template writes.',
  },
  { key: 'instructions', label: 'Instructions to the model', kind: 'text', initial: '', hint: 'Tone, signature, offer. Optional.' },
];
const writer = (kind: string): ConfigField[] => [
  { key: 'suggestion_ttl_days', label: 'Days a suggestion waits', kind: 'number', initial: 7, hint: 'Undecided suggestions expire after this.' },
  { key: 'act_without_approval', label: `Approve ${kind.replace(/_/g, ' ')}s automatically`, kind: 'auto_approve', initial: [], option: kind },
  ...MODEL,
];

export const CONFIG_FIELDS: Record<AgentType, ConfigField[]> = {
  lead_qualifier: [
    { key: 'qualify_at', label: 'Qualify at score', kind: 'number', initial: 70, hint: '0–100: leads scoring at least this become qualified.' },
    { key: 'disqualify_below', label: 'Disqualify below score', kind: 'number', initial: 20, hint: 'Not above the qualify score.' },
    { key: 'open_deal', label: 'Open a deal for a qualified lead', kind: 'boolean', initial: false },
    { key: 'deal_stage', label: 'Stage of the new deal', kind: 'select', initial: 'qualification', options: ['prospecting', 'qualification'] },
    { key: 'deal_value', label: 'Value of the new deal', kind: 'number', initial: 0 },
  ],
  deal_follow_up: [
    IDLE_DAYS,
    {
      key: 'deliver_to',
      label: 'Also deliver follow-ups to',
      kind: 'select',
      initial: 'none',
      options: ['none', 'outlook_draft', 'todo_task'],
      hint: 'An Outlook draft or a To Do task needs a connected Microsoft 365 mailbox.',
    },
  ],
  proposal_drafter: [
    { key: 'valid_days', label: 'Days a proposal is valid', kind: 'number', initial: 30 },
    { key: 'discount_percent', label: 'Discount (%)', kind: 'number', initial: 0 },
    { key: 'tax_percent', label: 'Tax (%)', kind: 'number', initial: 0 },
    { key: 'cover_note', label: 'Write a cover note', kind: 'boolean', initial: false },
    ...MODEL,
  ],
  follow_up_writer: [
    IDLE_DAYS,
    { key: 'on_lead_qualified', label: 'Write to newly qualified leads', kind: 'boolean', initial: true },
    ...writer('follow_up_email'),
  ],
  lead_researcher: writer('lead_brief'),
  lead_router: [
    {
      key: 'rules',
      label: 'Rules',
      kind: 'routing_rules',
      initial: [],
      hint: 'Tried in order: the first rule a new lead matches gives it to that rule’s member. A criterion left empty matches every lead.',
    },
    { key: 'round_robin', label: 'Take turns with the leads no rule matched', kind: 'members', initial: [] },
    { key: 'fallback_owner_id', label: 'Give any other lead to', kind: 'member', initial: '', none: 'Nobody (no owner)' },
  ],
};

/** aria-invalid and aria-describedby of a setting's input. */
export type Aria = { 'aria-invalid'?: 'true'; 'aria-describedby'?: string };

/** A form's values: what the inputs hold, as typed (strings), ticked (booleans) or per stage. */
export type FormValues = Record<string, string | boolean | string[] | Record<string, string> | RuleValues[]>;

export function initialValues(type: AgentType): FormValues {
  return Object.fromEntries(
    CONFIG_FIELDS[type].map((field) => {
      switch (field.kind) {
        case 'number':
          return [field.key, String(field.initial)];
        case 'stage_days':
          return [field.key, Object.fromEntries(Object.entries(field.initial).map(([stage, days]) => [stage, String(days)]))];
        case 'auto_approve':
          return [field.key, field.initial.includes(field.option)];
        case 'routing_rules':
        case 'members':
          return [field.key, [...field.initial]];
        default:
          return [field.key, field.initial];
      }
    }),
  );
}

/** The form's values for a config the API holds (the edit form starts from them); a key it lacks takes the default. */
export function valuesOf(type: AgentType, config: Config): FormValues {
  const defaults = initialValues(type);
  return Object.fromEntries(
    CONFIG_FIELDS[type].map((field) => {
      const value = config[field.key];
      if (value === undefined) return [field.key, defaults[field.key]];
      switch (field.kind) {
        case 'number':
          return [field.key, value === null ? '' : String(value)];
        case 'stage_days': {
          const days = (value ?? {}) as Record<string, unknown>;
          const start = defaults[field.key] as Record<string, string>;
          return [field.key, Object.fromEntries(OPEN_STAGES.map((stage) => [stage, days[stage] == null ? start[stage] : String(days[stage])]))];
        }
        case 'auto_approve':
          return [field.key, Array.isArray(value) && value.includes(field.option)];
        case 'text':
          return [field.key, value === null ? '' : String(value)];
        case 'boolean':
          return [field.key, value === true];
        case 'routing_rules':
          return [field.key, Array.isArray(value) ? value.map(ruleValues) : []];
        case 'members':
          return [field.key, Array.isArray(value) ? value.map(String) : []];
        case 'member':
          return [field.key, value === null ? '' : String(value)];
        default:
          return [field.key, String(value)];
      }
    }),
  );
}

/** A typed number as a number; anything else as typed, for the API to name what is wrong with it. */
const numberOf = (text: string): number | string => (text.trim() !== '' && !Number.isNaN(Number(text)) ? Number(text) : text);

export function configOf(type: AgentType, values: FormValues): Config {
  return Object.fromEntries(
    CONFIG_FIELDS[type].map((field) => {
      const value = values[field.key];
      switch (field.kind) {
        case 'number':
          return [field.key, numberOf(value as string)];
        case 'stage_days':
          return [field.key, Object.fromEntries(Object.entries(value as Record<string, string>).map(([stage, days]) => [stage, numberOf(days)]))];
        case 'auto_approve':
          return [field.key, value ? [field.option] : []];
        case 'text':
          return [field.key, (value as string).trim() === '' ? null : value];
        case 'routing_rules':
          return [field.key, (value as RuleValues[]).map(ruleOf)];
        case 'member':
          return [field.key, value === '' ? null : value];
        default:
          return [field.key, value];
      }
    }),
  );
}

/** A rule the API holds, as its inputs show it. */
function ruleValues(rule: unknown): RuleValues {
  const given = (rule ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    RULE_KEYS.map((key) => {
      const value = given[key];
      return [key, value == null ? '' : Array.isArray(value) ? value.join(', ') : String(value)];
    }),
  ) as RuleValues;
}

/** A rule's inputs as the API takes it: lists split at commas, numbers as numbers, empty criteria left out. */
function ruleOf(values: RuleValues): Config {
  const rule: Config = {};
  for (const key of RULE_LISTS) {
    const items = values[key]
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    if (items.length) rule[key] = items;
  }
  for (const key of RULE_NUMBERS) if (values[key].trim() !== '') rule[key] = numberOf(values[key]);
  rule.owner_id = values.owner_id;
  return rule;
}

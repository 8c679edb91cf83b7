import { ApiProblem, graphql } from './api';

/**
 * The agents pages' calls to /graphql and the shapes they answer (schema.graphql's Agent,
 * AgentMetrics, AgentRun, AgentSuggestion, AgentSimulation). Config keys are snake_case, as the
 * API keeps them.
 */

export const AGENT_TYPES = ['lead_qualifier', 'deal_follow_up', 'proposal_drafter', 'follow_up_writer', 'lead_researcher', 'lead_router'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];
export type AgentStatus = 'draft' | 'deployed' | 'paused';
export type Config = Record<string, unknown>;

/** What each type does, in a line (the create form and the empty state say it). */
export const TYPE_PURPOSE: Record<AgentType, string> = {
  lead_qualifier: 'qualifies or disqualifies new leads by their score, and can open a deal for a qualified one',
  deal_follow_up: 'raises deals that sit too long in a stage',
  proposal_drafter: 'drafts a proposal when a deal reaches the proposal stage',
  follow_up_writer: 'drafts follow-up e-mails for idle deals and newly qualified leads, for you to approve',
  lead_researcher: 'writes a brief on each new lead with a next step, for you to approve',
  lead_router: 'gives each new lead an owner by your rules, or in turn among chosen members',
};

export interface Agent {
  id: string;
  name: string;
  type: AgentType;
  status: AgentStatus;
  version: number;
  config: Config;
  deployedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AgentRun {
  id: string;
  version: number;
  trigger: 'event' | 'schedule';
  eventType: string | null;
  outcome: 'acted' | 'no_action' | 'error';
  actions: Array<{ kind: string; object_id: string }>;
  error: string | null;
  durationMs: number;
  createdAt: string;
}

export const METRIC_WINDOWS = ['24h', '7d', '30d'] as const;
export type MetricWindow = (typeof METRIC_WINDOWS)[number];

export interface AgentMetrics {
  window: MetricWindow;
  from: string;
  to: string;
  runs: number;
  errors: number;
  successRate: number | null;
  actionsByKind: Record<string, number>;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
  lastRunAt: string | null;
  outcomes: Record<
    'leadsQualified' | 'leadsDisqualified' | 'dealsOpened' | 'proposalsDrafted' | 'idleDealsFlagged' | 'qualifiedLeadsWon' | 'suggestionsMade',
    number
  >;
  modelUsage: { calls: number; failures: number; promptTokens: number; completionTokens: number; totalTokens: number };
  suggestions: {
    pending: number;
    approved: number;
    approvedAutomatically: number;
    rejected: number;
    expired: number;
    approvalRate: number | null;
    p50TimeToApprovalMs: number | null;
  };
}

export type SuggestionStatus = 'pending' | 'approved' | 'rejected' | 'expired';
export interface Suggestion {
  id: string;
  kind: 'follow_up_email' | 'lead_brief';
  status: SuggestionStatus;
  leadId: string | null;
  dealId: string | null;
  content: Config;
  approvedContent: Config | null;
  generatedBy: 'model' | 'template';
  model: string | null;
  expiresAt: string;
  decidedAt: string | null;
  createdAt: string;
}

/** The edits SuggestionApproveInput takes, by kind: the input field and the content key it replaces. */
export const EDITABLE: Record<Suggestion['kind'], Array<{ field: 'subject' | 'body' | 'brief' | 'nextStep'; key: string; label: string; long: boolean }>> = {
  follow_up_email: [
    { field: 'subject', key: 'subject', label: 'Subject', long: false },
    { field: 'body', key: 'body', label: 'Body', long: true },
  ],
  lead_brief: [
    { field: 'brief', key: 'brief', label: 'Brief', long: true },
    { field: 'nextStep', key: 'next_step', label: 'Next step', long: false },
  ],
};
export type SuggestionEdits = Partial<Record<'subject' | 'body' | 'brief' | 'nextStep', string>>;

export interface Simulation {
  window: string;
  eventsReplayed: number;
  truncated: boolean;
  scans: number;
  errors: number;
  actionsTotal: number;
  actionsByKind: Record<string, number>;
  leadsAffected: string[];
  dealsAffected: string[];
  modelCalls: number;
}

const AGENT = 'id name type status version config deployedAt createdAt updatedAt';
const SUGGESTION = 'id kind status leadId dealId content approvedContent generatedBy model expiresAt decidedAt createdAt';

export async function listAgents(cursor: string | null): Promise<{ data: Agent[]; nextCursor: string | null }> {
  const data = await graphql<{ agents: { data: Agent[]; nextCursor: string | null } }>(
    `query Agents($cursor: String) { agents(filter: { limit: 20, cursor: $cursor }) { data { ${AGENT} } nextCursor } }`,
    { cursor },
  );
  return data.agents;
}

export async function createAgent(name: string, type: AgentType, config: Config): Promise<Agent> {
  const data = await graphql<{ createAgent: Agent }>(`mutation CreateAgent($input: AgentCreateInput!) { createAgent(input: $input) { ${AGENT} } }`, {
    input: { name, type, config },
  });
  return data.createAgent;
}

export async function loadAgent(id: string): Promise<Agent> {
  const data = await graphql<{ agent: Agent }>(`query Agent($id: ID!) { agent(id: $id) { ${AGENT} } }`, { id });
  return data.agent;
}

/**
 * Changes the name and the working config. A deployed agent keeps acting with the config frozen
 * at its deploy: the change runs only once it is deployed again (the service's rule).
 */
export async function updateAgent(id: string, input: { name: string; config: Config }): Promise<Agent> {
  const data = await graphql<{ updateAgent: Agent }>(
    `mutation UpdateAgent($id: ID!, $input: AgentUpdateInput!) { updateAgent(id: $id, input: $input) { ${AGENT} } }`,
    {
      id,
      input,
    },
  );
  return data.updateAgent;
}

/** Deletes a draft agent; a deployed or paused one is refused (resource_conflict). */
export async function deleteAgent(id: string): Promise<void> {
  await graphql<{ deleteAgent: { id: string } }>(`mutation DeleteAgent($id: ID!) { deleteAgent(id: $id) { id } }`, { id });
}

export async function agentRuns(id: string): Promise<AgentRun[]> {
  const data = await graphql<{ agent: { runs: { data: AgentRun[] } } }>(
    `query Runs($id: ID!) { agent(id: $id) { runs(filter: { limit: 10 }) { data { id version trigger eventType outcome actions error durationMs createdAt } } } }`,
    { id },
  );
  return data.agent.runs.data;
}

/**
 * Deploys what the page showed. deployAgent takes no expected version (its `version` is a
 * rollback), so the page reads the agent again first: if it was deployed or its config changed
 * since the page loaded, it refuses and says so rather than deploy something the person has not
 * seen. The config shown is passed along, so what is deployed is what was on the page.
 */
export async function deployAgent(shown: Agent): Promise<Agent> {
  const now = await loadAgent(shown.id);
  if (now.version !== shown.version) {
    throw new ApiProblem(
      `Not deployed: this agent is at version ${now.version} now, not version ${shown.version} as this page showed; it was deployed elsewhere since the page loaded. The page now shows it as it is; review it and deploy again.`,
      undefined,
      'stale_page',
    );
  }
  if (JSON.stringify(sorted(now.config)) !== JSON.stringify(sorted(shown.config))) {
    throw new ApiProblem(
      'Not deployed: its settings were changed elsewhere since this page loaded. The page now shows them; review them and deploy again.',
      undefined,
      'stale_page',
    );
  }
  const data = await graphql<{ deployAgent: Agent }>(
    `mutation Deploy($id: ID!, $input: AgentDeployInput) { deployAgent(id: $id, input: $input) { ${AGENT} } }`,
    { id: shown.id, input: { config: shown.config } },
  );
  return data.deployAgent;
}

/** The same JSON with keys in order, so two configs compare by content. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sorted((value as Config)[key])]),
    );
  }
  return value;
}

export async function pauseAgent(id: string): Promise<Agent> {
  return (await graphql<{ pauseAgent: Agent }>(`mutation Pause($id: ID!) { pauseAgent(id: $id) { ${AGENT} } }`, { id })).pauseAgent;
}

export async function resumeAgent(id: string): Promise<Agent> {
  return (await graphql<{ resumeAgent: Agent }>(`mutation Resume($id: ID!) { resumeAgent(id: $id) { ${AGENT} } }`, { id })).resumeAgent;
}

export async function simulateAgent(id: string, window: '7d' | '30d'): Promise<Simulation> {
  const data = await graphql<{ simulateAgent: Simulation }>(
    `mutation Simulate($id: ID!, $input: AgentSimulateInput!) {
      simulateAgent(id: $id, input: $input) { window eventsReplayed truncated scans errors actionsTotal actionsByKind leadsAffected dealsAffected modelCalls }
    }`,
    { id, input: { window } },
  );
  return data.simulateAgent;
}

export async function agentMetrics(id: string, window: MetricWindow): Promise<AgentMetrics> {
  const data = await graphql<{ agentMetrics: AgentMetrics }>(
    `query Metrics($id: ID!, $window: String) {
      agentMetrics(id: $id, filter: { window: $window }) {
        window from to runs errors successRate actionsByKind p50LatencyMs p95LatencyMs lastRunAt
        outcomes { leadsQualified leadsDisqualified dealsOpened proposalsDrafted idleDealsFlagged qualifiedLeadsWon suggestionsMade }
        modelUsage { calls failures promptTokens completionTokens totalTokens }
        suggestions { pending approved approvedAutomatically rejected expired approvalRate p50TimeToApprovalMs }
      }
    }`,
    { id, window },
  );
  return data.agentMetrics;
}

/**
 * The company of each lead, by id (25 a request, aliases `l0`, `l1`, …), to name the lead a
 * suggestion is for. A lead deleted since fails its batch; those leads are shown by id instead.
 */
export async function leadCompanies(ids: string[]): Promise<Record<string, string>> {
  const unique = [...new Set(ids)];
  const companies: Record<string, string> = {};
  for (let at = 0; at < unique.length; at += 25) {
    const batch = unique.slice(at, at + 25);
    const query = `query Companies(${batch.map((_, i) => `$l${i}: ID!`).join(', ')}) { ${batch.map((_, i) => `l${i}: lead(id: $l${i}) { id company }`).join(' ')} }`;
    try {
      const data = await graphql<Record<string, { id: string; company: string }>>(query, Object.fromEntries(batch.map((id, i) => [`l${i}`, id])));
      for (const lead of Object.values(data)) companies[lead.id] = lead.company;
    } catch {
      // Named by id instead: the suggestion still shows, and its link says which lead it was.
    }
  }
  return companies;
}

/** Pending suggestions (up to 50, newest first), then the 20 latest others. */
export async function agentSuggestions(id: string): Promise<{ pending: Suggestion[]; decided: Suggestion[] }> {
  const data = await graphql<{ pending: { data: Suggestion[] }; recent: { data: Suggestion[] } }>(
    `query Suggestions($id: ID!) {
      pending: agentSuggestions(id: $id, filter: { status: pending, limit: 50 }) { data { ${SUGGESTION} } }
      recent: agentSuggestions(id: $id, filter: { limit: 20 }) { data { ${SUGGESTION} } }
    }`,
    { id },
  );
  return { pending: data.pending.data, decided: data.recent.data.filter((suggestion) => suggestion.status !== 'pending') };
}

export async function approveSuggestion(id: string, edits: SuggestionEdits | null): Promise<Suggestion> {
  const data = await graphql<{ approveSuggestion: Suggestion }>(
    `mutation Approve($id: ID!, $input: SuggestionApproveInput) { approveSuggestion(id: $id, input: $input) { ${SUGGESTION} } }`,
    { id, input: edits },
  );
  return data.approveSuggestion;
}

export async function rejectSuggestion(id: string): Promise<Suggestion> {
  return (await graphql<{ rejectSuggestion: Suggestion }>(`mutation Reject($id: ID!) { rejectSuggestion(id: $id) { ${SUGGESTION} } }`, { id }))
    .rejectSuggestion;
}

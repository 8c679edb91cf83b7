import { EntityManager, FilterQuery, LockMode } from '@mikro-orm/postgresql';
import { ApiError, notFound } from '../../common/api-error';
import { isId } from '../../common/ids';
import { findPage, Page } from '../../common/pagination';
import { PageInput } from '../../common/page.input';
import { createScoped } from '../../db/tenant';
import { tenantQuery } from '../../db/tenant-sql';
import type { EventRecorder } from '../../events/event-recorder';
import { AgentType, checkAgentConfig } from './agent-config';
import { Agent, AgentRun, AgentStatus, AgentVersion } from './agent.entity';
import { AgentCreateInput, AgentDeployInput, AgentListInput, AgentUpdateInput, MetricWindow } from './agent.inputs';
import { AgentMetrics } from './agent.types';
import { leadsRoutedByMember, modelUsage, suggestionFigures } from './agent-metrics.queries';

const WINDOW_MS: Record<MetricWindow, number> = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

/** Agents of one account and mode (tenant-scoped EntityManager): configuration, deployment, metrics. */
export class AgentService {
  constructor(
    private readonly em: EntityManager,
    private readonly events: EventRecorder,
  ) {}

  async create(input: AgentCreateInput): Promise<Agent> {
    const agent = createScoped(this.em, Agent, { name: input.name.trim(), type: input.type, config: this.validConfig(input.type, input.config) });
    await this.em.flush();
    return agent;
  }

  async get(id: string): Promise<Agent> {
    const agent = isId('agent', id) ? await this.em.findOne(Agent, { id }) : null;
    if (!agent) throw notFound('agent', id);
    return agent;
  }

  list(input: AgentListInput = {}): Promise<Page<Agent>> {
    const filters: FilterQuery<Agent>[] = [];
    if (input.status) filters.push({ status: input.status });
    if (input.type) filters.push({ type: input.type });
    return findPage(this.em, Agent, filters, input);
  }

  async update(id: string, input: AgentUpdateInput): Promise<Agent> {
    const agent = await this.get(id);
    if (input.name) agent.name = input.name.trim();
    if (input.config) agent.config = this.validConfig(agent.type, input.config);
    await this.em.flush();
    return agent;
  }

  /**
   * Freezes the config as the next version and makes the agent act on events of its mode from now
   * on. A config that does not hold is 422 agent_config_invalid naming every problem.
   */
  async deploy(id: string, input: AgentDeployInput = {}): Promise<Agent> {
    const agent = await this.get(id);
    const given = input.version != null ? await this.versionConfig(agent, input) : (input.config ?? agent.config);
    const { config, problems } = checkAgentConfig(agent.type, given);
    if (problems.length) {
      throw new ApiError('agent_config_invalid', `The config cannot be deployed: ${problems.map((p) => p.message).join('; ')}`, {
        param: `config.${problems[0].field}`,
        restParam: `config[${problems[0].field}]`,
        details: { problems },
      });
    }
    const before = this.events.snapshot(agent);
    agent.config = config as unknown as Record<string, unknown>;
    agent.version += 1;
    agent.status = AgentStatus.deployed;
    agent.deployedAt = new Date();
    this.em.create(AgentVersion, { agent, version: agent.version, config: agent.config, createdAt: new Date() });
    this.events.record('agent.deployed', agent, before);
    await this.em.flush();
    return agent;
  }

  /** The config of an earlier version, for a rollback: deployed again as a new version, so history only grows. */
  private async versionConfig(agent: Agent, input: AgentDeployInput): Promise<Record<string, unknown>> {
    if (input.config) throw new ApiError('parameter_invalid', 'Give either config or version, not both', { param: 'version' });
    const earlier = await this.em.findOne(AgentVersion, { agent: agent.id, version: input.version! });
    if (!earlier) {
      const known = agent.version === 0 ? 'it has never been deployed' : `its versions are 1 to ${agent.version}`;
      throw new ApiError('parameter_invalid', `Agent ${agent.id} has no version ${input.version}: ${known}`, { param: 'version' });
    }
    return earlier.config;
  }

  /**
   * Pauses a deployed agent: it acts on nothing (no runs for events or schedules, queued runs end
   * without acting) until resumed, and keeps its version and history. Pausing a paused agent
   * answers it as it is; a draft has nothing to pause (409).
   */
  pause(id: string): Promise<Agent> {
    return this.move(id, AgentStatus.deployed, AgentStatus.paused, 'agent.paused');
  }

  /** Resumes a paused agent with the version it had; resuming a deployed agent answers it as it is; a draft is deployed instead (409). */
  resume(id: string): Promise<Agent> {
    return this.move(id, AgentStatus.paused, AgentStatus.deployed, 'agent.resumed');
  }

  private async move(id: string, from: AgentStatus, to: AgentStatus, event: 'agent.paused' | 'agent.resumed'): Promise<Agent> {
    await this.get(id); // 404 before anything else
    return this.em.transactional(async () => {
      const agent = await this.em.findOneOrFail(Agent, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (agent.status === to) return agent;
      if (agent.status !== from) {
        throw new ApiError('resource_conflict', `Agent ${agent.id} is a draft; deploy it first (POST /v1/agents/${agent.id}/deploy)`);
      }
      const before = this.events.snapshot(agent);
      agent.status = to;
      this.events.record(event, agent, before);
      return agent;
    });
  }

  /**
   * Deletes an agent that does not act: a deployed one may be running or about to run on events,
   * so it is kept (409). The row is locked for the check and the delete, so a deploy at the same
   * moment either comes first (and is refused here) or finds no agent.
   */
  async delete(id: string): Promise<string> {
    await this.get(id); // 404 before anything else
    return this.em.transactional(async () => {
      const agent = await this.em.findOneOrFail(Agent, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (agent.status !== AgentStatus.draft) {
        throw new ApiError('resource_conflict', `Agent ${agent.id} is ${agent.status} and cannot be deleted; only a draft agent can be deleted`);
      }
      this.events.record('agent.deleted', agent);
      this.em.remove(agent);
      return agent.id;
    });
  }

  runs(agent: Agent, input: PageInput = {}): Promise<Page<AgentRun>> {
    return findPage(this.em, AgentRun, [{ agent }], input);
  }

  /** Figures over the window, all counted in SQL from the recorded runs, the deals they led to, and the suggestions made. */
  async metrics(id: string, window: MetricWindow = '7d'): Promise<AgentMetrics> {
    const agent = await this.get(id);
    const to = new Date();
    const from = new Date(to.getTime() - WINDOW_MS[window]);
    const bindings = { agent: agent.id, from, to };
    const [totals] = await tenantQuery<{ runs: number; errors: number; p50: number | null; p95: number | null }>(
      this.em,
      `select cast(count(*) as int) as runs, cast(count(*) filter (where outcome = 'error') as int) as errors,
              percentile_cont(0.5) within group (order by duration_ms) as p50,
              percentile_cont(0.95) within group (order by duration_ms) as p95
         from {agent_runs} where agent_id = :agent and created_at >= :from and created_at <= :to`,
      bindings,
    );
    const kinds = await tenantQuery<{ kind: string; count: number }>(
      this.em,
      `select action->>'kind' as kind, cast(count(*) as int) as count
         from {agent_runs}, jsonb_array_elements(agent_runs.actions) as action
        where agent_id = :agent and created_at >= :from and created_at <= :to group by 1 order by 1`,
      bindings,
    );
    const [won] = await tenantQuery<{ count: number }>(
      this.em,
      `select cast(count(distinct action->>'object_id') as int) as count
         from {agent_runs}, jsonb_array_elements(agent_runs.actions) as action
        where agent_id = :agent and created_at >= :from and created_at <= :to and action->>'kind' = 'lead_qualified'
          and exists (select 1 from {deals} where deals.lead_id = action->>'object_id' and deals.stage = 'closed_won')`,
      bindings,
    );
    const [last] = await tenantQuery<{ at: Date | null }>(this.em, 'select max(created_at) as at from {agent_runs} where agent_id = :agent', bindings);
    const usage = await modelUsage(this.em, bindings);
    const suggestions = await suggestionFigures(this.em, bindings);
    const routed = agent.type === AgentType.lead_router ? await leadsRoutedByMember(this.em, bindings) : {};
    const actionsByKind: Record<string, number> = Object.fromEntries(kinds.map((row) => [row.kind, row.count]));
    const runs = totals.runs;
    return {
      object: 'agent_metrics',
      agentId: agent.id,
      window,
      from,
      to,
      runs,
      errors: totals.errors,
      successRate: runs ? (runs - totals.errors) / runs : null,
      actionsByKind,
      p50LatencyMs: totals.p50 === null ? null : Math.round(totals.p50),
      p95LatencyMs: totals.p95 === null ? null : Math.round(totals.p95),
      lastRunAt: last?.at ? new Date(last.at) : null,
      outcomes: {
        leadsQualified: actionsByKind.lead_qualified ?? 0,
        leadsDisqualified: actionsByKind.lead_disqualified ?? 0,
        dealsOpened: actionsByKind.deal_opened ?? 0,
        proposalsDrafted: actionsByKind.proposal_drafted ?? 0,
        idleDealsFlagged: actionsByKind.deal_idle ?? 0,
        qualifiedLeadsWon: won.count,
        suggestionsMade: suggestions.made,
        leadsRouted: actionsByKind.lead_routed ?? 0,
        leadsRoutedByMember: routed,
      },
      modelUsage: usage,
      suggestions: suggestions.figures,
    };
  }

  /** Tokens the agent's runs have spent since midnight UTC (prompt and completion), against its daily_token_budget. */
  async tokensSpentToday(agentId: string): Promise<number> {
    const [row] = await tenantQuery<{ tokens: string }>(
      this.em,
      `select coalesce(sum(cast(usage->>'prompt_tokens' as bigint) + cast(usage->>'completion_tokens' as bigint)), 0) as tokens
         from {agent_runs} where agent_id = :agent and usage is not null
          and created_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC'`,
      { agent: agentId },
    );
    return Number(row.tokens);
  }

  private validConfig(type: AgentType, raw: Record<string, unknown> | null | undefined): Record<string, unknown> {
    const { config, problems } = checkAgentConfig(type, raw);
    if (problems.length) {
      const { field, message } = problems[0];
      throw new ApiError('parameter_invalid', message, { param: `config.${field}`, restParam: `config[${field}]` });
    }
    return config as unknown as Record<string, unknown>;
  }
}

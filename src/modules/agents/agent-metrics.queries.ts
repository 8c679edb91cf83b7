import type { EntityManager } from '@mikro-orm/postgresql';
import { tenantQuery } from '../../db/tenant-sql';
import type { AgentModelUsage, AgentSuggestionFigures } from './agent.types';

/** The window an agent's figures are counted over. */
export type MetricScope = {
  agent: string;
  from: Date;
  to: Date;
};

/** A lean row: sums come back from PostgreSQL as bigint text. */
interface UsageRow {
  model: string | null;
  runs: number;
  calls: string;
  failures: string;
  prompt_tokens: string;
  completion_tokens: string;
}

/**
 * The model's use by the runs of the window, from each run's `usage` ({model, prompt_tokens,
 * completion_tokens, calls, failures}; null when the run asked nothing), by model and in all.
 */
export async function modelUsage(em: EntityManager, scope: MetricScope): Promise<AgentModelUsage> {
  const rows = await tenantQuery<UsageRow>(
    em,
    `select usage->>'model' as model, cast(count(*) as int) as runs,
            sum(cast(usage->>'calls' as bigint)) as calls, sum(cast(usage->>'failures' as bigint)) as failures,
            sum(cast(usage->>'prompt_tokens' as bigint)) as prompt_tokens, sum(cast(usage->>'completion_tokens' as bigint)) as completion_tokens
       from {agent_runs} where agent_id = :agent and created_at >= :from and created_at <= :to and usage is not null
      group by 1 order by 1 nulls last`,
    scope,
  );
  const byModel = rows.map((row) => {
    const promptTokens = Number(row.prompt_tokens);
    const completionTokens = Number(row.completion_tokens);
    return {
      model: row.model,
      runs: row.runs,
      calls: Number(row.calls),
      failures: Number(row.failures),
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
    };
  });
  const sum = (pick: (row: (typeof byModel)[number]) => number) => byModel.reduce((total, row) => total + pick(row), 0);
  return {
    calls: sum((row) => row.calls),
    failures: sum((row) => row.failures),
    promptTokens: sum((row) => row.promptTokens),
    completionTokens: sum((row) => row.completionTokens),
    totalTokens: sum((row) => row.totalTokens),
    byModel,
  };
}

/**
 * What became of the suggestions made in the window, as of `to`. A pending suggestion past its
 * expires_at is counted expired here, since the service expires it only when something reads
 * suggestions, and metrics must not depend on that. Time to approval leaves out the automatic
 * approvals (act_without_approval): nobody took that time.
 */
export async function suggestionFigures(em: EntityManager, scope: MetricScope): Promise<{ made: number; figures: AgentSuggestionFigures }> {
  const [row] = await tenantQuery<{
    made: number;
    pending: number;
    approved: number;
    approved_automatically: number;
    rejected: number;
    expired: number;
    p50: number | null;
    p95: number | null;
  }>(
    em,
    `select cast(count(*) as int) as made,
            cast(count(*) filter (where status = 'pending' and expires_at > :to) as int) as pending,
            cast(count(*) filter (where status = 'approved') as int) as approved,
            cast(count(*) filter (where status = 'approved' and approved_automatically) as int) as approved_automatically,
            cast(count(*) filter (where status = 'rejected') as int) as rejected,
            cast(count(*) filter (where status = 'expired' or (status = 'pending' and expires_at <= :to)) as int) as expired,
            percentile_cont(0.5) within group (order by cast(extract(epoch from decided_at - created_at) * 1000 as double precision))
              filter (where status = 'approved' and not approved_automatically) as p50,
            percentile_cont(0.95) within group (order by cast(extract(epoch from decided_at - created_at) * 1000 as double precision))
              filter (where status = 'approved' and not approved_automatically) as p95
       from {agent_suggestions} where agent_id = :agent and created_at >= :from and created_at <= :to`,
    scope,
  );
  const decided = row.approved + row.rejected + row.expired;
  return {
    made: row.made,
    figures: {
      pending: row.pending,
      approved: row.approved,
      approvedAutomatically: row.approved_automatically,
      rejected: row.rejected,
      expired: row.expired,
      approvalRate: decided ? row.approved / decided : null,
      p50TimeToApprovalMs: row.p50 === null ? null : Math.round(row.p50),
      p95TimeToApprovalMs: row.p95 === null ? null : Math.round(row.p95),
    },
  };
}

/**
 * How many leads a lead_router has given by round robin so far (its turn counter: the next member
 * is this modulo their number). Called in the run's transaction, it first takes the agent's
 * transaction lock, so runs of one router take turns: the next counts the turn this one records.
 */
export async function roundRobinTurns(em: EntityManager, agentId: string): Promise<number> {
  await em.getConnection().execute(`select pg_advisory_xact_lock(hashtextextended('lead_router:' || ?, 0))`, [agentId], 'all', em.getTransactionContext());
  const [row] = await tenantQuery<{ count: number }>(
    em,
    `select cast(count(*) as int) as count from {agent_runs}, jsonb_array_elements(agent_runs.actions) as action
      where agent_id = :agent and action->>'kind' = 'lead_routed' and action->>'rule' = 'round_robin'`,
    { agent: agentId },
  );
  return row.count;
}

/** Leads a lead_router routed in the window, by the member it gave them to. */
export async function leadsRoutedByMember(em: EntityManager, scope: MetricScope): Promise<Record<string, number>> {
  const rows = await tenantQuery<{ owner: string; count: number }>(
    em,
    `select action->>'owner_id' as owner, cast(count(*) as int) as count from {agent_runs}, jsonb_array_elements(agent_runs.actions) as action
      where agent_id = :agent and created_at >= :from and created_at <= :to and action->>'kind' = 'lead_routed' group by 1 order by 1`,
    scope,
  );
  return Object.fromEntries(rows.map((row) => [row.owner, row.count]));
}

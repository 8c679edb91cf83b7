import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import type { Event } from '../../events/event.entity';
import type { Services } from '../module';
import { Deal } from '../deals/deal.entity';
import { DealStage } from '../deals/deal-stage';
import type { Agent, AgentAction } from './agent.entity';
import type { AgentWriter } from './agent-writer';

/** What a run of an agent works with; the behaviours of each type (agent-behaviours.ts, agent-writers.ts) take it. */
export interface AgentWork {
  /** The run's transaction, scoped to the agent's account and mode. */
  em: EntityManager;
  services: Services;
  agent: Agent;
  config: Record<string, unknown>;
  /** The event that started the run; null for a scheduled scan. */
  event: Event | null;
  now: Date;
  /** The id the run's record will have (suggestions name it). */
  runId: string;
}

/** What a behaviour's first step gets: no transaction (a model may take a minute), and the run's writer. */
export interface PrepareWork extends AgentWork {
  writer: AgentWriter;
}

/**
 * An agent type's work. `prepare`, when there is one, reads and writes text outside any
 * transaction (a model may answer in a minute; a transaction may idle ten seconds at most), and
 * `act` then changes the pipeline in the run's transaction with what was prepared, checking again
 * what may have changed meanwhile.
 */
export interface Behaviour<P = unknown> {
  prepare?: (work: PrepareWork) => Promise<P>;
  act: (work: AgentWork, prepared: P) => Promise<AgentAction[]>;
}

export const behaviour = <P>(definition: Behaviour<P>) => definition as Behaviour<unknown>;

export const DAY_MS = 86_400_000;
export const isMissing = (error: unknown) => error instanceof ApiError && error.errorCode === 'resource_missing';

/** The object an event is about, as it was then. */
export const subject = (event: Event | null) => event?.data.object as { id: string; stage?: string; status?: string } | undefined;

/** Open deals in the stages of `idleDays` that have sat there past their stage's days, longest idle first. */
export async function idleDeals(
  em: EntityManager,
  idleDays: Record<string, number>,
  now: Date,
): Promise<Array<{ deal: Deal; idleDays: number; thresholdDays: number }>> {
  const stages = Object.keys(idleDays) as DealStage[];
  const deals = await em.find(Deal, { stage: { $in: stages } }, { orderBy: { stageChangedAt: 'asc', id: 'asc' } });
  return deals
    .filter((deal) => now.getTime() - deal.stageChangedAt.getTime() >= idleDays[deal.stage] * DAY_MS)
    .map((deal) => ({ deal, idleDays: Math.floor((now.getTime() - deal.stageChangedAt.getTime()) / DAY_MS), thresholdDays: idleDays[deal.stage] }));
}

/** Remembers that the agent raised the deal in its current stage; false when it had already (this run's or another's). */
export async function raiseOnce(em: EntityManager, agent: Agent, deal: { id: string; stageChangedAt: Date }, now: Date): Promise<boolean> {
  const inserted = await em.getConnection().execute(
    `insert into agent_follow_ups (agent_id, deal_id, stage_changed_at, created_at) values (?, ?, ?, ?)
     on conflict do nothing returning deal_id`,
    [agent.id, deal.id, deal.stageChangedAt, now],
    'all',
    em.getTransactionContext(),
  );
  return inserted.length > 0;
}

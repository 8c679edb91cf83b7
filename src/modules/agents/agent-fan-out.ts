import { newId } from '../../common/ids';
import { FanOutConsumer, mayOweIfAny, owedRows } from '../../events/outbox-fan-out';
import { AgentType } from './agent-config';
import { TRIGGERS } from './agent-behaviours';
import { AgentStatus } from './agent.entity';

const EVENT_DRIVEN = (Object.keys(TRIGGERS) as AgentType[]).filter((type) => TRIGGERS[type].length > 0);

/**
 * One task per event and deployed agent of the same account and mode whose type reacts to it, for
 * events made since the agent was first deployed (its version 1): an event made before, fanned out
 * late under load, is not the agent's to act on.
 */
const owe: FanOutConsumer['owe'] = async (trx, events, now) => {
  const agents: Array<{ id: string; account_id: string; livemode: boolean; type: AgentType; version: number; since: Date | null }> = await trx('agents')
    .select(
      'id',
      'account_id',
      'livemode',
      'type',
      'version',
      trx.raw('(select min(v.created_at) from agent_versions v where v.agent_id = agents.id) as since'),
    )
    .where('status', AgentStatus.deployed)
    .whereIn('type', EVENT_DRIVEN)
    .whereIn('account_id', [...new Set(events.map((event) => event.account_id))]);
  const tasks = owedRows(
    events,
    agents,
    (agent, event) => TRIGGERS[agent.type].includes(event.type) && agent.since !== null && new Date(event.created_at) >= new Date(agent.since),
    (agent) => ({
      id: newId('atask'),
      created_at: now,
      updated_at: now,
      agent_id: agent.id,
      agent_version: agent.version,
      attempt_count: 0,
      next_attempt_at: now,
    }),
  );
  if (tasks.length) await trx('agent_tasks').insert(tasks).onConflict(['agent_id', 'event_id']).ignore();
  return tasks.length;
};

/** Agents' tasks, owed only where the account and mode has a deployed agent. */
export const agentFanOut: FanOutConsumer = {
  mayOwe: mayOweIfAny('agents', 't.status = ?', [AgentStatus.deployed]),
  owe,
};

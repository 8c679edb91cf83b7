import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { isId, newId } from '../../common/ids';
import { isTransientDatabaseError } from '../../db/database-errors';
import { tenantFork, tenantOf } from '../../db/tenant';
import { Event } from '../../events/event.entity';
import { toApiError } from '../../common/known-errors';
import type { ServiceFactory, Services } from '../module';
import { Deal } from '../deals/deal.entity';
import { Lead } from '../leads/lead.entity';
import { Proposal } from '../proposals/proposal.entity';
import { checkAgentConfig } from './agent-config';
import { BEHAVIOURS, SCHEDULED, TRIGGERS } from './agent-behaviours';
import type { Agent, AgentAction } from './agent.entity';
import { AgentSuggestion } from './agent-suggestion.entity';
import { openWriter } from './agent-writer';
import { AgentSimulateInput, AgentSimulation, SimulationWindow } from './agent-simulation.types';

/** Events replayed at most, oldest first; the answer says `truncated` past it. */
export const MAX_SIMULATED_EVENTS = 500;
/** Completions a simulation may ask of the account's model; templates write every later piece. */
export const SIMULATION_MODEL_CALLS = 3;
/** How long a simulation may wait for the model in all; past it the templates write. */
const SIMULATION_MODEL_TIME_MS = 20_000;
/** Actions the answer shows in full. */
export const SAMPLE_SIZE = 10;
/** How long the simulation waits on a row a request or a run holds before it gives up (503): it must never hold them up long. */
const LOCK_TIMEOUT_MS = 2_000;
const WINDOW_MS: Record<SimulationWindow, number> = { '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

/** Thrown at the end of the replay so that its transaction rolls back; never leaves this file. */
class RolledBack extends Error {}

/** One replayed run: the event that would have started it (null for a scan) and what it did. */
interface Replay {
  event: Event | null;
  actions: AgentAction[];
  error: boolean;
}

/**
 * Replays a window's recorded events against a config with the agent types' own behaviours, answering what
 * they would have done. Writing runs first, outside any transaction, capped at SIMULATION_MODEL_CALLS and never
 * marking the integration (a refused key is the real runs' to report); then each `act` runs in a savepoint of one
 * transaction that is always rolled back, so nothing is left or delivered (deliveries come from committed events),
 * and no run is recorded for the agent's metrics or token budget.
 */
export class AgentSimulationService {
  constructor(
    private readonly em: EntityManager,
    private readonly services: Services,
    private readonly servicesFor: ServiceFactory,
  ) {}

  async simulate(id: string, input: AgentSimulateInput): Promise<AgentSimulation> {
    const agent = await this.services.agents.get(id);
    const config = simulatedConfig(agent, input.config);
    const to = new Date();
    const from = new Date(to.getTime() - WINDOW_MS[input.window]);
    const triggers = TRIGGERS[agent.type];
    const found = triggers.length
      ? await this.em.find(
          Event,
          { type: { $in: [...triggers] }, createdAt: { $gte: from, $lte: to } },
          { orderBy: { createdAt: 'asc', id: 'asc' }, limit: MAX_SIMULATED_EVENTS + 1 },
        )
      : [];
    const events: Array<Event | null> = found.slice(0, MAX_SIMULATED_EVENTS);
    const scans = SCHEDULED.includes(agent.type) ? 1 : 0;
    if (scans) events.push(null);

    const { replays, writer, written } = await this.replay(agent, config, events, to);
    const actions = replays.flatMap((replay) => replay.actions);
    const [leads, deals] = await this.existing(actions);
    return {
      object: 'agent_simulation',
      agentId: agent.id,
      config,
      window: input.window,
      from,
      to,
      eventsReplayed: events.length - scans,
      truncated: found.length > MAX_SIMULATED_EVENTS,
      scans,
      errors: replays.filter((replay) => replay.error).length,
      actionsTotal: actions.length,
      actionsByKind: countBy(actions, (action) => String(action.kind)),
      sample: replays
        .flatMap((replay) => replay.actions.map((action) => ({ action, event: replay.event })))
        .slice(0, SAMPLE_SIZE)
        .map(({ action, event }) => sampled(action, event, written.get(String(action.object_id)), leads, deals)),
      leadsAffected: [...leads],
      dealsAffected: [...deals],
      modelCalls: writer.usage.calls,
      generatedBy: countBy(
        actions.filter((action) => typeof action.generated_by === 'string'),
        (action) => String(action.generated_by),
      ),
    };
  }

  private async replay(agent: Agent, config: Record<string, unknown>, events: Array<Event | null>, now: Date) {
    const scope = tenantOf(this.em);
    const behaviour = BEHAVIOURS[agent.type];
    // Fresh EntityManagers: the replay's changes must never reach an entity the request's EntityManager holds (and might flush).
    const readEm = tenantFork(this.em, scope);
    const readServices = this.servicesFor(readEm);
    // A few model calls at most, and never for long: a simulation answers a request.
    const writer = await openWriter(readServices, agent, config, {
      maxCalls: SIMULATION_MODEL_CALLS,
      modelDeadline: Date.now() + SIMULATION_MODEL_TIME_MS,
      leaveIntegration: true,
    });
    const runs: Array<{ event: Event | null; runId: string; prepared: unknown; failed: boolean }> = [];
    for (const event of events) {
      const runId = newId('arun');
      const work = { em: readEm, services: readServices, agent, config, event, now, runId, writer };
      try {
        runs.push({ event, runId, prepared: behaviour.prepare ? await behaviour.prepare(work) : undefined, failed: false });
      } catch (error) {
        if (isTransientDatabaseError(error)) throw busy(error);
        runs.push({ event, runId, prepared: undefined, failed: true });
      }
    }

    const em = tenantFork(this.em, scope);
    const replays: Replay[] = [];
    /** What the writers wrote, by the id of the suggestion or proposal it went into: read before the rollback. */
    const written = new Map<string, Record<string, unknown>>();
    try {
      await em.transactional(async () => {
        await em.getConnection().execute(`set local lock_timeout = ${LOCK_TIMEOUT_MS}`, [], 'run', em.getTransactionContext());
        const services = this.servicesFor(em);
        for (const { event, runId, prepared, failed } of runs) {
          if (failed) {
            replays.push({ event, actions: [], error: true });
            continue;
          }
          try {
            // A savepoint per run: one that fails is undone alone and counted, as the runner records it as an error.
            const actions = await em.transactional(async () => {
              const taken = await behaviour.act({ em, services, agent, config, event, now, runId }, prepared);
              await em.flush();
              return taken;
            });
            replays.push({ event, actions, error: false });
          } catch (error) {
            // The runner records any other failure as the run's error, and goes on with the next.
            if (isTransientDatabaseError(error)) throw error;
            replays.push({ event, actions: [], error: true });
          }
        }
        await this.readWritten(em, replays.flatMap((replay) => replay.actions).slice(0, SAMPLE_SIZE), written);
        throw new RolledBack();
      });
    } catch (error) {
      if (!(error instanceof RolledBack)) throw busy(error);
    }
    return { replays, writer, written };
  }

  /** The text in the suggestions and proposals the sample names, while the transaction still holds them. */
  private async readWritten(em: EntityManager, actions: AgentAction[], written: Map<string, Record<string, unknown>>): Promise<void> {
    for (const action of actions) {
      const id = String(action.object_id ?? '');
      if (isId('sugg', id)) {
        const suggestion = await em.findOne(AgentSuggestion, { id });
        if (suggestion) written.set(id, { ...suggestion.content, model: suggestion.model ?? null, generation_error: suggestion.generationError ?? null });
      } else if (action.cover_note && isId('prop', id)) {
        const proposal = await em.findOne(Proposal, { id });
        if (proposal) written.set(id, { notes: proposal.notes ?? null });
      }
    }
  }

  /** The leads and deals the actions name that exist (what a run would have created does not), in the order first named. */
  private async existing(actions: AgentAction[]): Promise<[Set<string>, Set<string>]> {
    const named = actions.flatMap((action) => [action.object_id, action.lead_id, action.deal_id]).filter((id): id is string => typeof id === 'string');
    const leadIds = [...new Set(named.filter((id) => isId('lead', id)))];
    const dealIds = [...new Set(named.filter((id) => isId('deal', id)))];
    const fresh = tenantFork(this.em, tenantOf(this.em));
    const [leads, deals] = await Promise.all([
      leadIds.length ? fresh.find(Lead, { id: { $in: leadIds } }, { fields: ['id'] }) : [],
      dealIds.length ? fresh.find(Deal, { id: { $in: dealIds } }, { fields: ['id'] }) : [],
    ]);
    const leadSet = new Set(leads.map((lead) => lead.id));
    const dealSet = new Set(deals.map((deal) => deal.id));
    return [new Set(leadIds.filter((id) => leadSet.has(id))), new Set(dealIds.filter((id) => dealSet.has(id)))];
  }
}

/** The given config, or the agent's working config, checked as deploy checks it (422 agent_config_invalid). */
function simulatedConfig(agent: Agent, given: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const { config, problems } = checkAgentConfig(agent.type, given ?? agent.config);
  if (problems.length) {
    throw new ApiError('agent_config_invalid', `The config cannot be simulated: ${problems.map((p) => p.message).join('; ')}`, {
      param: `config.${problems[0].field}`,
      restParam: `config[${problems[0].field}]`,
      details: { problems },
    });
  }
  return config as unknown as Record<string, unknown>;
}

/** A row held by a request or a run past the lock timeout, or another transient failure: 503, try again. */
function busy(error: unknown): unknown {
  if (!isTransientDatabaseError(error) || toApiError(error)) return error;
  return new ApiError('service_unavailable', 'A record the simulation replays over is being changed right now; retry shortly');
}

/** An action as the answer shows it: what started it, what was written, and no id of what would have been created. */
function sampled(
  action: AgentAction,
  event: Event | null,
  written: Record<string, unknown> | undefined,
  leads: Set<string>,
  deals: Set<string>,
): Record<string, unknown> {
  const { object_id: objectId, number, ...rest } = action;
  void number; // the proposal number it would have taken: never given
  const exists = typeof objectId === 'string' && (leads.has(objectId) || deals.has(objectId));
  return {
    ...rest,
    ...(exists ? { object_id: objectId } : {}),
    event_id: event?.id ?? null,
    event_type: event?.type ?? null,
    ...(written ? { written } : {}),
  };
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

import type { Knex } from '@mikro-orm/knex';
import { ActorType, actingAs } from '../../events/acting';
import { MikroORM } from '@mikro-orm/postgresql';
import { PollingWorker } from '../../common/polling-worker';
import { toApiError } from '../../common/known-errors';
import { isTransientDatabaseError } from '../../db/database-errors';
import { createScoped, tenantFork } from '../../db/tenant';
import { Event } from '../../events/event.entity';
import { FanOutConsumer, fanOutPending } from '../../events/outbox-fan-out';
import type { ServiceFactory } from '../module';
import type { Logger } from '../../logger';
import type { Metrics } from '../../http/metrics';
import { newId } from '../../common/ids';
import { BEHAVIOURS, SCHEDULED } from './agent-behaviours';
import { Agent, AgentAction, AgentRun, AgentStatus, AgentVersion, RunOutcome, RunTrigger } from './agent.entity';
import { AgentWriter, openWriter } from './agent-writer';

export interface AgentRunnerOptions {
  orm: MikroORM;
  logger: Logger;
  servicesFor: ServiceFactory;
  /** Everyone who owes work per event (src/app/workers.ts, outboxConsumers): one list per process. */
  consumers: readonly FanOutConsumer[];
  /** The time agents judge idleness by; tests move it forward. */
  clock?: () => Date;
  pollIntervalMs?: number;
  /** How often deal_follow_up agents scan for idle deals (default hourly). */
  scanIntervalMs?: number;
  concurrency?: number;
  /** How long a claimed task stays claimed (default 5 minutes). */
  leaseMs?: number;
  /** The first wait before a run that met a transient database failure is tried again (default 1 s; doubled each time). */
  retryDelayMs?: number;
  /** Counts runs by agent type and outcome (agent_runs_total). */
  metrics?: Metrics;
}

/** How long a claimed task stays claimed unless told otherwise. */
const DEFAULT_LEASE_MS = 300_000;

/** Attempts a task gets when the database fails transiently (a timeout under load, an outage, a deadlock) before it is recorded as an error. */
export const TRANSIENT_ATTEMPTS = 5;

interface TaskClaim {
  id: string;
  attempt_count: number;
  agent_id: string;
  agent_version: number;
  event_id: string | null;
  account_id: string;
  livemode: boolean;
}

/**
 * Runs deployed agents: it takes their tasks (events they react to, and scheduled scans) from
 * PostgreSQL like the webhook dispatcher takes deliveries, so any number of instances share the
 * work. A run's actions, its record and the task's completion commit together; a run that fails
 * is rolled back, recorded as an error, and never holds up other agents or the API; one that the
 * database failed transiently is rolled back and tried again (TRANSIENT_ATTEMPTS).
 */
export class AgentRunner extends PollingWorker<TaskClaim> {
  private readonly knex: Knex;
  private readonly consumers: readonly FanOutConsumer[];
  private readonly clock: () => Date;
  private readonly scanIntervalMs: number;

  constructor(private readonly options: AgentRunnerOptions) {
    super(options.logger, options.pollIntervalMs ?? 1_000, options.concurrency ?? 4);
    this.knex = options.orm.em.getKnex();
    this.consumers = options.consumers;
    this.clock = options.clock ?? (() => new Date());
    this.scanIntervalMs = options.scanIntervalMs ?? 3_600_000;
  }

  protected async prepare(full: boolean): Promise<boolean> {
    const made = await fanOutPending(this.knex, this.consumers, () => this.isStopped);
    // Scans are due by the clock, not by events: a pass that events woke does not look.
    if (full) await this.scheduleScans();
    return made;
  }

  /** One scan task per deployed agent of a scheduled type and interval; the slot makes it one across instances. */
  private async scheduleScans(): Promise<void> {
    const now = this.clock();
    const slot = Math.floor(now.getTime() / this.scanIntervalMs);
    await this.knex.raw(
      `insert into agent_tasks (id, created_at, updated_at, account_id, livemode, agent_id, agent_version, schedule_slot, attempt_count, next_attempt_at)
       select 'atask_' || replace(gen_random_uuid()::text, '-', ''), now(), now(), account_id, livemode, id, version, ?, 0, now()
         from agents where status = ? and type in (${SCHEDULED.map(() => '?').join(', ')})
       on conflict (agent_id, schedule_slot) do nothing`,
      [slot, AgentStatus.deployed, ...SCHEDULED],
    );
  }

  protected async claim(limit: number): Promise<TaskClaim[]> {
    const result = await this.knex.raw<{ rows: TaskClaim[] }>(
      `update agent_tasks set attempt_count = attempt_count + 1, next_attempt_at = now() + make_interval(secs => ?), updated_at = now()
       where id in (
         select id from agent_tasks where done_at is null and next_attempt_at <= now()
         order by next_attempt_at limit ? for update skip locked)
       returning id, attempt_count, agent_id, agent_version, event_id, account_id, livemode`,
      [(this.options.leaseMs ?? DEFAULT_LEASE_MS) / 1000, limit],
    );
    return result.rows;
  }

  protected describe(task: TaskClaim) {
    return { agentTaskId: task.id, agentId: task.agent_id };
  }

  protected async work(task: TaskClaim): Promise<void> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const scope = { accountId: task.account_id, livemode: task.livemode };
    const em = tenantFork(this.options.orm.em, scope);
    const agent = await em.findOne(Agent, { id: task.agent_id });
    if (!agent || agent.status !== AgentStatus.deployed) {
      await this.finish(task.id);
      return;
    }
    const [frozen, event] = await Promise.all([
      em.findOneOrFail(AgentVersion, { agent: agent.id, version: task.agent_version }),
      task.event_id ? em.findOne(Event, { id: task.event_id }) : Promise.resolve(null),
    ]);
    const runId = newId('arun');
    let writer: AgentWriter | undefined;
    const record = (runEm: typeof em, outcome: RunOutcome, actions: AgentAction[], error: string | null) => {
      const run = createScoped(runEm, AgentRun, {
        id: runId,
        usage: writer && writer.usage.calls > 0 ? { ...writer.usage } : null,
        agent: runEm.getReference(Agent, agent.id),
        version: task.agent_version,
        trigger: event ? RunTrigger.event : RunTrigger.schedule,
        eventId: event?.id ?? null,
        eventType: event?.type ?? null,
        outcome,
        actions,
        error,
        durationMs: elapsed(),
      });
      return run;
    };
    const behaviour = BEHAVIOURS[agent.type];
    let outcome: RunOutcome;
    try {
      let prepared: unknown;
      if (behaviour.prepare) {
        // Reads and the model's writing, outside any transaction, on their own EntityManager.
        const readEm = tenantFork(this.options.orm.em, scope);
        const services = this.options.servicesFor(readEm, actingAs(ActorType.agent, agent.id));
        // The model gets at most 40 % of the lease (two minutes by default), so a slow one cannot keep the run past it.
        writer = await openWriter(services, agent, frozen.config, { modelDeadline: Date.now() + 0.4 * (this.options.leaseMs ?? DEFAULT_LEASE_MS) });
        prepared = await behaviour.prepare({ em: readEm, services, agent, config: frozen.config, event, now: this.clock(), runId, writer });
      }
      // The run and everything it does, one transaction: services on `em` follow it.
      outcome = await em.transactional(async () => {
        const services = this.options.servicesFor(em, actingAs(ActorType.agent, agent.id));
        const actions = await behaviour.act({ em, services, agent, config: frozen.config, event, now: this.clock(), runId }, prepared);
        const run = record(em, actions.length ? RunOutcome.acted : RunOutcome.no_action, actions, null);
        if (actions.length) services.recorder.record('agent.action', run);
        await em.flush();
        await this.finish(task.id, em.getTransactionContext());
        return run.outcome;
      });
    } catch (error) {
      const known = toApiError(error);
      // The database failed, not the run (a statement stopped by its timeout on a busy machine): try again later.
      const transient = isTransientDatabaseError(error) || known?.errorCode === 'service_unavailable';
      if (transient && task.attempt_count < TRANSIENT_ATTEMPTS) {
        this.options.logger.warn(
          { agentId: agent.id, agentTaskId: task.id, attempt: task.attempt_count, err: error },
          'agent run met a transient database failure; will retry',
        );
        await this.retryLater(task);
        return;
      }
      // What a client may read: our own errors' messages; anything else (driver text with SQL) stays in the log.
      const message = known ? `${known.errorCode}: ${known.message}` : 'The run failed unexpectedly; the details are in the service log.';
      this.options.logger.warn({ agentId: agent.id, agentTaskId: task.id, err: error }, 'agent run failed; recorded as an error');
      const fresh = tenantFork(this.options.orm.em, scope);
      await fresh.transactional(async () => {
        record(fresh, RunOutcome.error, [], message.slice(0, 1000));
        await fresh.flush();
        await this.finish(task.id, fresh.getTransactionContext());
      });
      outcome = RunOutcome.error;
    }
    this.options.metrics?.agentRun(agent.type, outcome);
  }

  /** Due again after a doubling delay; the claim's lease is replaced. */
  private async retryLater(task: TaskClaim): Promise<void> {
    const delayMs = (this.options.retryDelayMs ?? 1_000) * 2 ** (task.attempt_count - 1);
    await this.knex('agent_tasks')
      .where({ id: task.id })
      .update({ next_attempt_at: new Date(Date.now() + delayMs), updated_at: new Date() });
  }

  private async finish(taskId: string, trx?: Knex.Transaction): Promise<void> {
    await (trx ?? this.knex)('agent_tasks').where({ id: taskId }).update({ done_at: new Date(), updated_at: new Date() });
  }
}

import type { FanOutConsumer } from '../events/outbox-fan-out';
import type { FanOutSettings, Worker, WorkerContext } from '../modules/module';
import { providerSettingsOf } from '../modules/integrations/providers/crm-clients';
import { systemResolver } from '../http/address-guard';
import { CONFLICTS, EVENTS, MODULES } from './modules';

/**
 * Everyone who owes work per event: every module's fan-outs, in module order. Every worker that
 * fans out (the webhook dispatcher, the agent runner, the sync engine) is given the same list, so
 * whichever takes an event first creates the work of all, and workers of one process share a fan-out.
 */
export function outboxConsumers(settings: Pick<FanOutSettings, 'webhookRetrySchedule'>): readonly FanOutConsumer[] {
  return MODULES.flatMap((module) => module.fanOuts?.({ ...settings, events: EVENTS }) ?? []);
}

/** The process's background workers, by the names their modules give them. */
export class Workers {
  constructor(readonly byName: ReadonlyMap<string, Worker>) {}

  /** A worker a test drives itself (`workers.get<ModelTrainer>('trainer')`). */
  get<T extends Worker>(name: string): T | undefined {
    return this.byName.get(name) as T | undefined;
  }

  start(): void {
    for (const worker of this.byName.values()) worker.start();
  }

  /** Each finishes what it has under way (an attempt within its own deadline); what is left is taken up after a restart. */
  async stop(): Promise<void> {
    await Promise.all([...this.byName.values()].map((worker) => worker.stop()));
  }
}

/**
 * Every module's workers over one context (main.ts), or with `only` the named ones with a test's
 * overrides (test/helpers/app.ts). Built, not started.
 */
export function createWorkers(
  context: Omit<WorkerContext, 'consumers' | 'conflicts' | 'providers' | 'resolveHost'> & Partial<Pick<WorkerContext, 'resolveHost'>>,
  only?: Record<string, object>,
): Workers {
  const resolveHost = context.resolveHost ?? systemResolver;
  const complete: WorkerContext = {
    ...context,
    resolveHost,
    consumers: outboxConsumers(context.config),
    conflicts: CONFLICTS,
    providers: providerSettingsOf(context.config, resolveHost),
  };
  const factories = new Map<string, (context: WorkerContext, overrides?: object) => Worker>();
  for (const module of MODULES) {
    for (const [name, factory] of Object.entries(module.workers ?? {})) {
      if (factories.has(name)) throw new Error(`two modules have a worker named ${name} (the second: ${module.name})`);
      factories.set(name, factory);
    }
  }
  for (const name of Object.keys(only ?? {})) if (!factories.has(name)) throw new Error(`no module has a worker named ${name}`);
  const chosen = only ? [...factories].filter(([name]) => name in only) : [...factories];
  return new Workers(new Map(chosen.map(([name, factory]) => [name, factory(complete, only?.[name])])));
}

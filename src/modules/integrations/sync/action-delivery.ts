import type { EntityManager } from '@mikro-orm/postgresql';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { tenantOf } from '../../../db/tenant';
import { AgentRun, AgentVersion } from '../../agents/agent.entity';
import { Integration, IntegrationType } from '../integration.entity';
import { actionId } from './action-fan-out';
import { SyncFailure, SyncLink, SyncPending, SyncRun } from './sync.entities';

export enum ActionDeliveryKind {
  outlook_draft = 'outlook_draft',
  todo_task = 'todo_task',
}
registerEnumType(ActionDeliveryKind, { name: 'ActionDeliveryKind', description: "The agent's deliver_to: an Outlook draft or a Microsoft To Do task." });

export enum ActionDeliveryStatus {
  pending = 'pending',
  delivered = 'delivered',
  failed = 'failed',
}
registerEnumType(ActionDeliveryStatus, {
  name: 'ActionDeliveryStatus',
  description:
    'pending: owed to the mailbox (also while the integration is in error); delivered: in the mailbox, graphId set; failed: given up (error says why).',
});

/** One follow-up of an agent run and where it went in a Microsoft 365 mailbox. */
@ObjectType({ simpleResolvers: true, description: 'A follow-up of an agent run on its way to a Microsoft 365 mailbox, or in it.' })
export class ActionDelivery {
  @Field(() => Int, { description: "The action's place in the run's actions (0 first)." })
  actionIndex!: number;

  @Field(() => ActionDeliveryKind)
  kind!: ActionDeliveryKind;

  @Field(() => ID, { description: 'The Microsoft 365 integration (int_…).' })
  integrationId!: string;

  @Field(() => ActionDeliveryStatus)
  status!: ActionDeliveryStatus;

  @Field(() => String, { nullable: true, description: "Microsoft Graph's id of the draft message or To Do task, once delivered." })
  graphId!: string | null;

  @Field(() => Date, { nullable: true })
  deliveredAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'Why it failed, for a failed delivery.' })
  error!: string | null;
}

const KIND_OF_RECORD: Record<string, ActionDeliveryKind> = { message: ActionDeliveryKind.outlook_draft, todoTask: ActionDeliveryKind.todo_task };

/**
 * Where an agent run's follow-ups are, per Microsoft 365 integration of its account and mode: the
 * link to Graph's item (delivered), the owed row (pending), or the last failure (failed). Read
 * through the run's own action ids and the tenant's Microsoft 365 integrations, so each read is an
 * index lookup.
 */
export class ActionDeliveryService {
  /** The tenant's Microsoft 365 integrations (disconnected ones too: what they delivered stays shown), read once per request. */
  private integrations?: Promise<string[]>;

  constructor(private readonly em: EntityManager) {}

  async of(run: AgentRun): Promise<ActionDelivery[]> {
    const indexes = run.actions.flatMap((action, index) => (action.kind === 'deal_idle' ? [index] : []));
    if (indexes.length === 0) return [];
    this.integrations ??= this.em.find(Integration, { type: IntegrationType.m365 }, { fields: ['id'] }).then((found) => found.map((one) => one.id));
    const integrations = await this.integrations;
    if (integrations.length === 0) return [];
    const ids = indexes.map((index) => actionId(run.id, index));
    const where = { integration: { $in: integrations }, objectType: 'action' as const, objectId: { $in: ids } };
    const { accountId, livemode } = tenantOf(this.em);
    const links = await this.em.find(SyncLink, where);
    const owed = await this.em.find(SyncPending, { ...where, accountId, livemode });
    const failures = await this.em.find(SyncFailure, { objectType: 'action', objectId: { $in: ids } }, { orderBy: { id: 'desc' } });
    const failedRuns = failures.length ? await this.em.find(SyncRun, { id: { $in: [...new Set(failures.map((failure) => failure.run.id))] } }) : [];
    const integrationOfRun = new Map(failedRuns.map((failedRun) => [failedRun.id, failedRun.integration.id]));
    const deliveries = new Map<string, ActionDelivery>();
    const key = (integrationId: string, objectId: string) => `${integrationId} ${objectId}`;
    let configured: ActionDeliveryKind | undefined;
    const kindOfRun = async () => {
      if (configured) return configured;
      const version = await this.em.findOne(AgentVersion, { agent: run.agent.id, version: run.version });
      return (configured = version?.config.deliver_to === 'todo_task' ? ActionDeliveryKind.todo_task : ActionDeliveryKind.outlook_draft);
    };
    const add = (integrationId: string, objectId: string, delivery: Omit<ActionDelivery, 'actionIndex' | 'integrationId'>) => {
      if (deliveries.has(key(integrationId, objectId))) return;
      deliveries.set(key(integrationId, objectId), { actionIndex: indexes[ids.indexOf(objectId)], integrationId, ...delivery });
    };
    for (const link of links) {
      const kind =
        Object.keys(link.external)
          .map((name) => KIND_OF_RECORD[name])
          .find(Boolean) ?? (await kindOfRun());
      add(link.integration.id, link.objectId, {
        kind,
        status: ActionDeliveryStatus.delivered,
        graphId: link.externalId,
        deliveredAt: link.syncedAt,
        error: null,
      });
    }
    for (const row of owed) {
      add(row.integration.id, row.objectId, { kind: await kindOfRun(), status: ActionDeliveryStatus.pending, graphId: null, deliveredAt: null, error: null });
    }
    for (const failure of failures) {
      const integrationId = integrationOfRun.get(failure.run.id);
      if (!integrationId || !integrations.includes(integrationId) || !failure.objectId) continue;
      add(integrationId, failure.objectId, {
        kind: await kindOfRun(),
        status: ActionDeliveryStatus.failed,
        graphId: null,
        deliveredAt: null,
        error: failure.message,
      });
    }
    return [...deliveries.values()].sort((a, b) => a.actionIndex - b.actionIndex || a.integrationId.localeCompare(b.integrationId));
  }
}

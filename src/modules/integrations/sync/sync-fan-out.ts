import type { Knex } from '@mikro-orm/knex';
import { FanOutConsumer, mayOweIfAny, OutboxEvent } from '../../../events/outbox-fan-out';
import { sameTenant } from '../../../db/tenant-sql';
import type { CrmObjectKind } from '../providers/crm-client';
import { IntegrationStatus, IntegrationType } from '../integration.entity';
import type { SyncObjectType } from './sync.entities';

/** The integration types whose providers receive our leads and deals: CRMs (two-way) and PSAs (push only). */
export const OBJECT_SYNC_TYPES: readonly IntegrationType[] = [IntegrationType.crm, IntegrationType.psa];

/** The events that owe a lead or deal to the account's CRMs (stage moves and co-sell come as deal.updated too). */
const OWED: Record<string, CrmObjectKind> = {
  'lead.created': 'lead',
  'lead.updated': 'lead',
  'lead.deleted': 'lead',
  'deal.created': 'deal',
  'deal.updated': 'deal',
  'deal.stage_changed': 'deal',
  'deal.deleted': 'deal',
};

/**
 * One pending change per object and CRM or PSA integration of the event's account and mode that is not
 * disconnected (one row however many events: the push sends the object as it is then). An
 * integration in error keeps collecting them, and pushes them once it recovers.
 */
export const syncFanOut: FanOutConsumer = {
  mayOwe: mayOweIfAny('integrations', `t.type in (${OBJECT_SYNC_TYPES.map(() => '?').join(', ')}) and t.status <> ?`, [
    ...OBJECT_SYNC_TYPES,
    IntegrationStatus.disconnected,
  ]),
  owe: oweObjects,
};

async function oweObjects(trx: Knex.Transaction, events: OutboxEvent[], now: Date): Promise<number> {
  const owed = events.filter((event) => OWED[event.type]);
  if (owed.length === 0) return 0;
  const integrations: Array<{ id: string; account_id: string; livemode: boolean }> = await trx('integrations')
    .select('id', 'account_id', 'livemode')
    .whereIn('type', OBJECT_SYNC_TYPES)
    .whereNot('status', IntegrationStatus.disconnected)
    .whereIn('account_id', [...new Set(owed.map((event) => event.account_id))]);
  if (integrations.length === 0) return 0;
  const objects: Array<{ id: string; object_id: string | null }> = await trx('events')
    .select('id', trx.raw(`data->'object'->>'id' as object_id`))
    .whereIn(
      'id',
      owed.map((event) => event.id),
    );
  const objectOf = new Map(objects.map((row) => [row.id, row.object_id]));
  const rows = new Map<string, OwedChange>();
  for (const event of owed) {
    const objectId = objectOf.get(event.id);
    if (!objectId) continue;
    for (const integration of integrations) {
      if (!sameTenant(integration, event)) continue;
      const objectType = OWED[event.type];
      rows.set(`${integration.id}/${objectType}/${objectId}`, {
        integration_id: integration.id,
        object_type: objectType,
        object_id: objectId,
        account_id: event.account_id,
        livemode: event.livemode,
        changed_at: now,
      });
    }
  }
  if (rows.size === 0) return 0;
  await oweChanges(trx, [...rows.values()]);
  return rows.size;
}

/** A pending change row: an object owed to an integration's CRM (or an agent's action owed to Microsoft 365). */
export interface OwedChange {
  integration_id: string;
  object_type: SyncObjectType;
  object_id: string;
  account_id: string;
  livemode: boolean;
  changed_at: Date;
}

/** Owes objects to their integrations: one row per object and integration, its time moved to the latest change. */
export async function oweChanges(trx: Knex.Transaction, rows: OwedChange[]): Promise<void> {
  await trx('integration_pending_changes').insert(rows).onConflict(['integration_id', 'object_type', 'object_id']).merge(['changed_at']);
}

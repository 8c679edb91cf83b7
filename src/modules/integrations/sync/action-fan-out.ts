import { isId } from '../../../common/ids';
import type { Knex } from '@mikro-orm/knex';
import { FanOutConsumer, mayOweIfAny, OutboxEvent } from '../../../events/outbox-fan-out';
import { sameTenant } from '../../../db/tenant-sql';
import { AgentType, DeliverTo } from '../../agents/agent-config';
import { IntegrationStatus, IntegrationType } from '../integration.entity';
import { oweChanges, OwedChange } from './sync-fan-out';

/** The deliver_to values that reach Microsoft 365 (`none` keeps a follow-up to its event). */
const DELIVERED: readonly DeliverTo[] = ['outlook_draft', 'todo_task'];

/** An action's id in the engine's rows and at Graph: the run that took it and its place in the run's actions. */
export const actionId = (runId: string, index: number): string => `${runId}:${index}`;

/** The run and index an action id names, or null for anything else. */
export function parseActionId(id: string): { runId: string; index: number } | null {
  const match = /^(\w+):(\d{1,6})$/.exec(id);
  return match && isId('arun', match[1]) ? { runId: match[1], index: Number(match[2]) } : null;
}

/**
 * Owes actions to every Microsoft 365 integration of the event's account and mode that is not disconnected (one
 * pending row per action and integration, object_type `action`): an approved follow_up_email suggestion, as an
 * Outlook draft, and each `deal_idle` action of a deal_follow_up run whose version has `deliver_to` other than
 * `none`. An integration in error keeps them until it is back. The run and its version are read in the fan-out's
 * transaction: they were written with the event, and a version never changes.
 */
export const actionFanOut: FanOutConsumer = {
  mayOwe: mayOweIfAny('integrations', 't.type = ? and t.status <> ?', [IntegrationType.m365, IntegrationStatus.disconnected]),
  owe: oweActions,
};

async function oweActions(trx: Knex.Transaction, events: OutboxEvent[], now: Date): Promise<number> {
  const raised = events.filter((event) => event.type === 'agent.action' || event.type === 'agent.suggestion_approved');
  if (raised.length === 0) return 0;
  const integrations: Array<{ id: string; account_id: string; livemode: boolean }> = await trx('integrations')
    .select('id', 'account_id', 'livemode')
    .where('type', IntegrationType.m365)
    .whereNot('status', IntegrationStatus.disconnected)
    .whereIn('account_id', [...new Set(raised.map((event) => event.account_id))]);
  if (integrations.length === 0) return 0;
  const followUps: Array<{ account_id: string; livemode: boolean; run_id: string; action_index: number }> = await trx('events as e')
    .select('e.id as event_id', 'e.account_id', 'e.livemode', 'r.id as run_id', trx.raw('cast(a.ordinality as int) - 1 as action_index'))
    .join('agent_runs as r', function () {
      this.on('r.id', '=', trx.raw(`e.data->'object'->>'id'`)).andOn('r.account_id', '=', 'e.account_id').andOn('r.livemode', '=', 'e.livemode');
    })
    .join('agents as g', 'g.id', 'r.agent_id')
    .join('agent_versions as v', function () {
      this.on('v.agent_id', '=', 'r.agent_id').andOn('v.version', '=', 'r.version');
    })
    .joinRaw('cross join lateral jsonb_array_elements(r.actions) with ordinality as a(action, ordinality)')
    .whereIn(
      'e.id',
      raised.filter((event) => event.type === 'agent.action').map((event) => event.id),
    )
    .where('g.type', AgentType.deal_follow_up)
    .whereRaw(`v.config->>'deliver_to' in (${DELIVERED.map(() => '?').join(', ')})`, [...DELIVERED])
    .whereRaw(`a.action->>'kind' = ?`, ['deal_idle']);
  // An approved e-mail suggestion becomes a draft (its own id names it at Graph), whatever the writer's config.
  const emails: Array<{ account_id: string; livemode: boolean; suggestion_id: string }> = await trx('events as e')
    .select('e.account_id', 'e.livemode', 's.id as suggestion_id')
    .join('agent_suggestions as s', function () {
      this.on('s.id', '=', trx.raw(`e.data->'object'->>'id'`)).andOn('s.account_id', '=', 'e.account_id').andOn('s.livemode', '=', 'e.livemode');
    })
    .whereIn(
      'e.id',
      raised.filter((event) => event.type === 'agent.suggestion_approved').map((event) => event.id),
    )
    .where('s.kind', 'follow_up_email');
  const actions = [
    ...followUps.map((action) => ({ ...action, id: actionId(action.run_id, action.action_index) })),
    ...emails.map((email) => ({ ...email, id: email.suggestion_id })),
  ];
  const rows: OwedChange[] = [];
  for (const action of actions) {
    for (const integration of integrations) {
      if (!sameTenant(integration, action)) continue;
      rows.push({
        integration_id: integration.id,
        object_type: 'action',
        object_id: action.id,
        account_id: action.account_id,
        livemode: action.livemode,
        changed_at: now,
      });
    }
  }
  if (rows.length === 0) return 0;
  await oweChanges(trx, rows);
  return rows.length;
}

import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DealStage } from '../../deals/deal-stage';
import type { Deal } from '../../deals/deal.entity';
import { Proposal } from '../../proposals/proposal.entity';
import type { DeliveryOrder } from '../providers/crm-client';

/** The names a PSA's delivery record goes by in a link's external ids (settings.delivery_record). */
export const DELIVERY_RECORD_KINDS: ReadonlySet<string> = new Set(['project', 'agreement', 'contract', 'ticket']);

/**
 * The delivery orders of the won deals among `deals`: each from its latest proposal (the one the
 * customer was last issued; an expired validity does not undo a won deal). A won deal without a
 * proposal has none: there are no lines to hand over.
 */
export async function deliveryOrders(em: EntityManager, deals: Deal[]): Promise<Map<string, DeliveryOrder>> {
  const won = deals.filter((deal) => deal.stage === DealStage.closed_won).map((deal) => deal.id);
  if (won.length === 0) return new Map();
  const proposals = await em.find(Proposal, { deal: { $in: won } }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  const orders = new Map<string, DeliveryOrder>();
  for (const proposal of proposals) {
    if (orders.has(proposal.dealId)) continue;
    orders.set(proposal.dealId, {
      proposalId: proposal.id,
      number: proposal.number,
      title: proposal.title,
      currency: proposal.currency,
      total: proposal.total,
      lines: proposal.lineItems.map((line) => ({ description: line.description, quantity: line.quantity, unitPrice: line.unitPrice, amount: line.amount })),
    });
  }
  return orders;
}

/**
 * Shows on each deal the records it is linked to (deals.external_ids, the deal's `external_ids`):
 * rebuilt from its links in the link's transaction, so what a client reads is what the links hold.
 * Written by SQL alone: the deal itself did not change (no updated_at, no event, nothing owed back).
 */
export async function showExternalIds(knex: Knex, trx: Knex.Transaction | undefined, dealIds: string[]): Promise<void> {
  if (dealIds.length === 0) return;
  const query = knex.raw(
    `update deals d set external_ids = coalesce((
       select jsonb_agg(jsonb_build_object('integrationId', l.integration_id, 'provider', i.provider, 'record', e.key, 'id', e.value)
                        order by l.created_at, l.integration_id, e.key)
         from integration_links l
         join integrations i on i.id = l.integration_id
         cross join lateral jsonb_each_text(l.external::jsonb) e
        where l.object_type = 'deal' and l.object_id = d.id), '[]'::jsonb)
      where d.id = any(?)`,
    [dealIds],
  );
  await (trx ? query.transacting(trx) : query);
}

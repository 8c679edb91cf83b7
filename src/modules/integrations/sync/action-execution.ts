import type { EntityManager } from '@mikro-orm/postgresql';
import { createScoped } from '../../../db/tenant';
import { AgentRun, AgentVersion } from '../../agents/agent.entity';
import { Deal } from '../../deals/deal.entity';
import type { Integration } from '../integration.entity';
import { isId } from '../../../common/ids';
import { AgentSuggestion, SuggestionKind, SuggestionStatus } from '../../agents/agent-suggestion.entity';
import { Lead } from '../../leads/lead.entity';
import type { DeliveredItem, MailboxClient, OutboundDraft, OutboundTask } from '../providers/m365-client';
import { GraphItemRefused } from '../providers/m365-graph';
import { approvedDraftFor, draftFor, taskFor } from './action-content';
import { parseActionId } from './action-fan-out';
import type { RunCounts } from './sync-execution';
import { SyncDirection, SyncFailure, SyncLink, SyncRun } from './sync.entities';

/** Owed actions read at once (each is then delivered and committed on its own). */
const STEP = 20;

/** What the execution needs from the worker that claimed the run. */
export interface ActionHost {
  /** A fresh EntityManager scoped to the run's account and mode. */
  fork(): EntityManager;
  /** The mailbox's client, opened (made once per run, when first needed). */
  mailbox(): Promise<MailboxClient>;
  /** A Graph call succeeded: an integration in error is connected again (once per run). */
  healthy(): Promise<void>;
  /** Stores the counts; throws when this instance no longer holds the run. */
  progress(counts: RunCounts): Promise<void>;
}

interface Owed {
  object_id: string;
  changed_at: Date;
}

/** What to write in the mailbox for one owed action, and the deal it is about (null for a lead's e-mail). */
type Delivery = { dealId: string | null } & ({ deliverTo: 'outlook_draft'; item: OutboundDraft } | { deliverTo: 'todo_task'; item: OutboundTask });

/**
 * A Microsoft 365 run: the agents' follow-ups owed to the mailbox (object_type `action`, from action-fan-out.ts),
 * oldest first. Each is looked for at Graph before it is written, and linked in the transaction that removes
 * what was owed, so a crash at any point ends in exactly one item (docs/DESIGN.md, "Agents' follow-ups"). A 400
 * or a deleted deal fails that action only; whatever stops the mailbox stops the run, leaving the rest owed.
 */
export class ActionExecution {
  constructor(
    private readonly integration: Integration,
    private readonly run: SyncRun,
    private readonly host: ActionHost,
    readonly counts: RunCounts,
    private readonly publicUrl: string,
  ) {}

  async push(): Promise<void> {
    this.counts.toPush = await this.owedCount();
    await this.host.progress(this.counts);
    for (;;) {
      const owed: Owed[] = await this.host
        .fork()
        .getKnex()('integration_pending_changes')
        .select('object_id', 'changed_at')
        .where({ integration_id: this.integration.id, object_type: 'action' })
        .orderBy([{ column: 'changed_at' }, { column: 'object_id' }])
        .limit(STEP);
      if (owed.length === 0) return;
      for (const row of owed) {
        await this.deliver(row);
        // Stored after each one: a run that lost its lease to another instance stops before its next write.
        this.counts.toPush = Math.max(0, this.counts.toPush - 1);
        await this.host.progress(this.counts);
      }
      this.counts.toPush = await this.owedCount();
      await this.host.progress(this.counts);
    }
  }

  private async owedCount(): Promise<number> {
    const [row] = await this.host
      .fork()
      .getKnex()('integration_pending_changes')
      .where({ integration_id: this.integration.id })
      .count<{ count: string }[]>('* as count');
    return Number(row.count);
  }

  private async deliver(row: Owed): Promise<void> {
    const em = this.host.fork();
    // Owed again after it was delivered (the link is kept): nothing to write.
    if (await em.count(SyncLink, { integration: this.integration.id, objectType: 'action', objectId: row.object_id })) {
      await this.settle(em, row, {});
      return;
    }
    const delivery = await this.deliveryOf(em, row.object_id);
    if (typeof delivery === 'string') {
      await this.settle(em, row, { failure: delivery });
      return;
    }
    const mailbox = await this.host.mailbox();
    let item: DeliveredItem;
    try {
      item = delivery.deliverTo === 'outlook_draft' ? await mailbox.saveDraft(delivery.item) : await mailbox.addTask(delivery.item);
    } catch (error) {
      if (!(error instanceof GraphItemRefused)) throw error;
      await this.settle(em, row, { failure: error.message });
      return;
    }
    await this.host.healthy();
    await this.settle(em, row, { item, delivery });
  }

  /** The follow-up an owed action id names, as it is now, or why there is none to deliver. */
  private async deliveryOf(em: EntityManager, id: string): Promise<Delivery | string> {
    if (isId('sugg', id)) return this.approvedEmail(em, id);
    const parsed = parseActionId(id);
    const agentRun = parsed ? await em.findOne(AgentRun, { id: parsed.runId }) : null;
    const action = parsed && agentRun ? agentRun.actions[parsed.index] : undefined;
    if (!agentRun || action?.kind !== 'deal_idle') return `${id} is not a follow-up of an agent run here`;
    const version = await em.findOne(AgentVersion, { agent: agentRun.agent.id, version: agentRun.version });
    const deliverTo = version?.config.deliver_to;
    if (deliverTo !== 'outlook_draft' && deliverTo !== 'todo_task') return `version ${agentRun.version} of agent ${agentRun.agent.id} delivers no follow-ups`;
    const deal = await em.findOne(Deal, { id: action.object_id });
    if (!deal) return `the deal ${action.object_id} was deleted before its follow-up was delivered`;
    const lead = deal.lead ? await deal.lead.load() : null;
    const followUp = { actionId: id, deal, lead, action, publicUrl: this.publicUrl };
    return deliverTo === 'outlook_draft' ? { deliverTo, item: draftFor(followUp), dealId: deal.id } : { deliverTo, item: taskFor(followUp), dealId: deal.id };
  }

  /** An approved follow_up_email suggestion, as an Outlook draft to its lead's contact. */
  private async approvedEmail(em: EntityManager, id: string): Promise<Delivery | string> {
    const suggestion = await em.findOne(AgentSuggestion, { id });
    if (suggestion?.kind !== SuggestionKind.follow_up_email || suggestion.status !== SuggestionStatus.approved) {
      return `${id} is not an approved e-mail suggestion here`;
    }
    // As a deal_idle follow-up whose deal is gone: an e-mail about a deleted lead or deal is not written (it would have no recipient, or none it is about).
    const lead = suggestion.leadId ? await em.findOne(Lead, { id: suggestion.leadId }) : null;
    if (suggestion.leadId && !lead) return `the lead ${suggestion.leadId} was deleted before its approved e-mail was delivered`;
    if (suggestion.dealId && !(await em.count(Deal, { id: suggestion.dealId }))) {
      return `the deal ${suggestion.dealId} was deleted before its approved e-mail was delivered`;
    }
    return { deliverTo: 'outlook_draft', item: approvedDraftFor(suggestion, lead), dealId: suggestion.dealId ?? null };
  }

  /**
   * In one transaction: the link to what was delivered (or the failure), and the owed row removed,
   * unless it was owed again meanwhile (then the next step finds the link).
   */
  private async settle(em: EntityManager, row: Owed, outcome: { item?: DeliveredItem; delivery?: Delivery; failure?: string }): Promise<void> {
    await em.transactional(async () => {
      if (outcome.item && outcome.delivery) {
        createScoped(em, SyncLink, {
          integration: this.integration.id,
          objectType: 'action',
          objectId: row.object_id,
          externalId: outcome.item.id,
          external: outcome.item.external,
          fields: { deliver_to: outcome.delivery.deliverTo, deal_id: outcome.delivery.dealId, found: outcome.item.found },
          syncedAt: new Date(),
        });
        this.counts.pushed += 1;
      }
      if (outcome.failure) {
        this.counts.failed += 1;
        createScoped(em, SyncFailure, {
          run: this.run.id,
          direction: SyncDirection.push,
          objectType: 'action',
          objectId: row.object_id,
          externalId: null,
          message: outcome.failure.slice(0, 1000),
        });
      }
      await em.flush();
      await em
        .getKnex()('integration_pending_changes')
        .transacting(em.getTransactionContext()!)
        .where({ integration_id: this.integration.id, object_type: 'action', object_id: row.object_id, changed_at: row.changed_at })
        .delete();
    });
  }
}

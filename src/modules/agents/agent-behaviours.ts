import { EntityManager, LockMode } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { validInput } from '../../common/validation';
import type { Event } from '../../events/event.entity';
import type { Services } from '../module';
import { DealCreateInput } from '../deals/deal.inputs';
import { Deal } from '../deals/deal.entity';
import { DealStage } from '../deals/deal-stage';
import { Lead } from '../leads/lead.entity';
import { LeadUpdateInput } from '../leads/lead.inputs';
import { LeadStatus } from '../leads/lead-status';
import { ProposalCreateInput } from '../proposals/proposal.inputs';
import { AgentType, DealFollowUpConfig, LeadQualifierConfig, ProposalDrafterConfig } from './agent-config';
import type { Agent, AgentAction } from './agent.entity';

export interface AgentWork {
  /** The run's transaction, scoped to the agent's account and mode. */
  em: EntityManager;
  services: Services;
  agent: Agent;
  config: Record<string, unknown>;
  /** The event that started the run; null for a scheduled scan. */
  event: Event | null;
  now: Date;
}

/** Which events start a run of each type; deal_follow_up runs on a schedule instead. */
export const TRIGGERS: Record<AgentType, readonly string[]> = {
  // lead.scored comes with every new lead and every change to what the score reads.
  lead_qualifier: ['lead.scored'],
  proposal_drafter: ['deal.created', 'deal.stage_changed'],
  deal_follow_up: [],
};

const DAY_MS = 86_400_000;
const isMissing = (error: unknown) => error instanceof ApiError && error.errorCode === 'resource_missing';

/** The object an event is about, as it was then. */
const subject = (event: Event | null) => event?.data.object as { id: string; stage?: string } | undefined;

/**
 * Qualifies a new or rescored lead by its score: at or above qualify_at it becomes qualified (and,
 * with open_deal, gets a deal if it has none); below disqualify_below, disqualified. Leads a person
 * has already moved past contacted are left alone.
 */
async function qualifyLead({ em, services, config, event }: AgentWork): Promise<AgentAction[]> {
  const settings = config as unknown as LeadQualifierConfig;
  const leadId = subject(event)?.id;
  if (!leadId) return [];
  // Locked for the run: two runs about one lead (two quick rescores) take turns, and the second sees the first's outcome.
  const lead = await em.findOne(Lead, { id: leadId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!lead || (lead.status !== LeadStatus.new && lead.status !== LeadStatus.contacted)) return [];
  const status = lead.score >= settings.qualify_at ? LeadStatus.qualified : lead.score < settings.disqualify_below ? LeadStatus.disqualified : null;
  if (!status) return [];
  await services.leads.update(lead.id, await validInput(LeadUpdateInput, { status }));
  const actions: AgentAction[] = [{ kind: status === LeadStatus.qualified ? 'lead_qualified' : 'lead_disqualified', object_id: lead.id, score: lead.score }];
  if (status === LeadStatus.qualified && settings.open_deal) {
    const existing = await services.deals.list({ leadId: lead.id, limit: 1 });
    if (existing.data.length === 0) {
      const deal = await services.deals.create(
        await validInput(DealCreateInput, { name: lead.company, leadId: lead.id, value: settings.deal_value, stage: settings.deal_stage }),
      );
      actions.push({ kind: 'deal_opened', object_id: deal.id, lead_id: lead.id });
    }
  }
  return actions;
}

/** Drafts a proposal, with the configured terms, for a deal that has entered the proposal stage. */
async function draftProposal({ services, config, event }: AgentWork): Promise<AgentAction[]> {
  const settings = config as unknown as ProposalDrafterConfig;
  const deal = subject(event);
  if (!deal || deal.stage !== DealStage.proposal) return [];
  const current = await services.deals.get(deal.id).catch((error: unknown) => (isMissing(error) ? null : Promise.reject(error)));
  if (!current || current.stage !== DealStage.proposal) return []; // it has moved on since
  const proposal = await services.proposals.create(
    await validInput(ProposalCreateInput, {
      dealId: current.id,
      validDays: settings.valid_days,
      discountPercent: settings.discount_percent,
      taxPercent: settings.tax_percent,
      notes: settings.notes,
    }),
  );
  return [{ kind: 'proposal_drafted', object_id: proposal.id, deal_id: current.id, number: proposal.number }];
}

/**
 * Raises each open deal that has sat in its stage longer than the stage's idle_days, once per
 * stage it enters (agent_follow_ups remembers what was raised, across runs and instances).
 */
async function followUpIdleDeals({ em, agent, config, now }: AgentWork): Promise<AgentAction[]> {
  const settings = config as unknown as DealFollowUpConfig;
  const stages = Object.keys(settings.idle_days) as DealStage[];
  const deals = await em.find(Deal, { stage: { $in: stages } }, { orderBy: { stageChangedAt: 'asc', id: 'asc' } });
  const actions: AgentAction[] = [];
  for (const deal of deals) {
    const idleDays = settings.idle_days[deal.stage];
    if (now.getTime() - deal.stageChangedAt.getTime() < idleDays * DAY_MS) continue;
    const inserted = await em.getConnection().execute(
      `insert into agent_follow_ups (agent_id, deal_id, stage_changed_at, created_at) values (?, ?, ?, ?)
       on conflict do nothing returning deal_id`,
      [agent.id, deal.id, deal.stageChangedAt, now],
      'all',
      em.getTransactionContext(),
    );
    if (inserted.length === 0) continue;
    actions.push({
      kind: 'deal_idle',
      object_id: deal.id,
      stage: deal.stage,
      idle_days: Math.floor((now.getTime() - deal.stageChangedAt.getTime()) / DAY_MS),
      threshold_days: idleDays,
    });
  }
  return actions;
}

export const BEHAVIOURS: Record<AgentType, (work: AgentWork) => Promise<AgentAction[]>> = {
  lead_qualifier: qualifyLead,
  proposal_drafter: draftProposal,
  deal_follow_up: followUpIdleDeals,
};

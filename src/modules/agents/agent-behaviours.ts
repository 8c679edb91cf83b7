import { LockMode } from '@mikro-orm/postgresql';
import { validInput } from '../../common/validation';
import type { Event } from '../../events/event.entity';
import type { Services } from '../module';
import { DealCreateInput } from '../deals/deal.inputs';
import { DealStage } from '../deals/deal-stage';
import { Lead } from '../leads/lead.entity';
import { LeadUpdateInput } from '../leads/lead.inputs';
import { LeadStatus } from '../leads/lead-status';
import { ProposalCreateInput } from '../proposals/proposal.inputs';
import { AgentType, DealFollowUpConfig, LeadQualifierConfig, LeadRouterConfig, ProposalDrafterConfig, RoutingRule } from './agent-config';
import { Member, MemberStatus } from '../members/member.entity';
import { roundRobinTurns } from './agent-metrics.queries';
import type { AgentAction } from './agent.entity';
import type { Written } from './agent-writer';
import { coverNote, CoverNote } from './agent-writings';
import { followUpWriter, leadResearcher } from './agent-writers';
import { AgentWork, Behaviour, behaviour, idleDeals, isMissing, PrepareWork, raiseOnce, subject } from './agent-work';

/** Which events start a run of each type; deal_follow_up runs on a schedule instead, follow_up_writer on both. */
export const TRIGGERS: Record<AgentType, readonly string[]> = {
  // lead.scored comes with every new lead and every change to what the score reads.
  lead_qualifier: ['lead.scored'],
  proposal_drafter: ['deal.created', 'deal.stage_changed'],
  deal_follow_up: [],
  // A lead that has just become qualified: created so, or its status in previous_attributes.
  follow_up_writer: ['lead.created', 'lead.updated'],
  lead_researcher: ['lead.created'],
  lead_router: ['lead.created'],
};

/** Types that also run on a schedule: a scan for idle deals each interval. */
export const SCHEDULED: readonly AgentType[] = [AgentType.deal_follow_up, AgentType.follow_up_writer];

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

const NOTES_MAX = 5000;
const inProposal = async (services: Services, event: Event | null) => {
  const deal = subject(event);
  if (!deal || deal.stage !== DealStage.proposal) return null;
  const current = await services.deals.get(deal.id).catch((error: unknown) => (isMissing(error) ? null : Promise.reject(error)));
  return current?.stage === DealStage.proposal ? current : null; // null: it has moved on since
};

/** With cover_note, the note is written first (by the model, or the template), outside the run's transaction. */
async function writeCoverNote({ services, config, event, writer }: PrepareWork): Promise<Written<CoverNote> | null> {
  const settings = config as unknown as ProposalDrafterConfig;
  if (!settings.cover_note) return null;
  const deal = await inProposal(services, event);
  if (!deal) return null;
  const lead = deal.lead ? await deal.lead.load() : null;
  return writer.write(coverNote(deal, lead, { validDays: settings.valid_days }));
}

/** Drafts a proposal, with the configured terms (and the cover note heading its notes), for a deal that has entered the proposal stage. */
async function draftProposal({ services, config, event }: AgentWork, note: Written<CoverNote> | null): Promise<AgentAction[]> {
  const settings = config as unknown as ProposalDrafterConfig;
  const current = await inProposal(services, event);
  if (!current) return [];
  const notes = [note?.value.cover_note, settings.notes].filter(Boolean).join('\n\n').slice(0, NOTES_MAX) || null;
  const proposal = await services.proposals.create(
    await validInput(ProposalCreateInput, {
      dealId: current.id,
      validDays: settings.valid_days,
      discountPercent: settings.discount_percent,
      taxPercent: settings.tax_percent,
      notes,
    }),
  );
  const written = note ? { cover_note: true, generated_by: note.generatedBy } : {};
  return [{ kind: 'proposal_drafted', object_id: proposal.id, deal_id: current.id, number: proposal.number, ...written }];
}

/**
 * Raises each open deal that has sat in its stage longer than the stage's idle_days, once per
 * stage it enters (agent_follow_ups remembers what was raised, across runs and instances).
 */
async function followUpIdleDeals({ em, agent, config, now }: AgentWork): Promise<AgentAction[]> {
  const settings = config as unknown as DealFollowUpConfig;
  const actions: AgentAction[] = [];
  for (const idle of await idleDeals(em, settings.idle_days, now)) {
    if (!(await raiseOnce(em, agent, idle.deal, now))) continue;
    actions.push({ kind: 'deal_idle', object_id: idle.deal.id, stage: idle.deal.stage, idle_days: idle.idleDays, threshold_days: idle.thresholdDays });
  }
  return actions;
}

const inList = (list: string[] | undefined, value: string | null | undefined) =>
  list === undefined || (value != null && list.some((item) => item.toLowerCase() === value.toLowerCase()));

/** Whether a lead matches every criterion a rule gives (a rule with none matches every lead). */
function matches(rule: RoutingRule, lead: Lead): boolean {
  const employees = lead.employees;
  const inRange =
    (rule.min_employees === undefined || (employees != null && employees >= rule.min_employees)) &&
    (rule.max_employees === undefined || (employees != null && employees <= rule.max_employees));
  return inList(rule.country, lead.country) && inList(rule.industry, lead.industry) && inList(rule.source, lead.source) && inRange;
}

/**
 * Gives a new lead without an owner one: the first rule that matches it (and whose owner is an
 * active member), else the next of the round-robin members (in turn: the agent's earlier
 * round-robin routings, counted, pick the next), else the fallback. Owners who are no longer active
 * members are passed over.
 */
async function routeLead({ em, services, agent, config, event }: AgentWork): Promise<AgentAction[]> {
  const settings = config as unknown as LeadRouterConfig;
  const leadId = subject(event)?.id;
  if (!leadId) return [];
  const lead = await em.findOne(Lead, { id: leadId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!lead || lead.ownerId) return [];
  const active = new Set((await em.find(Member, { status: MemberStatus.active })).map((member) => member.user.id));
  let owner: string | undefined;
  let rule: number | 'round_robin' | 'fallback' | undefined;
  const matched = settings.rules.findIndex((candidate) => active.has(candidate.owner_id) && matches(candidate, lead));
  if (matched >= 0) [owner, rule] = [settings.rules[matched].owner_id, matched];
  const turns = settings.round_robin.filter((id) => active.has(id));
  if (!owner && turns.length) [owner, rule] = [turns[(await roundRobinTurns(em, agent.id)) % turns.length], 'round_robin'];
  if (!owner && settings.fallback_owner_id && active.has(settings.fallback_owner_id)) [owner, rule] = [settings.fallback_owner_id, 'fallback'];
  if (!owner) return [];
  await services.leads.update(lead.id, await validInput(LeadUpdateInput, { ownerId: owner }));
  return [{ kind: 'lead_routed', object_id: lead.id, owner_id: owner, rule }];
}

export const BEHAVIOURS: Record<AgentType, Behaviour> = {
  lead_qualifier: { act: qualifyLead },
  proposal_drafter: behaviour({ prepare: writeCoverNote, act: draftProposal }),
  deal_follow_up: { act: followUpIdleDeals },
  follow_up_writer: followUpWriter,
  lead_researcher: leadResearcher,
  lead_router: { act: routeLead },
};

import type { EntityManager } from '@mikro-orm/postgresql';
import { Deal, DealStageChange } from '../deals/deal.entity';
import { Lead } from '../leads/lead.entity';
import { LeadStatus } from '../leads/lead-status';
import { Proposal } from '../proposals/proposal.entity';
import type { FollowUpWriterConfig, WriterConfig } from './agent-config';
import { behaviour, idleDeals, raiseOnce, subject, type AgentWork, type PrepareWork } from './agent-work';
import type { AgentAction } from './agent.entity';
import { SuggestionKind } from './agent-suggestion.entity';
import type { Written } from './agent-writer';
import { followUpEmail, leadBrief, WritingContext } from './agent-writings';

/** E-mails a scan drafts at most: the rest of the idle deals are drafted by the next scan. */
export const MAX_DRAFTS_PER_SCAN = 20;
/** Moves of a deal a writer reads, the latest. */
const HISTORY = 20;

/** One piece written in the first step, and what it is about. */
interface Draft {
  kind: SuggestionKind;
  leadId: string | null;
  dealId: string | null;
  written: Written<object>;
  /** For a scan's e-mail: the deal in the stage it was idle in (raised once per stage entered). */
  raise?: { id: string; stageChangedAt: Date };
}

/** The deal's moves (latest HISTORY, oldest first) and its latest proposal. */
async function dealRecords(em: EntityManager, deal: Deal | null): Promise<Pick<WritingContext, 'stageHistory' | 'proposal'>> {
  if (!deal) return { stageHistory: [], proposal: null };
  const [moves, proposal] = await Promise.all([
    em.find(DealStageChange, { deal: deal.id }, { orderBy: { changedAt: 'desc', id: 'desc' }, limit: HISTORY }),
    em.findOne(Proposal, { deal: deal.id }, { orderBy: { createdAt: 'desc', id: 'desc' } }),
  ]);
  return { stageHistory: moves.reverse().map((move) => ({ from: move.fromStage ?? null, to: move.toStage, at: move.changedAt })), proposal };
}

/** A lead that has just become qualified (created so, or moved there by a person or the qualifier), as it is now; null otherwise. */
async function justQualified(em: EntityManager, work: PrepareWork): Promise<Lead | null> {
  const lead = subject(work.event);
  if (!lead || lead.status !== LeadStatus.qualified) return null;
  const before = work.event?.data.previous_attributes ?? {};
  const becameQualified = work.event?.type === 'lead.created' || ('status' in before && before.status !== LeadStatus.qualified);
  if (!becameQualified) return null;
  const current = await em.findOne(Lead, { id: lead.id });
  return current?.status === LeadStatus.qualified ? current : null;
}

/**
 * follow_up_writer: an e-mail for a lead that has just qualified (with on_lead_qualified), and on
 * each scan for every deal idle past its stage's days (once per stage entered, as deal_follow_up
 * raises them), written from the lead, the deal, its moves and its latest proposal.
 */
async function writeFollowUps(work: PrepareWork): Promise<Draft[]> {
  const { em, writer, now } = work;
  const config = work.config as unknown as FollowUpWriterConfig;
  if (work.event) {
    const lead = config.on_lead_qualified ? await justQualified(em, work) : null;
    if (!lead) return [];
    const deal = await em.findOne(Deal, { lead: lead.id }, { orderBy: { createdAt: 'desc', id: 'desc' } });
    const written = await writer.write(followUpEmail({ lead, deal, ...(await dealRecords(em, deal)), reason: { kind: 'lead_qualified' } }));
    return [{ kind: SuggestionKind.follow_up_email, leadId: lead.id, dealId: deal?.id ?? null, written }];
  }
  const idle = await idleDeals(em, config.idle_days, now);
  const raised = new Set(
    idle.length
      ? (
          await em
            .getKnex()('agent_follow_ups')
            .select('deal_id', 'stage_changed_at')
            .where('agent_id', work.agent.id)
            .whereIn(
              'deal_id',
              idle.map(({ deal }) => deal.id),
            )
        ).map((row: { deal_id: string; stage_changed_at: Date }) => `${row.deal_id}@${new Date(row.stage_changed_at).getTime()}`)
      : [],
  );
  const drafts: Draft[] = [];
  for (const { deal, idleDays, thresholdDays } of idle) {
    if (raised.has(`${deal.id}@${deal.stageChangedAt.getTime()}`)) continue;
    if (drafts.length >= MAX_DRAFTS_PER_SCAN) break;
    const lead = deal.lead ? await em.findOne(Lead, { id: deal.lead.id }) : null;
    const written = await writer.write(followUpEmail({ lead, deal, ...(await dealRecords(em, deal)), reason: { kind: 'deal_idle', idleDays, thresholdDays } }));
    drafts.push({
      kind: SuggestionKind.follow_up_email,
      leadId: lead?.id ?? null,
      dealId: deal.id,
      written,
      raise: { id: deal.id, stageChangedAt: deal.stageChangedAt },
    });
  }
  return drafts;
}

/** lead_researcher: a brief and a next step for each new lead. */
async function writeBrief({ em, event, writer }: PrepareWork): Promise<Draft[]> {
  const id = subject(event)?.id;
  const lead = id ? await em.findOne(Lead, { id }) : null;
  if (!lead) return [];
  return [{ kind: SuggestionKind.lead_brief, leadId: lead.id, dealId: null, written: await writer.write(leadBrief(lead)) }];
}

/** Makes each draft a suggestion (approved at once for the kinds in act_without_approval), in the run's transaction. */
async function propose(work: AgentWork, drafts: Draft[]): Promise<AgentAction[]> {
  const config = work.config as unknown as WriterConfig;
  const actions: AgentAction[] = [];
  for (const draft of drafts) {
    if (draft.raise && !(await raiseOnce(work.em, work.agent, draft.raise, work.now))) continue;
    if (draft.dealId && !(await work.em.count(Deal, { id: draft.dealId }))) continue; // deleted meanwhile
    const suggestion = work.services.suggestions.propose({
      agent: work.agent,
      runId: work.runId,
      kind: draft.kind,
      leadId: draft.leadId,
      dealId: draft.dealId,
      written: draft.written,
      ttlDays: config.suggestion_ttl_days,
      approveAutomatically: config.act_without_approval.includes(draft.kind),
      now: work.now,
    });
    actions.push({
      kind: draft.kind,
      object_id: suggestion.id,
      lead_id: draft.leadId,
      deal_id: draft.dealId,
      generated_by: draft.written.generatedBy,
      status: suggestion.status,
    });
  }
  return actions;
}

export const followUpWriter = behaviour<Draft[]>({ prepare: writeFollowUps, act: propose });
export const leadResearcher = behaviour<Draft[]>({ prepare: writeBrief, act: propose });

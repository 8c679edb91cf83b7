import type { Deal } from '../deals/deal.entity';
import type { Lead } from '../leads/lead.entity';
import type { Proposal } from '../proposals/proposal.entity';
import { money } from '../integrations/sync/action-content';
import type { Writing } from './agent-writer';

/** What a writer knows about a deal or lead: the records as stored, and why it is writing. */
export interface WritingContext {
  lead: Lead | null;
  deal: Deal | null;
  /** The deal's moves between stages, oldest first. */
  stageHistory: Array<{ from: string | null; to: string; at: Date }>;
  proposal: Proposal | null;
  /** Why now: `deal_idle` (with the days idle and the threshold) or `lead_qualified`. */
  reason: { kind: 'deal_idle'; idleDays: number; thresholdDays: number } | { kind: 'lead_qualified' };
}

export interface FollowUpEmail {
  subject: string;
  body: string;
}

export interface LeadBrief {
  brief: string;
  next_step: string;
  fields_used: string[];
}

export interface CoverNote {
  cover_note: string;
}

export const SUBJECT_MAX = 200;
export const BODY_MAX = 10_000;
export const BRIEF_MAX = 4_000;
export const NEXT_STEP_MAX = 1_000;
export const COVER_NOTE_MAX = 3_000;

const text = { type: 'string' } as const;
const clip = (value: string, max: number) => (value.length > max ? `${value.slice(0, max - 1)}…` : value).trim();
const stageName = (stage: string) => stage.replace(/_/g, ' ');
const firstName = (lead: Lead | null) => lead?.contactName?.trim().split(/\s+/)[0] || 'there';

/** The lead as the model sees it: what a salesperson would read on its page (not the e-mail address: the draft carries it). */
function leadData(lead: Lead): Record<string, unknown> {
  return {
    company: lead.company,
    contact_name: lead.contactName ?? null,
    industry: lead.industry ?? null,
    employees: lead.employees ?? null,
    website: lead.website ?? null,
    country: lead.country ?? null,
    source: lead.source ?? null,
    status: lead.status,
    score: lead.score,
    score_label: lead.scoreLabel,
  };
}

function dealData(deal: Deal): Record<string, unknown> {
  return {
    name: deal.name,
    stage: deal.stage,
    value: money(deal.valueMinor, deal.currency),
    expected_close_date: deal.expectedCloseDate ?? null,
    owner: deal.owner ?? null,
  };
}

function contextData(context: WritingContext): Record<string, unknown> {
  const { lead, deal, proposal, reason } = context;
  return {
    reason: reason.kind === 'deal_idle' ? { kind: 'deal_idle', idle_days: reason.idleDays, threshold_days: reason.thresholdDays } : { kind: 'lead_qualified' },
    lead: lead ? leadData(lead) : null,
    deal: deal ? dealData(deal) : null,
    stage_history: context.stageHistory.map((move) => ({ from: move.from, to: move.to, at: move.at.toISOString() })),
    latest_proposal: proposal
      ? { number: proposal.number, title: proposal.title, total: money(proposal.totalMinor, proposal.currency), valid_until: proposal.validUntil }
      : null,
  };
}

/** A follow-up e-mail to the lead's contact about an idle deal, or a lead just qualified. */
export function followUpEmail(context: WritingContext): Writing<FollowUpEmail> {
  const { lead, deal, reason, proposal } = context;
  const about = deal?.name ?? lead?.company ?? 'our conversation';
  return {
    name: 'follow_up_email',
    task:
      reason.kind === 'deal_idle'
        ? 'Write a short, personal follow-up e-mail (subject and plain-text body, no placeholders) to the contact of a deal that has had no progress; refer to where the deal stands and its latest proposal when there is one, and propose one concrete next step.'
        : 'Write a short, personal first e-mail (subject and plain-text body, no placeholders) to the contact of a lead that has just qualified, suggesting a call to discuss their needs.',
    data: contextData(context),
    schema: { type: 'object', properties: { subject: text, body: text }, required: ['subject', 'body'], additionalProperties: false },
    tidy: (value) => ({ subject: clip(value.subject.replace(/\s+/g, ' '), SUBJECT_MAX), body: clip(value.body, BODY_MAX) }),
    template: () => {
      const opening =
        reason.kind === 'deal_idle'
          ? proposal
            ? `I wanted to follow up on ${about} and the proposal ${proposal.number} we sent (valid until ${proposal.validUntil}).`
            : `I wanted to follow up on ${about}; it has been ${reason.idleDays} days since we last moved forward (${stageName(deal?.stage ?? '')}).`
          : `Thank you for your interest in working with us. I would like to learn more about ${lead?.company ?? 'your team'}'s needs.`;
      return {
        subject: clip(reason.kind === 'deal_idle' ? `Following up: ${about}` : `Next steps with ${lead?.company ?? about}`, SUBJECT_MAX),
        body: clip(`Hi ${firstName(lead)},\n\n${opening} Is there a good time to talk this week?\n\nBest regards,`, BODY_MAX),
      };
    },
  };
}

/** The lead fields a brief may name as the ones it reasoned from. */
const BRIEF_FIELDS = ['company', 'contact_name', 'industry', 'employees', 'website', 'country', 'source', 'score', 'score_label'] as const;

/** A short account brief for a new lead, a suggested next step, and the fields it reasoned from. */
export function leadBrief(lead: Lead): Writing<LeadBrief> {
  const data = leadData(lead);
  return {
    name: 'lead_brief',
    task: 'Write a short account brief (three to five sentences) about the lead for the salesperson, a suggested next step in one sentence, and list the lead fields you reasoned from (fields_used).',
    data: { lead: data },
    schema: {
      type: 'object',
      properties: { brief: text, next_step: text, fields_used: { type: 'array', items: { type: 'string', enum: [...BRIEF_FIELDS] } } },
      required: ['brief', 'next_step', 'fields_used'],
      additionalProperties: false,
    },
    tidy: (value) => ({ brief: clip(value.brief, BRIEF_MAX), next_step: clip(value.next_step, NEXT_STEP_MAX), fields_used: [...new Set(value.fields_used)] }),
    template: () => {
      const known = BRIEF_FIELDS.filter((field) => data[field] !== null && data[field] !== undefined);
      const size = lead.employees ? ` with about ${lead.employees} employees` : '';
      const where = lead.country ? ` in ${lead.country}` : '';
      const industry = lead.industry ? `, in ${lead.industry}` : '';
      const source = lead.source ? ` It came in through ${lead.source}.` : '';
      return {
        brief: clip(`${lead.company}${industry}${size}${where}.${source} Its score is ${lead.score} (${lead.scoreLabel}).`, BRIEF_MAX),
        next_step:
          lead.score >= 70
            ? `Call ${lead.contactName ?? 'the contact'} within a day: the lead scores high.`
            : `Send ${lead.contactName ?? 'the contact'} an introduction e-mail and learn what they need.`,
        fields_used: known,
      };
    },
  };
}

/** The cover note of a drafted proposal: to the customer, about the deal and the proposal's terms. */
export function coverNote(deal: Deal, lead: Lead | null, terms: { validDays: number }): Writing<CoverNote> {
  return {
    name: 'cover_note',
    task: `Write a short cover note (plain text, two to four sentences, no placeholders) to the customer for the proposal we are sending for this deal; it is valid for ${terms.validDays} days.`,
    data: { lead: lead ? leadData(lead) : null, deal: dealData(deal) },
    schema: { type: 'object', properties: { cover_note: text }, required: ['cover_note'], additionalProperties: false },
    tidy: (value) => ({ cover_note: clip(value.cover_note, COVER_NOTE_MAX) }),
    template: () => ({
      cover_note: clip(
        `Dear ${lead?.contactName?.trim() || 'customer'},\n\nThank you for considering us for ${deal.name}. Please find our proposal below; it is valid for ${terms.validDays} days. We look forward to working with you.`,
        COVER_NOTE_MAX,
      ),
    }),
  };
}

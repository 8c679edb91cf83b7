import type { AgentAction } from '../../agents/agent.entity';
import type { AgentSuggestion } from '../../agents/agent-suggestion.entity';
import type { Deal } from '../../deals/deal.entity';
import type { Lead } from '../../leads/lead.entity';
import type { OutboundDraft, OutboundTask } from '../providers/m365-client';

/** What a deal_idle follow-up says about its deal: the deal as it is now, its lead, and what the agent saw. */
export interface FollowUp {
  actionId: string;
  deal: Deal;
  lead: Lead | null;
  action: AgentAction;
  /** PUBLIC_URL: the task links to the deal's API address. */
  publicUrl: string;
}

/** Short enough for a subject or a task title, whatever the deal's name. */
const MAX_NAME = 200;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
const named = (deal: Deal) => (deal.name.length > MAX_NAME ? `${deal.name.slice(0, MAX_NAME - 1)}…` : deal.name);
const stageName = (stage: unknown) => String(stage).replace(/_/g, ' ');
const days = (count: unknown) => `${Number(count)} day${Number(count) === 1 ? '' : 's'}`;

/** "USD 12,500.50" from minor units, exactly (no floating point on the way). */
export function money(minor: number, currency: string): string {
  return `${currency} ${new Intl.NumberFormat('en-US').format(BigInt(minor) / 100n)}.${String(minor % 100).padStart(2, '0')}`;
}

/** Why the agent raised the deal, in one sentence: its stage, how long, and the configured limit. */
function reason({ deal, action }: FollowUp): string {
  return `${named(deal)} has been in ${stageName(action.stage ?? deal.stage)} for ${days(action.idle_days)} (the agent follows up after ${days(action.threshold_days)}).`;
}

/**
 * An Outlook draft to the deal's contact: a short note for the salesperson (why, and the value),
 * then a follow-up they can edit and send. With no lead e-mail it has no recipient; it is never sent by us.
 */
export function draftFor(followUp: FollowUp): OutboundDraft {
  const { deal, lead } = followUp;
  const firstName = lead?.contactName?.trim().split(/\s+/)[0];
  const html = [
    `<p style="color:#666666"><em>Drafted by your deal follow-up agent, not sent. ${escapeHtml(reason(followUp))} ` +
      `Value: ${escapeHtml(money(deal.valueMinor, deal.currency))}.</em></p>`,
    `<p>Hi ${escapeHtml(firstName || 'there')},</p>`,
    `<p>I wanted to follow up on ${escapeHtml(named(deal))}. Is there anything you need from us to move forward, or a good time to talk this week?</p>`,
    '<p>Best regards,</p>',
  ].join('\n');
  return {
    actionId: followUp.actionId,
    subject: `Following up: ${named(deal)}`,
    html,
    to: lead?.contactEmail ? [{ address: lead.contactEmail, name: lead.contactName ?? null }] : [],
  };
}

/** A To Do task for the salesperson, linked to the deal. */
export function taskFor(followUp: FollowUp): OutboundTask {
  const { deal, lead, action } = followUp;
  const contact = lead ? `${lead.contactName ? `${lead.contactName} ` : ''}<${lead.contactEmail}> at ${lead.company}` : 'none on the deal';
  const webUrl = `${followUp.publicUrl}/v1/deals/${deal.id}`;
  return {
    actionId: followUp.actionId,
    title: `Follow up: ${named(deal)} (idle ${days(action.idle_days)} in ${stageName(action.stage ?? deal.stage)})`,
    text: [reason(followUp), `Value: ${money(deal.valueMinor, deal.currency)}`, `Contact: ${contact}`, `Deal: ${webUrl}`].join('\n'),
    webUrl,
    displayName: named(deal),
  };
}

/**
 * An approved follow_up_email suggestion as an Outlook draft to the lead's contact: the approved
 * subject and body (plain text, each paragraph escaped), under a note that a person approved it.
 * Never sent by us.
 */
export function approvedDraftFor(suggestion: AgentSuggestion, lead: Lead | null): OutboundDraft {
  const content = (suggestion.approvedContent ?? suggestion.content) as { subject?: unknown; body?: unknown };
  const paragraphs = String(content.body ?? '')
    .split(/\n{2,}/)
    .map((paragraph) => `<p>${escapeHtml(paragraph).replace(/\n/g, '<br>')}</p>`);
  const note = `Written by your follow-up writer agent${suggestion.generatedBy === 'template' ? ' (from its template)' : ''}, approved, not sent.`;
  return {
    actionId: suggestion.id,
    subject: String(content.subject ?? ''),
    html: [`<p style="color:#666666"><em>${escapeHtml(note)}</em></p>`, ...paragraphs].join('\n'),
    to: lead?.contactEmail ? [{ address: lead.contactEmail, name: lead.contactName ?? null }] : [],
  };
}

import { EntityManager, FilterQuery, LockMode } from '@mikro-orm/postgresql';
import { ApiError, notFound } from '../../common/api-error';
import { camelToSnake } from '../../common/case';
import { isId } from '../../common/ids';
import { findPage, Page } from '../../common/pagination';
import { createScoped } from '../../db/tenant';
import { tenantQuery } from '../../db/tenant-sql';
import type { EventRecorder } from '../../events/event-recorder';
import type { Written } from './agent-writer';
import { AgentSuggestion, SuggestionKind, SuggestionStatus } from './agent-suggestion.entity';
import { Agent } from './agent.entity';
import { SuggestionApproveInput, SuggestionListInput } from './suggestion.inputs';

const DAY_MS = 86_400_000;

/** The edits each kind takes when approved: input field → content key. */
const EDITABLE: Record<SuggestionKind, Partial<Record<keyof SuggestionApproveInput, string>>> = {
  follow_up_email: { subject: 'subject', body: 'body' },
  lead_brief: { brief: 'brief', nextStep: 'next_step' },
};

/** A suggestion to make: what was written, about what, and how long it may wait. */
export interface Proposal {
  agent: Agent;
  runId: string;
  kind: SuggestionKind;
  leadId: string | null;
  dealId: string | null;
  written: Written<object>;
  ttlDays: number;
  /** The agent's config approves this kind without a person (act_without_approval). */
  approveAutomatically: boolean;
  now: Date;
}

/**
 * Suggestions of one account and mode (tenant-scoped EntityManager): made by writer agents,
 * decided by people. A pending suggestion past its expires_at is expired before anything reads or
 * decides it, so a late approval is 409 and never performs a stale action.
 */
export class SuggestionService {
  constructor(
    private readonly em: EntityManager,
    private readonly events: EventRecorder,
  ) {}

  /** Records a suggestion in the caller's transaction (an agent run's), with agent.suggestion_created (and _approved when automatic). */
  propose(input: Proposal): AgentSuggestion {
    const suggestion = createScoped(this.em, AgentSuggestion, {
      agent: input.agent,
      runId: input.runId,
      kind: input.kind,
      leadId: input.leadId,
      dealId: input.dealId,
      content: input.written.value as Record<string, unknown>,
      generatedBy: input.written.generatedBy,
      model: input.written.model,
      generationError: input.written.error,
      expiresAt: new Date(input.now.getTime() + input.ttlDays * DAY_MS),
    });
    this.events.record('agent.suggestion_created', suggestion);
    if (input.approveAutomatically) this.approveNow(suggestion, suggestion.content, true);
    return suggestion;
  }

  async get(id: string): Promise<AgentSuggestion> {
    await this.expireDue();
    const suggestion = isId('sugg', id) ? await this.em.findOne(AgentSuggestion, { id }) : null;
    if (!suggestion) throw notFound('suggestion', id);
    return suggestion;
  }

  async list(agent: Agent, input: SuggestionListInput = {}): Promise<Page<AgentSuggestion>> {
    await this.expireDue();
    const filters: FilterQuery<AgentSuggestion>[] = [{ agent }];
    if (input.status) filters.push({ status: input.status });
    return findPage(this.em, AgentSuggestion, filters, input);
  }

  /**
   * Approves a pending suggestion, with the edits given (each checked against its kind), and
   * performs it: agent.suggestion_approved, from which an e-mail becomes an Outlook draft when the
   * account has a Microsoft 365 mailbox (integrations/sync/action-fan-out.ts); the approved text is
   * kept either way. A decided or expired suggestion is 409.
   */
  async approve(id: string, input: SuggestionApproveInput = {}): Promise<AgentSuggestion> {
    return this.decide(id, (suggestion) => {
      const editable = EDITABLE[suggestion.kind];
      const content = { ...suggestion.content };
      for (const [field, value] of Object.entries(input) as Array<[keyof SuggestionApproveInput, string | null | undefined]>) {
        if (value === undefined || value === null) continue;
        const key = editable[field];
        if (!key) {
          // Named as the content's keys (REST's and the suggestion's own), in GraphQL and REST alike.
          const takes = Object.values(editable).join(' and ');
          throw new ApiError('parameter_invalid', `A ${suggestion.kind} suggestion takes edits to ${takes}, not ${camelToSnake(field)}`, {
            param: field,
            restParam: camelToSnake(field),
          });
        }
        // A subject is one line, as the writer makes the model's (agent-writings.ts): an edit's line breaks would reach the mail header.
        content[key] = key === 'subject' ? value.replace(/\s+/g, ' ').trim() : value.trim();
      }
      this.approveNow(suggestion, content, false);
    });
  }

  /** Rejects a pending suggestion: nothing is done with it (agent.suggestion_rejected). A decided or expired one is 409. */
  async reject(id: string): Promise<AgentSuggestion> {
    return this.decide(id, (suggestion) => {
      const before = this.events.snapshot(suggestion);
      suggestion.status = SuggestionStatus.rejected;
      suggestion.decidedAt = new Date();
      this.events.record('agent.suggestion_rejected', suggestion, before);
    });
  }

  private async decide(id: string, change: (suggestion: AgentSuggestion) => void): Promise<AgentSuggestion> {
    await this.get(id); // 404 (and expiry) before anything else
    return this.em.transactional(async () => {
      const suggestion = await this.em.findOneOrFail(AgentSuggestion, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (suggestion.status !== SuggestionStatus.pending) {
        throw new ApiError('resource_conflict', `Suggestion ${suggestion.id} is ${suggestion.status}; only a pending suggestion can be approved or rejected`);
      }
      change(suggestion);
      return suggestion;
    });
  }

  private approveNow(suggestion: AgentSuggestion, content: Record<string, unknown>, automatically: boolean): void {
    const before = this.events.snapshot(suggestion);
    suggestion.status = SuggestionStatus.approved;
    suggestion.approvedContent = content;
    suggestion.approvedAutomatically = automatically;
    suggestion.decidedAt = new Date();
    this.events.record('agent.suggestion_approved', suggestion, before);
  }

  /** Pending suggestions past their time become expired (no event: nothing happened but time). */
  private async expireDue(): Promise<void> {
    await tenantQuery(
      this.em,
      `update agent_suggestions set status = 'expired', updated_at = now()
        where account_id = :tenantAccount and livemode = :tenantLivemode and status = 'pending' and expires_at <= now()`,
    );
  }
}

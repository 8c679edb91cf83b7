import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';
import { Agent } from './agent.entity';

/** What a writer agent proposes (CONTRACT-silent; docs/DECISIONS.md "Agents that write"). */
export enum SuggestionKind {
  /** An e-mail to a lead's contact about a deal or a lead: {subject, body}. */
  follow_up_email = 'follow_up_email',
  /** An account brief for a new lead: {brief, next_step, fields_used}. */
  lead_brief = 'lead_brief',
}
registerEnumType(SuggestionKind, { name: 'SuggestionKind', description: 'follow_up_email (subject, body) or lead_brief (brief, next_step, fields_used).' });

export enum SuggestionStatus {
  pending = 'pending',
  approved = 'approved',
  rejected = 'rejected',
  /** Pending past its expires_at: nobody decided in time, nothing is done with it. */
  expired = 'expired',
}
registerEnumType(SuggestionStatus, { name: 'SuggestionStatus', description: 'pending until a person approves or rejects it, or it expires.' });

/** Who wrote the content: the account's model, or the built-in template (no model connected, budget spent, or the model failed). */
export enum GeneratedBy {
  model = 'model',
  template = 'template',
}
registerEnumType(GeneratedBy, { name: 'SuggestionGeneratedBy' });

/**
 * What a writer agent produced, waiting for a person: approving performs it (an Outlook draft
 * through the account's Microsoft 365 mailbox, else the approved text kept for the client),
 * rejecting drops it. An agent whose config lists the kind in `act_without_approval` makes it
 * approved at once.
 */
@ObjectType({ simpleResolvers: true, description: "A writer agent's draft, waiting for a person to approve or reject it." })
@Entity({ tableName: 'agent_suggestions' })
@Index({ name: 'agent_suggestions_by_agent', properties: ['agent', 'createdAt', 'id'] })
@Index({
  name: 'agent_suggestions_pending',
  expression: `create index "agent_suggestions_pending" on "agent_suggestions" ("expires_at") where "status" = 'pending'`,
})
export class AgentSuggestion extends TenantEntity<
  'object' | 'agentId' | 'status' | 'leadId' | 'dealId' | 'model' | 'approvedContent' | 'approvedAutomatically' | 'decidedAt' | 'generationError'
> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('sugg');

  @Field({ description: 'Always "agent_suggestion".' })
  get object(): 'agent_suggestion' {
    return 'agent_suggestion';
  }

  @ManyToOne(() => Agent, { ref: true, deleteRule: 'cascade', index: false })
  agent!: Ref<Agent>;

  @Field(() => ID)
  get agentId(): string {
    return this.agent.id;
  }

  @Field(() => ID, { description: 'The agent run that wrote it.' })
  @Property({ type: 'text' })
  runId!: string;

  @Field(() => SuggestionKind)
  @Enum({ items: () => SuggestionKind })
  kind!: SuggestionKind;

  @Field(() => SuggestionStatus)
  @Enum({ items: () => SuggestionStatus })
  status: SuggestionStatus = SuggestionStatus.pending;

  @Field(() => String, { nullable: true, description: 'The lead it is about.' })
  @Property({ type: 'text', nullable: true })
  leadId?: string | null;

  @Field(() => String, { nullable: true, description: 'The deal it is about, when it is about one.' })
  @Property({ type: 'text', nullable: true })
  dealId?: string | null;

  @Field(() => GraphQLJSONObject, { description: 'What the agent wrote: {subject, body} for an e-mail; {brief, next_step, fields_used} for a brief.' })
  @Property({ type: 'json' })
  content!: Record<string, unknown>;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The text approved (the content, or the edits made when approving); null until approved.' })
  @Property({ type: 'json', nullable: true })
  approvedContent?: Record<string, unknown> | null;

  @Field(() => GeneratedBy, { description: '"model" when the connected model wrote it; "template" for the built-in template.' })
  @Enum({ items: () => GeneratedBy })
  generatedBy!: GeneratedBy;

  @Field(() => String, { nullable: true, description: 'The model that wrote it (generated_by "model").' })
  @Property({ type: 'text', nullable: true })
  model?: string | null;

  @Field(() => String, { nullable: true, description: 'Why the template wrote it although a model is connected (budget spent, the model failed).' })
  @Property({ type: 'text', nullable: true })
  generationError?: string | null;

  @Field({ description: 'Approved without a person, by the agent config (act_without_approval).' })
  @Property({ type: 'boolean' })
  approvedAutomatically: boolean = false;

  @Field(() => Date, { description: 'A pending suggestion not decided by then expires.' })
  @Property({ type: 'datetime', length: 3 })
  expiresAt!: Date;

  @Field(() => Date, { nullable: true, description: 'When it was approved or rejected.' })
  @Property({ type: 'datetime', length: 3, nullable: true })
  decidedAt?: Date | null;
}

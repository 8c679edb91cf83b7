import { Entity, Enum, Index, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';
import type { ScoreLabel, ScoreSignal } from '../scoring/lead-scorer';
import { LeadStatus } from './lead-status';

export enum LeadScoreLabel {
  hot = 'hot',
  warm = 'warm',
  cold = 'cold',
}
registerEnumType(LeadScoreLabel, { name: 'ScoreLabel', description: 'hot ≥ 70, warm 40–69, cold < 40.' });

@ObjectType({ simpleResolvers: true, description: 'A prospective customer company and its contact.' })
@Entity({ tableName: 'leads' })
@Unique({ name: 'leads_contact_email_unique', properties: ['account', 'livemode', 'contactEmail'] })
@Index({ name: 'leads_created_at_keyset', properties: ['account', 'livemode', 'createdAt', 'id'] })
@Index({ name: 'leads_score_keyset', properties: ['account', 'livemode', 'score', 'id'] })
@Index({ name: 'leads_company_keyset', properties: ['account', 'livemode', 'company', 'id'] })
@Index({ name: 'leads_employees_keyset', properties: ['account', 'livemode', 'employees', 'id'] })
@Index({ name: 'leads_owner', properties: ['account', 'livemode', 'ownerId', 'createdAt', 'id'] })
// `-employees` sorts nulls last too, which the ascending index read backwards cannot give.
@Index({
  name: 'leads_employees_desc_keyset',
  expression: 'create index "leads_employees_desc_keyset" on "leads" ("account_id", "livemode", "employees" desc nulls last, "id" desc)',
})
export class Lead extends TenantEntity<'object' | 'status' | 'metadata' | 'ownerId' | 'fields'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('lead');

  @Field({ description: 'Always "lead".' })
  get object(): 'lead' {
    return 'lead';
  }

  @Field()
  @Property({ type: 'text' })
  company!: string;

  @Field({ description: 'Stored lower-cased; unique within an account and mode.' })
  @Property({ type: 'text' })
  contactEmail!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  contactName?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  industry?: string | null;

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  employees?: number | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  website?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  country?: string | null;

  @Field(() => String, { nullable: true, description: 'Where the lead came from: referral, partner, inbound, event, …' })
  @Property({ type: 'text', nullable: true })
  source?: string | null;

  @Field(() => LeadStatus)
  @Enum({ items: () => LeadStatus })
  status: LeadStatus = LeadStatus.new;

  @Field(() => Int, { description: 'AI-generated lead score, 0–100.' })
  @Property({ type: 'smallint' })
  score!: number;

  @Field(() => LeadScoreLabel)
  @Enum({ items: () => LeadScoreLabel })
  scoreLabel!: ScoreLabel;

  /**
   * Lazy (MikroORM's `lazy: true`): em.find and the lean reads leave it out unless asked for
   * (`populate`). About 800 bytes of JSON a lead, read only by the score explanation and rescoring;
   * every list and lead answer would otherwise fetch and parse it for nothing.
   */
  @Property({ type: 'json', lazy: true })
  scoreSignals!: ScoreSignal[];

  @Property({ type: 'smallint' })
  scoreBase!: number;

  @Field({ description: 'Which model produced the score.' })
  @Property({ type: 'text' })
  modelVersion!: string;

  @Field()
  @Property({ type: 'datetime', length: 3 })
  scoredAt!: Date;

  @Field(() => ID, { nullable: true, description: 'The member who owns it (their usr_ id), or null: see GET /v1/members.' })
  @Property({ type: 'text', nullable: true })
  ownerId?: string | null = null;

  @Field(() => GraphQLJSONObject, { description: 'Up to 50 string keys to string values.' })
  @Property({ type: 'json' })
  metadata: Record<string, string> = {};

  @Field(() => GraphQLJSONObject, { description: "The values of the mode's custom fields (GET /v1/fields) by key; a field without a value is absent." })
  @Property({ type: 'json' })
  fields: Record<string, unknown> = {};
}

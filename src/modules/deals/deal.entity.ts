import { BigIntType, Embeddable, Embedded, Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';
import { Lead } from '../leads/lead.entity';
import { DealStage, STAGE_PROBABILITY } from './deal-stage';

/**
 * Where a registration stands. Test mode accepts at once. A live registration is a Partner Center
 * referral, whose status and substatus map onto these (src/modules/deals/co-sell-referral.ts):
 * New/Pending and New/Received are submitted, Active/Accepted accepted, Closed/Won won,
 * Closed/Declined and Closed/Lost rejected, Closed/Expired expired.
 */
export enum CoSellStatus {
  submitted = 'submitted',
  accepted = 'accepted',
  rejected = 'rejected',
  expired = 'expired',
  won = 'won',
}
registerEnumType(CoSellStatus, {
  name: 'CoSellStatus',
  description:
    'submitted, then accepted or rejected by the partner program; a live referral may also expire (expired) or be closed as won with Microsoft (won, after accepted).',
});

/** The co-sell statuses a live registration can still leave: the worker keeps reading their referral. */
export const OPEN_CO_SELL_STATUSES: readonly CoSellStatus[] = [CoSellStatus.submitted, CoSellStatus.accepted];

/** The deal's co-sell registration (CONTRACT §6), stored on the deal row. */
@ObjectType({ simpleResolvers: true })
@Embeddable()
export class CoSellRegistration {
  @Field(() => ID)
  @Property({ type: 'text' })
  id!: string;

  @Field(() => CoSellStatus)
  @Enum({ items: () => CoSellStatus })
  status!: CoSellStatus;

  @Field()
  @Property({ type: 'datetime', length: 3 })
  submittedAt!: Date;

  @Field(() => Date, { nullable: true, description: 'When the registration first left submitted; null while submitted.' })
  @Property({ type: 'datetime', length: 3, nullable: true })
  decidedAt?: Date | null;

  @Field({ description: 'The integration the registration went through: microsoft365 in test mode, partner_center in live mode.' })
  @Property({ type: 'text' })
  integrationId!: string;

  @Field(() => String, {
    nullable: true,
    description:
      "The Partner Center referral's id, once the referral exists (live mode; it is created in the background, so a registration answers with null first). Always null in test mode.",
  })
  @Property({ type: 'text', nullable: true })
  referralId?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'Why the registration stands where it does, when there is a reason: the status reason Partner Center gives a referral (why it was declined or lost), the validation error Partner Center refused the referral with (then status is rejected), or that the Partner Center integration was disconnected.',
  })
  @Property({ type: 'text', nullable: true })
  statusReason?: string | null;
}

/** The cost of the external ids and their fields: a column of the deal's own row, printed as it is (a page of 100 deals fits the cost limit). */
const READ_WITH_ROW = 0;

/** A record at a provider that a deal is linked to (one link per integration: a deal, an opportunity, a project…). */
@ObjectType({ simpleResolvers: true, description: 'A record at a CRM or PSA that the deal is linked to.' })
export class ExternalRecord {
  @Field(() => ID, { complexity: READ_WITH_ROW, description: 'The integration (int_…) that made or found it.' })
  integrationId!: string;

  @Field({ complexity: READ_WITH_ROW, description: 'hubspot, salesforce, connectwise, autotask or halopsa.' })
  provider!: string;

  @Field({ complexity: READ_WITH_ROW, description: "The provider's object: deal, Opportunity, opportunity, project, agreement, contract or ticket." })
  record!: string;

  @Field({ complexity: READ_WITH_ROW, description: "The record's id at the provider." })
  id!: string;
}

@ObjectType({ simpleResolvers: true, description: 'An opportunity moving through the pipeline.' })
@Entity({ tableName: 'deals' })
@Index({ name: 'deals_created_at_keyset', properties: ['account', 'livemode', 'createdAt', 'id'] })
@Index({ name: 'deals_value_keyset', properties: ['account', 'livemode', 'valueMinor', 'id'] })
@Index({ name: 'deals_close_date_keyset', properties: ['account', 'livemode', 'expectedCloseDate', 'id'] })
@Index({ name: 'deals_stage', properties: ['account', 'livemode', 'stage', 'createdAt', 'id'] })
@Index({ name: 'deals_owner_keyset', properties: ['account', 'livemode', 'ownerId', 'id'] })
export class Deal extends TenantEntity<'object' | 'metadata' | 'stageChangedAt' | 'probability' | 'value' | 'externalIds' | 'ownerId' | 'fields'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('deal');

  @Field({ description: 'Always "deal".' })
  get object(): 'deal' {
    return 'deal';
  }

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @ManyToOne(() => Lead, { ref: true, nullable: true, deleteRule: 'set null', index: true })
  lead?: Ref<Lead> | null;

  @Field(() => ID, { nullable: true, description: 'The lead this deal came from, if any.' })
  get leadId(): string | null {
    return this.lead?.id ?? null;
  }

  /** The amount in hundredths (cents): sums and comparisons never touch floating point. */
  @Property({ type: new BigIntType('number') })
  valueMinor!: number;

  @Field(() => Float, { description: 'Amount in major units, at most 2 decimals.' })
  get value(): number {
    return this.valueMinor / 100;
  }

  @Field({ description: 'ISO 4217 code.' })
  @Property({ type: 'text' })
  currency: string = 'USD';

  @Field(() => DealStage)
  @Enum({ items: () => DealStage })
  stage: DealStage = DealStage.prospecting;

  @Field(() => Int, { description: 'Win probability in percent, from the stage.' })
  get probability(): number {
    return STAGE_PROBABILITY[this.stage];
  }

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD.' })
  @Property({ type: 'date', nullable: true })
  expectedCloseDate?: string | null;

  @Field(() => String, { nullable: true, description: 'Deprecated: free text kept for compatibility; owner_id names the member who owns the deal.' })
  @Property({ type: 'text', nullable: true })
  owner?: string | null;

  @Field(() => ID, { nullable: true, description: 'The member who owns it (their usr_ id), or null: see GET /v1/members.' })
  @Property({ type: 'text', nullable: true })
  ownerId?: string | null = null;

  @Field(() => GraphQLJSONObject)
  @Property({ type: 'json' })
  metadata: Record<string, string> = {};

  @Field(() => GraphQLJSONObject, { description: "The values of the mode's custom fields (GET /v1/fields) by key; a field without a value is absent." })
  @Property({ type: 'json' })
  fields: Record<string, unknown> = {};

  @Field()
  @Property({ type: 'datetime', length: 3 })
  stageChangedAt: Date = new Date();

  @Field(() => CoSellRegistration, { nullable: true })
  @Embedded(() => CoSellRegistration, { nullable: true, prefix: 'co_sell_' })
  coSell?: CoSellRegistration | null;

  @Field(() => [ExternalRecord], {
    complexity: READ_WITH_ROW,
    description:
      "The records the deal became at connected CRMs and PSAs (a HubSpot deal, a Salesforce Opportunity, a PSA's opportunity and, once won, its delivery record), written by the sync engine.",
  })
  @Property({ type: 'json', default: "'[]'" })
  externalIds: ExternalRecord[] = [];
}

@ObjectType({ simpleResolvers: true, description: 'One move of a deal between stages.' })
@Entity({ tableName: 'deal_stage_changes' })
@Index({ name: 'deal_stage_changes_deal_id_index', properties: ['deal', 'changedAt', 'id'] })
export class DealStageChange extends TenantEntity {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('stg');

  @ManyToOne(() => Deal, { ref: true, deleteRule: 'cascade' })
  deal!: Ref<Deal>;

  @Field(() => DealStage, { nullable: true, description: 'null for the stage the deal was created in.' })
  @Enum({ items: () => DealStage, nullable: true })
  fromStage?: DealStage | null;

  @Field(() => DealStage)
  @Enum({ items: () => DealStage })
  toStage!: DealStage;

  @Field()
  @Property({ type: 'datetime', length: 3 })
  changedAt: Date = new Date();
}

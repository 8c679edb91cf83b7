import { BigIntType, Embeddable, Embedded, Entity, Index, ManyToOne, PrimaryKey, Property, Ref, Unique } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';
import { Account } from '../accounts/account.entity';
import { Deal } from '../deals/deal.entity';

export enum ProposalStatus {
  issued = 'issued',
  expired = 'expired',
}
registerEnumType(ProposalStatus, { name: 'ProposalStatus', description: 'issued until valid_until has passed, then expired.' });

/**
 * The cost of a field of an embedded value (a line, the customer): read with the proposal's own row
 * and printed as it is, so the field holding the value is its whole cost. A full page of 100
 * proposals, every field selected (what GET /v1/proposals asks), then fits the cost limit.
 */
const EMBEDDED_VALUE = 0;

/** One priced line, frozen at generation. Amounts in hundredths, quantity in thousandths. */
@ObjectType({ simpleResolvers: true, description: 'A line of a proposal: amount = quantity × unit_price, rounded to the cent.' })
@Embeddable()
export class ProposalLineItem {
  @Field({ complexity: EMBEDDED_VALUE })
  @Property({ type: 'text' })
  description!: string;

  @Property({ type: 'integer' })
  quantityThousandths!: number;

  @Property({ type: 'bigint' })
  unitPriceMinor!: number;

  @Property({ type: 'bigint' })
  amountMinor!: number;

  @Field(() => Float, { complexity: EMBEDDED_VALUE, description: 'Up to 3 decimals.' })
  get quantity(): number {
    return this.quantityThousandths / 1000;
  }

  @Field(() => Float, { complexity: EMBEDDED_VALUE, description: 'Major units, at most 2 decimals.' })
  get unitPrice(): number {
    return this.unitPriceMinor / 100;
  }

  @Field(() => Float, { complexity: EMBEDDED_VALUE, description: 'Major units, at most 2 decimals.' })
  get amount(): number {
    return this.amountMinor / 100;
  }
}

/** Who the proposal is addressed to, copied from the deal's lead at generation. */
@ObjectType({ simpleResolvers: true })
@Embeddable()
export class ProposalCustomer {
  @Field({ complexity: EMBEDDED_VALUE })
  @Property({ type: 'text' })
  company!: string;

  @Field(() => String, { nullable: true, complexity: EMBEDDED_VALUE })
  @Property({ type: 'text', nullable: true })
  contactName?: string | null;

  @Field(() => String, { nullable: true, complexity: EMBEDDED_VALUE })
  @Property({ type: 'text', nullable: true })
  contactEmail?: string | null;
}

/**
 * A proposal generated from a deal (CONTRACT §7). Everything a customer sees is frozen at
 * generation: the lines, totals, customer and snapshots of the deal and lead, so editing the deal
 * later changes neither the proposal nor its PDF.
 */
@ObjectType({ simpleResolvers: true, description: 'A priced proposal generated from a deal, with its PDF.' })
@Entity({ tableName: 'proposals' })
@Unique({ name: 'proposals_number_unique', properties: ['account', 'livemode', 'number'] })
@Index({ name: 'proposals_by_deal', properties: ['deal', 'createdAt', 'id'] })
@Index({ name: 'proposals_list', properties: ['account', 'livemode', 'createdAt', 'id'] })
export class Proposal extends TenantEntity<
  'object' | 'status' | 'metadata' | 'pdfUrl' | 'dealId' | 'subtotal' | 'discountPercent' | 'discount' | 'taxPercent' | 'tax' | 'total'
> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('prop');

  @Field({ description: 'Always "proposal".' })
  get object(): 'proposal' {
    return 'proposal';
  }

  @Field({ description: 'Sequential per account and mode, e.g. P-2026-000042; never reused.' })
  @Property({ type: 'text' })
  number!: string;

  @ManyToOne(() => Deal, { ref: true, deleteRule: 'cascade', index: false })
  deal!: Ref<Deal>;

  @Field(() => ID)
  get dealId(): string {
    return this.deal.id;
  }

  @Field()
  @Property({ type: 'text' })
  title!: string;

  @Field(() => ProposalStatus)
  get status(): ProposalStatus {
    return this.validUntil < new Date().toISOString().slice(0, 10) ? ProposalStatus.expired : ProposalStatus.issued;
  }

  @Field({ description: 'ISO 4217 code, from the deal.' })
  @Property({ type: 'text' })
  currency!: string;

  @Field(() => ProposalCustomer, { nullable: true, description: "From the deal's lead; null when the deal has none." })
  @Embedded(() => ProposalCustomer, { nullable: true, object: true })
  customer?: ProposalCustomer | null;

  @Field(() => [ProposalLineItem])
  @Embedded(() => ProposalLineItem, { array: true })
  lineItems!: ProposalLineItem[];

  @Property({ type: new BigIntType('number') })
  subtotalMinor!: number;

  @Property({ type: 'integer' })
  discountPercentThousandths!: number;

  @Property({ type: new BigIntType('number') })
  discountMinor!: number;

  @Property({ type: 'integer' })
  taxPercentThousandths!: number;

  @Property({ type: new BigIntType('number') })
  taxMinor!: number;

  @Property({ type: new BigIntType('number') })
  totalMinor!: number;

  @Field(() => Float)
  get subtotal(): number {
    return this.subtotalMinor / 100;
  }

  @Field(() => Float, { description: 'Percent, up to 3 decimals.' })
  get discountPercent(): number {
    return this.discountPercentThousandths / 1000;
  }

  @Field(() => Float, { description: 'subtotal × discount_percent, rounded to the cent.' })
  get discount(): number {
    return this.discountMinor / 100;
  }

  @Field(() => Float, { description: 'Percent, up to 3 decimals, applied after the discount.' })
  get taxPercent(): number {
    return this.taxPercentThousandths / 1000;
  }

  @Field(() => Float, { description: '(subtotal − discount) × tax_percent, rounded to the cent.' })
  get tax(): number {
    return this.taxMinor / 100;
  }

  @Field(() => Float, { description: 'subtotal − discount + tax.' })
  get total(): number {
    return this.totalMinor / 100;
  }

  @Field({ description: 'Last day the offer stands (YYYY-MM-DD, UTC).' })
  @Property({ type: 'date' })
  validUntil!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  notes?: string | null;

  @Field(() => GraphQLJSONObject)
  @Property({ type: 'json' })
  metadata: Record<string, string> = {};

  @Field(() => GraphQLJSONObject, { description: 'The deal as GET showed it when the proposal was generated.' })
  @Property({ type: 'json' })
  dealSnapshot!: Record<string, unknown>;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "The deal's lead as GET showed it then; null without a lead." })
  @Property({ type: 'json', nullable: true })
  leadSnapshot?: Record<string, unknown> | null;

  /** The account's name when the proposal was generated: the PDF shows who issued it, as it was. */
  @Property({ type: 'text' })
  issuerName!: string;

  /** Absolute URL of the PDF; set by ProposalService from PUBLIC_URL (not stored: the base may move). */
  @Field({ description: 'Absolute URL of GET /v1/proposals/{id}/pdf.' })
  @Property({ persist: false })
  pdfUrl!: string;
}

/** The last proposal number given per account and mode; incremented under a row lock. */
@Entity({ tableName: 'proposal_numbers' })
export class ProposalNumber {
  @ManyToOne(() => Account, { primary: true, deleteRule: 'cascade' })
  account!: Account;

  @PrimaryKey({ type: 'boolean' })
  livemode!: boolean;

  @Property({ type: 'integer' })
  lastNumber!: number;
}

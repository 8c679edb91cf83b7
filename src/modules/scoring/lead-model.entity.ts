import { Entity, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, Int, ObjectType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';
import type { CalibrationBucket, LearnedModelParams } from './learned-model';

/** One trained version of an account's (and mode's) lead-score model; every version is kept. */
@Entity({ tableName: 'lead_models' })
@Unique({ name: 'lead_models_version_unique', properties: ['account', 'livemode', 'version'] })
export class LeadModel extends TenantEntity<'modelVersion'> {
  @PrimaryKey({ type: 'text' })
  id: string = newId('lsm');

  @Property({ type: 'integer' })
  version!: number;

  @Property({ type: 'json' })
  params!: LearnedModelParams;

  @Property({ type: 'integer' })
  trainingSize!: number;

  @Property({ type: 'integer' })
  holdoutSize!: number;

  @Property({ type: 'integer' })
  won!: number;

  @Property({ type: 'integer' })
  lost!: number;

  @Property({ type: 'double', nullable: true })
  auc?: number | null;

  @Property({ type: 'double', nullable: true })
  priorAuc?: number | null;

  @Property({ type: 'json' })
  calibration!: CalibrationBucket[];

  /** How far rescoring with this version has come: leads are rescored in id order, up to this id. */
  @Property({ type: 'text', nullable: true })
  rescoredThrough?: string | null = null;

  /** When every lead had been rescored with this version; null while that is due or under way. */
  @Property({ type: 'datetime', length: 3, nullable: true })
  rescoredAt?: Date | null = null;

  get modelVersion(): string {
    return `learned-v${this.version}`;
  }
}

@ObjectType({ simpleResolvers: true, description: 'Held-out leads whose predicted chance to win fell in [from, to), and how many of them won.' })
export class CalibrationBucketType {
  @Field(() => Float)
  from!: number;

  @Field(() => Float)
  to!: number;

  @Field(() => Int)
  count!: number;

  @Field(() => Float, { nullable: true })
  meanPredicted!: number | null;

  @Field(() => Float, { nullable: true })
  observedWinRate!: number | null;
}

@ObjectType({ simpleResolvers: true, description: "The model that scores this account's leads now, and how good it is." })
export class ScoringModelInfo {
  @Field({ description: 'prior-v1 until enough deals have closed, then learned-v1, learned-v2, …' })
  modelVersion!: string;

  @Field({ description: '"prior" or "learned".' })
  kind!: string;

  @Field(() => Date, { nullable: true })
  trainedAt!: Date | null;

  @Field(() => Int, { description: 'Leads with a closed deal in this account and mode now.' })
  closedLeads!: number;

  @Field(() => Int, { description: 'Closed leads needed before a model is learned.' })
  closedLeadsNeeded!: number;

  @Field(() => Int, { nullable: true })
  trainingSize!: number | null;

  @Field(() => Int, { nullable: true })
  holdoutSize!: number | null;

  @Field(() => Int, { nullable: true })
  won!: number | null;

  @Field(() => Int, { nullable: true })
  lost!: number | null;

  @Field(() => Float, { nullable: true, description: 'AUC of this model on held-out leads (0.5 is chance, 1 is perfect).' })
  auc!: number | null;

  @Field(() => Float, { nullable: true, description: 'AUC of the prior model on the same held-out leads, for comparison.' })
  priorAuc!: number | null;

  @Field(() => [CalibrationBucketType])
  calibration!: CalibrationBucketType[];

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The learned weights per feature=value (logit scale).' })
  weights!: Record<string, number> | null;
}

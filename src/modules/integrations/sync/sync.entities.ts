import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Ref, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../../common/ids';
import { TenantEntity } from '../../../db/base.entity';
import type { CrmObjectKind, ExternalIds } from '../providers/crm-client';
import { Integration } from '../integration.entity';

/**
 * What the engine carries per row of links, failures and owed changes: our leads and deals (to
 * CRMs), and agents' actions (to Microsoft 365: an action's id is `{agent run id}:{index in its actions}`).
 */
export type SyncObjectType = CrmObjectKind | 'action';

export enum SyncRunStatus {
  running = 'running',
  succeeded = 'succeeded',
  failed = 'failed',
}
registerEnumType(SyncRunStatus, {
  name: 'SyncRunStatus',
  description: 'running, then succeeded (objects may still have failed one by one) or failed (the run stopped).',
});

export enum SyncTrigger {
  /** The first run, when the integration is connected: pushes every lead and deal and pulls the CRM's. */
  connect = 'connect',
  /** POST /v1/integrations/{id}/sync. */
  manual = 'manual',
  /** The periodic pull (SYNC_INTERVAL_MS). */
  schedule = 'schedule',
  /** Leads or deals changed here and are owed to the CRM. */
  change = 'change',
}
registerEnumType(SyncTrigger, { name: 'SyncTrigger' });

export enum SyncDirection {
  push = 'push',
  pull = 'pull',
}
registerEnumType(SyncDirection, { name: 'SyncDirection', description: 'push: from us to the CRM; pull: from the CRM to us.' });

/**
 * One sync of one integration. At most one runs per integration (a partial unique index), and one
 * instance works it at a time (a lease it renews, taken over when it lapses), so a crashed
 * instance's run is finished by another: links, pending changes and cursors are all durable.
 */
@ObjectType({ simpleResolvers: true, description: 'One sync of an integration with its CRM.' })
@Entity({ tableName: 'integration_sync_runs' })
@Index({ name: 'integration_sync_runs_list', properties: ['integration', 'createdAt', 'id'] })
@Index({
  name: 'integration_sync_runs_one_running',
  expression: 'create unique index "integration_sync_runs_one_running" on "integration_sync_runs" ("integration_id") where "status" = \'running\'',
})
@Index({
  name: 'integration_sync_runs_claimable',
  expression: 'create index "integration_sync_runs_claimable" on "integration_sync_runs" ("lease_until") where "status" = \'running\'',
})
export class SyncRun extends TenantEntity<
  'object' | 'integrationId' | 'status' | 'startedAt' | 'pushed' | 'pulled' | 'failed' | 'leaseUntil' | 'claims' | 'toPush'
> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('sync');

  @Field({ description: 'Always "sync_run".' })
  get object(): 'sync_run' {
    return 'sync_run';
  }

  @ManyToOne(() => Integration, { ref: true, deleteRule: 'cascade', index: false })
  integration!: Ref<Integration>;

  @Field(() => ID, { description: 'The integration (int_…).' })
  get integrationId(): string {
    return this.integration.id;
  }

  @Field(() => SyncRunStatus)
  @Enum({ items: () => SyncRunStatus })
  status: SyncRunStatus = SyncRunStatus.running;

  @Field(() => SyncTrigger)
  @Enum({ items: () => SyncTrigger })
  trigger!: SyncTrigger;

  @Field()
  @Property({ type: 'datetime', length: 3 })
  startedAt: Date = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', length: 3, nullable: true })
  finishedAt?: Date | null;

  @Field(() => Int, { description: "Leads and deals written to the CRM (created, updated or archived); agents' follow-ups delivered to Microsoft 365." })
  @Property({ type: 'integer' })
  pushed: number = 0;

  @Field(() => Int, { description: 'Records from the CRM applied here (created or updated).' })
  @Property({ type: 'integer' })
  pulled: number = 0;

  @Field(() => Int, { description: 'Objects that failed one by one (each kept in failures); the run goes on without them.' })
  @Property({ type: 'integer' })
  failed: number = 0;

  @Field(() => Int, { description: 'Progress: leads and deals (or follow-ups) still owed to the provider when last counted (0 when done).' })
  @Property({ type: 'integer' })
  toPush: number = 0;

  @Field(() => String, { nullable: true, description: 'Why the run stopped, for a failed run.' })
  @Property({ type: 'text', nullable: true })
  error?: string | null;

  /** Until when the instance working the run holds it; another takes it over after. */
  @Property({ type: 'datetime', length: 3, hidden: true })
  leaseUntil: Date = new Date();

  /** For a failed run: no run for changes or the schedule starts before then (the provider's Retry-After, or a growing backoff). */
  @Property({ type: 'datetime', length: 3, nullable: true, hidden: true })
  resumeAt?: Date | null;

  /** How many times the run was claimed: a fencing token, so an instance that lost the lease stops writing. */
  @Property({ type: 'integer', hidden: true })
  claims: number = 0;
}

/** One object that could not be synced in a run, with the provider's or our reason. */
@ObjectType({ simpleResolvers: true, description: 'A lead, deal or CRM record a sync run could not carry over, and why.' })
@Entity({ tableName: 'integration_sync_failures' })
@Index({ name: 'integration_sync_failures_run', properties: ['run', 'id'] })
@Index({ name: 'integration_sync_failures_object', properties: ['objectType', 'objectId'] })
export class SyncFailure extends TenantEntity {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('syncf');

  @ManyToOne(() => SyncRun, { ref: true, deleteRule: 'cascade', index: false })
  run!: Ref<SyncRun>;

  @Field(() => SyncDirection)
  @Enum({ items: () => SyncDirection })
  direction!: SyncDirection;

  @Field(() => String, { description: '"lead" or "deal"; "action" for an agent\'s follow-up delivered to Microsoft 365.' })
  @Property({ type: 'text' })
  objectType!: SyncObjectType;

  @Field(() => String, { nullable: true, description: 'Our object (lead_… or deal_…; arun_…:index for an action), when there is one.' })
  @Property({ type: 'text', nullable: true })
  objectId?: string | null;

  @Field(() => String, { nullable: true, description: "The CRM record's id, when there is one." })
  @Property({ type: 'text', nullable: true })
  externalId?: string | null;

  @Field()
  @Property({ type: 'text' })
  message!: string;
}

/**
 * Which CRM records one of our objects is, per integration: one link per object and integration,
 * so a retry updates rather than duplicates. `fields` are the values both sides last agreed on: a
 * push of equal values is skipped, and a pulled record equal to them is our own write coming back.
 */
@Entity({ tableName: 'integration_links' })
@Unique({ name: 'integration_links_object', properties: ['integration', 'objectType', 'objectId'] })
@Unique({ name: 'integration_links_external', properties: ['integration', 'objectType', 'externalId'] })
export class SyncLink extends TenantEntity {
  @PrimaryKey({ type: 'text' })
  id: string = newId('link');

  @ManyToOne(() => Integration, { ref: true, deleteRule: 'cascade', index: false })
  integration!: Ref<Integration>;

  @Property({ type: 'text' })
  objectType!: SyncObjectType;

  /** Not a foreign key: the link outlives a deleted lead until its records are archived at the CRM. */
  @Property({ type: 'text' })
  objectId!: string;

  /** The main record's id (contact / Lead, deal / Opportunity): inbound records are found by it. */
  @Property({ type: 'text' })
  externalId!: string;

  @Property({ type: 'json' })
  external!: ExternalIds;

  @Property({ type: 'json' })
  fields!: Record<string, unknown>;

  @Property({ type: 'datetime', length: 3 })
  syncedAt: Date = new Date();

  /** The CRM's last-modified time of the record when last read or written. */
  @Property({ type: 'datetime', length: 3, nullable: true })
  remoteModifiedAt?: Date | null;
}

/**
 * A lead or deal changed here and owed to an integration's CRM: written by the outbox fan-out
 * (one row per object and integration, however many changes), removed by the push that carries
 * it, in the same transaction as the link.
 */
@Entity({ tableName: 'integration_pending_changes' })
export class SyncPending {
  @ManyToOne(() => Integration, { primary: true, ref: true, deleteRule: 'cascade' })
  integration!: Ref<Integration>;

  @PrimaryKey({ type: 'text' })
  objectType!: SyncObjectType;

  @PrimaryKey({ type: 'text' })
  objectId!: string;

  @Property({ type: 'text' })
  accountId!: string;

  @Property({ type: 'boolean' })
  livemode!: boolean;

  @Property({ type: 'datetime', length: 3 })
  changedAt: Date = new Date();
}

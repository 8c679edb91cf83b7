import { Entity, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { TenantEntity } from '../../db/base.entity';
import { Deal } from './deal.entity';

/**
 * The background work a live co-sell registration owes Partner Center: create its referral, then
 * read the referral's status until it is final. One row per registration (its id is the
 * registration's), made in the transaction that registers, removed once the registration's status
 * is final. The row is the worker's bookkeeping, never shown: what a client sees is the deal's
 * `co_sell` (the referral id, the status and its reason).
 *
 * `dueAt` is both the schedule and the lease: a claim moves it a lease ahead (and counts the claim,
 * the fence that tells a late worker it lost the row), and finishing the work moves it to the
 * next read, or to the retry after a failure. A worker that dies leaves `dueAt` at the lease's
 * end, when another takes the row up again.
 */
@Entity({ tableName: 'co_sell_syncs' })
@Index({ name: 'co_sell_syncs_due', properties: ['dueAt'] })
export class CoSellSync extends TenantEntity<'claims' | 'failures'> {
  /** The registration's id (cosell_…), which is also the referral's externalReferenceId in Partner Center. */
  @PrimaryKey({ type: 'text' })
  id!: string;

  @ManyToOne(() => Deal, { ref: true, deleteRule: 'cascade', index: true })
  deal!: Ref<Deal>;

  /** The partner_center integration the registration goes through. */
  @Property({ type: 'text' })
  integrationId!: string;

  @Property({ type: 'datetime', length: 3 })
  dueAt: Date = new Date();

  @Property({ type: 'integer' })
  claims: number = 0;

  /** Failed attempts in a row, for the backoff; 0 after any success. */
  @Property({ type: 'integer' })
  failures: number = 0;

  /** Why the last attempt failed (for operators; never a secret). */
  @Property({ type: 'text', nullable: true })
  lastError?: string | null;
}

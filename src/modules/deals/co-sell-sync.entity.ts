import { Entity, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { TenantEntity } from '../../db/base.entity';
import { Deal } from './deal.entity';

/**
 * The work a live co-sell registration owes Partner Center (create its referral, then read its status until
 * final): one row per registration, with its id, made in the registering transaction, removed once final, never
 * shown. `dueAt` is both schedule and lease: a claim moves it a lease ahead and counts `claims`, the fence that
 * tells a late worker it lost the row, so a dead worker's row is due again at the lease's end.
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

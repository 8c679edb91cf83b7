import { Entity, ManyToOne, Property, Ref } from '@mikro-orm/core';
import { TenantEntity } from '../../db/base.entity';
import { Proposal } from './proposal.entity';

/**
 * A proposal's PDF as it was first rendered. A proposal is frozen, so its bytes never change: every
 * later request, on any instance, sends these instead of rendering again. Written once with
 * `insert … on conflict do nothing` (proposal-pdf.repository.ts); tenant-scoped like the proposal.
 */
@Entity({ tableName: 'proposal_pdfs' })
export class ProposalPdf extends TenantEntity {
  @ManyToOne(() => Proposal, { primary: true, ref: true, deleteRule: 'cascade' })
  proposal!: Ref<Proposal>;

  /** The name it is downloaded under (`P-2026-000042.pdf`): the proposal's number, frozen with it. */
  @Property({ type: 'text' })
  filename!: string;

  /** Strong ETag of the bytes (quoted), as FileDownload sends it. */
  @Property({ type: 'text' })
  etag!: string;

  @Property({ type: 'blob' })
  bytes!: Buffer;
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { strongEtag } from '../../common/file-download';
import type { Lean } from '../../db/lean';
import { tenantOf } from '../../db/tenant';
import type { ProposalDocument } from './proposal-pdf';
import { ProposalPdfPool } from './proposal-pdf.pool';
import { findStoredPdf, StoredPdf, storePdf } from './proposal-pdf.repository';
import type { Proposal } from './proposal.entity';

/** What the service tells the metrics besides the pool's renders. */
export interface PdfStoreObserver {
  pdfStoredHit(): void;
}

/** The PDF's content, from the proposal's frozen figures. */
function documentOf(proposal: Lean<Proposal>): ProposalDocument {
  return {
    accountName: proposal.issuerName,
    number: proposal.number,
    title: proposal.title,
    issuedOn: proposal.createdAt,
    validUntil: proposal.validUntil,
    currency: proposal.currency,
    customer: proposal.customer
      ? { company: proposal.customer.company, contactName: proposal.customer.contactName, contactEmail: proposal.customer.contactEmail }
      : null,
    dealName: String(proposal.dealSnapshot.name ?? ''),
    // Plain objects: the document is copied to a worker thread, which takes data, not entity instances.
    lines: proposal.lineItems.map(({ description, quantityThousandths, unitPriceMinor, amountMinor }) => ({
      description,
      quantityThousandths,
      unitPriceMinor,
      amountMinor,
    })),
    subtotalMinor: proposal.subtotalMinor,
    discountPercentThousandths: proposal.discountPercentThousandths,
    discountMinor: proposal.discountMinor,
    taxPercentThousandths: proposal.taxPercentThousandths,
    taxMinor: proposal.taxMinor,
    totalMinor: proposal.totalMinor,
    notes: proposal.notes,
  };
}

/**
 * Proposals' PDFs, produced once and kept (one per instance, shared by every request). A proposal
 * is frozen, so its first rendering is stored in proposal_pdfs and every later request, on any
 * instance, sends the stored bytes. Concurrent first requests in this instance share one render
 * (single flight); renders run in the pool's worker threads under its bounds.
 */
export class ProposalPdfService {
  /** Renders under way in this instance, by proposal id (ids are unique across tenants). */
  private readonly flights = new Map<string, Promise<StoredPdf>>();

  constructor(
    readonly pool: ProposalPdfPool,
    private readonly observer?: PdfStoreObserver,
  ) {}

  /**
   * The stored PDF of a proposal of the EntityManager's account and mode, or null when it has none
   * yet (or there is no such proposal there: the read is tenant-scoped). The download asks this first,
   * so a stored PDF costs one read; it loads the proposal only to render it (`render`).
   */
  async stored(em: EntityManager, proposalId: string): Promise<StoredPdf | null> {
    const stored = await findStoredPdf(em, proposalId);
    if (stored) this.observer?.pdfStoredHit();
    return stored;
  }

  /**
   * The PDF of a proposal the caller has loaded through its tenant-scoped EntityManager (so another
   * account's or mode's id never gets here) after `stored` found none: one render shared by every
   * request that asks meanwhile, stored for every later one.
   */
  render(em: EntityManager, proposal: Lean<Proposal>): Promise<StoredPdf> {
    return this.flights.get(proposal.id) ?? this.startFlight(em, proposal);
  }

  private startFlight(em: EntityManager, proposal: Lean<Proposal>): Promise<StoredPdf> {
    const flight = this.produce(em, proposal).finally(() => this.flights.delete(proposal.id));
    this.flights.set(proposal.id, flight);
    return flight;
  }

  private produce(em: EntityManager, proposal: Lean<Proposal>): Promise<StoredPdf> {
    return this.pool.forAccount(tenantOf(em), async () => {
      // Another instance may have stored it while this request waited behind its account's renders.
      const stored = await this.stored(em, proposal.id);
      if (stored) return stored;
      const bytes = await this.pool.render(documentOf(proposal));
      return storePdf(em, proposal.id, { filename: `${proposal.number}.pdf`, bytes, etag: strongEtag(bytes) });
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

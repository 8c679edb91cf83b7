import type { EntityManager } from '@mikro-orm/postgresql';
import { findFirstLean } from '../../db/lean';
import { tenantQuery } from '../../db/tenant-sql';
import { ProposalPdf } from './proposal-pdf.entity';

/** A PDF's name, bytes and their strong ETag, as kept in proposal_pdfs. */
export interface StoredPdf {
  filename: string;
  bytes: Buffer;
  etag: string;
}

/**
 * The stored PDF of a proposal of the EntityManager's account and mode, or null (the tenant filter
 * scopes the read). The row carries all a download sends, so a stored PDF is one read by its key.
 */
export async function findStoredPdf(em: EntityManager, proposalId: string): Promise<StoredPdf | null> {
  const row = await findFirstLean(em, ProposalPdf, { proposal: proposalId });
  return row ? { filename: row.filename, bytes: row.bytes, etag: row.etag } : null;
}

/**
 * Keeps the first rendering of a proposal's PDF, stamped with the EntityManager's account and mode.
 * Two instances may render the same proposal at once; the first insert wins and the other keeps
 * nothing, so every later request sends one set of bytes. Resolves with what is stored.
 */
export async function storePdf(em: EntityManager, proposalId: string, pdf: StoredPdf): Promise<StoredPdf> {
  const now = new Date();
  const inserted = await tenantQuery(
    em,
    `insert into proposal_pdfs (account_id, livemode, proposal_id, filename, etag, bytes, created_at, updated_at)
     values ({tenant}, :proposal, :filename, :etag, :bytes, :now, :now)
     on conflict (proposal_id) do nothing
     returning proposal_id`,
    { proposal: proposalId, filename: pdf.filename, etag: pdf.etag, bytes: pdf.bytes, now },
  );
  if (inserted.length) return pdf;
  const winner = await findStoredPdf(em, proposalId);
  // The row that won is this tenant's (a proposal id belongs to one account and mode); a miss means it was deleted since.
  return winner ?? pdf;
}

import type { EntityManager } from '@mikro-orm/core';
import { findFirstLean, selectRows } from '../../db/lean';
import { tenantOf } from '../../db/tenant';
import { ProposalPdf } from './proposal-pdf.entity';

/** A PDF's bytes and their strong ETag, as kept in proposal_pdfs. */
export interface StoredPdf {
  bytes: Buffer;
  etag: string;
}

/** The stored PDF of a proposal of the EntityManager's account and mode, or null (the tenant filter scopes the read). */
export async function findStoredPdf(em: EntityManager, proposalId: string): Promise<StoredPdf | null> {
  const row = await findFirstLean(em, ProposalPdf, { proposal: proposalId });
  return row ? { bytes: row.bytes, etag: row.etag } : null;
}

/**
 * Keeps the first rendering of a proposal's PDF, stamped with the EntityManager's account and mode.
 * Two instances may render the same proposal at once; the first insert wins and the other keeps
 * nothing, so every later request sends one set of bytes. Resolves with what is stored.
 */
export async function storePdf(em: EntityManager, proposalId: string, pdf: StoredPdf): Promise<StoredPdf> {
  const { accountId, livemode } = tenantOf(em);
  const now = new Date();
  const inserted = await selectRows(
    em,
    `insert into proposal_pdfs (proposal_id, account_id, livemode, etag, bytes, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?)
     on conflict (proposal_id) do nothing
     returning proposal_id`,
    [proposalId, accountId, livemode, pdf.etag, pdf.bytes, now, now],
  );
  if (inserted.length) return pdf;
  const winner = await findStoredPdf(em, proposalId);
  // The row that won is this tenant's (a proposal id belongs to one account and mode); a miss means it was deleted since.
  return winner ?? pdf;
}

import { ApiProblem, graphql } from './api';
import type { Deal, Stage } from './pipeline';

/** What the Deal page shows of a deal: the board's fields and the deal's own records. */
export interface DealDetail extends Deal {
  probability: number;
  /** Custom field values by key. */
  fields: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  stageChangedAt: string;
  history: StageChange[];
  proposals: { data: ProposalRow[]; hasMore: boolean };
  coSell: CoSell | null;
  externalIds: ExternalRecord[];
}

export interface StageChange {
  id: string;
  /** null for the stage the deal was created in. */
  fromStage: Stage | null;
  toStage: Stage;
  changedAt: string;
}

export interface ProposalRow {
  id: string;
  number: string;
  title: string;
  status: string;
  total: number;
  currency: string;
  createdAt: string;
  validUntil: string;
}

export interface CoSell {
  id: string;
  status: string;
  statusReason: string | null;
  referralId: string | null;
  integrationId: string;
  submittedAt: string;
  decidedAt: string | null;
}

export interface Eligibility {
  eligible: boolean;
  registered: boolean;
  reasons: Array<{ rule: string; message: string }>;
}

export interface ExternalRecord {
  integrationId: string;
  provider: string;
  record: string;
  id: string;
}

export interface LoadedDeal {
  deal: DealDetail;
  eligibility: Eligibility;
  /** The company of the deal's lead; null without a lead (or when the lead is gone). */
  company: string | null;
}

/** The page's first proposals: a deal has few, and the page says when there are more. */
export const PROPOSALS_SHOWN = 50;

const DETAIL = `id name value currency stage probability expectedCloseDate owner ownerId leadId createdAt updatedAt stageChangedAt fields
  history { id fromStage toStage changedAt }
  proposals(filter: { limit: ${PROPOSALS_SHOWN} }) { data { id number title status total currency createdAt validUntil } hasMore }
  coSell { id status statusReason referralId integrationId submittedAt decidedAt }
  externalIds { integrationId provider record id }`;

/** The deal, whether co-sell would take it, and its lead's company; 'missing' when there is no such deal in this account and mode. */
export async function loadDeal(id: string): Promise<LoadedDeal | 'missing'> {
  let data: { deal: DealDetail; dealCoSellEligibility: Eligibility };
  try {
    data = await graphql(
      `query Deal($id: ID!) {
        deal(id: $id) { ${DETAIL} }
        dealCoSellEligibility(id: $id) { eligible registered reasons { rule message } }
      }`,
      { id },
    );
  } catch (error) {
    if (error instanceof ApiProblem && error.code === 'resource_missing') return 'missing';
    throw error;
  }
  return { deal: data.deal, eligibility: data.dealCoSellEligibility, company: await companyOf(data.deal.leadId) };
}

async function companyOf(leadId: string | null): Promise<string | null> {
  if (!leadId) return null;
  try {
    return (await graphql<{ lead: { company: string } }>('query Lead($id: ID!) { lead(id: $id) { company } }', { id: leadId })).lead.company;
  } catch (error) {
    if (error instanceof ApiProblem && error.code === 'resource_missing') return null;
    throw error;
  }
}

export async function registerForCoSell(id: string): Promise<CoSell | null> {
  const data = await graphql<{ registerDeal: { coSell: CoSell | null } }>(
    'mutation Register($id: ID!) { registerDeal(id: $id) { coSell { id status statusReason referralId integrationId submittedAt decidedAt } } }',
    { id },
  );
  return data.registerDeal.coSell;
}

export interface LineItem {
  description: string;
  quantity: number;
  unitPrice: number;
}

export async function createProposal(input: { dealId: string; title?: string; lineItems?: LineItem[] }): Promise<ProposalRow> {
  const data = await graphql<{ createProposal: ProposalRow }>(
    'mutation Propose($input: ProposalCreateInput!) { createProposal(input: $input) { id number title status total currency createdAt validUntil } }',
    { input },
  );
  return data.createProposal;
}

/** The web app's own download of a proposal's PDF (session-signed; the API's REST route needs a key). */
export const pdfHref = (proposalId: string): string => `/proposals/${encodeURIComponent(proposalId)}/pdf`;

/** Deletes the deal with its stage history; the API refuses while the deal has a proposal. */
export async function deleteDeal(id: string): Promise<void> {
  await graphql<{ deleteDeal: { deleted: boolean } }>('mutation DeleteDeal($id: ID!) { deleteDeal(id: $id) { deleted } }', { id });
}

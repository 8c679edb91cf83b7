import { graphql } from './api';

/** The stages in pipeline order (the API's DealStage). Closed stages are final. */
export const STAGES = ['prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost'] as const;
export type Stage = (typeof STAGES)[number];
export const isClosed = (stage: Stage): boolean => stage === 'closed_won' || stage === 'closed_lost';
export const stageLabel = (stage: Stage): string =>
  ({ closed_won: 'Closed won', closed_lost: 'Closed lost' })[stage as string] ?? stage[0].toUpperCase() + stage.slice(1);

export interface Deal {
  id: string;
  name: string;
  value: number;
  currency: string;
  stage: Stage;
  expectedCloseDate: string | null;
  owner: string | null;
  /** The owning member's usr_ id, or null. */
  ownerId: string | null;
  leadId: string | null;
}

export interface StageSummary {
  stage: Stage;
  currency: string;
  count: number;
  totalValue: number;
  weightedValue: number;
}

export interface Pipeline {
  deals: Deal[];
  summary: StageSummary[];
  /** Company of each lead a deal came from, by lead id. */
  companies: Record<string, string>;
}

/** The fields the board edits in place. */
export interface DealFields {
  name: string;
  value: number;
  expectedCloseDate: string | null;
  owner: string | null;
  /** Set only by a form that offers the members (left out, the owner stays as it is). */
  ownerId?: string | null;
}

const DEAL = 'id name value currency stage expectedCloseDate owner ownerId leadId';

export const money = (value: number, currency: string): string => {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
  } catch {
    return `${value.toFixed(2)} ${currency}`;
  }
};

/** Every deal (the API pages by 100), the API's own totals per stage, and the companies of their leads. */
export async function loadPipeline(): Promise<Pipeline> {
  const deals: Deal[] = [];
  let summary: StageSummary[] = [];
  let cursor: string | null = null;
  do {
    const data: { deals: { data: Deal[]; nextCursor: string | null }; pipelineSummary?: StageSummary[] } = await graphql(
      `query Board($cursor: String, $first: Boolean!) {
        deals(filter: { limit: 100, cursor: $cursor, sort: "created_at" }) { data { ${DEAL} } nextCursor }
        pipelineSummary @include(if: $first) { stage currency count totalValue weightedValue }
      }`,
      { cursor, first: cursor === null },
    );
    if (data.pipelineSummary) summary = data.pipelineSummary;
    deals.push(...data.deals.data);
    cursor = data.deals.nextCursor;
  } while (cursor);
  return { deals, summary, companies: await companiesOf(deals) };
}

/** The company of each deal's lead, 25 leads a request (aliases `l0`, `l1`, …). */
async function companiesOf(deals: Deal[]): Promise<Record<string, string>> {
  const ids = [...new Set(deals.map((deal) => deal.leadId).filter((id): id is string => Boolean(id)))];
  const companies: Record<string, string> = {};
  for (let at = 0; at < ids.length; at += 25) {
    const batch = ids.slice(at, at + 25);
    const query = `query Companies(${batch.map((_, i) => `$l${i}: ID!`).join(', ')}) { ${batch.map((_, i) => `l${i}: lead(id: $l${i}) { id company }`).join(' ')} }`;
    const data = await graphql<Record<string, { id: string; company: string }>>(query, Object.fromEntries(batch.map((id, i) => [`l${i}`, id])));
    for (const lead of Object.values(data)) companies[lead.id] = lead.company;
  }
  return companies;
}

export async function moveDeal(id: string, stage: Stage): Promise<Deal> {
  const data = await graphql<{ updateDeal: Deal }>(
    `mutation Move($id: ID!, $stage: DealStage!) { updateDeal(id: $id, input: { stage: $stage }) { ${DEAL} } }`,
    {
      id,
      stage,
    },
  );
  return data.updateDeal;
}

export async function createDeal(stage: Stage, fields: DealFields): Promise<Deal> {
  const data = await graphql<{ createDeal: Deal }>(`mutation Create($input: DealCreateInput!) { createDeal(input: $input) { ${DEAL} } }`, {
    input: { ...fields, stage },
  });
  return data.createDeal;
}

export async function updateDeal(id: string, fields: DealFields): Promise<Deal> {
  const data = await graphql<{ updateDeal: Deal }>(`mutation Edit($id: ID!, $input: DealUpdateInput!) { updateDeal(id: $id, input: $input) { ${DEAL} } }`, {
    id,
    input: fields,
  });
  return data.updateDeal;
}

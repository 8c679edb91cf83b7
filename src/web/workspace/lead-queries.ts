import { ApiProblem, graphql } from './api';

/** The API's LeadStatus and ScoreLabel. `converted` is set by the API when a deal is won, never by hand. */
export const STATUSES = ['new', 'contacted', 'qualified', 'disqualified', 'converted'] as const;
export const SETTABLE_STATUSES = ['new', 'contacted', 'qualified', 'disqualified'] as const;
export const SCORE_LABELS = ['hot', 'warm', 'cold'] as const;

/** The sorts LeadListInput accepts (created_at, score, company, employees; `-` for descending), as people name them. */
export const SORTS = [
  { value: '-created_at', label: 'Newest first' },
  { value: 'created_at', label: 'Oldest first' },
  { value: '-score', label: 'Highest score' },
  { value: 'score', label: 'Lowest score' },
  { value: 'company', label: 'Company A–Z' },
  { value: '-company', label: 'Company Z–A' },
  { value: '-employees', label: 'Most employees' },
  { value: 'employees', label: 'Fewest employees' },
] as const;

export const PAGE_SIZE = 25;

export interface LeadRow {
  id: string;
  company: string;
  contactName: string | null;
  contactEmail: string;
  score: number;
  scoreLabel: string;
  status: string;
  /** The owning member's usr_ id, or null. */
  ownerId: string | null;
  createdAt: string;
}

export interface Lead extends LeadRow {
  industry: string | null;
  employees: number | null;
  website: string | null;
  country: string | null;
  source: string | null;
  updatedAt: string;
  /** Custom field values by key. */
  fields: Record<string, unknown>;
}

export interface LeadScore {
  score: number;
  scoreLabel: string;
  baseScore: number;
  modelVersion: string;
  scoredAt: string;
  signals: Array<{ name: string; value: string; impact: number; description: string }>;
}

/**
 * The list's filters as the URL's query string holds them, in the REST API's own names
 * (`?status=new&min_score=70&sort=-score`), so that a filtered list can be bookmarked and shared.
 * Every value is the text the person typed: the API, not the page, decides what is valid.
 */
export const FILTER_KEYS = ['q', 'status', 'score_label', 'industry', 'owner_id', 'min_score', 'max_score', 'sort'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type Filters = Record<FilterKey, string>;

export const NO_FILTERS: Filters = { q: '', status: '', score_label: '', industry: '', owner_id: '', min_score: '', max_score: '', sort: '' };

export function filtersFromSearch(search: string): Filters {
  const params = new URLSearchParams(search);
  return Object.fromEntries(FILTER_KEYS.map((key) => [key, params.get(key) ?? ''])) as Filters;
}

export function searchOf(filters: Filters): string {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) if (filters[key].trim() !== '') params.set(key, filters[key].trim());
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Whether any filter narrows the list (the sort does not). */
export const narrowed = (filters: Filters): boolean => FILTER_KEYS.some((key) => key !== 'sort' && filters[key].trim() !== '');

/** The GraphQL input field of each filter. */
const INPUT_FIELDS: Record<FilterKey, string> = {
  q: 'q',
  status: 'status',
  score_label: 'scoreLabel',
  industry: 'industry',
  owner_id: 'ownerId',
  min_score: 'minScore',
  max_score: 'maxScore',
  sort: 'sort',
};

/** The filter an API error's `param` names (`filter.minScore` → `min_score`). */
export const filterOfParam = (param: string | undefined): FilterKey | undefined =>
  FILTER_KEYS.find((key) => param === `filter.${INPUT_FIELDS[key]}` || param === INPUT_FIELDS[key]);

function listInput(filters: Filters, cursor: string | null): Record<string, unknown> {
  const input: Record<string, unknown> = { limit: PAGE_SIZE };
  if (cursor) input.cursor = cursor;
  for (const key of FILTER_KEYS) {
    const text = filters[key].trim();
    if (text === '') continue;
    if (key !== 'min_score' && key !== 'max_score') input[INPUT_FIELDS[key]] = text;
    // GraphQL refuses a non-integer Int before the API's own checks, in words meant for programmers
    // and naming no field; whether the number is in range is the API's to say.
    else if (/^-?\d+$/.test(text)) input[INPUT_FIELDS[key]] = Number(text);
    else throw new ApiProblem('Enter a whole number, such as 70.', `filter.${INPUT_FIELDS[key]}`);
  }
  return input;
}

const ROW = 'id company contactName contactEmail score scoreLabel status ownerId createdAt';

export interface LeadPage {
  leads: LeadRow[];
  nextCursor: string | null;
  /** Whether the account (in this mode) has any lead at all, so an empty page can say which empty it is. */
  anyLead: boolean;
}

export async function listLeads(filters: Filters, cursor: string | null): Promise<LeadPage> {
  const data = await graphql<{ leads: { data: LeadRow[]; nextCursor: string | null }; any: { data: Array<{ id: string }> } }>(
    `query Leads($filter: LeadListInput) {
      leads(filter: $filter) { data { ${ROW} } nextCursor }
      any: leads(filter: { limit: 1 }) { data { id } }
    }`,
    { filter: listInput(filters, cursor) },
  );
  return { leads: data.leads.data, nextCursor: data.leads.nextCursor, anyLead: data.any.data.length > 0 };
}

export interface NewLead {
  company: string;
  contactEmail: string;
  contactName: string | null;
  industry: string | null;
  employees: number | null;
}

export async function createLead(fields: NewLead): Promise<LeadRow> {
  const data = await graphql<{ createLead: LeadRow }>(`mutation CreateLead($input: LeadCreateInput!) { createLead(input: $input) { ${ROW} } }`, {
    input: fields,
  });
  return data.createLead;
}

const LEAD = `${ROW} industry employees website country source updatedAt fields`;

/** A lead with its score explained. */
export async function loadLead(id: string): Promise<{ lead: Lead; score: LeadScore }> {
  const data = await graphql<{ lead: Lead; leadScore: LeadScore }>(
    `query Lead($id: ID!) {
      lead(id: $id) { ${LEAD} }
      leadScore(id: $id) { score scoreLabel baseScore modelVersion scoredAt signals { name value impact description } }
    }`,
    { id },
  );
  return { lead: data.lead, score: data.leadScore };
}

export async function updateLeadStatus(id: string, status: string): Promise<Lead> {
  const data = await graphql<{ updateLead: Lead }>(
    `mutation LeadStatus($id: ID!, $status: LeadStatus!) { updateLead(id: $id, input: { status: $status }) { ${LEAD} } }`,
    {
      id,
      status,
    },
  );
  return data.updateLead;
}

/** Gives the lead to a member (their usr_ id), or to nobody (null). */
export async function updateLeadOwner(id: string, ownerId: string | null): Promise<Lead> {
  const data = await graphql<{ updateLead: Lead }>(
    `mutation LeadOwner($id: ID!, $ownerId: ID) { updateLead(id: $id, input: { ownerId: $ownerId }) { ${LEAD} } }`,
    {
      id,
      ownerId,
    },
  );
  return data.updateLead;
}

export interface LeadDeal {
  id: string;
  name: string;
  value: number;
  currency: string;
  stage: string;
  expectedCloseDate: string | null;
}

export async function leadDeals(leadId: string, cursor: string | null): Promise<{ data: LeadDeal[]; nextCursor: string | null }> {
  const data = await graphql<{ deals: { data: LeadDeal[]; nextCursor: string | null } }>(
    `query LeadDeals($leadId: ID!, $cursor: String) {
      deals(filter: { leadId: $leadId, cursor: $cursor, limit: ${PAGE_SIZE} }) { data { id name value currency stage expectedCloseDate } nextCursor }
    }`,
    { leadId, cursor },
  );
  return data.deals;
}

export interface LeadEvent {
  id: string;
  type: string;
  createdAt: string;
}

export async function leadEvents(objectId: string, cursor: string | null): Promise<{ data: LeadEvent[]; nextCursor: string | null }> {
  const data = await graphql<{ events: { data: LeadEvent[]; nextCursor: string | null } }>(
    `query LeadEvents($objectId: ID!, $cursor: String) {
      events(filter: { objectId: $objectId, cursor: $cursor, limit: ${PAGE_SIZE} }) { data { id type createdAt } nextCursor }
    }`,
    { objectId, cursor },
  );
  return data.events;
}

/** A signal's points as a signed number: "+15", "−8", "0". */
export const signed = (impact: number): string => (impact > 0 ? `+${impact}` : impact < 0 ? `−${Math.abs(impact)}` : '0');

/** Deletes the lead; its deals stay, no longer linked to it (the API sets their lead to none). */
export async function deleteLead(id: string): Promise<void> {
  await graphql<{ deleteLead: { deleted: boolean } }>('mutation DeleteLead($id: ID!) { deleteLead(id: $id) { deleted } }', { id });
}

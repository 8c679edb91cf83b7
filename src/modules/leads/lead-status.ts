import { registerEnumType } from 'type-graphql';

export enum LeadStatus {
  new = 'new',
  contacted = 'contacted',
  qualified = 'qualified',
  disqualified = 'disqualified',
  converted = 'converted',
}

registerEnumType(LeadStatus, {
  name: 'LeadStatus',
  description: 'new → contacted → qualified | disqualified; converted once a deal is won.',
});

/**
 * Moves a client may make (CONTRACT §5). Steps may be skipped forward; qualified and disqualified
 * may be revisited; `converted` is set only by a won deal and is final.
 */
const ALLOWED: Record<LeadStatus, LeadStatus[]> = {
  new: [LeadStatus.contacted, LeadStatus.qualified, LeadStatus.disqualified],
  contacted: [LeadStatus.qualified, LeadStatus.disqualified],
  qualified: [LeadStatus.disqualified],
  disqualified: [LeadStatus.qualified],
  converted: [],
};

export function canMoveLead(from: LeadStatus, to: LeadStatus): boolean {
  return from === to || ALLOWED[from].includes(to);
}

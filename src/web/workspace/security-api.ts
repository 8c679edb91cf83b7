import { graphql } from './api';
import type { ListPage } from './developers';
import { workspaceRoot } from './ui';

/** The security log page's call to /graphql and the shape it answers (schema.graphql's SecurityEvent). */

export interface SecurityEntry {
  id: string;
  type: string;
  actor: { type: string; id: string | null };
  memberId: string | null;
  address: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
  createdAt: string;
}

const ENTRY = 'id type actor { type id } memberId address userAgent details createdAt';

/** The types the log records, from the security module's own list (the page's `data-security-event-types`). */
export const securityEventTypes = (): string[] => (workspaceRoot().dataset.securityEventTypes ?? '').split(' ').filter(Boolean);

/** A page of the log, newest first, by the API's own `type` and `memberId` filters (an empty one is no filter). */
export async function listSecurityEvents(filter: { type: string; memberId: string }, cursor: string | null): Promise<ListPage<SecurityEntry>> {
  const data = await graphql<{ securityEvents: ListPage<SecurityEntry> }>(
    `query SecurityLog($type: [String!], $memberId: String, $cursor: String) {
      securityEvents(filter: { limit: 50, type: $type, memberId: $memberId, cursor: $cursor }) { data { ${ENTRY} } nextCursor }
    }`,
    { type: filter.type ? [filter.type] : null, memberId: filter.memberId || null, cursor },
  );
  return data.securityEvents;
}

import { graphql } from './api';
import type { ListPage } from './developers';
import { workspaceRoot } from './ui';

/** The Members page's calls to /graphql and the shape they answer (schema.graphql's Member). */

export interface Member {
  /** The person's id (usr_…). */
  id: string;
  email: string;
  name: string;
  role: string;
  status: 'invited' | 'active' | 'deactivated';
  lastSeenAt: string | null;
}

const MEMBER = 'id email name role status lastSeenAt';

/** The roles the API accepts, from the service's role table (the page's `data-roles`). */
export const roles = (): string[] => (workspaceRoot().dataset.roles ?? '').split(' ').filter(Boolean);

/** The roles that may manage members (the page's `data-managing-roles`), for the words of a refusal. */
export const managingRoles = (): string[] => (workspaceRoot().dataset.managingRoles ?? '').split(' ').filter(Boolean);

export async function listMembers(cursor: string | null): Promise<ListPage<Member>> {
  const data = await graphql<{ members: ListPage<Member> }>(
    `query Members($cursor: String) { members(filter: { limit: 50, cursor: $cursor }) { data { ${MEMBER} } nextCursor } }`,
    { cursor },
  );
  return data.members;
}

export async function inviteMember(input: { email: string; name?: string; role: string }): Promise<Member> {
  const data = await graphql<{ inviteMember: Member }>(`mutation Invite($input: MemberInviteInput!) { inviteMember(input: $input) { ${MEMBER} } }`, { input });
  return data.inviteMember;
}

export async function changeRole(id: string, role: string): Promise<Member> {
  const data = await graphql<{ updateMember: Member }>(
    `mutation ChangeRole($id: ID!, $role: MemberRole!) { updateMember(id: $id, input: { role: $role }) { ${MEMBER} } }`,
    { id, role },
  );
  return data.updateMember;
}

/** Deactivates the member; one who owns leads or deals is refused (resource_conflict) unless `transferTo` names an active member to hand them to. */
export async function deactivateMember(id: string, transferTo?: string): Promise<Member> {
  const data = await graphql<{ deactivateMember: Member }>(
    `mutation Deactivate($id: ID!, $transferTo: ID) { deactivateMember(id: $id, options: { transferTo: $transferTo }) { ${MEMBER} } }`,
    { id, transferTo: transferTo ?? null },
  );
  return data.deactivateMember;
}

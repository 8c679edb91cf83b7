import { ApiProblem } from './api';
import { listMembers, type Member } from './members-api';
import { useLoad, workspaceRoot } from './ui';

/**
 * Owners of leads and deals (`ownerId`: a member's usr_ id, or null) as people read them: the
 * member's name from `members`. A role that may not read members (`permission_denied`) sees the
 * owner as "You" when it is themselves and as the id otherwise, and is offered no select: the page
 * still works, it only cannot name colleagues.
 */
export interface Owners {
  /** Every member read, by id (deactivated ones too: an old record may still name one). */
  byId: Map<string, Member>;
  /** Whom a record may be given to: the active members. */
  active: Member[];
}

/** The signed-in person's id (the shell's `data-member-id`). */
export const myId = (): string => workspaceRoot().dataset.memberId ?? '';

/** The members, every page of them; null when this role may not read members. */
export async function loadOwners(): Promise<Owners | null> {
  const members: Member[] = [];
  let cursor: string | null = null;
  try {
    do {
      const page = await listMembers(cursor);
      members.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor);
  } catch (error) {
    if (error instanceof ApiProblem && error.code === 'permission_denied') return null;
    throw error;
  }
  return { byId: new Map(members.map((member) => [member.id, member])), active: members.filter((member) => member.status === 'active') };
}

/** The members for a page; `data` stays null while loading, and is `null` inside `{ owners }` when refused. */
export function useOwners() {
  return useLoad(async () => ({ owners: await loadOwners() }), []);
}

/** An owner's name: the member's name, "You", the id when members cannot be read, "No owner" for null. */
export function ownerName(ownerId: string | null, owners: Owners | null | undefined): string {
  if (!ownerId) return 'No owner';
  const member = owners?.byId.get(ownerId);
  const you = ownerId === myId();
  if (member) return you ? `${member.name} (you)` : member.name;
  return you ? 'You' : ownerId;
}

/** The choices of an Owner select: "No owner" (value ""), the active members, and the current owner if no longer active. */
export function ownerOptions(owners: Owners, current: string | null): Array<{ value: string; label: string }> {
  const options = [{ value: '', label: 'No owner' }, ...owners.active.map((member) => ({ value: member.id, label: ownerName(member.id, owners) }))];
  if (current && !owners.active.some((member) => member.id === current)) options.push({ value: current, label: `${ownerName(current, owners)} (inactive)` });
  return options;
}

/**
 * What a restricted key (`rk_test_…`, `rk_live_…`) may do: a level per resource. Write implies
 * read. A key without permissions (`sk_…`) has full access.
 */
export const RESOURCES = ['leads', 'deals', 'proposals', 'agents', 'integrations', 'webhooks', 'events', 'members', 'security_events', 'fields'] as const;
export type Resource = (typeof RESOURCES)[number];

export const LEVELS = ['none', 'read', 'write'] as const;
export type Level = (typeof LEVELS)[number];

/** Every resource with its level; stored as JSON on the key. */
export type KeyPermissions = Record<Resource, Level>;

/** What a root field needs: a resource at a level, or `public` for fields that read no account data (health). */
export type RequiredPermission = `${Resource}:${Exclude<Level, 'none'>}` | 'public';

const RANK: Record<Level, number> = { none: 0, read: 1, write: 2 };

export const isResource = (value: string): value is Resource => (RESOURCES as readonly string[]).includes(value);
export const isLevel = (value: string): value is Level => (LEVELS as readonly string[]).includes(value);

/** Whether a key with these permissions (null: an unrestricted key) may run a field that needs `required`. */
export function allows(permissions: KeyPermissions | null | undefined, required: RequiredPermission): boolean {
  if (!permissions || required === 'public') return true;
  const [resource, level] = required.split(':') as [Resource, Level];
  return RANK[permissions[resource] ?? 'none'] >= RANK[level];
}

/** A permission list the way people write it, "leads=read,deals=write"; resources not named are `none`. */
export function parsePermissions(text: string): KeyPermissions {
  const permissions = Object.fromEntries(RESOURCES.map((resource) => [resource, 'none'])) as KeyPermissions;
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (!entries.length) throw new Error(`name at least one permission, as resource=level (resources: ${RESOURCES.join(', ')})`);
  for (const entry of entries) {
    const match = /^([^=]*)=(.*)$/.exec(entry);
    if (!match) throw new Error(`"${entry}" is not resource=level (for example leads=read)`);
    const [resource, level] = [match[1].trim(), match[2].trim()];
    if (!isResource(resource)) throw new Error(`unknown resource "${resource}" in "${entry}": use one of ${RESOURCES.join(', ')}`);
    if (!isLevel(level)) throw new Error(`unknown level "${level}" for ${resource}: use none, read or write`);
    permissions[resource] = level;
  }
  return permissions;
}

/** "leads=read,deals=write" (resources at `none` left out), or "full access" for an unrestricted key. */
export function describePermissions(permissions: KeyPermissions | null | undefined): string {
  if (!permissions) return 'full access';
  const granted = RESOURCES.filter((resource) => permissions[resource] !== 'none').map((resource) => `${resource}=${permissions[resource]}`);
  return granted.length ? granted.join(',') : 'no access';
}

/**
 * What a member of an account may do, by role: one table with restricted keys' permissions, so the
 * web session and GraphQL through it pass the same `@RequiresPermission` check as a key. null:
 * every resource (owner, admin). What only an owner may do (the plan, owners' roles, deleting the
 * account) is no resource of the schema: the members service and the web app check the role itself.
 * Accepting an agent's suggestion is `agents:write`, so a member may also change agents.
 */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

const levels = (granted: Partial<KeyPermissions>): KeyPermissions => ({
  ...(Object.fromEntries(RESOURCES.map((r) => [r, 'none'])) as KeyPermissions),
  ...granted,
});

export const ROLE_PERMISSIONS: Record<Role, KeyPermissions | null> = {
  owner: null,
  admin: null,
  member: levels({ leads: 'write', deals: 'write', proposals: 'write', agents: 'write', events: 'read', fields: 'read' }),
  viewer: levels({ leads: 'read', deals: 'read', proposals: 'read', agents: 'read', events: 'read', fields: 'read' }),
};

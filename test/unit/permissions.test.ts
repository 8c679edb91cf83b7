import { buildSchema, GraphQLObjectType } from 'graphql';
import { permissionOf, undeclaredPermissions } from '../../src/auth/permission';
import { createSchema } from '../../src/app/schema';
import { allows, describePermissions, parsePermissions } from '../../src/modules/accounts/key-permissions';
import { ROUTES } from '../../src/app/modules';

describe('permissions of restricted keys', () => {
  it('every Query and Mutation root field declares one (@RequiresPermission)', async () => {
    const schema = await createSchema();
    expect(undeclaredPermissions(schema)).toEqual([]);
    // The rule catches what it should: a root field without a declaration is named.
    expect(undeclaredPermissions(buildSchema('type Query { a: Int, b: Int } type Mutation { c: Int }'))).toEqual(['Query.a', 'Query.b', 'Mutation.c']);
  });

  it('every REST route runs a root field that declares one: read for GET, write for the others', async () => {
    const schema = await createSchema();
    for (const route of ROUTES) {
      const root = route.operation.type === 'query' ? schema.getQueryType() : schema.getMutationType();
      const permission = permissionOf(root!.getFields()[route.operation.field]);
      const expected = route.method === 'GET' ? /^(\w+:read|public)$/ : /^\w+:write$/;
      expect({ route: `${route.method} ${route.path}`, permission }).toEqual({
        route: `${route.method} ${route.path}`,
        permission: expect.stringMatching(expected),
      });
    }
  });

  it('a nested field that reaches another resource declares it beside its other extensions (Deal.proposals)', async () => {
    const schema = await createSchema();
    const proposals = (schema.getType('Deal') as GraphQLObjectType).getFields().proposals;
    expect(proposals.extensions).toMatchObject({ rest: false, permission: 'proposals:read' });
  });

  it('parses "leads=read,deals=write": resources not named are none; unknown resources and levels are refused', () => {
    expect(parsePermissions('leads=read, deals=write')).toEqual({
      leads: 'read',
      deals: 'write',
      proposals: 'none',
      agents: 'none',
      integrations: 'none',
      webhooks: 'none',
      events: 'none',
      members: 'none',
      security_events: 'none',
      fields: 'none',
    });
    expect(() => parsePermissions('contacts=read')).toThrow('unknown resource "contacts"');
    expect(() => parsePermissions('leads=admin')).toThrow('unknown level "admin" for leads');
    expect(() => parsePermissions('leads')).toThrow('"leads" is not resource=level');
    expect(() => parsePermissions(' , ')).toThrow('name at least one permission');
  });

  it('write implies read; none denies; public and unrestricted keys pass', () => {
    const permissions = parsePermissions('deals=write,leads=read');
    expect(allows(permissions, 'deals:read')).toBe(true);
    expect(allows(permissions, 'deals:write')).toBe(true);
    expect(allows(permissions, 'leads:read')).toBe(true);
    expect(allows(permissions, 'leads:write')).toBe(false);
    expect(allows(permissions, 'agents:read')).toBe(false);
    expect(allows(permissions, 'public')).toBe(true);
    expect(allows(null, 'agents:write')).toBe(true);
    expect(describePermissions(permissions)).toBe('leads=read,deals=write');
    expect(describePermissions(parsePermissions('leads=none'))).toBe('no access');
    expect(describePermissions(null)).toBe('full access');
  });
});

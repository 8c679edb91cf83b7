import { getNamedType, GraphQLSchema, isObjectType } from 'graphql';
import { permissionOf } from '../../src/auth/permission';
import { createSchema } from '../../src/app/schema';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { Plan } from '../../src/modules/accounts/plan';
import { KeyPermissions, RESOURCES } from '../../src/modules/accounts/key-permissions';
import { ROUTES } from '../../src/app/modules';
import { LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';

/**
 * Every route of the table that addresses an object by id answers 404 for another account's
 * object and for the other mode's object of the same account (CONTRACT §2: never 403, never a
 * change). The routes come from the table itself, so a route added later is checked too. An
 * account's members are shared by its two modes (issue 67): for them the other mode's key is the
 * same account's, and finds them.
 */
const SHARED_BY_MODES = new Set(['members', 'security_events']);
describe('every /v1 route with an {id} keeps accounts and modes apart', () => {
  let app: TestApp;
  let owner: TestAccount;
  let stranger: TestAccount;
  /** One object of each kind, made with the owner's test key; keyed by the path's first segment. */
  const ids: Record<string, string> = {};

  const made = async (path: string, body: unknown) => {
    const response = await app.request('POST', path, { key: owner.testKey, body });
    expect(response.status).toBe(201);
    return response.body.id as string;
  };

  beforeAll(async () => {
    // The agent runner too: a suggestion is made by a deployed writer.
    app = await startTestApp({ env: LOCAL_RECEIVERS, agents: {} });
    // Enterprise: the live keys' per-minute allowance holds every route's requests.
    owner = await app.createAccount({ plan: Plan.enterprise });
    stranger = await app.createAccount({ plan: Plan.enterprise });
    ids.leads = await made('/v1/leads', { company: 'Owned', contact_email: 'owned@example.test' });
    ids.deals = await made('/v1/deals', { name: 'Owned deal', value: 5000, lead_id: ids.leads, stage: 'qualification' });
    ids.proposals = await made('/v1/proposals', { deal_id: ids.deals });
    ids.agents = await made('/v1/agents', { name: 'Owned agent', type: 'lead_qualifier' });
    // A lead researcher writes a brief (a suggestion) for each new lead; it is deployed before the lead it writes about.
    const researcher = await made('/v1/agents', { name: 'Owned researcher', type: 'lead_researcher' });
    expect((await app.request('POST', `/v1/agents/${researcher}/deploy`, { key: owner.testKey })).status).toBe(200);
    await made('/v1/leads', { company: 'Researched', contact_email: 'researched@example.test' });
    ids.suggestions = await waitFor("the researcher's suggestion", async () => {
      const listed = await app.request('GET', `/v1/agents/${researcher}/suggestions`, { key: owner.testKey });
      return listed.body.data?.[0]?.id as string | undefined;
    });
    ids.integrations = await made('/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-00000000-owned' } });
    ids.webhooks = await made('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    const events = await app.request('GET', '/v1/events?limit=1', { key: owner.testKey });
    expect(events.status).toBe(200);
    ids.events = events.body.data[0].id;
    ids.members = await made('/v1/members', { email: 'invited@example.test', role: 'viewer' });
    ids.fields = await made('/v1/fields', { object_type: 'lead', key: 'isolation_seats', label: 'Seats', type: 'number' });
    ids.security_events = (await app.request('GET', '/v1/security_events?type=member.invited', { key: owner.testKey })).body.data[0].id;
  });

  /** The keys that must not find the owner's `kind` of object: another account's, and the owner's other mode unless both modes share it. */
  const outsiders = (kind: string) => [stranger.testKey, stranger.liveKey, ...(SHARED_BY_MODES.has(kind) ? [] : [owner.liveKey])];
  afterAll(() => app.close());

  const addressed = ROUTES.filter((route) => route.path.includes(':id'));
  const listed = ROUTES.filter((route) => route.method === 'GET' && !route.path.includes(':') && route.operation.query);
  /**
   * The body each write sends: a harmless change, so a leak would show as a changed object; a valid
   * one where the input has a required field (resend's event, the owner's own), so the answer is
   * the object's 404 and not the body's 400.
   */
  const bodyFor = (method: string, path: string) => {
    if (method === 'PUT')
      return path.startsWith('/v1/webhooks')
        ? { description: 'touched' }
        : path.startsWith('/v1/members')
          ? { name: 'touched' }
          : path.startsWith('/v1/fields')
            ? { label: 'touched' }
            : { metadata: { touched: 'yes' } };
    if (path.endsWith('/resend')) return { event_id: ids.events };
    if (path.endsWith('/simulate')) return { window: '7d' };
    return method === 'POST' ? {} : undefined;
  };

  it('covers every kind of object the table addresses', () => {
    const kinds = new Set(addressed.map((route) => route.path.split('/')[2]));
    // The security log is listed only (it has no route by id).
    expect([...kinds, 'security_events'].sort()).toEqual(Object.keys(ids).sort());
  });

  it.each(addressed.map((route) => [route.method, route.path] as const))('%s %s is 404 for another account and for the other mode', async (method, path) => {
    const url = path.replace(':id', ids[path.split('/')[2]]);
    for (const key of outsiders(path.split('/')[2])) {
      const response = await app.request(method, url, { key, body: bodyFor(method, path) });
      expect({ key: key.slice(0, 8), status: response.status, code: response.body?.error?.code }).toEqual({
        key: key.slice(0, 8),
        status: 404,
        code: 'resource_missing',
      });
    }
  });

  describe('through GraphQL', () => {
    let schema: GraphQLSchema;
    beforeAll(async () => {
      schema = await createSchema();
    });

    /** The route's own root field, called with the owner's id (and the same harmless body as REST). */
    const operationFor = (route: (typeof addressed)[number]) => {
      const root = route.operation.type === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
      const field = root.getFields()[route.operation.field];
      const named = getNamedType(field.type);
      const selection = isObjectType(named) ? '{ __typename }' : '';
      const body = route.operation.body ? field.args.find((arg) => arg.name === route.operation.body) : undefined;
      const declared = body ? `($body: ${body.type.toString()})` : '';
      const args = [`id: "${ids[route.path.split('/')[2]]}"`, ...(body ? [`${body.name}: $body`] : [])].join(', ');
      return { query: `${route.operation.type} ${declared} { ${route.operation.field}(${args}) ${selection} }`, body: bodyFor(route.method, route.path) };
    };

    it.each(addressed.map((route) => [route.operation.field, route] as const))(
      '%s is NOT_FOUND for another account and for the other mode',
      async (_field, route) => {
        const { query, body } = operationFor(route);
        for (const key of outsiders(route.path.split('/')[2])) {
          const response = await app.graphql(query, body === undefined ? {} : { body: camelCased(body) }, key);
          expect({
            key: key.slice(0, 8),
            data: response.body.data?.[route.operation.field] ?? null,
            code: response.body.errors?.[0]?.extensions?.code,
          }).toEqual({
            key: key.slice(0, 8),
            data: null,
            code: 'NOT_FOUND',
          });
        }
      },
    );
  });

  describe('with restricted keys', () => {
    /** Bodies the create routes would accept, so only the permission stands in their way. */
    const CREATES: Record<string, unknown> = {
      '/v1/leads': { company: 'Denied', contact_email: 'denied@example.test' },
      '/v1/deals': { name: 'Denied deal', value: 1 },
      '/v1/proposals': { deal_id: 'deal_00000000000000000000000000' },
      '/v1/agents': { name: 'Denied agent', type: 'lead_qualifier' },
      '/v1/integrations': { type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-00000000-denied' } },
      '/v1/webhooks': { url: 'http://127.0.0.1:9/denied', events: ['*'] },
      '/v1/members': { email: 'denied@example.test', role: 'member' },
      '/v1/fields': { object_type: 'deal', key: 'denied', label: 'Denied', type: 'number' },
    };
    let schema: GraphQLSchema;
    const restricted = async (account: TestAccount, change: Partial<KeyPermissions> = {}) => {
      const permissions = { ...(Object.fromEntries(RESOURCES.map((resource) => [resource, 'write'])) as KeyPermissions), ...change };
      return (await new ApiKeyService(app.orm.em.fork()).create(account.account, KeyType.test, 'restricted', permissions)).secret;
    };
    beforeAll(async () => {
      schema = await createSchema();
    });

    const permissionFor = (route: (typeof ROUTES)[number]) =>
      permissionOf((route.operation.type === 'query' ? schema.getQueryType()! : schema.getMutationType()!).getFields()[route.operation.field]);
    const urlFor = (path: string) => path.replace(':id', ids[path.split('/')[2]] ?? 'unknown');

    it.each(ROUTES.map((route) => [route.method, route.path, route] as const))(
      "%s %s is 403 permission_denied, naming its permission, for the owner's key one level short of it",
      async (method, path, route) => {
        const required = permissionFor(route)!;
        if (required === 'public')
          return expect((await app.request(method, urlFor(path), { key: await restricted(owner, { leads: 'none' }) })).status).toBe(200);
        const [resource, level] = required.split(':') as [keyof KeyPermissions, string];
        const key = await restricted(owner, { [resource]: level === 'write' ? 'read' : 'none' });
        // A body of the route's shape: one the REST adapter's type checks refuse is 400 before permissions are looked at.
        const body = method === 'POST' && !path.includes(':') ? CREATES[path] : bodyFor(method, path);
        const response = await app.request(method, urlFor(path), { key, body });
        expect({ status: response.status, error: response.body?.error }).toEqual({
          status: 403,
          error: expect.objectContaining({
            type: 'permission_error',
            code: 'permission_denied',
            message: `This key lacks the ${required} permission this request needs.`,
          }),
        });
      },
    );

    it.each(addressed.map((route) => [route.method, route.path] as const))(
      "%s %s is still 404 for another account's restricted key that has every permission",
      async (method, path) => {
        const response = await app.request(method, urlFor(path), { key: await restricted(stranger), body: bodyFor(method, path) });
        expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'resource_missing' });
      },
    );
  });

  it.each(listed.map((route) => [route.path] as const))('GET %s lists nothing of another account or the other mode', async (path) => {
    const own = ids[path.split('/')[2]];
    // A full page: the security log grows with every key the tests above made.
    const mine = await app.request('GET', `${path}?limit=100`, { key: owner.testKey });
    expect(mine.body.data.map((o: { id: string }) => o.id)).toContain(own);
    if (SHARED_BY_MODES.has(path.split('/')[2]))
      expect((await app.request('GET', `${path}?limit=100`, { key: owner.liveKey })).body.data.map((o: { id: string }) => o.id)).toContain(own);
    for (const key of outsiders(path.split('/')[2])) {
      const theirs = await app.request('GET', `${path}?limit=100`, { key });
      expect(theirs.status).toBe(200);
      expect(theirs.body.data.map((o: { id: string }) => o.id)).not.toContain(own);
    }
  });

  it("resending another account's or the other mode's event to one's own webhook is 404 naming event_id", async () => {
    for (const key of [stranger.testKey, owner.liveKey]) {
      const theirs = await app.request('POST', '/v1/webhooks', { key, body: { url: 'http://127.0.0.1:9/hook', events: ['*'] } });
      expect(theirs.status).toBe(201);
      const response = await app.request('POST', `/v1/webhooks/${theirs.body.id}/resend`, { key, body: { event_id: ids.events } });
      expect({ status: response.status, error: response.body.error }).toEqual({
        status: 404,
        error: expect.objectContaining({ code: 'resource_missing', param: 'event_id' }),
      });
    }
  });

  it('left every object as it was', async () => {
    expect((await app.request('GET', `/v1/leads/${ids.leads}`, { key: owner.testKey })).body.metadata).toEqual({});
    const deals = await app.request('GET', '/v1/deals', { key: owner.testKey });
    expect(deals.body.data[0]).toMatchObject({ id: ids.deals, metadata: {}, co_sell: null });
    expect((await app.request('GET', `/v1/agents?status=draft`, { key: owner.testKey })).body.data.map((a: { id: string }) => a.id)).toEqual([ids.agents]);
    expect((await app.request('GET', '/v1/integrations?status=connected', { key: owner.testKey })).body.data).toHaveLength(1);
    expect((await app.request('GET', '/v1/webhooks', { key: owner.testKey })).body.data[0]).toMatchObject({ id: ids.webhooks, description: null });
  });
});

/** GraphQL input field names of a REST body (one level is all these bodies have). */
function camelCased(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).map(([key, value]) => [key.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase()), value]));
}

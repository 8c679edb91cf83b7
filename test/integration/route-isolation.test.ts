import { ROUTES } from '../../src/rest/routes';
import { startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * Every route of the table that addresses an object by id answers 404 for another account's
 * object and for the other mode's object of the same account (CONTRACT §2: never 403, never a
 * change). The routes come from the table itself, so a route added later is checked too.
 */
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
    app = await startTestApp();
    owner = await app.createAccount();
    stranger = await app.createAccount();
    ids.leads = await made('/v1/leads', { company: 'Owned', contact_email: 'owned@example.test' });
    ids.deals = await made('/v1/deals', { name: 'Owned deal', value: 5000, lead_id: ids.leads, stage: 'qualification' });
    ids.proposals = await made('/v1/proposals', { deal_id: ids.deals });
    ids.agents = await made('/v1/agents', { name: 'Owned agent', type: 'lead_qualifier' });
    ids.integrations = await made('/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-00000000-owned' } });
    ids.webhooks = await made('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
  });
  afterAll(() => app.close());

  const addressed = ROUTES.filter((route) => route.path.includes(':id'));

  it('covers every kind of object the table addresses', () => {
    const kinds = new Set(addressed.map((route) => route.path.split('/')[2]));
    expect([...kinds].sort()).toEqual(Object.keys(ids).sort());
  });

  it.each(addressed.map((route) => [route.method, route.path] as const))('%s %s is 404 for another account and for the other mode', async (method, path) => {
    const url = path.replace(':id', ids[path.split('/')[2]]);
    const body = method === 'PUT' ? { metadata: { touched: 'yes' } } : method === 'POST' ? {} : undefined;
    for (const key of [stranger.testKey, stranger.liveKey, owner.liveKey]) {
      const response = await app.request(method, url, { key, body: method === 'PUT' && path.startsWith('/v1/webhooks') ? { description: 'touched' } : body });
      expect({ key: key.slice(0, 8), status: response.status, code: response.body?.error?.code }).toEqual({
        key: key.slice(0, 8),
        status: 404,
        code: 'resource_missing',
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

import { scopeTo } from '../../src/db/tenant';
import { EventRecorder } from '../../src/events/event-recorder';
import { Integration } from '../../src/modules/integrations/integration.entity';
import { IntegrationService } from '../../src/modules/integrations/integration.service';
import { startTestApp, TEST_ENCRYPTION_KEY_HEX, TestAccount, TestApp } from '../helpers/app';
import { testSerializer } from '../helpers/events';

/**
 * What a sync engine will call when a provider refuses the credentials later (a revoked token) and
 * when a call succeeds again: IntegrationService.markError and markHealthy, on real PostgreSQL,
 * seen through the API (status error, last_error, last_error_at, last_synced_at) and the events
 * table (integration.error, once per move).
 */

const KEY = Buffer.from(TEST_ENCRYPTION_KEY_HEX, 'hex');
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('an integration in error and back', () => {
  let app: TestApp;
  let account: TestAccount;

  const service = async () => {
    const em = scopeTo(app.orm.em.fork(), { accountId: account.account.id, livemode: false });
    return new IntegrationService(em, KEY, new EventRecorder(em, await testSerializer()));
  };
  const loaded = async (id: string) => {
    const integrations = await service();
    return { integrations, integration: await integrations.get(id) };
  };
  const eventTypes = async () =>
    (
      await app.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ type: string; data: { object: Record<string, unknown> } }>>(
          'select type, data from events where account_id = ? order by created_at, id',
          [account.account.id],
        )
    ).map((row) => row.type);
  const read = async (id: string) => (await app.request('GET', `/v1/integrations/${id}`, { key: account.testKey })).body;

  beforeAll(async () => {
    app = await startTestApp();
  });
  beforeEach(async () => {
    await app.reset();
    account = await app.createAccount();
  });
  afterAll(() => app.close());

  it('markError moves a connected integration to error with the reason, writing integration.error once', async () => {
    const made = await app.request('POST', '/v1/integrations', {
      key: account.testKey,
      body: { type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-health-0001' } },
    });
    expect(made.status).toBe(201);
    const { integrations, integration } = await loaded(made.body.id);
    await integrations.markError(integration, 'HubSpot refused the credentials: Authentication credentials not found');

    const shown = await read(made.body.id);
    expect(shown).toMatchObject({ status: 'error', last_error: 'HubSpot refused the credentials: Authentication credentials not found', last_synced_at: null });
    expect(shown.last_error_at).toMatch(ISO_MS);
    expect(await eventTypes()).toEqual(['integration.connected', 'integration.error']);

    // A second failure while in error updates the reason only.
    const again = await loaded(made.body.id);
    await again.integrations.markError(again.integration, 'still refused');
    expect(await read(made.body.id)).toMatchObject({ status: 'error', last_error: 'still refused' });
    expect(await eventTypes()).toEqual(['integration.connected', 'integration.error']);

    // It keeps its provider's place: a second HubSpot is 409, and the list filters on status=error.
    const second = await app.request('POST', '/v1/integrations', {
      key: account.testKey,
      body: { type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-health-0002' } },
    });
    expect(second.status).toBe(409);
    const listed = await app.request('GET', '/v1/integrations?status=error', { key: account.testKey });
    expect(listed.body.data.map((i: { id: string }) => i.id)).toEqual([made.body.id]);
    const gql = await app.graphql(
      `query ($id: ID!) { integration(id: $id) { status lastError lastErrorAt lastSyncedAt } }`,
      { id: made.body.id },
      account.testKey,
    );
    expect(gql.body.data.integration).toMatchObject({ status: 'error', lastError: 'still refused', lastSyncedAt: null });
  });

  it('markHealthy moves it back to connected and sets last_synced_at; a disconnected one is left alone', async () => {
    const made = await app.request('POST', '/v1/integrations', {
      key: account.testKey,
      body: {
        type: 'crm',
        provider: 'salesforce',
        credentials: { instance_url: 'https://acme.my.salesforce.com', client_id: 'c1', client_secret: 'sf-secret-1', refresh_token: 'refresh-0001' },
      },
    });
    expect(made.status).toBe(201);
    const first = await loaded(made.body.id);
    await first.integrations.markError(first.integration, 'invalid_grant: expired access/refresh token');
    const syncedAt = new Date(Date.now() - 1000);
    const second = await loaded(made.body.id);
    await second.integrations.markHealthy(second.integration, syncedAt);

    const shown = await read(made.body.id);
    expect(shown).toMatchObject({ status: 'connected', last_synced_at: syncedAt.toISOString(), last_error: 'invalid_grant: expired access/refresh token' });
    expect(await eventTypes()).toEqual(['integration.connected', 'integration.error']);

    expect((await app.request('DELETE', `/v1/integrations/${made.body.id}`, { key: account.testKey })).status).toBe(200);
    const gone = await loaded(made.body.id);
    await gone.integrations.markError(gone.integration, 'too late');
    await gone.integrations.markHealthy(gone.integration);
    expect(await read(made.body.id)).toMatchObject({ status: 'disconnected', last_error: 'invalid_grant: expired access/refresh token' });
    const rows = await app.orm.em
      .fork()
      .getConnection()
      .execute<Array<Pick<Integration, 'status'>>>('select status from integrations where id = ?', [made.body.id]);
    expect(rows[0].status).toBe('disconnected');
  });
});

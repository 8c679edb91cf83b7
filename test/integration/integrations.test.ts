import { randomBytes } from 'node:crypto';
import { decryptJson } from '../../src/common/crypto';
import { scopeTo } from '../../src/db/tenant';
import { createServiceFactory } from '../../src/app/composition';
import { loadConfig } from '../../src/config';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { createLogger } from '../../src/logger';
import { IntegrationProvider } from '../../src/modules/integrations/integration.entity';
import { IntegrationService } from '../../src/modules/integrations/integration.service';
import { PriorLeadScorer } from '../../src/modules/scoring/prior-model';
import { GraphQLSchema } from 'graphql';
import { EventRecorder } from '../../src/events/event-recorder';
import { testSerializer } from '../helpers/events';
import { HttpResponse, startTestApp, TEST_ENCRYPTION_KEY_HEX, TestApp } from '../helpers/app';

/**
 * Integrations (CONTRACT §9) through real HTTP, GraphQL and PostgreSQL: connect every provider,
 * per-provider credential validation, one connected integration per provider, account and mode,
 * lists, disconnect (credentials destroyed), isolation, the per-operation limit, and the promise
 * that credentials never leave the server: not in a response, not in a log line, not in plaintext
 * in the database.
 */

const KEY = Buffer.from(TEST_ENCRYPTION_KEY_HEX, 'hex');
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const INT_ID = /^int_[0-9A-HJKMNP-TV-Z]{26}$/;
const ERROR_KEYS = ['code', 'message', 'param', 'request_id', 'type'];
const STAGE_KEYS = ['closed_lost', 'closed_won', 'negotiation', 'proposal', 'prospecting', 'qualification'];
const INTEGRATION_KEYS = [
  'connected_at',
  'created_at',
  'credentials_hint',
  'disconnected_at',
  'id',
  'last_error',
  'last_error_at',
  'last_synced_at',
  'livemode',
  'name',
  'object',
  'provider',
  'settings',
  'status',
  'type',
  'updated_at',
];
const GQL_FIELDS = 'id object type provider status name credentialsHint connectedAt disconnectedAt livemode createdAt updatedAt';

interface Integration {
  id: string;
  object: string;
  type: string;
  provider: string;
  status: string;
  name: string | null;
  credentials_hint: string | null;
  connected_at: string;
  disconnected_at: string | null;
  livemode: boolean;
  settings: { stage_map: Record<string, string> | null; delivery_record: string | null; sales_rep: string | null; model: string | null };
  created_at: string;
  updated_at: string;
}

/** Every credential value any test sent: none may ever show up in a response, a log line or a plaintext column. */
const SENT_VALUES = new Set<string>();
/** Every response body this file received, and every log line the app wrote. */
const RESPONSES: string[] = [];
const LOG_LINES: string[] = [];

const unique = (prefix: string): string => {
  const value = `${prefix}${randomBytes(12).toString('hex')}`;
  SENT_VALUES.add(value);
  return value;
};
const guid = (): string => {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

const TYPE_OF: Record<IntegrationProvider, string> = {
  salesforce: 'crm',
  hubspot: 'crm',
  connectwise: 'psa',
  autotask: 'psa',
  halopsa: 'psa',
  microsoft365: 'm365',
  partner_center: 'm365',
  openai: 'llm',
  azure_openai: 'llm',
  openai_compatible: 'llm',
};
const PROVIDERS = Object.keys(TYPE_OF) as IntegrationProvider[];
/** The field whose last 4 characters are the hint. */
const HINT_FROM: Record<IntegrationProvider, string> = {
  salesforce: 'client_secret',
  hubspot: 'access_token',
  connectwise: 'private_key',
  autotask: 'secret',
  halopsa: 'client_secret',
  microsoft365: 'client_secret',
  partner_center: 'client_secret',
  openai: 'api_key',
  azure_openai: 'api_key',
  openai_compatible: 'api_key',
};

/** Fresh, valid credentials as each provider's docs name them. */
const CREDENTIALS: Record<IntegrationProvider, () => Record<string, string>> = {
  salesforce: () => ({
    instance_url: 'https://acme.my.salesforce.com',
    client_id: unique('3MVG9sf-client-'),
    client_secret: unique('sf-client-secret-'),
    refresh_token: unique('5Aep861-refresh-'),
  }),
  hubspot: () => ({ access_token: unique('pat-na1-') }),
  connectwise: () => ({
    site: 'api-na.myconnectwise.net',
    company_id: 'acmemsp',
    public_key: unique('cw-public-'),
    private_key: unique('cw-private-'),
    client_id: unique('cw-client-'),
  }),
  autotask: () => ({ username: 'api-user@acme-msp.example.com', secret: unique('at-secret-'), integration_code: unique('AT-TRACKING-') }),
  halopsa: () => ({ instance_url: 'https://acme.halopsa.com', client_id: unique('halo-client-'), client_secret: unique('halo-secret-') }),
  microsoft365: () => ({ tenant_id: guid(), client_id: guid(), client_secret: unique('m365~secret-'), mailbox: 'sales@contoso.onmicrosoft.com' }),
  partner_center: () => ({ tenant_id: guid(), client_id: guid(), client_secret: unique('pc~secret-'), refresh_token: unique('0.AXrefresh-') }),
  openai: () => ({ api_key: unique('sk-proj-') }),
  // The endpoint is Azure's shape; AZURE_OPENAI_ENDPOINT_URL sends every resource to the fake.
  azure_openai: () => ({ api_key: unique('azure-key-'), endpoint: 'https://acme.openai.azure.com', deployment: 'gpt-4o-mini' }),
  // A compatible server's base URL is the account's own: here the fake's, on loopback (private addresses are allowed in tests).
  openai_compatible: () => ({ base_url: `${chatUrl}/v1`, api_key: unique('local-key-') }),
};
/** Where the fake model server listens (set once the app starts). */
let chatUrl = 'http://127.0.0.1:9';
/** Settings a provider cannot connect without: a compatible server's model has no default. */
const REQUIRED_SETTINGS: Partial<Record<IntegrationProvider, Record<string, unknown>>> = { openai_compatible: { model: 'llama3.1:8b' } };
/** What each model provider's settings.model is unless told: OpenAI's small model, the Azure deployment, the one a compatible server was given. */
const DEFAULT_MODEL: Partial<Record<IntegrationProvider, string>> = { openai: 'gpt-4o-mini', azure_openai: 'gpt-4o-mini', openai_compatible: 'llama3.1:8b' };
const credentialsFor = (provider: IntegrationProvider | `${IntegrationProvider}`) => CREDENTIALS[provider as IntegrationProvider]();

const bodyFor = (provider: IntegrationProvider, extra: Record<string, unknown> = {}) => ({
  type: TYPE_OF[provider],
  provider,
  credentials: credentialsFor(provider),
  ...(REQUIRED_SETTINGS[provider] ? { settings: REQUIRED_SETTINGS[provider] } : {}),
  ...extra,
});

function expectError(res: HttpResponse, status: number, code: string, param: string | undefined, type = 'invalid_request_error'): void {
  const context = `${status} ${code} ${param ?? ''}: got ${res.status} ${res.text.slice(0, 300)}`;
  expect({ context, status: res.status }).toEqual({ context, status });
  expect(Object.keys(res.body)).toEqual(['error']);
  const error = res.body.error as Record<string, unknown>;
  for (const key of Object.keys(error)) expect(ERROR_KEYS).toContain(key);
  expect({ context, type: error.type, code: error.code }).toEqual({ context, type, code });
  expect(error.message).not.toMatch(/\$input|Variable "|IntegrationConnectInput|IntegrationListInput|graphql|select |insert /i);
  if (param === undefined) expect(error).not.toHaveProperty('param');
  else expect({ context, param: error.param }).toEqual({ context, param });
  expect(res.headers.get('x-request-id')).toBe(error.request_id);
}

/** What a won deal's proposal becomes in each PSA unless settings.delivery_record says otherwise. */
const DEFAULT_DELIVERY_RECORD: Partial<Record<IntegrationProvider, string>> = { connectwise: 'project', autotask: 'contract', halopsa: 'contract' };

function expectIntegration(body: Integration, provider: IntegrationProvider, sent: Record<string, string>, livemode = false): void {
  expect(Object.keys(body).sort()).toEqual(INTEGRATION_KEYS);
  expect(body.id).toMatch(INT_ID);
  expect(body.object).toBe('integration');
  expect(body.type).toBe(TYPE_OF[provider]);
  // CRMs and PSAs hold their provider's default stage map, PSAs also their default delivery record; Microsoft 365 has nothing to map.
  if (TYPE_OF[provider] === 'm365') expect(body.settings).toEqual({ stage_map: null, delivery_record: null, sales_rep: null, model: null });
  else if (TYPE_OF[provider] === 'llm') {
    expect(body.settings).toEqual({ stage_map: null, delivery_record: null, sales_rep: null, model: DEFAULT_MODEL[provider] });
  } else expect(Object.keys(body.settings.stage_map ?? {}).sort()).toEqual(STAGE_KEYS);
  if (TYPE_OF[provider] === 'psa') expect(body.settings.delivery_record).toBe(DEFAULT_DELIVERY_RECORD[provider]);
  if (TYPE_OF[provider] === 'crm') expect(body.settings.delivery_record).toBeNull();
  expect(body.provider).toBe(provider);
  expect(body.livemode).toBe(livemode);
  expect(body.credentials_hint).toBe(sent[HINT_FROM[provider]].slice(-4));
  for (const field of ['connected_at', 'created_at', 'updated_at'] as const) expect(body[field]).toMatch(ISO_MS);
}

describe('integrations', () => {
  let app: TestApp;

  const record = <T extends HttpResponse>(response: T): T => {
    RESPONSES.push(response.text);
    return response;
  };
  const connect = async (key: string, body: unknown) => record(await app.request('POST', '/v1/integrations', { key, body }));
  const disconnect = async (key: string, id: string) => record(await app.request('DELETE', `/v1/integrations/${id}`, { key }));
  const list = async (key: string, query = '') => record(await app.request('GET', `/v1/integrations${query}`, { key }));
  const graphql = async (query: string, variables: Record<string, unknown>, key: string) => record(await app.graphql(query, variables, key));

  async function connected(key: string, provider: IntegrationProvider, extra: Record<string, unknown> = {}): Promise<Integration> {
    const res = await connect(key, bodyFor(provider, extra));
    expect({ status: res.status, text: res.text.slice(0, 300) }).toEqual({ status: 201, text: expect.any(String) });
    return res.body;
  }

  const row = async (id: string) => {
    const rows = await app.orm.em.fork().getConnection().execute<Array<Record<string, unknown>>>('select * from integrations where id = ?', [id]);
    return rows[0];
  };
  /** Rows of one account, so a concurrent test run on the same database cannot change the count. */
  const countRows = async (accountId: string): Promise<number> => {
    const rows = await app.orm.em.fork().getConnection().execute<{ count: string }[]>('select count(*) from integrations where account_id = ?', [accountId]);
    return Number(rows[0].count);
  };

  beforeAll(async () => {
    app = await startTestApp({
      env: { LOG_LEVEL: 'info' },
      // Validation tests connect hundreds of times a minute; the limit itself is tested below.
      operationLimits: { ...OPERATION_LIMITS, connectIntegration: { windowS: 60, max: 1_000_000 } },
      logStream: { write: (line: string) => void LOG_LINES.push(line) },
    });
    chatUrl = app.crms.chat.url;
  });
  beforeEach(() => app.reset());
  afterAll(() => app.close());

  describe('POST /v1/integrations', () => {
    it.each(PROVIDERS)('connects %s: 201 with the integration, never its credentials', async (provider) => {
      const { testKey } = await app.createAccount();
      const credentials = credentialsFor(provider);
      const before = Date.now();
      const res = await connect(testKey, { ...bodyFor(provider), name: `  Acme ${provider}  `, credentials });
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = res.body as Integration;
      expectIntegration(body, provider, credentials);
      expect(body.status).toBe('connected');
      expect(body.name).toBe(`Acme ${provider}`);
      expect(body.disconnected_at).toBeNull();
      expect(Date.parse(body.connected_at)).toBeGreaterThanOrEqual(before - 1000);
      for (const value of Object.values(credentials)) {
        if (SENT_VALUES.has(value)) expect(res.text).not.toContain(value);
      }
      expect(res.text).not.toMatch(/credentials"|credentials_encrypted|secret|token|private_key/i);
    });

    it('stores ciphertext that holds no secret and decrypts with ENCRYPTION_KEY to exactly what was sent (a rotated refresh token replaced)', async () => {
      const { testKey } = await app.createAccount();
      for (const provider of PROVIDERS) {
        const credentials = credentialsFor(provider);
        const res = await connect(testKey, { ...bodyFor(provider), credentials });
        expect(res.status).toBe(201);
        const stored = (await row(res.body.id)).credentials_encrypted as string;
        expect(stored).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
        for (const value of Object.values(credentials)) expect(stored).not.toContain(value);
        expect(Buffer.from(stored, 'base64').toString('latin1')).not.toContain(credentials[HINT_FROM[provider]]);
        if (provider === IntegrationProvider.partner_center) {
          // Microsoft's token endpoint answered a new refresh token while the connect proved the old one: the new one is what works now, so it is stored.
          const decrypted = decryptJson<Record<string, string>>(stored, KEY);
          expect(decrypted).toEqual({ ...credentials, refresh_token: expect.any(String) });
          expect(decrypted.refresh_token).not.toBe(credentials.refresh_token);
          expect(stored).not.toContain(decrypted.refresh_token);
        } else {
          expect(decryptJson(stored, KEY)).toEqual(credentials);
        }
        expect((await row(res.body.id)).credentials_hint).toBe(credentials[HINT_FROM[provider]].slice(-4));
      }
    });

    it('encrypts the same credentials differently each time (random IV)', async () => {
      const a = await app.createAccount();
      const b = await app.createAccount();
      const credentials = credentialsFor(IntegrationProvider.hubspot);
      const first = await connect(a.testKey, { type: 'crm', provider: 'hubspot', credentials });
      const second = await connect(b.testKey, { type: 'crm', provider: 'hubspot', credentials });
      expect([first.status, second.status]).toEqual([201, 201]);
      const [one, two] = [(await row(first.body.id)).credentials_encrypted, (await row(second.body.id)).credentials_encrypted];
      expect(one).not.toBe(two);
      expect(decryptJson(one as string, KEY)).toEqual(decryptJson(two as string, KEY));
    });

    it('defaults name to null and works through GraphQL with the same validation', async () => {
      const { testKey } = await app.createAccount();
      const credentials = credentialsFor(IntegrationProvider.microsoft365);
      const mutation = `mutation ($input: IntegrationConnectInput!) { connectIntegration(input: $input) { ${GQL_FIELDS} } }`;
      const res = await graphql(mutation, { input: { type: 'm365', provider: 'microsoft365', credentials } }, testKey);
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      const integration = res.body.data.connectIntegration;
      expect(integration).toMatchObject({ object: 'integration', type: 'm365', provider: 'microsoft365', status: 'connected', name: null });
      expect(integration.credentialsHint).toBe(credentials.client_secret.slice(-4));
      expect(integration.id).toMatch(INT_ID);

      const bad = await graphql(
        mutation,
        { input: { type: 'm365', provider: 'microsoft365', credentials: { ...credentials, client_id: undefined } } },
        testKey,
      );
      expect(bad.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_missing', param: 'credentials.client_id' });
      const mismatch = await graphql(mutation, { input: { type: 'crm', provider: 'microsoft365', credentials } }, testKey);
      expect(mismatch.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid', param: 'provider' });
      // The schema offers no way to read credentials back.
      const probe = await graphql(
        `
          {
            integrations {
              data {
                id
                credentials
              }
            }
          }
        `,
        {},
        testKey,
      );
      expect(probe.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      const probeEncrypted = await graphql(
        `
          {
            integrations {
              data {
                id
                credentialsEncrypted
              }
            }
          }
        `,
        {},
        testKey,
      );
      expect(probeEncrypted.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    });
  });

  describe('credential validation', () => {
    let testKey: string;
    let accountId: string;
    beforeEach(async () => {
      const created = await app.createAccount();
      testKey = created.testKey;
      accountId = created.account.id;
    });
    afterEach(async () => {
      // A refused connect stores nothing.
      expect(await countRows(accountId)).toBe(0);
    });

    const FIELDS: Record<IntegrationProvider, string[]> = {
      salesforce: ['instance_url', 'client_id', 'client_secret', 'refresh_token'],
      hubspot: ['access_token'],
      connectwise: ['site', 'company_id', 'public_key', 'private_key', 'client_id'],
      autotask: ['username', 'secret', 'integration_code'],
      halopsa: ['instance_url', 'client_id', 'client_secret'],
      microsoft365: ['tenant_id', 'client_id', 'client_secret', 'mailbox'],
      partner_center: ['tenant_id', 'client_id', 'client_secret', 'refresh_token'],
      openai: ['api_key'],
      azure_openai: ['api_key', 'endpoint', 'deployment'],
      openai_compatible: ['base_url', 'api_key'],
    };

    it.each(PROVIDERS)('%s: each missing field is parameter_missing naming credentials[field]', async (provider) => {
      const credentials = credentialsFor(provider);
      expect(Object.keys(credentials)).toEqual(FIELDS[provider]);
      for (const field of FIELDS[provider]) {
        const { [field]: _omitted, ...rest } = credentials;
        expectError(await connect(testKey, { type: TYPE_OF[provider], provider, credentials: rest }), 400, 'parameter_missing', `credentials[${field}]`);
        expectError(
          await connect(testKey, { type: TYPE_OF[provider], provider, credentials: { ...credentials, [field]: null } }),
          400,
          'parameter_missing',
          `credentials[${field}]`,
        );
      }
      expectError(
        await connect(testKey, { type: TYPE_OF[provider], provider, credentials: {} }),
        400,
        'parameter_missing',
        `credentials[${FIELDS[provider][0]}]`,
      );
    });

    it.each(PROVIDERS)('%s: a field that is not a non-blank string of at most 2,000 characters is parameter_invalid', async (provider) => {
      const credentials = credentialsFor(provider);
      for (const field of FIELDS[provider]) {
        for (const bad of [42, true, ['x'], { value: 'x' }, '', '   ', 'x'.repeat(2001)]) {
          const res = await connect(testKey, { type: TYPE_OF[provider], provider, credentials: { ...credentials, [field]: bad } });
          expectError(res, 400, 'parameter_invalid', `credentials[${field}]`);
          expect(res.body.error.message).toContain(`credentials[${field}]`);
        }
      }
    });

    it.each(PROVIDERS)('%s: an unknown field is parameter_unknown', async (provider) => {
      const credentials = credentialsFor(provider);
      expectError(
        await connect(testKey, { type: TYPE_OF[provider], provider, credentials: { ...credentials, password: 'x' } }),
        400,
        'parameter_unknown',
        'credentials[password]',
      );
      // A camelCase key is named in the message, not turned into a misleading snake_case param.
      const camel = await connect(testKey, { type: TYPE_OF[provider], provider, credentials: { ...credentials, clientSecret: 'x' } });
      expectError(camel, 400, 'parameter_unknown', 'credentials');
      expect(camel.body.error.message).toContain('"clientSecret"');
    });

    it("checks each field's shape", async () => {
      const cases: Array<[`${IntegrationProvider}`, string, string]> = [
        ['salesforce', 'instance_url', 'http://acme.my.salesforce.com'],
        ['salesforce', 'instance_url', 'acme.my.salesforce.com'],
        ['salesforce', 'instance_url', 'https://user:pw@acme.my.salesforce.com'],
        ['salesforce', 'instance_url', 'https://acme.my.salesforce.com?x=1'],
        ['salesforce', 'instance_url', 'https://localhost'],
        ['salesforce', 'client_secret', 'short'],
        ['salesforce', 'refresh_token', '1234567'],
        ['hubspot', 'access_token', 'pat-1'],
        ['hubspot', 'access_token', 'pat-na1 with spaces'],
        ['hubspot', 'access_token', 'pat-na1-\u00e9t\u00e9-token'],
        ['connectwise', 'site', 'https://na.myconnectwise.net'],
        ['connectwise', 'site', 'na.myconnectwise.net/v4_6_release'],
        ['connectwise', 'site', '10.0.0.1'],
        ['connectwise', 'site', 'cwsite'],
        ['connectwise', 'private_key', 'abc'],
        ['autotask', 'username', 'api-user'],
        ['autotask', 'username', 'api user@acme.example.com'],
        ['autotask', 'secret', 'tiny'],
        ['halopsa', 'instance_url', 'ftp://acme.halopsa.com'],
        ['halopsa', 'client_secret', 'seven77'],
        ['microsoft365', 'tenant_id', 'contoso.onmicrosoft.com'],
        ['microsoft365', 'tenant_id', '1234'],
        ['microsoft365', 'client_id', '00000000-0000-0000-0000-00000000000g'],
        ['microsoft365', 'client_secret', 'short'],
        ['microsoft365', 'mailbox', 'sales'],
        ['microsoft365', 'mailbox', 'sales@contoso'],
        ['microsoft365', 'mailbox', '.sales@contoso.com'],
        ['microsoft365', 'mailbox', 'sales team@contoso.com'],
        ['microsoft365', 'mailbox', '$sales@contoso.com'],
        ['microsoft365', 'mailbox', `${'s'.repeat(65)}@contoso.com`],
        ['openai', 'api_key', 'sk-1'],
        ['openai', 'api_key', 'sk-proj with spaces'],
        ['azure_openai', 'endpoint', 'http://acme.openai.azure.com'],
        ['azure_openai', 'endpoint', 'acme.openai.azure.com'],
        ['azure_openai', 'deployment', 'gpt/../4o'],
        ['azure_openai', 'deployment', 'my deployment'],
        ['openai_compatible', 'base_url', 'ftp://models.acme.example.com/v1'],
        ['openai_compatible', 'base_url', 'http://300.1.1.1:11434/v1'],
        ['openai_compatible', 'base_url', 'http://models.acme.example.com/v1?key=1'],
        ['openai_compatible', 'api_key', 'ollama'],
      ];
      for (const [provider, field, value] of cases) {
        const res = await connect(testKey, { type: TYPE_OF[provider], provider, credentials: { ...credentialsFor(provider), [field]: value } });
        expectError(res, 400, 'parameter_invalid', `credentials[${field}]`);
        // A value may be a secret: errors name the field, never echo what was sent.
        expect(res.body.error.message).not.toContain(value);
      }
    });

    it('refuses a provider that is not of the given type', async () => {
      const cases: Array<[string, IntegrationProvider]> = [
        ['crm', IntegrationProvider.connectwise],
        ['crm', IntegrationProvider.microsoft365],
        ['psa', IntegrationProvider.hubspot],
        ['psa', IntegrationProvider.salesforce],
        ['m365', IntegrationProvider.salesforce],
        ['m365', IntegrationProvider.halopsa],
        ['llm', IntegrationProvider.hubspot],
        ['crm', IntegrationProvider.openai],
      ];
      for (const [type, provider] of cases) {
        const res = await connect(testKey, { type, provider, credentials: credentialsFor(provider) });
        expectError(res, 400, 'parameter_invalid', 'provider');
        expect(res.body.error.message).toContain(`${provider} is not a ${type} provider`);
      }
    });

    it('checks type, provider, name and credentials themselves', async () => {
      const valid = bodyFor(IntegrationProvider.hubspot);
      const { type: _type, ...noType } = valid;
      const { provider: _provider, ...noProvider } = valid;
      const { credentials: _credentials, ...noCredentials } = valid;
      expectError(await connect(testKey, noType), 400, 'parameter_missing', 'type');
      expectError(await connect(testKey, noProvider), 400, 'parameter_missing', 'provider');
      expectError(await connect(testKey, noCredentials), 400, 'parameter_missing', 'credentials');
      expectError(await connect(testKey, { ...valid, credentials: null }), 400, 'parameter_missing', 'credentials');
      expectError(await connect(testKey, { ...valid, type: 'erp' }), 400, 'parameter_invalid', 'type');
      expectError(await connect(testKey, { ...valid, provider: 'pipedrive' }), 400, 'parameter_invalid', 'provider');
      expectError(await connect(testKey, { ...valid, credentials: 'pat-na1-token' }), 400, 'parameter_invalid', 'credentials');
      expectError(await connect(testKey, { ...valid, credentials: ['pat-na1-token'] }), 400, 'parameter_invalid', 'credentials');
      expectError(await connect(testKey, { ...valid, name: '' }), 400, 'parameter_invalid', 'name');
      expectError(await connect(testKey, { ...valid, name: '   ' }), 400, 'parameter_invalid', 'name');
      expectError(await connect(testKey, { ...valid, name: 'n'.repeat(201) }), 400, 'parameter_invalid', 'name');
      for (const field of ['status', 'credentials_hint', 'id', 'livemode', 'connected_at', 'credentials_encrypted']) {
        expectError(await connect(testKey, { ...valid, [field]: 'x' }), 400, 'parameter_unknown', field);
      }
    });
  });

  describe('one connected integration per provider, account and mode', () => {
    it('refuses a second connected integration of a provider with 409 resource_conflict', async () => {
      const { testKey, account } = await app.createAccount();
      await connected(testKey, IntegrationProvider.hubspot);
      const second = await connect(testKey, bodyFor(IntegrationProvider.hubspot, { name: 'Another portal' }));
      expectError(second, 409, 'resource_conflict', 'provider');
      expect(second.body.error.message).toMatch(/already connected/);
      const gql = await graphql(
        `
          mutation ($input: IntegrationConnectInput!) {
            connectIntegration(input: $input) {
              id
            }
          }
        `,
        { input: bodyFor(IntegrationProvider.hubspot) },
        testKey,
      );
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', errorCode: 'resource_conflict', param: 'provider' });
      expect(await countRows(account.id)).toBe(1);
    });

    it('allows the same provider in the other mode, in another account, another provider of the same type, and again after disconnect', async () => {
      const a = await app.createAccount();
      const b = await app.createAccount();
      const first = await connected(a.testKey, IntegrationProvider.salesforce);
      const live = await connected(a.liveKey, IntegrationProvider.salesforce);
      expect(live.livemode).toBe(true);
      await connected(b.testKey, IntegrationProvider.salesforce);
      await connected(b.liveKey, IntegrationProvider.salesforce);
      await connected(a.testKey, IntegrationProvider.hubspot);
      expectError(await connect(a.liveKey, bodyFor(IntegrationProvider.salesforce)), 409, 'resource_conflict', 'provider');

      expect((await disconnect(a.testKey, first.id)).status).toBe(200);
      const again = await connected(a.testKey, IntegrationProvider.salesforce);
      expect(again.id).not.toBe(first.id);
      expectError(await connect(a.testKey, bodyFor(IntegrationProvider.salesforce)), 409, 'resource_conflict', 'provider');
      expect((await countRows(a.account.id)) + (await countRows(b.account.id))).toBe(6);
    });

    it('lets only one of many concurrent connects of a provider win', async () => {
      const { testKey } = await app.createAccount();
      const responses = await Promise.all(Array.from({ length: 6 }, () => connect(testKey, bodyFor(IntegrationProvider.autotask))));
      expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
      for (const res of responses.filter((r) => r.status !== 201)) expectError(res, 409, 'resource_conflict', 'provider');
    });
  });

  describe('GET /v1/integrations', () => {
    let key: string;
    /** Newest first: the model providers, partner_center, microsoft365, halopsa (disconnected), autotask, connectwise, hubspot (disconnected), salesforce. */
    let made: Integration[];

    beforeEach(async () => {
      ({ testKey: key } = await app.createAccount());
      made = [];
      for (const provider of PROVIDERS) made.push(await connected(key, provider));
      for (const provider of ['hubspot', 'halopsa']) {
        const id = made.find((integration) => integration.provider === provider)!.id;
        expect((await disconnect(key, id)).status).toBe(200);
      }
      made.reverse();
    });

    it('lists every integration newest first, connected and disconnected, without credentials', async () => {
      const res = await list(key);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object']);
      expect(res.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
      expect(res.body.data.map((i: Integration) => i.id)).toEqual(made.map((i) => i.id));
      for (const item of res.body.data as Integration[]) expect(Object.keys(item).sort()).toEqual(INTEGRATION_KEYS);
      expect(res.body.data.map((i: Integration) => i.status)).toEqual([
        'connected',
        'connected',
        'connected',
        'connected',
        'connected',
        'disconnected',
        'connected',
        'connected',
        'disconnected',
        'connected',
      ]);
    });

    it('filters by status, type and provider', async () => {
      const providers = async (query: string) => {
        const res = await list(key, query);
        expect(res.status).toBe(200);
        return res.body.data.map((i: Integration) => i.provider);
      };
      expect(await providers('?status=connected')).toEqual([
        'openai_compatible',
        'azure_openai',
        'openai',
        'partner_center',
        'microsoft365',
        'autotask',
        'connectwise',
        'salesforce',
      ]);
      expect(await providers('?status=disconnected')).toEqual(['halopsa', 'hubspot']);
      expect(await providers('?type=psa')).toEqual(['halopsa', 'autotask', 'connectwise']);
      expect(await providers('?type=crm&status=connected')).toEqual(['salesforce']);
      expect(await providers('?type=m365')).toEqual(['partner_center', 'microsoft365']);
      expect(await providers('?provider=hubspot')).toEqual(['hubspot']);
      expect(await providers('?type=m365&status=disconnected')).toEqual([]);
      expect(await providers('?type=llm')).toEqual(['openai_compatible', 'azure_openai', 'openai']);
    });

    it('pages with limit and cursor, each row exactly once, also under a filter', async () => {
      const walk = async (query: string) => {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const res: HttpResponse = await list(key, `?limit=2${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          expect(res.status).toBe(200);
          expect(res.body.data.length).toBeLessThanOrEqual(2);
          seen.push(...res.body.data.map((i: Integration) => i.id));
          expect(res.body.has_more).toBe(res.body.next_cursor !== null);
          cursor = res.body.next_cursor;
          pages += 1;
        } while (cursor);
        return { seen, pages };
      };
      const all = await walk('');
      expect(all.seen).toEqual(made.map((i) => i.id));
      expect(all.pages).toBe(5);
      const connectedOnly = await walk('&status=connected');
      expect(connectedOnly.seen).toEqual(made.filter((i) => !['hubspot', 'halopsa'].includes(i.provider)).map((i) => i.id));
      const first = await list(key, '?limit=1');
      expect(first.body).toMatchObject({ has_more: true });
      expect(first.body.data[0].id).toBe(made[0].id);
    });

    it('lists through GraphQL with the same filter', async () => {
      const res = await graphql(
        `query ($filter: IntegrationListInput) { integrations(filter: $filter) { object hasMore nextCursor data { ${GQL_FIELDS} } } }`,
        { filter: { type: 'psa', status: 'connected' } },
        key,
      );
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.integrations).toMatchObject({ object: 'list', hasMore: false, nextCursor: null });
      expect(res.body.data.integrations.data.map((i: { provider: string }) => i.provider)).toEqual(['autotask', 'connectwise']);
    });

    it('refuses bad list parameters, naming them', async () => {
      const cases: Array<[string, string, string]> = [
        ['?status=active', 'parameter_invalid', 'status'],
        ['?type=erp', 'parameter_invalid', 'type'],
        ['?provider=pipedrive', 'parameter_invalid', 'provider'],
        ['?limit=0', 'parameter_invalid', 'limit'],
        ['?limit=101', 'parameter_invalid', 'limit'],
        ['?limit=ten', 'parameter_invalid', 'limit'],
        ['?cursor=not-a-cursor', 'parameter_invalid', 'cursor'],
        ['?sort=created_at', 'parameter_unknown', 'sort'],
        ['?credentials=1', 'parameter_unknown', 'credentials'],
      ];
      for (const [query, code, param] of cases) expectError(await list(key, query), 400, code, param);
      // The largest page, every field selected, keeps within the GraphQL cost limit.
      expect((await list(key, '?limit=100')).status).toBe(200);
    });
  });

  describe('DELETE /v1/integrations/{id}', () => {
    it('disconnects: status disconnected, disconnected_at set, credentials destroyed in the database', async () => {
      const { testKey } = await app.createAccount();
      const credentials = credentialsFor(IntegrationProvider.connectwise);
      const made = (await connect(testKey, { type: 'psa', provider: 'connectwise', name: 'Acme CW', credentials })).body as Integration;
      expect((await row(made.id)).credentials_encrypted).toEqual(expect.any(String));
      const before = Date.now();

      const res = await disconnect(testKey, made.id);
      expect(res.status).toBe(200);
      // CONTRACT §3: DELETE answers {id, object, deleted: true}; the integration stays as history.
      expect(res.body).toEqual({ id: made.id, object: 'integration', deleted: true });
      const body = (await list(testKey)).body.data.find((i: Integration) => i.id === made.id) as Integration;
      expectIntegration(body, IntegrationProvider.connectwise, credentials);
      expect(body).toMatchObject({ id: made.id, status: 'disconnected', name: 'Acme CW', connected_at: made.connected_at });
      expect(body.disconnected_at).toMatch(ISO_MS);
      expect(Date.parse(body.disconnected_at!)).toBeGreaterThanOrEqual(before - 1000);

      const stored = await row(made.id);
      expect(stored.credentials_encrypted).toBeNull();
      expect(stored.status).toBe('disconnected');
      expect(new Date(stored.disconnected_at as string).toISOString()).toBe(body.disconnected_at);
    });

    it('is idempotent: disconnecting again answers 200 and keeps the first disconnected_at', async () => {
      const { testKey } = await app.createAccount();
      const made = await connected(testKey, IntegrationProvider.halopsa);
      const first = await disconnect(testKey, made.id);
      const firstAt = (await list(testKey)).body.data.find((i: Integration) => i.id === made.id).disconnected_at;
      const second = await disconnect(testKey, made.id);
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      const gql = await graphql(
        `
          mutation ($id: ID!) {
            disconnectIntegration(id: $id) {
              id
              status
              disconnectedAt
            }
          }
        `,
        { id: made.id },
        testKey,
      );
      expect(gql.body.data.disconnectIntegration).toEqual({ id: made.id, status: 'disconnected', disconnectedAt: firstAt });
    });

    it('answers 404 for unknown and malformed ids', async () => {
      const { testKey } = await app.createAccount();
      const lead = await record(await app.request('POST', '/v1/leads', { key: testKey, body: { company: 'Acme', contact_email: 'a@acme.test' } }));
      expect(lead.status).toBe(201);
      for (const id of [
        'int_0000000000000000000000000A',
        'int_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        lead.body.id,
        'int_lowercase0000000000000000',
        'nonsense',
        'int_',
        '%20',
      ]) {
        expectError(await disconnect(testKey, id), 404, 'resource_missing', 'id');
      }
      const gql = await graphql(
        `
          {
            integration(id: "int_01ARZ3NDEKTSV4RRFFQ69G5FAV") {
              id
            }
          }
        `,
        {},
        testKey,
      );
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', errorCode: 'resource_missing' });
    });
  });

  describe('isolation between accounts and modes', () => {
    it("never shows, finds or changes another account's or mode's integration", async () => {
      const a = await app.createAccount();
      const b = await app.createAccount();
      const aTest = await connected(a.testKey, IntegrationProvider.microsoft365);
      const aLive = await connected(a.liveKey, IntegrationProvider.microsoft365);
      const bTest = await connected(b.testKey, IntegrationProvider.hubspot);

      const ids = async (key: string) => (await list(key)).body.data.map((i: Integration) => i.id);
      expect(await ids(a.testKey)).toEqual([aTest.id]);
      expect(await ids(a.liveKey)).toEqual([aLive.id]);
      expect(await ids(b.testKey)).toEqual([bTest.id]);
      expect(await ids(b.liveKey)).toEqual([]);

      for (const [key, id] of [
        [b.testKey, aTest.id],
        [b.liveKey, aLive.id],
        [a.liveKey, aTest.id],
        [a.testKey, aLive.id],
        [a.testKey, bTest.id],
      ]) {
        expectError(await disconnect(key, id), 404, 'resource_missing', 'id');
        const gql = await graphql(
          `
            query ($id: ID!) {
              integration(id: $id) {
                id
              }
            }
          `,
          { id },
          key,
        );
        expect(gql.body.errors[0].extensions.code).toBe('NOT_FOUND');
        const gqlDisconnect = await graphql(
          `
            mutation ($id: ID!) {
              disconnectIntegration(id: $id) {
                id
              }
            }
          `,
          { id },
          key,
        );
        expect(gqlDisconnect.body.errors[0].extensions.code).toBe('NOT_FOUND');
      }
      for (const id of [aTest.id, aLive.id, bTest.id]) {
        const stored = await row(id);
        expect(stored.status).toBe('connected');
        expect(stored.credentials_encrypted).toEqual(expect.any(String));
      }
      const own = await graphql(
        `
          query ($id: ID!) {
            integration(id: $id) {
              id
              livemode
            }
          }
        `,
        { id: aLive.id },
        a.liveKey,
      );
      expect(own.body.data.integration).toEqual({ id: aLive.id, livemode: true });
    });
  });

  describe('the service (for co-sell and other callers)', () => {
    it('connectedIntegration finds the connected one of a provider in this account and mode; credentialsOf decrypts it', async () => {
      const a = await app.createAccount();
      const b = await app.createAccount();
      const serializer = await testSerializer();
      const serviceFor = (accountId: string, livemode: boolean) => {
        const em = scopeTo(app.orm.em.fork(), { accountId, livemode });
        return new IntegrationService(em, KEY, new EventRecorder(em, serializer));
      };

      expect(await serviceFor(a.account.id, false).connectedIntegration(IntegrationProvider.microsoft365)).toBeNull();
      const credentials = credentialsFor(IntegrationProvider.microsoft365);
      const made = (await connect(a.testKey, { type: 'm365', provider: 'microsoft365', credentials })).body as Integration;
      await connected(a.testKey, IntegrationProvider.hubspot);

      const service = serviceFor(a.account.id, false);
      const found = await service.connectedIntegration(IntegrationProvider.microsoft365);
      expect(found?.id).toBe(made.id);
      expect(await service.credentialsOf(found!)).toEqual(credentials);
      expect(await serviceFor(a.account.id, true).connectedIntegration(IntegrationProvider.microsoft365)).toBeNull();
      expect(await serviceFor(b.account.id, false).connectedIntegration(IntegrationProvider.microsoft365)).toBeNull();

      await disconnect(a.testKey, made.id);
      const fresh = serviceFor(a.account.id, false);
      expect(await fresh.connectedIntegration(IntegrationProvider.microsoft365)).toBeNull();
      // A copy loaded before the disconnect cannot be used to read the destroyed credentials.
      await expect(service.credentialsOf(found!)).rejects.toMatchObject({ errorCode: 'resource_missing' });
    });

    it('refuses to build request contexts without an encryption key (at start, not per request)', async () => {
      const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' });
      expect(config.encryptionKey).toBeUndefined();
      expect(() => createServiceFactory({ config, scorer: new PriorLeadScorer() }, new GraphQLSchema({}))).toThrow(/ENCRYPTION_KEY/);
    });
  });

  describe('per-operation limit', () => {
    let limited: TestApp;
    beforeAll(async () => {
      limited = await startTestApp({ operationLimits: { ...OPERATION_LIMITS, connectIntegration: { windowS: 60, max: 2 } } });
    });
    afterAll(() => limited.close());

    it('allows 2 connects per account and mode a minute here; the third is 429 on REST and GraphQL', async () => {
      const owner = await limited.createAccount();
      const other = await limited.createAccount();
      const post = async (key: string, provider: IntegrationProvider) =>
        record(await limited.request('POST', '/v1/integrations', { key, body: bodyFor(provider) }));
      expect((await post(owner.testKey, IntegrationProvider.salesforce)).status).toBe(201);
      expect((await post(owner.testKey, IntegrationProvider.hubspot)).status).toBe(201);
      const over = await post(owner.testKey, IntegrationProvider.autotask);
      expectError(over, 429, 'rate_limit_exceeded', undefined, 'rate_limit_error');
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      const gql = record(
        await limited.graphql(
          `mutation ($input: IntegrationConnectInput!) { connectIntegration(input: $input) { id } }`,
          { input: bodyFor(IntegrationProvider.halopsa) },
          owner.testKey,
        ),
      );
      expect(gql.body.errors[0].extensions.code).toBe('RATE_LIMITED');
      const rows = await limited.orm.em
        .fork()
        .getConnection()
        .execute<{ count: string }[]>('select count(*) from integrations where account_id = ? and livemode = false', [owner.account.id]);
      expect(Number(rows[0].count)).toBe(2);
      // Counted per account and mode.
      expect((await post(owner.liveKey, IntegrationProvider.autotask)).status).toBe(201);
      expect((await post(other.testKey, IntegrationProvider.autotask)).status).toBe(201);
    });
  });

  describe('credentials never leave the server', () => {
    it('no column of any table holds a sent credential in plaintext', async () => {
      const { testKey } = await app.createAccount();
      for (const provider of PROVIDERS) {
        const res = record(
          await app.request('POST', '/v1/integrations', {
            key: testKey,
            body: bodyFor(provider),
            headers: { 'idempotency-key': `connect-${provider}` },
          }),
        );
        expect(res.status).toBe(201);
      }
      const connection = app.orm.em.fork().getConnection();
      const tables = await connection.execute<Array<{ tablename: string }>>(`select tablename from pg_tables where schemaname = 'public'`);
      let dump = '';
      for (const { tablename } of tables) {
        const rows = await connection.execute<Array<{ row: unknown }>>(`select row_to_json(t) as row from "${tablename}" t`);
        dump += JSON.stringify(rows);
      }
      // The Idempotency-Key rows (request hash, stored response) were read too.
      expect(dump).toContain('connect-microsoft365');
      for (const value of SENT_VALUES) expect(dump).not.toContain(value);
    });

    it('the logger censors credentials wherever a log call could carry them', () => {
      const lines: string[] = [];
      const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
      const secret = unique('log-secret-');
      logger.info({ credentials: { client_secret: secret } }, 'top');
      logger.info({ input: { credentials: { client_secret: secret } } }, 'one level');
      logger.info({ variables: { input: { credentials: { client_secret: secret } } } }, 'two levels');
      logger.info({ integration: { credentialsEncrypted: secret } }, 'stored form');
      expect(lines).toHaveLength(4);
      for (const line of lines) {
        expect(line).not.toContain(secret);
        expect(line).toContain('[redacted]');
      }
    });

    // Last on purpose: it reads what every test above sent, received and logged.
    it('no response and no log line of this file ever contained a sent credential', () => {
      expect(SENT_VALUES.size).toBeGreaterThan(100);
      expect(RESPONSES.length).toBeGreaterThan(200);
      expect(LOG_LINES.length).toBeGreaterThan(100);
      expect(LOG_LINES.some((line) => line.includes('"/v1/integrations"'))).toBe(true);
      const responses = RESPONSES.join('\n');
      const logs = LOG_LINES.join('\n');
      for (const value of SENT_VALUES) {
        expect(responses).not.toContain(value);
        expect(logs).not.toContain(value);
      }
      expect(responses).not.toMatch(/credentials_encrypted"\s*:|credentialsEncrypted"\s*:/);
    });
  });
});

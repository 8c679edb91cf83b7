import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';

const packageVersion = (JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;
const KEY_HEX = 'a'.repeat(64);

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n'); // a one-line reason
    return error as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      nodeEnv: 'development',
      isProduction: false,
      databaseUrl: undefined,
      redisUrl: undefined,
      publicUrl: 'http://localhost:3000',
      encryptionKey: undefined,
      logLevel: 'info',
      webhookAllowPrivateUrls: false,
      webhookRetrySchedule: [0, 5, 300, 1800, 7200, 18000, 36000, 36000],
      version: packageVersion,
      trustProxy: false,
      databaseTimeouts: { statementMs: 5_000, idleInTransactionMs: 10_000 },
      providers: {
        hubspotApiUrl: 'https://api.hubapi.com',
        salesforceLoginUrl: 'https://login.salesforce.com',
        microsoftLoginUrl: 'https://login.microsoftonline.com',
        microsoftGraphUrl: 'https://graph.microsoft.com',
        partnerCenterApiUrl: 'https://api.partner.microsoft.com',
        timeoutMs: 8_000,
        allowPrivateUrls: false,
        autotaskZoneUrl: 'https://webservices.autotask.net',
        connectwiseSiteUrl: undefined,
        halopsaInstanceUrl: undefined,
        openaiApiUrl: 'https://api.openai.com/v1',
        azureOpenaiEndpointUrl: undefined,
        llmTimeoutMs: 60000,
      },
      sso: { allowPrivateUrls: false, timeoutMs: 10_000 },
    });
    expect(config.dataDir).toBe(path.resolve('.data'));
  });

  it('reaches single sign-on issuers on private addresses only when told, with a deadline of its own', () => {
    expect(loadConfig({ SSO_ALLOW_PRIVATE_URLS: 'true', SSO_TIMEOUT_MS: '2500' }).sso).toEqual({ allowPrivateUrls: true, timeoutMs: 2_500 });
    expect(() => loadConfig({ SSO_TIMEOUT_MS: 'soon' })).toThrow('SSO_TIMEOUT_MS must be a whole number of milliseconds');
  });

  it('points the CRM providers elsewhere only outside production', () => {
    const env = {
      HUBSPOT_API_URL: 'http://127.0.0.1:4010/',
      SALESFORCE_LOGIN_URL: 'https://test.salesforce.com',
      MICROSOFT_LOGIN_URL: 'http://127.0.0.1:4011',
      MICROSOFT_GRAPH_URL: 'http://127.0.0.1:4012/',
      PARTNER_CENTER_API_URL: 'http://127.0.0.1:4013/',
      INTEGRATION_TIMEOUT_MS: '300',
    };
    expect(loadConfig({ ...env, INTEGRATION_ALLOW_PRIVATE_URLS: 'true' }).providers).toEqual({
      hubspotApiUrl: 'http://127.0.0.1:4010',
      salesforceLoginUrl: 'https://test.salesforce.com',
      microsoftLoginUrl: 'http://127.0.0.1:4011',
      microsoftGraphUrl: 'http://127.0.0.1:4012',
      partnerCenterApiUrl: 'http://127.0.0.1:4013',
      timeoutMs: 300,
      allowPrivateUrls: true,
      autotaskZoneUrl: 'https://webservices.autotask.net',
      connectwiseSiteUrl: undefined,
      halopsaInstanceUrl: undefined,
      openaiApiUrl: 'https://api.openai.com/v1',
      azureOpenaiEndpointUrl: undefined,
      llmTimeoutMs: 60000,
    });
    const production = { NODE_ENV: 'production', ENCRYPTION_KEY: 'a'.repeat(64) };
    expect(configError({ ...production, HUBSPOT_API_URL: 'http://127.0.0.1:4010' }).message).toBe(
      'HUBSPOT_API_URL may point elsewhere than https://api.hubapi.com only outside production',
    );
    expect(configError({ ...production, SALESFORCE_LOGIN_URL: 'https://test.salesforce.com' }).message).toContain('SALESFORCE_LOGIN_URL');
    expect(configError({ ...production, MICROSOFT_LOGIN_URL: 'http://127.0.0.1:4011' }).message).toBe(
      'MICROSOFT_LOGIN_URL may point elsewhere than https://login.microsoftonline.com only outside production',
    );
    expect(configError({ ...production, MICROSOFT_GRAPH_URL: 'https://graph.microsoft.us' }).message).toContain('MICROSOFT_GRAPH_URL');
    expect(configError({ ...production, PARTNER_CENTER_API_URL: 'http://127.0.0.1:4013' }).message).toBe(
      'PARTNER_CENTER_API_URL may point elsewhere than https://api.partner.microsoft.com only outside production',
    );
    expect(loadConfig({ ...production, HUBSPOT_API_URL: 'https://api.hubapi.com' }).providers.hubspotApiUrl).toBe('https://api.hubapi.com');
    expect(configError({ HUBSPOT_API_URL: 'ftp://example.com' }).message).toContain('HUBSPOT_API_URL');
    expect(configError({ INTEGRATION_TIMEOUT_MS: '0' }).message).toContain('INTEGRATION_TIMEOUT_MS');
    expect(configError({ INTEGRATION_ALLOW_PRIVATE_URLS: 'maybe' }).message).toContain('INTEGRATION_ALLOW_PRIVATE_URLS');
  });

  it('points the model providers elsewhere only outside production', () => {
    expect(loadConfig({ OPENAI_API_URL: 'http://127.0.0.1:4014/v1/', AZURE_OPENAI_ENDPOINT_URL: 'http://127.0.0.1:4015' }).providers).toMatchObject({
      openaiApiUrl: 'http://127.0.0.1:4014/v1',
      azureOpenaiEndpointUrl: 'http://127.0.0.1:4015',
    });
    const production = { NODE_ENV: 'production', ENCRYPTION_KEY: 'a'.repeat(64) };
    expect(configError({ ...production, OPENAI_API_URL: 'http://127.0.0.1:4014/v1' }).message).toBe(
      'OPENAI_API_URL may point elsewhere than https://api.openai.com/v1 only outside production',
    );
    expect(loadConfig({ ...production, OPENAI_API_URL: 'https://api.openai.com/v1' }).providers.openaiApiUrl).toBe('https://api.openai.com/v1');
    expect(configError({ ...production, AZURE_OPENAI_ENDPOINT_URL: 'https://acme.openai.azure.com' }).message).toContain(
      'AZURE_OPENAI_ENDPOINT_URL may be set only outside production',
    );
  });

  it('points the PSA providers elsewhere only outside production', () => {
    const env = { AUTOTASK_ZONE_URL: 'http://127.0.0.1:4011/', CONNECTWISE_SITE_URL: 'http://127.0.0.1:4012/', HALOPSA_INSTANCE_URL: 'http://127.0.0.1:4013' };
    expect(loadConfig(env).providers).toMatchObject({
      autotaskZoneUrl: 'http://127.0.0.1:4011',
      connectwiseSiteUrl: 'http://127.0.0.1:4012',
      halopsaInstanceUrl: 'http://127.0.0.1:4013',
    });
    const production = { NODE_ENV: 'production', ENCRYPTION_KEY: 'a'.repeat(64) };
    expect(configError({ ...production, AUTOTASK_ZONE_URL: 'http://127.0.0.1:4011' }).message).toBe(
      'AUTOTASK_ZONE_URL may point elsewhere than https://webservices.autotask.net only outside production',
    );
    expect(loadConfig({ ...production, AUTOTASK_ZONE_URL: 'https://webservices.autotask.net' }).providers.autotaskZoneUrl).toBe(
      'https://webservices.autotask.net',
    );
    // In production every customer's credentials go to their own site or instance, never elsewhere.
    expect(configError({ ...production, CONNECTWISE_SITE_URL: 'https://na.myconnectwise.net' }).message).toContain(
      'CONNECTWISE_SITE_URL may be set only outside production',
    );
    expect(configError({ ...production, HALOPSA_INSTANCE_URL: 'https://acme.halopsa.com' }).message).toContain('HALOPSA_INSTANCE_URL');
    expect(configError({ CONNECTWISE_SITE_URL: 'ftp://example.com' }).message).toContain('CONNECTWISE_SITE_URL');
  });

  it('derives PUBLIC_URL from PORT and drops a trailing slash from a given one', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_URL: 'https://api.example.com/' }).publicUrl).toBe('https://api.example.com');
    expect(configError({ PUBLIC_URL: 'ftp://example.com' }).message).toContain('PUBLIC_URL');
    expect(configError({ PUBLIC_URL: 'not a url' }).message).toContain('PUBLIC_URL');
  });

  it('reads PORT as an integer from 0 to 65535', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535);
    for (const bad of ['abc', '-1', '65536', '3000.5', '3e3', ' 80', '']) {
      expect(configError({ PORT: bad }).message).toMatch(/^PORT must be an integer/);
    }
  });

  it('accepts postgres URLs only for DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/app' }).databaseUrl).toBe('postgres://u:p@db:5432/app');
    expect(loadConfig({ DATABASE_URL: 'postgresql://db/app' }).databaseUrl).toBe('postgresql://db/app');
    expect(configError({ DATABASE_URL: 'mysql://db/app' }).message).toMatch(/^DATABASE_URL must use postgres: or postgresql:/);
    expect(configError({ DATABASE_URL: 'http://db/app' }).message).toContain('DATABASE_URL');
    expect(configError({ DATABASE_URL: 'db:5432' }).message).toContain('DATABASE_URL');
    expect(configError({ DATABASE_URL: 'nothing like a url' }).message).toMatch(/^DATABASE_URL is not a valid URL/);
  });

  it('does not echo a database password in its reason', () => {
    expect(configError({ DATABASE_URL: 'mysql://user:s3cret@db/app' }).message).not.toContain('s3cret');
  });

  it('accepts redis URLs only for REDIS_URL', () => {
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379' }).redisUrl).toBe('redis://cache:6379');
    expect(loadConfig({ REDIS_URL: 'rediss://cache:6380' }).redisUrl).toBe('rediss://cache:6380');
    expect(configError({ REDIS_URL: 'http://cache' }).message).toContain('REDIS_URL');
  });

  it('accepts only known LOG_LEVELs', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
    for (const bad of ['verbose', 'INFO', 'warning']) expect(configError({ LOG_LEVEL: bad }).message).toMatch(/^LOG_LEVEL must be one of/);
  });

  it('reads WEBHOOK_RETRY_SCHEDULE as comma-separated seconds', () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0, 10 ,60' }).webhookRetrySchedule).toEqual([0, 10, 60]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '30' }).webhookRetrySchedule).toEqual([30]);
    for (const bad of ['0,five', '-1', '5,,300', '5,300,', ',5', 'Infinity', 'NaN']) {
      expect(configError({ WEBHOOK_RETRY_SCHEDULE: bad }).message).toMatch(/^WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds/);
    }
  });

  it('requires ENCRYPTION_KEY in production', () => {
    expect(configError({ NODE_ENV: 'production' }).message).toMatch(/^ENCRYPTION_KEY is required when NODE_ENV=production/);
    const config = loadConfig({ NODE_ENV: 'production', ENCRYPTION_KEY: KEY_HEX });
    expect(config.isProduction).toBe(true);
    expect(config.encryptionKey).toEqual(Buffer.from(KEY_HEX, 'hex'));
  });

  it('leaves ENCRYPTION_KEY optional outside production', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).encryptionKey).toBeUndefined();
    expect(loadConfig({ NODE_ENV: 'test' }).encryptionKey).toBeUndefined();
  });

  it('takes a 32-byte ENCRYPTION_KEY as 64 hex digits or base64, and nothing shorter or longer', () => {
    const bytes = randomBytes(32);
    expect(loadConfig({ ENCRYPTION_KEY: bytes.toString('hex') }).encryptionKey).toEqual(bytes);
    expect(loadConfig({ ENCRYPTION_KEY: bytes.toString('base64') }).encryptionKey).toEqual(bytes);
    for (const bad of [randomBytes(16).toString('base64'), randomBytes(33).toString('base64'), 'a'.repeat(62), 'short']) {
      expect(configError({ NODE_ENV: 'production', ENCRYPTION_KEY: bad }).message).toMatch(/^ENCRYPTION_KEY must be 32 bytes/);
      expect(configError({ ENCRYPTION_KEY: bad }).message).toMatch(/^ENCRYPTION_KEY must be 32 bytes/);
    }
  });

  it('defaults WEBHOOK_ALLOW_PRIVATE_URLS to false in every environment', () => {
    // A deployment that forgets NODE_ENV=production must not read internal services through deliveries.
    expect(loadConfig({ NODE_ENV: 'production', ENCRYPTION_KEY: KEY_HEX }).webhookAllowPrivateUrls).toBe(false);
    expect(loadConfig({ NODE_ENV: 'development' }).webhookAllowPrivateUrls).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test' }).webhookAllowPrivateUrls).toBe(false);
    expect(loadConfig({}).webhookAllowPrivateUrls).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', ENCRYPTION_KEY: KEY_HEX, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhookAllowPrivateUrls).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhookAllowPrivateUrls).toBe(true);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: '0' }).webhookAllowPrivateUrls).toBe(false);
    expect(configError({ WEBHOOK_ALLOW_PRIVATE_URLS: 'maybe' }).message).toMatch(/^WEBHOOK_ALLOW_PRIVATE_URLS must be true or false/);
  });

  it('reads what one account may hold of an instance, and refuses values that make no sense', () => {
    expect(loadConfig({}).accountGate).toEqual({ requests: 32, sharedRequests: 2, waiting: 128, rootFields: 10, sharedRootFields: 1, sharedTime: 0.5 });
    expect(
      loadConfig({ ACCOUNT_SHARED_CONCURRENCY: '4', ACCOUNT_SHARED_ROOT_FIELDS: '2', ACCOUNT_SHARED_TIME: '0.25', ACCOUNT_QUEUE: '0' }).accountGate,
    ).toMatchObject({
      sharedRequests: 4,
      sharedRootFields: 2,
      sharedTime: 0.25,
      waiting: 0,
    });
    expect(configError({ ACCOUNT_SHARED_TIME: '0' }).message).toMatch(/^ACCOUNT_SHARED_TIME must be a number above 0 and at most 1/);
    expect(configError({ ACCOUNT_SHARED_TIME: '1.5' }).message).toMatch(/^ACCOUNT_SHARED_TIME/);
    expect(configError({ ACCOUNT_CONCURRENCY: '0' }).message).toMatch(/^ACCOUNT_CONCURRENCY must be a whole number from 1 to 1000/);
  });

  it('refuses TRUST_PROXY=true (any client would choose its address) and takes hop counts and proxy addresses', () => {
    expect(configError({ TRUST_PROXY: 'true' }).message).toMatch(/^TRUST_PROXY=true would let any client choose its address with X-Forwarded-For/);
    expect(configError({ TRUST_PROXY: 'TRUE' }).message).toMatch(/^TRUST_PROXY=true/);
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '5' }).trustProxy).toBe(5);
    // More hops than any real chain: a client would pick its address with X-Forwarded-For.
    expect(configError({ TRUST_PROXY: '1000' }).message).toMatch(/^TRUST_PROXY=1000 trusts more proxies than a deployment has \(at most 5\)/);
    expect(configError({ TRUST_PROXY: '6' }).message).toMatch(/^TRUST_PROXY=6 /);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe('loopback, 10.0.0.0/8');
    expect(configError({ TRUST_PROXY: 'every;one' }).message).toMatch(/^TRUST_PROXY must be false, a hop count or proxy addresses/);
  });

  it('takes the database timeouts in milliseconds, with defaults', () => {
    expect(loadConfig({}).databaseTimeouts).toEqual({ statementMs: 5_000, idleInTransactionMs: 10_000 });
    expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '250', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '900' }).databaseTimeouts).toEqual({
      statementMs: 250,
      idleInTransactionMs: 900,
    });
    for (const bad of ['-5', '1.5', 'soon', '3600001']) {
      expect(configError({ DATABASE_STATEMENT_TIMEOUT_MS: bad }).message).toMatch(
        /^DATABASE_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds from 0/,
      );
    }
  });

  it('takes 0 as no database timeout, as PostgreSQL does (the benchmark measures their cost)', () => {
    expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0' }).databaseTimeouts).toEqual({
      statementMs: 0,
      idleInTransactionMs: 0,
    });
    // Other durations keep refusing 0: a sync every 0 ms or a provider deadline of 0 ms is a mistake.
    expect(configError({ SYNC_INTERVAL_MS: '0' }).message).toMatch(/^SYNC_INTERVAL_MS must be a whole number of milliseconds from 1 to 3600000/);
  });

  it('prepares the hot reads unless DATABASE_PREPARED_STATEMENTS=off (a pooler that cannot keep them)', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe(true);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' }).databasePreparedStatements).toBe(false);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'on' }).databasePreparedStatements).toBe(true);
    expect(configError({ DATABASE_PREPARED_STATEMENTS: 'sometimes' }).message).toMatch(/DATABASE_PREPARED_STATEMENTS/);
  });

  it('takes METRICS_TOKEN when long enough and without spaces, and never echoes a bad one', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: '' }).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: 'f'.repeat(64) }).metricsToken).toBe('f'.repeat(64));
    for (const bad of ['short-token', 'sixteen chars ok', `token\t${'x'.repeat(20)}`, `tökén-${'x'.repeat(20)}`]) {
      const message = configError({ METRICS_TOKEN: bad }).message;
      expect(message).toMatch(/^METRICS_TOKEN must be at least 16 printable characters/);
      expect(message).not.toContain(bad);
    }
  });

  it('polls co-sell referrals every CO_SELL_POLL_INTERVAL_MS, 5 minutes by default', () => {
    expect(loadConfig({}).coSell).toEqual({ pollIntervalMs: 300_000 });
    expect(loadConfig({ CO_SELL_POLL_INTERVAL_MS: '250' }).coSell).toEqual({ pollIntervalMs: 250 });
    for (const bad of ['0', 'often', '3600001']) {
      expect(configError({ CO_SELL_POLL_INTERVAL_MS: bad }).message).toMatch(/^CO_SELL_POLL_INTERVAL_MS must be a whole number of milliseconds/);
    }
  });

  it('keeps DATA_DIR absolute', () => {
    expect(loadConfig({ DATA_DIR: 'some/dir' }).dataDir).toBe(path.resolve('some/dir'));
  });
});

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DatabaseTimeouts } from './db/database-timeouts';
import { AccountGateBounds, DEFAULT_ACCOUNT_GATE_BOUNDS } from './limits/account-gate-bounds';

/** Service configuration (CONTRACT §15), read once from the environment and checked at start. */
export interface Config {
  port: number;
  nodeEnv: string;
  isProduction: boolean;
  /** Unset: the embedded PostgreSQL under `dataDir`. */
  databaseUrl?: string;
  /** Unset: rate-limit counters in process memory (fit for one instance only). */
  redisUrl?: string;
  publicUrl: string;
  /** Unset outside production: generated and kept in `dataDir` for the embedded default. */
  encryptionKey?: Buffer;
  logLevel: string;
  webhookAllowPrivateUrls: boolean;
  webhookRetrySchedule: number[];
  dataDir: string;
  version: string;
  /** express `trust proxy`: which proxies' X-Forwarded-For to believe for the client address. */
  trustProxy: false | number | string;
  /** Bearer token for GET /metrics; unset: /metrics answers loopback clients only. */
  metricsToken?: string;
  /** RATE_LIMITS=off turns plan quotas and per-operation limits off (the benchmark's comparison); on by default. */
  rateLimits: boolean;
  /** REQUEST_LOGS=off stops storing the accounts' request logs (the benchmark's comparison); on by default. */
  requestLogs: boolean;
  /** What one account and mode may hold of an instance at once (src/limits/account-gate.ts). */
  accountGate: AccountGateBounds;
  /**
   * statement_timeout and idle_in_transaction_session_timeout of the service's connections. 0 turns
   * one off: the service sets none, as PostgreSQL's 0 means (the benchmark measures what they cost).
   */
  databaseTimeouts: DatabaseTimeouts;
  /**
   * DATABASE_PREPARED_STATEMENTS=off: the hot reads run unnamed, parsed and planned on every call,
   * for a connection pooler that cannot keep prepared statements (PgBouncer in transaction mode
   * before 1.21); on by default.
   */
  databasePreparedStatements: boolean;
  /** Where the CRM providers are reached (the real hosts unless set, and only the real hosts in production). */
  providers: ProviderConfig;
  sync: SyncConfig;
  coSell: CoSellConfig;
  mail: MailConfig;
  sso: SsoConfig;
}

/** How the web app reaches the accounts' OpenID providers (single sign-on). */
export interface SsoConfig {
  /** SSO_ALLOW_PRIVATE_URLS: issuers on loopback or private addresses, over plain http too (local development and tests), as WEBHOOK_ALLOW_PRIVATE_URLS does for webhooks. */
  allowPrivateUrls: boolean;
  /** SSO_TIMEOUT_MS: the deadline of each request to an issuer (discovery, keys, token, userinfo), connection to last byte. */
  timeoutMs: number;
}

/** How the web app's account e-mail (verification, password reset) is sent. */
export interface MailConfig {
  /** SMTP_URL (smtp://user:pass@host:587, smtps://… for TLS from the start); unset: see src/mail/mailer.ts. */
  smtpUrl?: string;
  /** MAIL_FROM: the From of every message (default `Sales Pipeline <no-reply@{PUBLIC_URL's host}>`). */
  from: string;
  /** MAIL_TIMEOUT_MS: the deadline of each step of an SMTP delivery (connection, greeting, each reply). */
  timeoutMs: number;
}

export interface ProviderConfig {
  hubspotApiUrl: string;
  salesforceLoginUrl: string;
  /** Microsoft Entra ID's login endpoint, where the client-credentials grant of a Microsoft 365 app runs. */
  microsoftLoginUrl: string;
  /** Microsoft Graph, where the Microsoft 365 mailbox is read. */
  microsoftGraphUrl: string;
  /** Partner Center's API, where live co-sell registrations become referrals (`/v1.0/engagements/referrals`). */
  partnerCenterApiUrl: string;
  /** The deadline of each call to a provider, connection to last byte. */
  timeoutMs: number;
  /** INTEGRATION_ALLOW_PRIVATE_URLS: addresses given by providers (Salesforce's instance_url) may be loopback or private. */
  allowPrivateUrls: boolean;
  /** AUTOTASK_ZONE_URL: where Autotask's zone lookup runs (the zone it answers is then called through the address guard). */
  autotaskZoneUrl: string;
  /** CONNECTWISE_SITE_URL, outside production only: every ConnectWise site is reached here instead of https://{site} (a sandbox, a local fake). */
  connectwiseSiteUrl?: string;
  /** HALOPSA_INSTANCE_URL, outside production only: every HaloPSA instance is reached here instead of its instance_url. */
  halopsaInstanceUrl?: string;
  /** OPENAI_API_URL: OpenAI's API, where an `openai` integration's model is called (`/models`, `/chat/completions`). */
  openaiApiUrl: string;
  /** AZURE_OPENAI_ENDPOINT_URL, outside production only: every Azure OpenAI resource is reached here instead of its endpoint. */
  azureOpenaiEndpointUrl?: string;
  /** LLM_TIMEOUT_MS: the deadline of each request of an agent to the account's model (a model writes slower than a CRM reads). */
  llmTimeoutMs: number;
}

/** How the CRM sync engine runs. */
export interface SyncConfig {
  /** SYNC_INTERVAL_MS: how often each CRM integration pulls the CRM's changes on its own (default 5 minutes). */
  intervalMs: number;
  /** SYNC_LEASE_MS: how long an instance holds a sync run without renewing it; another instance takes the run over after (default 60 s). */
  leaseMs: number;
}

/** How live co-sell registrations follow their Partner Center referrals. */
export interface CoSellConfig {
  /** CO_SELL_POLL_INTERVAL_MS: how often each open referral's status is read from Partner Center (default 5 minutes). */
  pollIntervalMs: number;
}

export const DEFAULT_HUBSPOT_API_URL = 'https://api.hubapi.com';
export const DEFAULT_SALESFORCE_LOGIN_URL = 'https://login.salesforce.com';
export const DEFAULT_AUTOTASK_ZONE_URL = 'https://webservices.autotask.net';
export const DEFAULT_MICROSOFT_LOGIN_URL = 'https://login.microsoftonline.com';
export const DEFAULT_MICROSOFT_GRAPH_URL = 'https://graph.microsoft.com';
export const DEFAULT_PARTNER_CENTER_API_URL = 'https://api.partner.microsoft.com';
export const DEFAULT_OPENAI_API_URL = 'https://api.openai.com/v1';

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const DEFAULT_RETRY_SCHEDULE = '0,5,300,1800,7200,18000,36000,36000';

function parseBoolean(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (/^(true|1|yes|on)$/i.test(value)) return true;
  if (/^(false|0|no|off)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

/** A share of time: a number above 0 and at most 1. */
function parseShare(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const share = Number(value);
  if (!/^\d*\.?\d+$/.test(value) || !(share > 0 && share <= 1)) throw new ConfigError(`${name} must be a number above 0 and at most 1, got "${value}"`);
  return share;
}

/** A whole number from `min` to `max`. */
function parseCount(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  return Number(value);
}

function parseMilliseconds(name: string, value: string | undefined, fallback: number, min = 1): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > 3_600_000) {
    throw new ConfigError(`${name} must be a whole number of milliseconds from ${min} to 3600000, got "${value}"`);
  }
  return Number(value);
}

/** A provider's base URL: the real host by default; another (a sandbox, a local fake) only outside production. */
function parseProviderUrl(name: string, value: string | undefined, fallback: string, isProduction: boolean): string {
  if (value === undefined || value === '') return fallback;
  const url = parseUrl(name, value, ['http:', 'https:']).replace(/\/+$/, '');
  if (isProduction && url !== fallback) throw new ConfigError(`${name} may point elsewhere than ${fallback} only outside production`);
  return url;
}

/**
 * Where a provider that lives on the customer's own host (a ConnectWise site, a HaloPSA instance)
 * is reached instead of that host: unset by default, and only outside production, where no
 * customer's credentials may be sent anywhere but their own host.
 */
function parseCustomerHostOverride(name: string, value: string | undefined, isProduction: boolean): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (isProduction) throw new ConfigError(`${name} may be set only outside production (every customer's own host is called in production)`);
  return parseUrl(name, value, ['http:', 'https:']).replace(/\/+$/, '');
}

function parseUrl(name: string, value: string, protocols: string[]): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${url.protocol}`);
  }
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const nodeEnv = env.NODE_ENV || 'development';
  const isProduction = nodeEnv === 'production';

  const portText = env.PORT ?? '3000';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${portText}"`);
  }

  const databaseUrl = env.DATABASE_URL ? parseUrl('DATABASE_URL', env.DATABASE_URL, ['postgres:', 'postgresql:']) : undefined;
  const redisUrl = env.REDIS_URL ? parseUrl('REDIS_URL', env.REDIS_URL, ['redis:', 'rediss:']) : undefined;
  const publicUrl = parseUrl('PUBLIC_URL', env.PUBLIC_URL || `http://localhost:${port}`, ['http:', 'https:']).replace(/\/+$/, '');

  let encryptionKey: Buffer | undefined;
  if (env.ENCRYPTION_KEY) {
    encryptionKey = decodeKey(env.ENCRYPTION_KEY);
  } else if (isProduction) {
    throw new ConfigError('ENCRYPTION_KEY is required when NODE_ENV=production (32 bytes, base64 or hex)');
  }

  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const scheduleText = env.WEBHOOK_RETRY_SCHEDULE || DEFAULT_RETRY_SCHEDULE;
  // An empty part ("5,,300", a trailing comma) is a mistake, not 0 seconds.
  const webhookRetrySchedule = scheduleText.split(',').map((part) => (part.trim() === '' ? NaN : Number(part.trim())));
  if (webhookRetrySchedule.some((s) => !Number.isFinite(s) || s < 0)) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, got "${scheduleText}"`);
  }

  const requests = parseCount('ACCOUNT_CONCURRENCY', env.ACCOUNT_CONCURRENCY, DEFAULT_ACCOUNT_GATE_BOUNDS.requests, 1, 1000);
  const sharedRequests = parseCount(
    'ACCOUNT_SHARED_CONCURRENCY',
    env.ACCOUNT_SHARED_CONCURRENCY,
    Math.min(requests, DEFAULT_ACCOUNT_GATE_BOUNDS.sharedRequests),
    1,
    1000,
  );
  if (sharedRequests > requests) throw new ConfigError(`ACCOUNT_SHARED_CONCURRENCY (${sharedRequests}) must not be above ACCOUNT_CONCURRENCY (${requests})`);

  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,}$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN must be at least 16 printable characters without spaces (e.g. openssl rand -hex 32)');
  }

  return {
    port,
    nodeEnv,
    isProduction,
    databaseUrl,
    redisUrl,
    publicUrl,
    encryptionKey,
    logLevel,
    webhookAllowPrivateUrls: parseBoolean('WEBHOOK_ALLOW_PRIVATE_URLS', env.WEBHOOK_ALLOW_PRIVATE_URLS, false),
    webhookRetrySchedule,
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    version: packageVersion(),
    metricsToken,
    rateLimits: parseBoolean('RATE_LIMITS', env.RATE_LIMITS, true),
    requestLogs: parseBoolean('REQUEST_LOGS', env.REQUEST_LOGS, true),
    accountGate: {
      requests,
      sharedRequests,
      waiting: parseCount('ACCOUNT_QUEUE', env.ACCOUNT_QUEUE, DEFAULT_ACCOUNT_GATE_BOUNDS.waiting, 0, 10_000),
      rootFields: DEFAULT_ACCOUNT_GATE_BOUNDS.rootFields,
      sharedRootFields: parseCount('ACCOUNT_SHARED_ROOT_FIELDS', env.ACCOUNT_SHARED_ROOT_FIELDS, DEFAULT_ACCOUNT_GATE_BOUNDS.sharedRootFields, 1, 1000),
      sharedTime: parseShare('ACCOUNT_SHARED_TIME', env.ACCOUNT_SHARED_TIME, DEFAULT_ACCOUNT_GATE_BOUNDS.sharedTime),
    },
    databasePreparedStatements: parseBoolean('DATABASE_PREPARED_STATEMENTS', env.DATABASE_PREPARED_STATEMENTS, true),
    databaseTimeouts: {
      statementMs: parseMilliseconds('DATABASE_STATEMENT_TIMEOUT_MS', env.DATABASE_STATEMENT_TIMEOUT_MS, 5_000, 0),
      idleInTransactionMs: parseMilliseconds('DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', env.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS, 10_000, 0),
    },
    providers: {
      hubspotApiUrl: parseProviderUrl('HUBSPOT_API_URL', env.HUBSPOT_API_URL, DEFAULT_HUBSPOT_API_URL, isProduction),
      salesforceLoginUrl: parseProviderUrl('SALESFORCE_LOGIN_URL', env.SALESFORCE_LOGIN_URL, DEFAULT_SALESFORCE_LOGIN_URL, isProduction),
      microsoftLoginUrl: parseProviderUrl('MICROSOFT_LOGIN_URL', env.MICROSOFT_LOGIN_URL, DEFAULT_MICROSOFT_LOGIN_URL, isProduction),
      microsoftGraphUrl: parseProviderUrl('MICROSOFT_GRAPH_URL', env.MICROSOFT_GRAPH_URL, DEFAULT_MICROSOFT_GRAPH_URL, isProduction),
      partnerCenterApiUrl: parseProviderUrl('PARTNER_CENTER_API_URL', env.PARTNER_CENTER_API_URL, DEFAULT_PARTNER_CENTER_API_URL, isProduction),
      timeoutMs: parseMilliseconds('INTEGRATION_TIMEOUT_MS', env.INTEGRATION_TIMEOUT_MS, 8_000),
      allowPrivateUrls: parseBoolean('INTEGRATION_ALLOW_PRIVATE_URLS', env.INTEGRATION_ALLOW_PRIVATE_URLS, false),
      autotaskZoneUrl: parseProviderUrl('AUTOTASK_ZONE_URL', env.AUTOTASK_ZONE_URL, DEFAULT_AUTOTASK_ZONE_URL, isProduction),
      connectwiseSiteUrl: parseCustomerHostOverride('CONNECTWISE_SITE_URL', env.CONNECTWISE_SITE_URL, isProduction),
      halopsaInstanceUrl: parseCustomerHostOverride('HALOPSA_INSTANCE_URL', env.HALOPSA_INSTANCE_URL, isProduction),
      openaiApiUrl: parseProviderUrl('OPENAI_API_URL', env.OPENAI_API_URL, DEFAULT_OPENAI_API_URL, isProduction),
      azureOpenaiEndpointUrl: parseCustomerHostOverride('AZURE_OPENAI_ENDPOINT_URL', env.AZURE_OPENAI_ENDPOINT_URL, isProduction),
      llmTimeoutMs: parseMilliseconds('LLM_TIMEOUT_MS', env.LLM_TIMEOUT_MS, 60_000),
    },
    sync: {
      intervalMs: parseMilliseconds('SYNC_INTERVAL_MS', env.SYNC_INTERVAL_MS, 300_000),
      leaseMs: parseMilliseconds('SYNC_LEASE_MS', env.SYNC_LEASE_MS, 60_000),
    },
    coSell: {
      pollIntervalMs: parseMilliseconds('CO_SELL_POLL_INTERVAL_MS', env.CO_SELL_POLL_INTERVAL_MS, 300_000),
    },
    mail: {
      smtpUrl: env.SMTP_URL ? parseUrl('SMTP_URL', env.SMTP_URL, ['smtp:', 'smtps:']) : undefined,
      from: parseMailFrom(env.MAIL_FROM, publicUrl),
      timeoutMs: parseMilliseconds('MAIL_TIMEOUT_MS', env.MAIL_TIMEOUT_MS, 10_000),
    },
    sso: {
      allowPrivateUrls: parseBoolean('SSO_ALLOW_PRIVATE_URLS', env.SSO_ALLOW_PRIVATE_URLS, false),
      timeoutMs: parseMilliseconds('SSO_TIMEOUT_MS', env.SSO_TIMEOUT_MS, 10_000),
    },
  };
}

/**
 * The most proxies a deployment puts in front of the service (a CDN, a load balancer, an ingress
 * and a sidecar are four). A count above the real chain believes X-Forwarded-For entries the client
 * wrote itself, so a count no real deployment has (`TRUST_PROXY=1000`) is refused at start.
 */
export const MAX_TRUSTED_PROXY_HOPS = 5;

/**
 * `false` (default), a hop count, or express's names and addresses of the proxies to believe
 * (`loopback`, `10.0.0.0/8`). `true` would believe X-Forwarded-For from anyone, so any client could
 * choose the address its per-address limits count: refused.
 */
function parseTrustProxy(value: string | undefined): false | number | string {
  if (value === undefined || value === '' || /^false$/i.test(value)) return false;
  if (/^true$/i.test(value)) {
    throw new ConfigError(
      'TRUST_PROXY=true would let any client choose its address with X-Forwarded-For; give the number of proxies in front (e.g. 1) or their addresses (e.g. loopback, 10.0.0.0/8)',
    );
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > MAX_TRUSTED_PROXY_HOPS) {
      throw new ConfigError(
        `TRUST_PROXY=${value} trusts more proxies than a deployment has (at most ${MAX_TRUSTED_PROXY_HOPS}): with more hops than the real proxy chain, any client chooses its address with X-Forwarded-For; give the number of proxies in front of the service, or their addresses`,
      );
    }
    return hops;
  }
  if (!/^[\w.:/, -]+$/.test(value)) throw new ConfigError(`TRUST_PROXY must be false, a hop count or proxy addresses, got "${value}"`);
  return value;
}

/** `Name <address>` or a bare address; the default names this service at PUBLIC_URL's host. */
function parseMailFrom(value: string | undefined, publicUrl: string): string {
  if (value === undefined || value === '') return `Sales Pipeline <no-reply@${new URL(publicUrl).hostname}>`;
  if (!/^([^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/.test(value.trim())) {
    throw new ConfigError(`MAIL_FROM must be an address or "Name <address>", got "${value}"`);
  }
  return value.trim();
}

function decodeKey(text: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new ConfigError('ENCRYPTION_KEY must be 32 bytes, given as 64 hex digits or base64');
  return key;
}

function packageVersion(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- works from src/ and dist/src/ alike
  return (require(path.join(__dirname, findPackageRoot(), 'package.json')) as { version: string }).version;
}

function findPackageRoot(): string {
  return __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..';
}

/** Outside production, a missing ENCRYPTION_KEY is generated once and kept in the data folder. */
export function ensureEncryptionKey(config: Config): void {
  if (config.encryptionKey) return;
  const file = path.join(config.dataDir, 'encryption-key');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  config.encryptionKey = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

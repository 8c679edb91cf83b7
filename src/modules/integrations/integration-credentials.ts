import { isEmail } from 'class-validator';
import { ApiError } from '../../common/api-error';
import { IntegrationProvider, IntegrationType, PROVIDERS_BY_TYPE } from './integration.entity';

/**
 * What each provider needs to connect, named as the provider's own docs name it, in snake_case:
 * credentials are opaque client JSON, so the REST adapter passes their keys through unchanged and
 * GraphQL and REST take the same names.
 */
type FieldKind = 'text' | 'secret' | 'token' | 'https_url' | 'hostname' | 'email' | 'guid';

interface CredentialField {
  name: string;
  kind: FieldKind;
}

interface ProviderCredentials {
  fields: CredentialField[];
  /** The main secret: its last 4 characters are the integration's credentials_hint. */
  hintFrom: string;
}

export const CREDENTIALS_BY_PROVIDER: Record<IntegrationProvider, ProviderCredentials> = {
  // A connected app's OAuth client and a refresh token (the instance URL is the org's My Domain).
  salesforce: {
    fields: [
      { name: 'instance_url', kind: 'https_url' },
      { name: 'client_id', kind: 'text' },
      { name: 'client_secret', kind: 'secret' },
      { name: 'refresh_token', kind: 'secret' },
    ],
    hintFrom: 'client_secret',
  },
  // A private app's access token.
  hubspot: { fields: [{ name: 'access_token', kind: 'token' }], hintFrom: 'access_token' },
  // An API member's key pair, the company id that prefixes it, and the developer clientId.
  connectwise: {
    fields: [
      { name: 'site', kind: 'hostname' },
      { name: 'company_id', kind: 'text' },
      { name: 'public_key', kind: 'text' },
      { name: 'private_key', kind: 'secret' },
      { name: 'client_id', kind: 'text' },
    ],
    hintFrom: 'private_key',
  },
  // An API-only user (its e-mail user name and secret) and the tracking identifier.
  autotask: {
    fields: [
      { name: 'username', kind: 'email' },
      { name: 'secret', kind: 'secret' },
      { name: 'integration_code', kind: 'text' },
    ],
    hintFrom: 'secret',
  },
  // A client-credentials application of the HaloPSA instance.
  halopsa: {
    fields: [
      { name: 'instance_url', kind: 'https_url' },
      { name: 'client_id', kind: 'text' },
      { name: 'client_secret', kind: 'secret' },
    ],
    hintFrom: 'client_secret',
  },
  // An Entra ID app registration (client credentials) in the customer's tenant.
  microsoft365: {
    fields: [
      { name: 'tenant_id', kind: 'guid' },
      { name: 'client_id', kind: 'guid' },
      { name: 'client_secret', kind: 'secret' },
    ],
    hintFrom: 'client_secret',
  },
};

export const MAX_CREDENTIAL_LENGTH = 2000;
/** Real secrets are far longer; shorter ones would be half given away by the 4-character hint. */
export const MIN_SECRET_LENGTH = 8;

const BEARER_TOKEN = /^[\x21-\x7e]+$/;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
/** Keys REST shows unchanged in a param path; others (camelCase, punctuation) are named in the message only. */
const PLAIN_KEY = /^[a-z0-9_]{1,64}$/;

/** A DNS name with at least two labels and an alphabetic top label (so not an IP address). */
function isHostname(value: string): boolean {
  if (value.length > 253) return false;
  const labels = value.split('.');
  return labels.length >= 2 && labels.every((label) => HOST_LABEL.test(label)) && /[a-z]/i.test(labels[labels.length - 1]);
}

function isHttpsUrl(value: string): boolean {
  if (!/^https:\/\//i.test(value) || /\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && !url.username && !url.password && !url.search && !url.hash && isHostname(url.hostname);
  } catch {
    return false;
  }
}

const SHAPES: Record<FieldKind, { check: (value: string) => boolean; expected: string }> = {
  text: { check: () => true, expected: 'text' },
  secret: { check: (value) => value.length >= MIN_SECRET_LENGTH, expected: `at least ${MIN_SECRET_LENGTH} characters` },
  // A secret sent as a bearer token in an HTTP header: printable ASCII, as every provider's tokens are.
  token: {
    check: (value) => value.length >= MIN_SECRET_LENGTH && BEARER_TOKEN.test(value),
    expected: `at least ${MIN_SECRET_LENGTH} printable ASCII characters without spaces`,
  },
  https_url: { check: isHttpsUrl, expected: 'an https URL such as https://acme.example.com' },
  hostname: { check: isHostname, expected: 'a host name such as na.myconnectwise.net (no scheme or path)' },
  email: { check: (value) => isEmail(value), expected: 'an email address' },
  guid: { check: (value) => GUID.test(value), expected: 'a GUID such as 00000000-0000-0000-0000-000000000000' },
};

export interface ValidCredentials {
  /** Exactly the provider's fields, as sent. */
  credentials: Record<string, string>;
  hint: string;
}

/**
 * Checks that `provider` belongs to `type` and that `credentials` hold exactly the provider's
 * fields, each a non-blank string of the right shape. Errors name the field (`credentials.client_id`)
 * but never echo a value: they are secrets.
 */
export function validateCredentials(type: IntegrationType, provider: IntegrationProvider, credentials: Record<string, unknown>): ValidCredentials {
  const allowed = PROVIDERS_BY_TYPE[type];
  if (!allowed.includes(provider)) {
    throw new ApiError('parameter_invalid', `provider ${provider} is not a ${type} provider; ${type} providers are ${allowed.join(', ')}`, {
      param: 'provider',
    });
  }
  const spec = CREDENTIALS_BY_PROVIDER[provider];
  const names = spec.fields.map((field) => field.name);
  for (const key of Object.keys(credentials)) {
    if (names.includes(key)) continue;
    const takes = `${provider} credentials are ${names.join(', ')}`;
    if (PLAIN_KEY.test(key)) {
      throw new ApiError('parameter_unknown', `credentials.${key} is not a ${provider} credential; ${takes}`, { param: `credentials.${key}` });
    }
    throw new ApiError('parameter_unknown', `credentials has an unknown field ${JSON.stringify(key.slice(0, 64))}; ${takes}`, {
      param: 'credentials',
    });
  }
  const valid: Record<string, string> = {};
  for (const field of spec.fields) {
    const param = `credentials.${field.name}`;
    const value = credentials[field.name];
    if (value === undefined || value === null) throw new ApiError('parameter_missing', `${param} is required for ${provider}`, { param });
    if (typeof value !== 'string') throw new ApiError('parameter_invalid', `${param} must be a string`, { param });
    if (value.trim() === '') throw new ApiError('parameter_invalid', `${param} must not be blank`, { param });
    if (value.length > MAX_CREDENTIAL_LENGTH) {
      throw new ApiError('parameter_invalid', `${param} must be at most ${MAX_CREDENTIAL_LENGTH} characters`, { param });
    }
    const shape = SHAPES[field.kind];
    if (!shape.check(value)) throw new ApiError('parameter_invalid', `${param} must be ${shape.expected}`, { param });
    valid[field.name] = value;
  }
  return { credentials: valid, hint: valid[spec.hintFrom].slice(-4) };
}

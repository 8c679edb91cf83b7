import { isEmail } from 'class-validator';
import { ApiError } from '../../common/api-error';
import type { JsonSchema, SchemaRefinement } from '../../common/json-schema';
import { IntegrationProvider, IntegrationType, PROVIDERS_BY_TYPE } from './integration.entity';
import { CREDENTIALS_BY_PROVIDER, type FieldKind } from './credential-fields';
import { isSyncProvider, type PsaProvider } from './providers/crm-client';
import { DELIVERY_RECORDS } from './sync/delivery-records';

export { CREDENTIALS_BY_PROVIDER } from './credential-fields';

export const MAX_CREDENTIAL_LENGTH = 2000;
/** Real secrets are far longer; shorter ones would be half given away by the 4-character hint. */
export const MIN_SECRET_LENGTH = 8;

/** Keys REST shows unchanged in a param path; others (camelCase, punctuation) are named in the message only. */
const PLAIN_KEY = /^[a-z0-9_]{1,64}$/;

const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
/** A DNS name of at least two labels whose top label starts with a letter (so not an IP address). */
const HOSTNAME = `(?:${LABEL}\\.)+[a-zA-Z](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?`;
/**
 * A Microsoft Entra user principal name: 1 to 64 characters before the @ (letters, digits and
 * ' . - _ ! # ^ ~, not starting or ending with a period), a domain after it. No $, so the name
 * always fits Graph's /users/{userPrincipalName} path.
 */
const UPN_CHAR = "[A-Za-z0-9'_!#^~-]";
const USER_PRINCIPAL_NAME = `^${UPN_CHAR}(?:[A-Za-z0-9'._!#^~-]{0,62}${UPN_CHAR})?@${HOSTNAME}$`;
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
const PORT = '(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|\\d{1,4})';

/** Every credential: a string, not blank, at most MAX_CREDENTIAL_LENGTH characters; each kind narrows it. */
const TEXT: JsonSchema = { type: 'string', minLength: 1, maxLength: MAX_CREDENTIAL_LENGTH, pattern: '\\S' };

/**
 * The shape of each kind of credential as JSON Schema: what the OpenAPI document shows (oneOf by
 * provider) and what validateCredentials checks, keyword by keyword (credentialProblem below).
 */
const KINDS: Record<FieldKind, { schema: JsonSchema; expected: string }> = {
  text: { schema: TEXT, expected: 'text' },
  secret: { schema: { ...TEXT, minLength: MIN_SECRET_LENGTH }, expected: `at least ${MIN_SECRET_LENGTH} characters` },
  // A secret sent as a bearer token in an HTTP header: printable ASCII without spaces, as every provider's tokens are.
  token: {
    schema: { ...TEXT, minLength: MIN_SECRET_LENGTH, pattern: '^[\\x21-\\x7e]+$' },
    expected: `at least ${MIN_SECRET_LENGTH} printable ASCII characters without spaces`,
  },
  // Not secret, but sent in an HTTP header of its own (ConnectWise's clientId, Autotask's ApiIntegrationCode).
  header: { schema: { ...TEXT, pattern: '^[\\x21-\\x7e]+$' }, expected: 'printable ASCII characters without spaces' },
  https_url: {
    schema: { ...TEXT, format: 'uri', pattern: `^[hH][tT][tT][pP][sS]://${HOSTNAME}(?::${PORT})?(?:/[^\\s?#]*)?$` },
    expected: 'an https URL such as https://acme.example.com (no credentials, query or fragment)',
  },
  // A server the account runs itself (a model server on its own network) may speak plain http, at a host name or an IP address.
  http_url: {
    schema: { ...TEXT, format: 'uri', pattern: `^[hH][tT][tT][pP][sS]?://(?:${HOSTNAME}|${IPV4}|localhost)(?::${PORT})?(?:/[^\\s?#]*)?$` },
    expected: 'an http or https URL such as http://ollama.internal:11434/v1 (no credentials, query or fragment)',
  },
  // An Azure OpenAI deployment's name, which goes into the request path (/openai/deployments/{deployment}/…) as it is.
  deployment_name: {
    schema: { ...TEXT, maxLength: 64, pattern: '^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,63})$' },
    expected: 'a deployment name such as gpt-4o-mini (letters, digits, . _ -, at most 64 characters)',
  },
  hostname: { schema: { ...TEXT, maxLength: 253, pattern: `^${HOSTNAME}$` }, expected: 'a host name such as na.myconnectwise.net (no scheme or path)' },
  // ASCII only: Autotask's user name travels in its UserName header.
  email: { schema: { ...TEXT, format: 'email', pattern: '^[\\x21-\\x7e]+$' }, expected: 'an email address' },
  guid: {
    schema: { ...TEXT, pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' },
    expected: 'a GUID such as 00000000-0000-0000-0000-000000000000',
  },
  user_principal_name: {
    schema: { ...TEXT, maxLength: 113, pattern: USER_PRINCIPAL_NAME },
    expected: "a user principal name such as jane.doe@contoso.com (letters, digits and ' . - _ ! # ^ ~ before the @, a domain after it)",
  },
};

/** What is wrong with a credential's value by its kind's schema, or undefined. */
function credentialProblem(value: unknown, kind: FieldKind): string | undefined {
  const { schema, expected } = KINDS[kind];
  if (typeof value !== 'string') return 'must be a string';
  if (!/\S/.test(value)) return 'must not be blank';
  if (value.length > (schema.maxLength as number)) return `must be at most ${schema.maxLength as number} characters`;
  const fits =
    value.length >= (schema.minLength as number) && new RegExp(schema.pattern as string, 'u').test(value) && (schema.format !== 'email' || isEmail(value));
  return fits ? undefined : `must be ${expected}`;
}

/** The credentials a provider takes, as JSON Schema: exactly its fields, each of its kind. */
export function credentialsSchema(provider: IntegrationProvider): JsonSchema {
  const { fields } = CREDENTIALS_BY_PROVIDER[provider];
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((field) => [field.name, KINDS[field.kind].schema])),
    required: fields.map((field) => field.name),
    additionalProperties: false,
  };
}

/** Which providers each setting applies to (IntegrationService.settingsFor refuses it elsewhere). */
const SETTING_APPLIES: Record<string, (type: IntegrationType, provider: IntegrationProvider) => boolean> = {
  stage_map: (_type, provider) => isSyncProvider(provider),
  delivery_record: (_type, provider) => provider in DELIVERY_RECORDS,
  sales_rep: (_type, provider) => provider === IntegrationProvider.connectwise,
  model: (type) => type === IntegrationType.llm,
};

/**
 * The settings one provider takes, from the settings' own schema: a setting of other providers
 * only as null, a PSA's delivery record among its own, and a compatible model server's model
 * required (it has no default).
 */
function providerSettings(type: IntegrationType, provider: IntegrationProvider, settings: JsonSchema): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries(settings.properties as Record<string, JsonSchema>).map(([name, property]) => {
      const applies = SETTING_APPLIES[name]?.(type, provider) ?? true;
      if (!applies) return [name, { type: 'null', description: `Not a setting of ${provider} integrations.` }];
      if (name === 'delivery_record') return [name, { ...property, enum: [...DELIVERY_RECORDS[provider as PsaProvider], null] }];
      if (name === 'model' && provider === IntegrationProvider.openai_compatible) return [name, { ...property, type: 'string' }];
      return [name, property];
    }),
  );
  const schema = { ...settings, properties };
  if (provider !== IntegrationProvider.openai_compatible) return { anyOf: [schema, { type: 'null' }] };
  return { anyOf: [{ ...schema, required: ['model'] }] };
}

/**
 * A connect body in the document: one branch per provider, with its type, its credentials and the
 * settings it takes, so that a body the service refuses for its provider is invalid by the document.
 */
export const connectSchema: SchemaRefinement = (schema, resolve) => {
  const settingsRef = ((schema.properties as Record<string, JsonSchema>).settings.anyOf as JsonSchema[])[0].$ref as string;
  const settings = resolve(settingsRef);
  return {
    ...schema,
    oneOf: (Object.entries(PROVIDERS_BY_TYPE) as Array<[IntegrationType, IntegrationProvider[]]>).flatMap(([type, providers]) =>
      providers.map((provider) => ({
        title: provider,
        properties: {
          type: { const: type },
          provider: { const: provider },
          credentials: credentialsSchema(provider),
          settings: providerSettings(type, provider, settings),
        },
        ...(provider === IntegrationProvider.openai_compatible ? { required: ['settings'] } : {}),
      })),
    ),
  };
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
    const problem = credentialProblem(value, field.kind);
    if (problem) throw new ApiError('parameter_invalid', `${param} ${problem}`, { param });
    valid[field.name] = value as string;
  }
  // The last 4 characters, not UTF-16 units: half a surrogate pair is no text PostgreSQL can store (a 500, found by the OpenAPI conformance test).
  return { credentials: valid, hint: [...valid[spec.hintFrom]].slice(-4).join('') };
}

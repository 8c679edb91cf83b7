import type { IntegrationProvider } from './integration-kinds';

/**
 * What each provider needs to connect, named as the provider's own docs name it, in snake_case:
 * credentials are opaque client JSON, so the REST adapter passes their keys through unchanged and
 * GraphQL and REST take the same names. Free of server code: the workspace's connect form
 * (src/web/workspace/integrations-api.ts) asks for exactly these fields. integration-credentials.ts
 * checks each kind's shape.
 */
export type FieldKind =
  'text' | 'secret' | 'token' | 'header' | 'https_url' | 'http_url' | 'deployment_name' | 'hostname' | 'email' | 'guid' | 'user_principal_name';

export interface CredentialField {
  name: string;
  kind: FieldKind;
}

export interface ProviderCredentials {
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
      { name: 'client_id', kind: 'header' },
    ],
    hintFrom: 'private_key',
  },
  // An API-only user (its e-mail user name and secret) and the tracking identifier.
  autotask: {
    fields: [
      { name: 'username', kind: 'email' },
      { name: 'secret', kind: 'token' },
      { name: 'integration_code', kind: 'header' },
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
  // An Entra ID app registration (client credentials) in the customer's tenant, and the mailbox it
  // acts for: app-only Microsoft Graph has no signed-in user, so every call names one.
  microsoft365: {
    fields: [
      { name: 'tenant_id', kind: 'guid' },
      { name: 'client_id', kind: 'guid' },
      { name: 'client_secret', kind: 'secret' },
      { name: 'mailbox', kind: 'user_principal_name' },
    ],
    hintFrom: 'client_secret',
  },
  // Partner Center's referrals API takes app+user authentication only: an Entra ID app registered
  // in Partner Center, and a refresh token of a user with the Referrals admin (or user) role that
  // the app redeems for access tokens (the token endpoint rotates it; the newest is kept).
  partner_center: {
    fields: [
      { name: 'tenant_id', kind: 'guid' },
      { name: 'client_id', kind: 'guid' },
      { name: 'client_secret', kind: 'secret' },
      { name: 'refresh_token', kind: 'token' },
    ],
    hintFrom: 'client_secret',
  },
  // An OpenAI API key (a project or service-account key), sent as a bearer token.
  openai: { fields: [{ name: 'api_key', kind: 'token' }], hintFrom: 'api_key' },
  // One of an Azure OpenAI resource's two keys (sent in its api-key header), the resource's endpoint
  // (https://{resource}.openai.azure.com) and the name of a model deployment in it.
  azure_openai: {
    fields: [
      { name: 'api_key', kind: 'token' },
      { name: 'endpoint', kind: 'https_url' },
      { name: 'deployment', kind: 'deployment_name' },
    ],
    hintFrom: 'api_key',
  },
  // A Chat Completions server's base URL (the part before /chat/completions, e.g.
  // http://ollama.internal:11434/v1) and its bearer key. Every field is required, so a server
  // without authentication (Ollama, llama.cpp's server) takes any value of 8 or more characters.
  openai_compatible: {
    fields: [
      { name: 'base_url', kind: 'http_url' },
      { name: 'api_key', kind: 'token' },
    ],
    hintFrom: 'api_key',
  },
};

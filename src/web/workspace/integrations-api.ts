import { graphql } from './api';
import { CREDENTIALS_BY_PROVIDER, type CredentialField, type FieldKind } from '../../modules/integrations/credential-fields';
import { IntegrationProvider, IntegrationType, PROVIDERS_BY_TYPE, RUN_PROVIDERS } from '../../modules/integrations/integration-kinds';
import { isSyncProvider, type PsaProvider } from '../../modules/integrations/providers/crm-client';
import { DELIVERY_RECORDS } from '../../modules/integrations/sync/delivery-records';

/**
 * What the Integrations pages read and change through /graphql. The providers, their grouping by
 * type and their credential fields are the service's own (credential-fields.ts and
 * integration-kinds.ts hold no server code), so the connect form cannot drift from what the API takes;
 * likewise the settings form offers the delivery records of sync/delivery-records.ts.
 */

export { IntegrationProvider, IntegrationType };
export type { CredentialField };

export type Status = 'connected' | 'error' | 'disconnected';

export interface StageMap {
  prospecting: string;
  qualification: string;
  proposal: string;
  negotiation: string;
  closedWon: string;
  closedLost: string;
}

export interface Integration {
  id: string;
  type: IntegrationType;
  provider: IntegrationProvider;
  status: Status;
  name: string | null;
  credentialsHint: string | null;
  connectedAt: string;
  disconnectedAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  lastSyncedAt: string | null;
  settings: { stageMap: StageMap | null; deliveryRecord: string | null; salesRep: string | null; model: string | null };
}

export interface SyncFailure {
  id: string;
  direction: 'push' | 'pull';
  objectType: string;
  objectId: string | null;
  externalId: string | null;
  message: string;
}

export interface SyncRun {
  id: string;
  status: 'running' | 'succeeded' | 'failed';
  trigger: string;
  pushed: number;
  pulled: number;
  failed: number;
  toPush: number;
  startedAt: string;
  finishedAt: string | null;
  error: string | null;
  failures: SyncFailure[];
}

interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** The names people know the providers by (a Record over the enum: a new provider must be named here). */
export const PROVIDER_NAMES: Record<IntegrationProvider, string> = {
  salesforce: 'Salesforce',
  hubspot: 'HubSpot',
  connectwise: 'ConnectWise PSA',
  autotask: 'Autotask',
  halopsa: 'HaloPSA',
  microsoft365: 'Microsoft 365',
  partner_center: 'Partner Center',
  openai: 'OpenAI',
  azure_openai: 'Azure OpenAI',
  openai_compatible: 'OpenAI-compatible server',
};

export const TYPE_NAMES: Record<IntegrationType, string> = {
  crm: 'CRM',
  psa: 'PSA',
  m365: 'Microsoft 365',
  llm: 'Model providers',
};

/** What connecting each type does, for the chooser. */
export const TYPE_PURPOSES: Record<IntegrationType, string> = {
  crm: 'Leads and deals sync both ways.',
  psa: 'Leads and deals are pushed; a won deal becomes a delivery record.',
  m365: "Agents' follow-ups go to a mailbox; Partner Center takes live co-sell referrals.",
  llm: 'Your own model writes for the agents.',
};

/** The types in the order the chooser shows them, each with its providers (the service's own grouping). */
export const PROVIDER_GROUPS = (Object.keys(PROVIDERS_BY_TYPE) as IntegrationType[]).map((type) => ({ type, providers: PROVIDERS_BY_TYPE[type] }));

export const credentialFields = (provider: IntegrationProvider): CredentialField[] => CREDENTIALS_BY_PROVIDER[provider].fields;

/** Whether the sync engine runs the provider's integrations (Sync now applies). */
export const syncs = (provider: IntegrationProvider): boolean => RUN_PROVIDERS.includes(provider);

/** Secrets are typed into password inputs and never shown again. */
export const isSecret = (kind: FieldKind): boolean => kind === 'secret' || kind === 'token';

/** The input type per kind of credential: masks secrets, lets phones offer the right keyboard. */
export function inputType(kind: FieldKind): 'password' | 'url' | 'email' | 'text' {
  if (isSecret(kind)) return 'password';
  if (kind === 'https_url' || kind === 'http_url') return 'url';
  if (kind === 'email' || kind === 'user_principal_name') return 'email';
  return 'text';
}

const ACRONYMS: Record<string, string> = { id: 'ID', url: 'URL', api: 'API' };
/** A credential's label from its API name: "instance_url" → "Instance URL", "api_key" → "API key". */
export const fieldLabel = (name: string): string =>
  name
    .split('_')
    .map((word, index) => ACRONYMS[word] ?? (index === 0 ? word[0].toUpperCase() + word.slice(1) : word))
    .join(' ');

/** An example of the value each kind takes, as the field's hint. */
export const FIELD_HINTS: Partial<Record<FieldKind, string>> = {
  https_url: 'An https URL, such as https://acme.example.com',
  http_url: 'The base URL before /chat/completions, such as http://ollama.internal:11434/v1',
  hostname: 'A host name, such as na.myconnectwise.net',
  guid: 'A GUID, such as 00000000-0000-0000-0000-000000000000',
  user_principal_name: 'The mailbox the app acts for, such as jane.doe@contoso.com',
  deployment_name: 'A deployment name, such as gpt-4o-mini',
};

const INTEGRATION = `id type provider status name credentialsHint connectedAt disconnectedAt lastError lastErrorAt lastSyncedAt
  settings { stageMap { prospecting qualification proposal negotiation closedWon closedLost } deliveryRecord salesRep model }`;
const RUN =
  'id status trigger pushed pulled failed toPush startedAt finishedAt error failures(limit: 20) { id direction objectType objectId externalId message }';

export async function listIntegrations(cursor: string | null): Promise<Page<Integration>> {
  const data = await graphql<{ integrations: Page<Integration> }>(
    `query Integrations($cursor: String) { integrations(filter: { limit: 20, cursor: $cursor }) { data { ${INTEGRATION} } nextCursor } }`,
    { cursor },
  );
  return data.integrations;
}

/** The integrations that hold their provider's place (connected or in error): at most one per provider. */
export async function activeIntegrations(): Promise<Integration[]> {
  const data = await graphql<{ connected: Page<Integration>; error: Page<Integration> }>(
    `query Active { connected: integrations(filter: { status: connected, limit: 100 }) { data { id provider status } nextCursor }
      error: integrations(filter: { status: error, limit: 100 }) { data { id provider status } nextCursor } }`,
  );
  return [...data.connected.data, ...data.error.data];
}

export async function loadIntegration(id: string, cursor: string | null): Promise<{ integration: Integration; runs: Page<SyncRun> }> {
  const data = await graphql<{ integration: Integration; integrationSyncRuns: Page<SyncRun> }>(
    `query Integration($id: ID!, $cursor: String) {
      integration(id: $id) { ${INTEGRATION} }
      integrationSyncRuns(id: $id, filter: { limit: 10, cursor: $cursor }) { data { ${RUN} } nextCursor }
    }`,
    { id, cursor },
  );
  return { integration: data.integration, runs: data.integrationSyncRuns };
}

export interface Connection {
  provider: IntegrationProvider;
  name: string;
  credentials: Record<string, string>;
  /** Model providers only: settings.model (empty for the provider's default). */
  model: string;
}

export async function connectIntegration(connection: Connection): Promise<Integration> {
  const type = PROVIDER_GROUPS.find((group) => group.providers.includes(connection.provider))!.type;
  const model = connection.model.trim();
  const data = await graphql<{ connectIntegration: Integration }>(
    `mutation Connect($input: IntegrationConnectInput!) { connectIntegration(input: $input) { ${INTEGRATION} } }`,
    {
      input: {
        type,
        provider: connection.provider,
        name: connection.name.trim() || null,
        credentials: connection.credentials,
        ...(model ? { settings: { model } } : {}),
      },
    },
  );
  return data.connectIntegration;
}

/** Which settings apply to the provider, as the service's settingsFor decides them. */
export interface ApplicableSettings {
  stageMap: boolean;
  /** A PSA's delivery records, its default first; null when the provider has none. */
  deliveryRecords: readonly string[] | null;
  salesRep: boolean;
  model: boolean;
}

export function applicableSettings(integration: Pick<Integration, 'type' | 'provider'>): ApplicableSettings {
  const { provider } = integration;
  return {
    stageMap: isSyncProvider(provider),
    deliveryRecords: provider in DELIVERY_RECORDS ? DELIVERY_RECORDS[provider as PsaProvider] : null,
    salesRep: provider === IntegrationProvider.connectwise,
    model: integration.type === IntegrationType.llm,
  };
}

/** IntegrationUpdateInput: fields left out keep their value; a null setting takes the default again. */
export interface IntegrationUpdate {
  name: string | null;
  settings?: { stageMap?: StageMap; deliveryRecord?: string; salesRep?: string | null; model?: string | null };
}

export async function updateIntegration(id: string, input: IntegrationUpdate): Promise<Integration> {
  const data = await graphql<{ updateIntegration: Integration }>(
    `mutation Update($id: ID!, $input: IntegrationUpdateInput!) { updateIntegration(id: $id, input: $input) { ${INTEGRATION} } }`,
    { id, input },
  );
  return data.updateIntegration;
}

export async function syncIntegration(id: string): Promise<{ id: string }> {
  const data = await graphql<{ syncIntegration: { id: string } }>(`mutation Sync($id: ID!) { syncIntegration(id: $id) { id } }`, { id });
  return data.syncIntegration;
}

export async function disconnectIntegration(id: string): Promise<Integration> {
  const data = await graphql<{ disconnectIntegration: Integration }>(`mutation Disconnect($id: ID!) { disconnectIntegration(id: $id) { ${INTEGRATION} } }`, {
    id,
  });
  return data.disconnectIntegration;
}

/** "HubSpot" or "HubSpot · Acme portal". */
export const integrationTitle = (integration: Pick<Integration, 'provider' | 'name'>): string =>
  integration.name ? `${PROVIDER_NAMES[integration.provider]} · ${integration.name}` : PROVIDER_NAMES[integration.provider];

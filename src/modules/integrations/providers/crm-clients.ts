import type { Config } from '../../../config';
import type { HostResolver } from '../../../http/address-guard';
import type { CrmClientFactory } from '../sync/sync-worker';
import type { IntegrationSettings } from '../sync/stage-map';
import { isSyncProvider, type CrmClient, type CrmClientOptions, type SyncProvider } from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { createAutotaskClient } from './autotask-client';
import { createConnectwiseClient } from './connectwise-client';
import { createHaloPsaClient } from './halopsa-client';
import { createHubSpotClient } from './hubspot-client';
import { createSalesforceClient } from './salesforce-client';

type MakeClient = (credentials: Record<string, string>, settings: ProviderSettings, options: CrmClientOptions, integration: IntegrationSettings) => CrmClient;

/** Each provider's client, with what of the integration's settings it reads (a PSA's delivery record, ConnectWise's fallback sales rep). */
const CLIENTS: Record<SyncProvider, MakeClient> = {
  hubspot: (credentials, settings, options) => createHubSpotClient(credentials, settings, options),
  salesforce: (credentials, settings, options) => createSalesforceClient(credentials, settings, options),
  connectwise: (credentials, settings, options, { deliveryRecord, salesRep }) =>
    createConnectwiseClient(credentials, settings, { ...options, deliveryRecord, salesRep }),
  autotask: (credentials, settings, options, { deliveryRecord }) =>
    createAutotaskClient(credentials, settings, { ...options, deliveryRecord: deliveryRecord ?? undefined }),
  halopsa: (credentials, settings, options, { deliveryRecord }) => createHaloPsaClient(credentials, settings, { ...options, deliveryRecord }),
};

/** The sync engine's clients: one per run, made from the integration's decrypted credentials. */
export function crmClientFactory(settings: ProviderSettings, options: CrmClientOptions = {}): CrmClientFactory {
  return (integration, credentials) => {
    if (!isSyncProvider(integration.provider)) throw new Error(`${integration.provider} has no sync client: only CRM and PSA integrations sync`);
    return CLIENTS[integration.provider](credentials, settings, options, integration.settings);
  };
}

/** The configured provider hosts and deadline; in production the hosts are the real ones and pass the address guard too. */
export const providerSettingsOf = (config: Config, resolve: HostResolver): ProviderSettings => ({
  ...config.providers,
  resolve,
  guardConfiguredUrls: config.isProduction,
});

import type { Config } from '../../../config';
import type { HostResolver } from '../../webhooks/url-guard';
import type { CrmClientFactory } from '../sync/sync-worker';
import type { CrmClientOptions } from './crm-client';
import type { ProviderSettings } from './crm-verification';
import { createHaloPsaClient } from './halopsa-client';
import { createHubSpotClient } from './hubspot-client';
import { createSalesforceClient } from './salesforce-client';

/** The sync engine's clients: one per run, made from the integration's decrypted credentials. */
export function crmClientFactory(settings: ProviderSettings, options: CrmClientOptions = {}): CrmClientFactory {
  return (integration, credentials) => {
    if (integration.provider === 'hubspot') return createHubSpotClient(credentials, settings, options);
    if (integration.provider === 'salesforce') return createSalesforceClient(credentials, settings, options);
    if (integration.provider === 'halopsa') return createHaloPsaClient(credentials, settings, { ...options, deliveryRecord: integration.settings.deliveryRecord });
    throw new Error(`${integration.provider} has no sync client: only CRM and PSA integrations sync`);
  };
}

/** The configured provider hosts and deadline; in production the hosts are the real ones and pass the address guard too. */
export const providerSettingsOf = (config: Config, resolve: HostResolver): ProviderSettings => ({
  ...config.providers,
  resolve,
  guardConfiguredUrls: config.isProduction,
});

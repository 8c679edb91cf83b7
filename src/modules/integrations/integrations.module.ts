import { defineModule } from '../module';
import { Integration } from './integration.entity';
import { IntegrationResolver } from './integration.resolver';
import { IntegrationService } from './integration.service';
import type { ProviderSettings } from './providers/crm-verification';
import type { ServiceSettings } from '../module';

const INTEGRATION_EVENTS = ['integration.connected', 'integration.disconnected', 'integration.error'] as const;

declare module '../../events/event-catalog' {
  interface EventTypes extends Record<(typeof INTEGRATION_EVENTS)[number], true> {}
}

declare module '../module' {
  interface Services {
    integrations: IntegrationService;
  }
}

/** The configured provider hosts and deadline; in production the hosts are the real ones and pass the address guard too. */
const providerSettings = (settings: ServiceSettings): ProviderSettings => ({
  ...settings.config.providers,
  resolve: settings.resolveHost,
  guardConfiguredUrls: settings.config.isProduction,
});

export const integrationsModule = defineModule({
  name: 'integrations',
  entities: [Integration],
  events: INTEGRATION_EVENTS,
  resolvers: [IntegrationResolver],
  conflicts: {
    integrations_connected_provider_unique: {
      param: 'provider',
      message: 'An integration with this provider is already connected in this mode; disconnect it first',
    },
  },
  routes: [
    { method: 'GET', path: '/v1/integrations', summary: 'List configured integrations', operation: { type: 'query', field: 'integrations', query: 'filter' } },
    { method: 'GET', path: '/v1/integrations/:id', summary: 'Retrieve an integration', operation: { type: 'query', field: 'integration' } },
    {
      method: 'POST',
      path: '/v1/integrations',
      summary: 'Connect an integration (CRM, PSA or M365)',
      operation: { type: 'mutation', field: 'connectIntegration', body: 'input' },
      errors: ['resource_conflict', 'integration_auth_failed', 'integration_unreachable'],
      status: 201,
    },
    { method: 'DELETE', path: '/v1/integrations/:id', summary: 'Disconnect an integration', operation: { type: 'mutation', field: 'deleteIntegration' } },
  ],
  services: { integrations: ({ em, events, settings }) => new IntegrationService(em, settings.encryptionKey, events, providerSettings(settings)) },
});

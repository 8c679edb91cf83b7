import { defineModule } from '../module';
import type { CrmClientOptions } from './providers/crm-client';
import { crmClientFactory } from './providers/crm-clients';
import { mailboxClientFactory } from './providers/m365-client';
import { actionFanOut } from './sync/action-fan-out';
import { syncFanOut } from './sync/sync-fan-out';
import { SyncWorker, SyncWorkerOptions } from './sync/sync-worker';
import { Integration } from './integration.entity';
import { IntegrationResolver } from './integration.resolver';
import { IntegrationService } from './integration.service';
import { ModelService } from './model.service';
import { ActionDeliveryService } from './sync/action-delivery';
import { ActionDeliveryResolver } from './sync/action-delivery.resolver';
import { SyncFailure, SyncLink, SyncPending, SyncRun } from './sync/sync.entities';
import { SyncResolver } from './sync/sync.resolver';
import { SyncService } from './sync/sync.service';

const INTEGRATION_EVENTS = [
  'integration.connected',
  'integration.updated',
  'integration.disconnected',
  'integration.error',
  'integration.sync_succeeded',
  'integration.sync_failed',
] as const;

declare module '../../events/event-catalog' {
  interface EventTypes extends Record<(typeof INTEGRATION_EVENTS)[number], true> {}
}

declare module '../module' {
  interface Services {
    integrations: IntegrationService;
    integrationSyncs: SyncService;
    actionDeliveries: ActionDeliveryService;
    models: ModelService;
  }
}

export const integrationsModule = defineModule({
  name: 'integrations',
  entities: [Integration, SyncRun, SyncFailure, SyncLink, SyncPending],
  events: INTEGRATION_EVENTS,
  resolvers: [IntegrationResolver, SyncResolver, ActionDeliveryResolver],
  conflicts: {
    integrations_connected_provider_unique: {
      param: 'provider',
      message: 'An integration with this provider is already connected in this mode; disconnect it first',
    },
    integration_sync_runs_one_running: {
      param: 'id',
      message: 'A sync run of this integration is already running; wait for it to finish (GET /v1/integrations/{id}/sync_runs)',
    },
  },
  routes: [
    { method: 'GET', path: '/v1/integrations', summary: 'List configured integrations', operation: { type: 'query', field: 'integrations', query: 'filter' } },
    { method: 'GET', path: '/v1/integrations/:id', summary: 'Retrieve an integration', operation: { type: 'query', field: 'integration' } },
    {
      method: 'POST',
      path: '/v1/integrations',
      summary: 'Connect an integration (CRM, PSA, M365 or a model provider)',
      operation: { type: 'mutation', field: 'connectIntegration', body: 'input' },
      errors: ['resource_conflict', 'integration_auth_failed', 'integration_unreachable'],
      status: 201,
    },
    {
      method: 'POST',
      path: '/v1/integrations/:id',
      summary: "Update an integration's name or settings (stage_map, delivery_record, sales_rep, model)",
      operation: { type: 'mutation', field: 'updateIntegration', body: 'input' },
      errors: ['resource_conflict'],
    },
    { method: 'DELETE', path: '/v1/integrations/:id', summary: 'Disconnect an integration', operation: { type: 'mutation', field: 'deleteIntegration' } },
    {
      method: 'POST',
      path: '/v1/integrations/:id/sync',
      summary: 'Start a sync run now',
      operation: { type: 'mutation', field: 'syncIntegration' },
      errors: ['resource_conflict'],
      // Accepted: the run goes on in the background; its progress is in GET …/sync_runs.
      status: 202,
    },
    {
      method: 'GET',
      path: '/v1/integrations/:id/sync_runs',
      summary: "List an integration's sync runs, newest first",
      operation: { type: 'query', field: 'integrationSyncRuns', query: 'filter' },
    },
  ],
  fanOuts: () => [syncFanOut, actionFanOut],
  workers: {
    sync: (
      { orm, logger, servicesFor, providers, config, consumers, conflicts },
      overrides: Partial<SyncWorkerOptions> & { clientOptions?: CrmClientOptions } = {},
    ) =>
      new SyncWorker({
        orm,
        logger: logger.child({ component: 'sync' }),
        servicesFor,
        clients: crmClientFactory(providers, overrides.clientOptions),
        mailboxes: mailboxClientFactory(providers, overrides.clientOptions),
        publicUrl: config.publicUrl,
        consumers,
        conflicts,
        intervalMs: config.sync.intervalMs,
        leaseMs: config.sync.leaseMs,
        ...overrides,
      }),
  },
  services: {
    integrations: ({ em, events, settings }) => new IntegrationService(em, settings.encryptionKey, events, settings.providers),
    integrationSyncs: ({ em, services }) => new SyncService(em, services.integrations),
    actionDeliveries: ({ em }) => new ActionDeliveryService(em),
    models: ({ em, services, settings }) => new ModelService(em, services.integrations, settings.providers),
  },
});

import { defineModule } from '../module';
import { DispatcherOptions, WebhookDispatcher } from './webhook-dispatcher';
import { webhookFanOut } from './webhook-fan-out';
import { WebhookAttempt, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookOperationsResolver } from './webhook-operations.resolver';
import { WebhookOperationsService } from './webhook-operations.service';
import { Webhook } from './webhook.entity';
import { WebhookResolver } from './webhook.resolver';
import { WebhookService } from './webhook.service';

/** Sent to one endpoint only, by POST /v1/webhooks/{id}/test: never fanned out, and no subscription names it (nor does "*"). */
const WEBHOOK_DIRECT_EVENTS = ['webhook.test'] as const;

declare module '../../events/event-catalog' {
  interface EventTypes extends Record<(typeof WEBHOOK_DIRECT_EVENTS)[number], true> {}
}

declare module '../module' {
  interface Services {
    webhooks: WebhookService;
    webhookOperations: WebhookOperationsService;
  }
}

export const webhooksModule = defineModule({
  name: 'webhooks',
  entities: [Webhook, WebhookDelivery, WebhookAttempt],
  directEvents: WEBHOOK_DIRECT_EVENTS,
  resolvers: [WebhookResolver, WebhookOperationsResolver],
  routes: [
    { method: 'GET', path: '/v1/webhooks', summary: 'List webhook subscriptions', operation: { type: 'query', field: 'webhooks', query: 'filter' } },
    { method: 'GET', path: '/v1/webhooks/:id', summary: 'Retrieve a webhook subscription', operation: { type: 'query', field: 'webhook' } },
    {
      method: 'POST',
      path: '/v1/webhooks',
      summary: 'Create a webhook subscription',
      operation: { type: 'mutation', field: 'createWebhook', body: 'input' },
      errors: ['url_not_allowed'],
      status: 201,
    },
    {
      method: 'PUT',
      path: '/v1/webhooks/:id',
      summary: 'Update a webhook URL or events',
      operation: { type: 'mutation', field: 'updateWebhook', body: 'input' },
      errors: ['url_not_allowed'],
    },
    { method: 'DELETE', path: '/v1/webhooks/:id', summary: 'Delete a webhook subscription', operation: { type: 'mutation', field: 'deleteWebhook' } },
    {
      method: 'GET',
      path: '/v1/webhooks/:id/attempts',
      summary: "List a webhook subscription's delivery attempts, newest first",
      operation: { type: 'query', field: 'webhookAttempts', query: 'filter' },
    },
    {
      method: 'POST',
      path: '/v1/webhooks/:id/test',
      summary: 'Send a webhook.test event to this subscription only',
      operation: { type: 'mutation', field: 'testWebhook' },
    },
    {
      method: 'POST',
      path: '/v1/webhooks/:id/resend',
      summary: 'Send an event to this subscription again, now',
      operation: { type: 'mutation', field: 'resendWebhookEvent', body: 'input' },
    },
    {
      method: 'POST',
      path: '/v1/webhooks/:id/roll_secret',
      summary: 'Roll the signing secret (the old one signs beside it until it expires)',
      operation: { type: 'mutation', field: 'rollWebhookSecret', body: 'input' },
    },
  ],
  fanOuts: ({ webhookRetrySchedule, events }) => [webhookFanOut(webhookRetrySchedule[0], events)],
  workers: {
    webhooks: ({ orm, logger, serializer, config, resolveHost, metrics, consumers }, overrides?: Partial<DispatcherOptions>) =>
      new WebhookDispatcher({
        orm,
        logger: logger.child({ component: 'webhooks' }),
        serializer,
        encryptionKey: config.encryptionKey!,
        retrySchedule: config.webhookRetrySchedule,
        allowPrivateUrls: config.webhookAllowPrivateUrls,
        resolveHost,
        userAgent: `sales-pipeline-api-webhooks/${config.version}`,
        metrics,
        consumers,
        ...overrides,
      }),
  },
  services: {
    webhooks: ({ em, settings }) =>
      new WebhookService(em, {
        allowPrivateUrls: settings.config.webhookAllowPrivateUrls,
        resolveHost: settings.resolveHost,
        encryptionKey: settings.encryptionKey,
        events: settings.events,
      }),
    webhookOperations: ({ em, services, events, settings }) => new WebhookOperationsService(em, services.webhooks, events, settings),
  },
});

import { defineModule } from '../module';
import { WebhookAttempt, WebhookDelivery } from './webhook-delivery.entity';
import { Webhook } from './webhook.entity';
import { WebhookResolver } from './webhook.resolver';
import { WebhookService } from './webhook.service';

declare module '../module' {
  interface Services {
    webhooks: WebhookService;
  }
}

export const webhooksModule = defineModule({
  name: 'webhooks',
  entities: [Webhook, WebhookDelivery, WebhookAttempt],
  resolvers: [WebhookResolver],
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
  ],
  services: {
    webhooks: ({ em, settings }) =>
      new WebhookService(em, {
        allowPrivateUrls: settings.config.webhookAllowPrivateUrls,
        resolveHost: settings.resolveHost,
        encryptionKey: settings.encryptionKey,
      }),
  },
});

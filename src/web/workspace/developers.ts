import { graphql } from './api';
import { workspaceRoot } from './ui';

/**
 * The Developers section's reads and changes over /graphql: webhook subscriptions and their
 * attempts, events, and request logs. Field lists are the schema's (schema.graphql).
 */

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookAttempt {
  id: string;
  eventId: string;
  deliveryId: string;
  attemptNumber: number;
  url: string;
  responseStatus: number | null;
  latencyMs: number;
  error: string | null;
  responseSnippet: string | null;
  succeeded: boolean;
  createdAt: string;
}

export interface ApiEvent {
  id: string;
  type: string;
  apiVersion: string;
  livemode: boolean;
  createdAt: string;
  data: { object?: { id?: string; object?: string } & Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

export interface RequestLog {
  id: string;
  method: string;
  route: string;
  operationName: string | null;
  status: number;
  requestId: string;
  keyPrefix: string | null;
  latencyMs: number;
  createdAt: string;
}

export interface ListPage<T> {
  data: T[];
  nextCursor: string | null;
}

/** What a subscription's form edits. */
export interface WebhookFields {
  url: string;
  description: string | null;
  events: string[];
}

const WEBHOOK = 'id url events description status disabledReason createdAt updatedAt';
const ATTEMPT = 'id eventId deliveryId attemptNumber url responseStatus latencyMs error responseSnippet succeeded createdAt';
const EVENT = 'id type apiVersion livemode createdAt data';
const REQUEST_LOG = 'id method route operationName status requestId keyPrefix latencyMs createdAt';

/** "All events": a subscription to `*` receives every event type a subscription may name, new ones too. */
export const ALL_EVENTS = '*';

/**
 * The event types the page's shell lists (`data-event-types`), from the events module's own
 * catalogue on the server, so the page offers exactly what the API accepts.
 */
export const eventTypes = (): string[] => (workspaceRoot().dataset.eventTypes ?? '').split(' ').filter(Boolean);

export async function listWebhooks(cursor: string | null): Promise<ListPage<Webhook>> {
  const data = await graphql<{ webhooks: ListPage<Webhook> }>(
    `query Webhooks($cursor: String) { webhooks(filter: { limit: 20, cursor: $cursor }) { data { ${WEBHOOK} } nextCursor } }`,
    { cursor },
  );
  return data.webhooks;
}

export async function getWebhook(id: string, cursor: string | null): Promise<{ webhook: Webhook; attempts: ListPage<WebhookAttempt> }> {
  const data = await graphql<{ webhook: Webhook & { attempts: ListPage<WebhookAttempt> } }>(
    `query Webhook($id: ID!, $cursor: String) { webhook(id: $id) { ${WEBHOOK} attempts(filter: { limit: 20, cursor: $cursor }) { data { ${ATTEMPT} } nextCursor } } }`,
    { id, cursor },
  );
  const { attempts, ...webhook } = data.webhook;
  return { webhook, attempts };
}

export async function createWebhook(fields: WebhookFields): Promise<Webhook & { secret: string }> {
  const data = await graphql<{ createWebhook: Webhook & { secret: string } }>(
    `mutation CreateWebhook($input: WebhookCreateInput!) { createWebhook(input: $input) { ${WEBHOOK} secret } }`,
    { input: fields },
  );
  return data.createWebhook;
}

export async function updateWebhook(id: string, input: Partial<WebhookFields> & { status?: Webhook['status'] }): Promise<Webhook> {
  const data = await graphql<{ updateWebhook: Webhook }>(
    `mutation UpdateWebhook($id: ID!, $input: WebhookUpdateInput!) { updateWebhook(id: $id, input: $input) { ${WEBHOOK} } }`,
    { id, input },
  );
  return data.updateWebhook;
}

export async function deleteWebhook(id: string): Promise<void> {
  await graphql(`mutation DeleteWebhook($id: ID!) { deleteWebhook(id: $id) { id deleted } }`, { id });
}

export async function rollWebhookSecret(id: string): Promise<string> {
  const data = await graphql<{ rollWebhookSecret: { secret: string } }>(`mutation RollSecret($id: ID!) { rollWebhookSecret(id: $id) { id secret } }`, { id });
  return data.rollWebhookSecret.secret;
}

export async function testWebhook(id: string): Promise<ApiEvent> {
  const data = await graphql<{ testWebhook: ApiEvent }>(`mutation TestWebhook($id: ID!) { testWebhook(id: $id) { ${EVENT} } }`, { id });
  return data.testWebhook;
}

export async function resendWebhookEvent(id: string, eventId: string): Promise<void> {
  await graphql(`mutation Resend($id: ID!, $eventId: ID!) { resendWebhookEvent(id: $id, input: { eventId: $eventId }) { id } }`, { id, eventId });
}

export async function listEvents(type: string, cursor: string | null): Promise<ListPage<ApiEvent>> {
  const data = await graphql<{ events: ListPage<ApiEvent> }>(
    `query Events($type: String, $cursor: String) { events(filter: { limit: 20, type: $type, cursor: $cursor }) { data { ${EVENT} } nextCursor } }`,
    { type: type || null, cursor },
  );
  return data.events;
}

export async function getEvent(id: string): Promise<ApiEvent> {
  const data = await graphql<{ event: ApiEvent }>(`query Event($id: ID!) { event(id: $id) { ${EVENT} } }`, { id });
  return data.event;
}

/** The most attempt pages read per subscription when looking for one event's attempts (100 each). */
const MAX_ATTEMPT_PAGES = 5;

/**
 * Every attempt to send one event, to any subscription, newest first. The API lists attempts per
 * subscription, newest first, and none is older than its event: each subscription's attempts are
 * read page by page until they are older than the event (or MAX_ATTEMPT_PAGES pages were read).
 */
export async function attemptsOfEvent(event: ApiEvent): Promise<Array<WebhookAttempt & { webhookId: string }>> {
  const found: Array<WebhookAttempt & { webhookId: string }> = [];
  const since = new Date(event.createdAt).getTime();
  let webhookCursor: string | null = null;
  do {
    const page: ListPage<{ id: string }> = (
      await graphql<{ webhooks: ListPage<{ id: string }> }>(
        `query Hooks($cursor: String) { webhooks(filter: { limit: 100, cursor: $cursor }) { data { id } nextCursor } }`,
        { cursor: webhookCursor },
      )
    ).webhooks;
    for (const webhook of page.data) {
      let cursor: string | null = null;
      for (let read = 0; read < MAX_ATTEMPT_PAGES; read++) {
        const attempts: ListPage<WebhookAttempt> = (
          await graphql<{ webhookAttempts: ListPage<WebhookAttempt> }>(
            `query Attempts($id: ID!, $cursor: String) { webhookAttempts(id: $id, filter: { limit: 100, cursor: $cursor }) { data { ${ATTEMPT} } nextCursor } }`,
            { id: webhook.id, cursor },
          )
        ).webhookAttempts;
        found.push(...attempts.data.filter((attempt) => attempt.eventId === event.id).map((attempt) => ({ ...attempt, webhookId: webhook.id })));
        const oldest = attempts.data[attempts.data.length - 1];
        cursor = attempts.nextCursor;
        if (!cursor || !oldest || new Date(oldest.createdAt).getTime() < since) break;
      }
    }
    webhookCursor = page.nextCursor;
  } while (webhookCursor);
  return found.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

export async function listRequestLogs(errorsOnly: boolean, cursor: string | null): Promise<ListPage<RequestLog>> {
  const data = await graphql<{ requestLogs: ListPage<RequestLog> }>(
    `query RequestLogs($errors: Boolean, $cursor: String) { requestLogs(filter: { limit: 50, errors: $errors, cursor: $cursor }) { data { ${REQUEST_LOG} } nextCursor } }`,
    // Unchecked means every request, not only the successful ones (errors: false).
    { errors: errorsOnly ? true : null, cursor },
  );
  return data.requestLogs;
}

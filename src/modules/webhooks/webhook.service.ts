import { randomBytes } from 'node:crypto';
import { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { decryptJson, encryptJson } from '../../common/crypto';
import { ApiError, notFound } from '../../common/api-error';
import { isId } from '../../common/ids';
import { findPage, Page } from '../../common/pagination';
import { createScoped } from '../../db/tenant';
import { tenantQuery } from '../../db/tenant-sql';
import { ALL_EVENTS, EventCatalog } from '../../events/event-catalog';
import { checkPublicUrl, HostResolver, UrlRefused } from '../../http/address-guard';
import { webhookUrlProblem } from './url-guard';
import { WebhookAttempt } from './webhook-delivery.entity';
import { CreatedWebhook, Webhook, WebhookStatus } from './webhook.entity';
import {
  MAX_ENABLED_WEBHOOKS,
  WebhookAttemptListInput,
  WebhookAttemptStatus,
  WebhookCreateInput,
  WebhookListInput,
  WebhookUpdateInput,
} from './webhook.inputs';

export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: skip the address check (local development). */
  allowPrivateUrls: boolean;
  resolveHost: HostResolver;
  encryptionKey: Buffer;
  events: EventCatalog;
}

/** Standard Webhooks secrets: `whsec_` and base64 of 24 to 64 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `*` already means every event; listing others beside it would only mislead. */
const normalizedEvents = (events: string[]): string[] => (events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events);

/** Webhook subscriptions of one account and mode (the EntityManager is tenant-scoped). */
export class WebhookService {
  constructor(
    private readonly em: EntityManager,
    private readonly settings: WebhookSettings,
  ) {}

  async create(input: WebhookCreateInput): Promise<CreatedWebhook> {
    this.settings.events.check('events', input.events, { subscribable: true });
    await this.checkUrl(input.url);
    const secret = newSecret();
    return this.em.transactional(async () => {
      await this.lockSubscriptions();
      await this.checkRoomForOneMore();
      const webhook = createScoped(this.em, Webhook, {
        url: input.url,
        events: normalizedEvents(input.events),
        description: input.description?.trim() || null,
        status: WebhookStatus.enabled,
        secretEncrypted: encryptJson({ secret }, this.settings.encryptionKey),
      });
      await this.em.flush();
      // Only this response carries the secret; it is not a stored field of the entity.
      return Object.assign(webhook, { secret }) as CreatedWebhook;
    });
  }

  async get(id: string): Promise<Webhook> {
    const webhook = isId('wh', id) ? await this.em.findOne(Webhook, { id }) : null;
    if (!webhook) throw notFound('webhook', id);
    return webhook;
  }

  list(input: WebhookListInput = {}): Promise<Page<Webhook>> {
    return findPage(this.em, Webhook, input.status ? [{ status: input.status }] : [], input);
  }

  async update(id: string, input: WebhookUpdateInput): Promise<Webhook> {
    // Like the input's other rules, before the 404.
    if (input.events) this.settings.events.check('events', input.events, { subscribable: true });
    await this.get(id); // 404 before anything else
    if (input.url !== undefined) await this.checkUrl(input.url);
    return this.em.transactional(async () => {
      const enabling = input.status === WebhookStatus.enabled;
      // Taken before the status is read, so two re-enables cannot both see room for one.
      if (enabling) await this.lockSubscriptions();
      const webhook = await this.em.findOne(Webhook, { id }, { refresh: true });
      if (!webhook) throw notFound('webhook', id);
      // Before any change, so a refused update leaves the entity as it was.
      if (enabling && webhook.status !== WebhookStatus.enabled) await this.checkRoomForOneMore('status');
      if (input.url !== undefined) webhook.url = input.url;
      if (input.events !== undefined) webhook.events = normalizedEvents(input.events);
      if (input.description !== undefined) webhook.description = input.description?.trim() || null;
      if (input.status !== undefined && input.status !== webhook.status) {
        webhook.status = input.status;
        // A reason is kept only while the service's own decision stands; a re-enabled endpoint starts afresh.
        webhook.disabledReason = null;
        webhook.consecutiveFailures = 0;
        webhook.backoffUntil = null;
      }
      await this.em.flush();
      return webhook;
    });
  }

  /** Deletes the subscription with its pending deliveries and attempt history. */
  async delete(id: string): Promise<string> {
    const webhook = await this.get(id);
    this.em.remove(webhook);
    await this.em.flush();
    return webhook.id;
  }

  /** Attempts to send to this subscription, newest first (for dashboards), optionally only the succeeded or the failed ones. */
  attempts(webhook: Webhook, input: WebhookAttemptListInput = {}): Promise<Page<WebhookAttempt>> {
    const filters: FilterQuery<WebhookAttempt>[] = [{ webhook }];
    if (input.status) filters.push({ succeeded: input.status === WebhookAttemptStatus.succeeded });
    return findPage(this.em, WebhookAttempt, filters, input);
  }

  /** The signing secret, for code that signs deliveries. Never for a response after creation. */
  async secretOf(webhook: Webhook): Promise<string> {
    await this.em.populate(webhook, ['secretEncrypted']);
    return decryptJson<{ secret: string }>(webhook.secretEncrypted, this.settings.encryptionKey).secret;
  }

  /** Refuses a 17th enabled subscription; call it holding lockSubscriptions. */
  private async checkRoomForOneMore(param?: string): Promise<void> {
    const enabled = await this.em.count(Webhook, { status: WebhookStatus.enabled });
    if (enabled >= MAX_ENABLED_WEBHOOKS) {
      throw new ApiError(
        'parameter_invalid',
        `at most ${MAX_ENABLED_WEBHOOKS} enabled webhook subscriptions per account and mode; delete or disable one first`,
        { param },
      );
    }
  }

  /**
   * The account-and-mode lock, held to the end of the transaction: concurrent creates and
   * re-enables count the enabled subscriptions one after another, so none slips past the cap.
   */
  private async lockSubscriptions(): Promise<void> {
    await tenantQuery(this.em, "select pg_advisory_xact_lock(hashtextextended('webhooks:' || :tenantAccount || ':' || cast(:tenantLivemode as text), 0))");
  }

  private async checkUrl(url: string): Promise<void> {
    const problem = webhookUrlProblem(url);
    if (problem) throw new ApiError('parameter_invalid', problem, { param: 'url' });
    if (this.settings.allowPrivateUrls) return;
    try {
      await checkPublicUrl(url, this.settings.resolveHost);
    } catch (error) {
      if (error instanceof UrlRefused) throw new ApiError('url_not_allowed', error.message, { param: 'url' });
      throw error;
    }
  }
}

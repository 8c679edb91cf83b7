import { EntityManager, LockMode } from '@mikro-orm/postgresql';
import { recordSecurityEventAs } from '../security/security-log';
import { ApiError, notFound } from '../../common/api-error';
import { encryptJson } from '../../common/crypto';
import { isId, newId } from '../../common/ids';
import { Page } from '../../common/pagination';
import { createScoped } from '../../db/tenant';
import { tenantQuery } from '../../db/tenant-sql';
import { Event } from '../../events/event.entity';
import { EventFanOut } from '../../events/event-fan-out.entity';
import type { EventRecorder } from '../../events/event-recorder';
import type { ServiceSettings } from '../module';
import { outboxSignal } from '../../events/outbox.subscriber';
import { DeliveryStatus, WebhookAttempt, WebhookDelivery } from './webhook-delivery.entity';
import { CreatedWebhook, Webhook, WebhookStatus } from './webhook.entity';
import { DEFAULT_SECRET_OVERLAP_HOURS, WebhookAttemptListInput, WebhookResendInput, WebhookRollSecretInput } from './webhook.inputs';
import { newSecret, WebhookService } from './webhook.service';

/** The event type of POST /v1/webhooks/{id}/test: sent to that endpoint only (a direct event, see the event catalog). */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

const HOUR_MS = 3_600_000;

/**
 * What an endpoint's owner does to it besides changing it: read its attempts, send it a test event,
 * send it an event again, roll its secret. Sending goes through the dispatcher like any delivery
 * (a delivery row it claims, signs and records), so there is one sender and one attempt history.
 */
export class WebhookOperationsService {
  constructor(
    private readonly em: EntityManager,
    private readonly webhooks: WebhookService,
    private readonly recorder: EventRecorder,
    private readonly settings: Pick<ServiceSettings, 'encryptionKey' | 'events'>,
  ) {}

  /** Every attempt to send to the subscription, newest first; 404 for another tenant's. */
  async attempts(id: string, input: WebhookAttemptListInput = {}): Promise<Page<WebhookAttempt>> {
    return this.webhooks.attempts(await this.webhooks.get(id), input);
  }

  /**
   * Records a `webhook.test` event about the subscription and owes it to this subscription alone:
   * the event is written with its one delivery and taken off the fan-out's queue (which its insert
   * put it on), in one transaction.
   */
  async sendTest(id: string): Promise<Event> {
    const event = await this.em.transactional(async () => {
      const webhook = await this.sendable(id);
      const test = this.recorder.record(WEBHOOK_TEST_EVENT, webhook) as Event;
      createScoped(this.em, WebhookDelivery, { event: test, webhook });
      await this.em.flush();
      await this.em.nativeDelete(EventFanOut, { event: test.id });
      return test;
    });
    outboxSignal.emit('work');
    return event;
  }

  /**
   * Sends an event to the subscription again, now: its delivery (one per event and subscription)
   * is due again, or made when there was none. An attempt under way is left to finish; it is the
   * new attempt. Only an event the subscription receives, or was already sent, can be resent.
   */
  async resend(id: string, input: WebhookResendInput): Promise<Event> {
    const webhook = await this.webhooks.get(id);
    const event = isId('evt', input.eventId) ? await this.em.findOne(Event, { id: input.eventId }) : null;
    if (!event) throw new ApiError('resource_missing', `No such event: '${input.eventId}'`, { param: 'eventId' });
    await this.em.transactional(async () => {
      await this.sendable(webhook.id);
      const owed = await this.em.count(WebhookDelivery, { event, webhook });
      if (!owed && !this.settings.events.subscribesTo(webhook.events, event.type)) {
        throw new ApiError(
          'parameter_invalid',
          `webhook ${webhook.id} does not receive ${event.type} events (its events: ${webhook.events.join(', ')}); add the type to its events first`,
          { param: 'eventId' },
        );
      }
      await tenantQuery(
        this.em,
        `insert into webhook_deliveries (id, account_id, livemode, event_id, webhook_id, status, attempt_count, next_attempt_at, created_at, updated_at)
         values (:id, {tenant}, :event, :webhook, :pending, 0, now(), now(), now())
         on conflict (event_id, webhook_id) do update
           set status = :pending, next_attempt_at = now(), leased_at = null, updated_at = now()
         where webhook_deliveries.status <> :pending or webhook_deliveries.leased_at is null`,
        { id: newId('whdel'), event: event.id, webhook: webhook.id, pending: DeliveryStatus.pending },
      );
      await this.em.flush();
    });
    outboxSignal.emit('work');
    return event;
  }

  /**
   * A new secret, shown only in this answer. The old one keeps signing deliveries beside it (both
   * signatures in webhook-signature) for `expiresInHours` (default 24; 0: not at all), so a
   * receiver can switch without losing a delivery. Only the latest old secret is kept.
   */
  async rollSecret(id: string, input: WebhookRollSecretInput = {}): Promise<CreatedWebhook> {
    await this.webhooks.get(id); // 404 before anything else
    const hours = input.expiresInHours ?? DEFAULT_SECRET_OVERLAP_HOURS;
    const secret = newSecret();
    return this.em.transactional(async () => {
      const webhook = await this.em.findOne(Webhook, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, populate: ['secretEncrypted'] });
      if (!webhook) throw notFound('webhook', id);
      webhook.previousSecretEncrypted = hours > 0 ? webhook.secretEncrypted : null;
      webhook.previousSecretExpiresAt = hours > 0 ? new Date(Date.now() + hours * HOUR_MS) : null;
      webhook.secretEncrypted = encryptJson({ secret }, this.settings.encryptionKey);
      recordSecurityEventAs(this.em, this.recorder.acting, {
        type: 'webhook.secret_rolled',
        details: { webhook: webhook.id, livemode: webhook.livemode, overlapHours: hours },
      });
      await this.em.flush();
      return Object.assign(webhook, { secret }) as CreatedWebhook;
    });
  }

  /**
   * The subscription, when it can be sent to now: enabled (a disabled one's deliveries are
   * canceled), and out of its failure backoff, since its owner asks for an attempt now.
   */
  private async sendable(id: string): Promise<Webhook> {
    const webhook = await this.em.findOne(Webhook, { id }, { refresh: true });
    if (!webhook) throw notFound('webhook', id);
    if (webhook.status !== WebhookStatus.enabled) {
      throw new ApiError('resource_conflict', `webhook ${id} is disabled; set its status to enabled to send to it`, { param: 'id' });
    }
    webhook.backoffUntil = null;
    return webhook;
  }
}

import type { Knex } from '@mikro-orm/knex';
import { MikroORM } from '@mikro-orm/postgresql';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { decryptJson } from '../../common/crypto';
import { newId } from '../../common/ids';
import { Event } from '../../events/event.entity';
import { fanOutPending } from '../../events/outbox-fan-out';
import { outboxConsumers } from '../../events/outbox-consumers';
import type { FanOutConsumer } from '../../events/outbox-fan-out';
import { PollingWorker } from '../../common/polling-worker';
import type { Logger } from '../../logger';
import type { Metrics, WebhookOutcome } from '../../http/metrics';
import type { RestSerializer } from '../../rest/serialize';
import { HostResolver, systemResolver } from './url-guard';
import { DeliveryStatus } from './webhook-delivery.entity';
import { sendWebhook, SendResult } from './webhook-sender';
import { Webhook, WebhookStatus } from './webhook.entity';

export interface DispatcherOptions {
  orm: MikroORM;
  logger: Logger;
  serializer: RestSerializer;
  encryptionKey: Buffer;
  /** Seconds before each attempt: the first entry before the first attempt (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[];
  allowPrivateUrls: boolean;
  resolveHost?: HostResolver;
  userAgent: string;
  /** Deadline of one HTTP attempt (CONTRACT §10: 15 s). */
  timeoutMs?: number;
  /** How often to look for due work when nothing nudges (events written in this process nudge at once). */
  pollIntervalMs?: number;
  /** Deliveries sent at the same time by this instance. */
  concurrency?: number;
  /** How long a claimed delivery stays claimed; must outlast an attempt. Default: timeout + 30 s. */
  leaseMs?: number;
  /** Counts attempts by outcome, and their latency (webhook_deliveries_total). */
  metrics?: Metrics;
}

interface Claim {
  id: string;
  event_id: string;
  webhook_id: string;
  attempt_count: number;
  account_id: string;
  livemode: boolean;
}

const GONE = 410;

/**
 * Sends webhooks from the outbox. Safe to run in every instance at once: events are fanned out to
 * deliveries, and due deliveries claimed, under FOR UPDATE SKIP LOCKED, so no two dispatchers
 * take the same row; a claim is a lease (next_attempt_at pushed past the attempt's deadline), so
 * work held by an instance that died becomes due again by itself. Delivery is at least once.
 */
export class WebhookDispatcher extends PollingWorker<Claim> {
  private readonly knex: Knex;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly consumers: readonly FanOutConsumer[];

  constructor(private readonly options: DispatcherOptions) {
    super(options.logger, options.pollIntervalMs ?? 1_000, options.concurrency ?? 8);
    this.knex = options.orm.em.getKnex();
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.leaseMs = options.leaseMs ?? this.timeoutMs + 30_000;
    this.consumers = outboxConsumers({ webhookRetrySchedule: options.retrySchedule });
    if (options.retrySchedule.length === 0) throw new Error('the webhook retry schedule needs at least one entry');
  }

  protected prepare(): Promise<boolean> {
    return fanOutPending(this.knex, this.consumers, () => this.isStopped);
  }

  protected describe(claim: Claim) {
    return { deliveryId: claim.id };
  }

  /** Claims up to `limit` due deliveries: each claim counts an attempt and holds the row for the lease. */
  protected async claim(limit: number): Promise<Claim[]> {
    const result = await this.knex.raw<{ rows: Claim[] }>(
      `update webhook_deliveries set attempt_count = attempt_count + 1, next_attempt_at = now() + make_interval(secs => ?), updated_at = now()
       where id in (
         select id from webhook_deliveries where status = 'pending' and next_attempt_at <= now()
         order by next_attempt_at limit ? for update skip locked)
       returning id, event_id, webhook_id, attempt_count, account_id, livemode`,
      [this.leaseMs / 1000, limit],
    );
    return result.rows;
  }

  protected async work(claim: Claim): Promise<void> {
    const em = this.options.orm.em.fork();
    const [event, webhook] = await Promise.all([
      em.findOne(Event, { id: claim.event_id }, { filters: false }),
      em.findOne(Webhook, { id: claim.webhook_id }, { filters: false, populate: ['secretEncrypted'] }),
    ]);
    if (!event || !webhook) return; // deleted meanwhile; its deliveries went with it
    if (webhook.status !== WebhookStatus.enabled) {
      await this.knex('webhook_deliveries').where({ id: claim.id }).update({ status: DeliveryStatus.canceled, next_attempt_at: null, updated_at: new Date() });
      return;
    }
    const body = JSON.stringify(this.options.serializer.serialize(event));
    const { secret } = decryptJson<{ secret: string }>(webhook.secretEncrypted, this.options.encryptionKey);
    const timestamp = new Date();
    const headers = {
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': new StandardWebhook(secret).sign(event.id, timestamp, body),
    };
    const result = await sendWebhook(webhook.url, headers, body, {
      timeoutMs: this.timeoutMs,
      allowPrivate: this.options.allowPrivateUrls,
      resolve: this.options.resolveHost ?? systemResolver,
      userAgent: this.options.userAgent,
    });
    const outcome = await this.settle(claim, webhook.url, result);
    this.options.metrics?.webhookDelivery(outcome, result.latencyMs / 1000);
    const log = { deliveryId: claim.id, webhookId: claim.webhook_id, eventId: claim.event_id, attempt: claim.attempt_count, status: result.status, latencyMs: result.latencyMs };
    if (result.error) this.options.logger.warn({ ...log, error: result.error }, 'webhook attempt failed');
    else this.options.logger.debug(log, 'webhook delivered');
  }

  /** Records the attempt and decides what happens next, in one transaction. */
  private settle(claim: Claim, url: string, result: SendResult): Promise<WebhookOutcome> {
    const succeeded = result.error === null;
    const schedule = this.options.retrySchedule;
    return this.knex.transaction(async (trx) => {
      const now = new Date();
      await trx('webhook_attempts').insert({
        id: newId('attempt'),
        created_at: now,
        updated_at: now,
        account_id: claim.account_id,
        livemode: claim.livemode,
        delivery_id: claim.id,
        webhook_id: claim.webhook_id,
        event_id: claim.event_id,
        attempt_number: claim.attempt_count,
        url,
        response_status: result.status,
        latency_ms: result.latencyMs,
        error: result.error,
        // PostgreSQL text cannot hold NUL; a receiver's body may.
        response_snippet: result.snippet?.replace(/\u0000/g, '') ?? null,
        succeeded,
      });
      const delivery = trx('webhook_deliveries').where({ id: claim.id, status: DeliveryStatus.pending, attempt_count: claim.attempt_count });
      if (succeeded) {
        await delivery.update({ status: DeliveryStatus.succeeded, delivered_at: now, next_attempt_at: null, updated_at: now });
        return 'succeeded';
      } else if (result.status === GONE) {
        // 410 Gone: the receiver says this URL is finished. Stop everything owed to it.
        await delivery.update({ status: DeliveryStatus.failed, next_attempt_at: null, updated_at: now });
        await trx('webhooks')
          .where({ id: claim.webhook_id, status: WebhookStatus.enabled })
          .update({ status: WebhookStatus.disabled, disabled_reason: `${url} answered 410 Gone`, updated_at: now });
        await trx('webhook_deliveries')
          .where({ webhook_id: claim.webhook_id, status: DeliveryStatus.pending })
          .update({ status: DeliveryStatus.canceled, next_attempt_at: null, updated_at: now });
        return 'gone';
      } else if (claim.attempt_count < schedule.length) {
        await delivery.update({ next_attempt_at: trx.raw('now() + make_interval(secs => ?)', [schedule[claim.attempt_count]]), updated_at: now });
        return 'retry_scheduled';
      } else {
        await delivery.update({ status: DeliveryStatus.failed, next_attempt_at: null, updated_at: now });
        return 'failed';
      }
    });
  }
}

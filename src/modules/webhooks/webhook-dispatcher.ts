import type { Knex } from '@mikro-orm/knex';
import { MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../../common/ids';
import { Event } from '../../events/event.entity';
import { fanOutPending } from '../../events/outbox-fan-out';
import type { FanOutConsumer } from '../../events/outbox-fan-out';
import { PollingWorker } from '../../common/polling-worker';
import type { Logger } from '../../logger';
import type { Metrics, WebhookOutcome } from '../../http/metrics';
import type { RestSerializer } from '../../rest/serialize';
import { HostResolver, systemResolver } from '../../http/address-guard';
import { Claim, claimFairly } from './webhook-claims.repository';
import { DeliveryStatus } from './webhook-delivery.entity';
import { sendWebhook, SendResult } from './webhook-sender';
import { signedHeaders, signingSecrets } from './webhook-signing';
import { Webhook, WebhookStatus } from './webhook.entity';

export interface DispatcherOptions {
  orm: MikroORM;
  logger: Logger;
  serializer: RestSerializer;
  encryptionKey: Buffer;
  /** Seconds before each attempt: the first entry before the first attempt (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[];
  /** Everyone who owes work per event (src/app/workers.ts, outboxConsumers): one list per process. */
  consumers: readonly FanOutConsumer[];
  allowPrivateUrls: boolean;
  resolveHost?: HostResolver;
  userAgent: string;
  /** Deadline of one HTTP attempt (CONTRACT §10: 15 s). */
  timeoutMs?: number;
  /** How often to look for due work when nothing nudges (events written in this process nudge at once). */
  pollIntervalMs?: number;
  /** Deliveries sent at the same time by this instance. */
  concurrency?: number;
  /** Attempts in flight at one endpoint, across every instance (default 2): a slow endpoint holds no more slots than this. */
  perEndpointConcurrency?: number;
  /** Attempts in flight for one account and mode, across every instance (default half of `concurrency`). */
  perAccountConcurrency?: number;
  /** An endpoint's pause after its first failure in a row; it doubles with each further failure (default 5 s). */
  backoffBaseMs?: number;
  /** The longest pause (default one hour). */
  backoffMaxMs?: number;
  /** How long a claimed delivery stays claimed; must outlast an attempt. Default: timeout + 30 s. */
  leaseMs?: number;
  /** Counts attempts by outcome, and their latency (webhook_deliveries_total). */
  metrics?: Metrics;
}

const GONE = 410;

/**
 * Sends webhooks from the outbox, at least once, from any number of instances: fan-out and claims take rows
 * FOR UPDATE SKIP LOCKED, and a claim is a lease, so a dead instance's work becomes due again by itself. One
 * tenant's endpoints cannot hold up another's: claims are fair (webhook-claims.repository.ts), failing
 * endpoints are backed off, and one that fails for a whole retry schedule is disabled.
 */
export class WebhookDispatcher extends PollingWorker<Claim> {
  private readonly knex: Knex;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly perEndpoint: number;
  private readonly perAccount: number;
  private readonly backoffBaseSeconds: number;
  private readonly backoffMaxSeconds: number;
  private readonly consumers: readonly FanOutConsumer[];

  constructor(private readonly options: DispatcherOptions) {
    const concurrency = options.concurrency ?? 8;
    super(options.logger, options.pollIntervalMs ?? 1_000, concurrency);
    this.knex = options.orm.em.getKnex();
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.leaseMs = options.leaseMs ?? this.timeoutMs + 30_000;
    this.perEndpoint = options.perEndpointConcurrency ?? 2;
    this.perAccount = options.perAccountConcurrency ?? Math.max(1, Math.floor(concurrency / 2));
    this.backoffBaseSeconds = (options.backoffBaseMs ?? 5_000) / 1000;
    this.backoffMaxSeconds = (options.backoffMaxMs ?? 3_600_000) / 1000;
    this.consumers = options.consumers;
    if (options.retrySchedule.length === 0) throw new Error('the webhook retry schedule needs at least one entry');
  }

  protected prepare(): Promise<boolean> {
    return fanOutPending(this.knex, this.consumers, () => this.isStopped);
  }

  protected describe(claim: Claim) {
    return { deliveryId: claim.id };
  }

  /** Claims up to `limit` due deliveries, fairly: each claim counts an attempt and holds the row for the lease. */
  protected claim(limit: number): Promise<Claim[]> {
    return claimFairly(this.knex, { limit, perEndpoint: this.perEndpoint, perAccount: this.perAccount, leaseSeconds: this.leaseMs / 1000 });
  }

  protected async work(claim: Claim): Promise<void> {
    const em = this.options.orm.em.fork();
    const [event, webhook] = await Promise.all([
      em.findOne(Event, { id: claim.event_id }, { filters: false }),
      em.findOne(Webhook, { id: claim.webhook_id }, { filters: false, populate: ['secretEncrypted', 'previousSecretEncrypted'] }),
    ]);
    if (!event || !webhook) return; // deleted meanwhile; its deliveries went with it
    if (webhook.status !== WebhookStatus.enabled) {
      await this.knex('webhook_deliveries')
        .where({ id: claim.id })
        .update({ status: DeliveryStatus.canceled, next_attempt_at: null, leased_at: null, updated_at: new Date() });
      return;
    }
    const body = JSON.stringify(this.options.serializer.serialize(event));
    const timestamp = new Date();
    const headers = signedHeaders(event.id, body, signingSecrets(webhook, this.options.encryptionKey, timestamp), timestamp);
    const result = await sendWebhook(webhook.url, headers, body, {
      timeoutMs: this.timeoutMs,
      allowPrivate: this.options.allowPrivateUrls,
      resolve: this.options.resolveHost ?? systemResolver,
      userAgent: this.options.userAgent,
    });
    const outcome = await this.settle(claim, webhook.url, result);
    this.options.metrics?.webhookDelivery(outcome, result.latencyMs / 1000);
    const log = {
      deliveryId: claim.id,
      webhookId: claim.webhook_id,
      eventId: claim.event_id,
      attempt: claim.attempt_count,
      status: result.status,
      latencyMs: result.latencyMs,
    };
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
        id: newId('whatt'),
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
        response_snippet: result.snippet?.replaceAll('\u0000', '') ?? null,
        succeeded,
      });
      // The endpoint's row before any delivery's, in every settle: settles of one endpoint queue on
      // it instead of deadlocking over each other's deliveries when one of them disables it.
      await this.recordEndpointHealth(trx, claim.webhook_id, succeeded);
      const delivery = trx('webhook_deliveries').where({ id: claim.id, status: DeliveryStatus.pending, attempt_count: claim.attempt_count });
      const done = { next_attempt_at: null, leased_at: null, updated_at: now };
      if (succeeded) {
        await delivery.update({ ...done, status: DeliveryStatus.succeeded, delivered_at: now });
        return 'succeeded';
      } else if (result.status === GONE) {
        // 410 Gone: the receiver says this URL is finished. Stop everything owed to it.
        await delivery.update({ ...done, status: DeliveryStatus.failed });
        await this.disable(trx, claim.webhook_id, `${url} answered 410 Gone`, now);
        return 'gone';
      } else if (claim.attempt_count < schedule.length) {
        await delivery.update({
          next_attempt_at: trx.raw('now() + make_interval(secs => ?)', [schedule[claim.attempt_count]]),
          leased_at: null,
          updated_at: now,
        });
        return 'retry_scheduled';
      } else {
        const usedUp = await delivery.update({ ...done, status: DeliveryStatus.failed });
        const since = usedUp ? await this.failingSince(trx, claim) : null;
        if (since) {
          const reason =
            `Disabled: no delivery to ${url} has succeeded since ${since.toISOString()}, and one used up all ` +
            `${schedule.length} attempts of the retry schedule (last error: ${result.error}). Fix the endpoint, then set status to enabled.`;
          if (await this.disable(trx, claim.webhook_id, reason, now)) {
            this.options.logger.warn({ webhookId: claim.webhook_id, since }, 'webhook subscription disabled: failing for its whole retry schedule');
          }
        }
        return 'failed';
      }
    });
  }

  /**
   * Consecutive failures back the endpoint off exponentially (base, 2 × base, … up to the cap); the
   * claim skips it meanwhile, so its deliveries keep their remaining attempts. A success resets it
   * (and writes nothing when there was nothing to reset, the usual case).
   */
  private async recordEndpointHealth(trx: Knex.Transaction, webhookId: string, succeeded: boolean): Promise<void> {
    if (succeeded) {
      await trx('webhooks')
        .where({ id: webhookId })
        .andWhere((dirty) => dirty.where('consecutive_failures', '>', 0).orWhereNotNull('backoff_until'))
        .update({ consecutive_failures: 0, backoff_until: null });
      return;
    }
    await trx('webhooks')
      .where({ id: webhookId })
      .update({
        consecutive_failures: trx.raw('consecutive_failures + 1'),
        // consecutive_failures here is the count before this failure.
        backoff_until: trx.raw('now() + make_interval(secs => least(? * power(2, least(consecutive_failures, 30)), ?))', [
          this.backoffBaseSeconds,
          this.backoffMaxSeconds,
        ]),
      });
  }

  /** When the delivery's first attempt began, if the endpoint has not succeeded since; otherwise null. */
  private async failingSince(trx: Knex.Transaction, claim: Claim): Promise<Date | null> {
    // The pool hands timestamps back as text (MikroORM parses dates itself).
    const result = await trx.raw<{ rows: Array<{ since: string }> }>(
      `with first_attempt as (
         select min(created_at - latency_ms * interval '1 millisecond') as at from webhook_attempts where delivery_id = ?)
       select first_attempt.at as since from first_attempt
        where first_attempt.at is not null
          and not exists (select 1 from webhook_attempts a where a.webhook_id = ? and a.succeeded and a.created_at >= first_attempt.at)`,
      [claim.id, claim.webhook_id],
    );
    const since = result.rows[0]?.since;
    return since ? new Date(since) : null;
  }

  /** Disables the subscription and cancels what it was still owed; says whether it was enabled. */
  private async disable(trx: Knex.Transaction, webhookId: string, reason: string, now: Date): Promise<boolean> {
    await trx('webhook_deliveries')
      .where({ webhook_id: webhookId, status: DeliveryStatus.pending })
      .update({ status: DeliveryStatus.canceled, next_attempt_at: null, leased_at: null, updated_at: now });
    const disabled = await trx('webhooks')
      .where({ id: webhookId, status: WebhookStatus.enabled })
      .update({ status: WebhookStatus.disabled, disabled_reason: reason, updated_at: now });
    return disabled > 0;
  }
}

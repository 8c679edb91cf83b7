import type { Knex } from '@mikro-orm/knex';
import { ActorType, actingAs } from '../../events/acting';
import { EntityManager, LockMode, MikroORM } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { PollingWorker } from '../../common/polling-worker';
import { isTransientDatabaseError } from '../../db/database-errors';
import { tenantFork } from '../../db/tenant';
import type { Logger } from '../../logger';
import { Integration, IntegrationProvider, IntegrationStatus } from '../integrations/integration.entity';
import type { ProviderSettings } from '../integrations/providers/provider-settings';
import {
  PartnerCenterClient,
  PartnerCenterCredentialStore,
  PartnerCenterReferral,
  PartnerCenterRefused,
  PartnerCenterTokens,
  PartnerCenterUnavailable,
  ReferralRefused,
} from '../integrations/providers/partner-center-client';
import { Lead } from '../leads/lead.entity';
import type { ServiceFactory } from '../module';
import { coSellStatusOf, FINAL_CO_SELL_STATUSES, referralBody } from './co-sell-referral';
import { CoSellSync } from './co-sell-sync.entity';
import { CoSellRegistration, CoSellStatus, Deal, OPEN_CO_SELL_STATUSES } from './deal.entity';

export interface CoSellWorkerOptions {
  orm: MikroORM;
  logger: Logger;
  servicesFor: ServiceFactory;
  /** How Partner Center and Microsoft's login endpoint are reached (providerSettingsOf). */
  providers: ProviderSettings;
  /** CO_SELL_POLL_INTERVAL_MS: how often each open referral's status is read (default 5 minutes). */
  referralPollIntervalMs?: number;
  /** How often the worker looks for due work (default 1 s); a registration wakes it at once. */
  pollIntervalMs?: number;
  /** Registrations worked at once by this instance (default 4). */
  concurrency?: number;
  /** How long a claimed registration stays this instance's (default 60 s): longer than its few calls, each bounded by INTEGRATION_TIMEOUT_MS. */
  leaseMs?: number;
  /** The wait after a first failure (default 5 s), doubled per failure in a row, at most the referral poll interval (or Retry-After when longer). */
  retryDelayMs?: number;
}

/** A claimed CoSellSync, as the claim query returns it. */
interface SyncClaim {
  id: string;
  deal_id: string;
  integration_id: string;
  account_id: string;
  livemode: boolean;
  claims: number;
  failures: number;
}

/** What an attempt came to, written in one transaction with the events it causes. */
interface Outcome {
  /** Changes to the deal's co_sell (undefined fields stay as they are). */
  change?: Partial<Pick<CoSellRegistration, 'referralId' | 'status' | 'statusReason' | 'integrationId'>>;
  /** The registration's integration was disconnected and another connected: go on through it, now. */
  moveTo?: string;
  /** The registration needs nothing more: the sync row goes. */
  final?: boolean;
  /** Partner Center answered: an integration in error is connected again. */
  healthy?: boolean;
  /** Partner Center refused the credentials: the integration moves to error with this reason. */
  refusal?: string;
  /** Failed: try again after this long, with the reason kept for operators. */
  retry?: { delayMs: number; error: string };
}

/** This instance no longer holds the row: another took it over when the lease lapsed (or the registration went). */
class LeaseLost extends Error {}

const DISCONNECTED_REASON =
  'The Partner Center integration was disconnected: the registration waits for a connected partner_center integration (connect one again to go on); the status is the last one read.';

/**
 * Takes live co-sell registrations to Partner Center and follows each referral's status until final
 * (docs/ARCHITECTURE.md, "Background work"). A referral is looked up by the registration id as
 * externalReferenceId before one is created, so an attempt that died after creating it never makes two.
 * 429 and 5xx back off; refused credentials put the integration in `error` and the registration retries on
 * the backoff; a 400 for the referral itself ends it as rejected, with Partner Center's reason. A registration
 * whose integration was disconnected goes on through the partner_center integration connected since.
 */
export class CoSellWorker extends PollingWorker<SyncClaim> {
  private readonly knex: Knex;
  private readonly tokens: PartnerCenterTokens;
  private readonly leaseMs: number;
  private readonly referralPollIntervalMs: number;
  private readonly retryDelayMs: number;

  constructor(private readonly options: CoSellWorkerOptions) {
    super(options.logger, options.pollIntervalMs ?? 1_000, options.concurrency ?? 4);
    this.knex = options.orm.em.getKnex();
    this.tokens = new PartnerCenterTokens(options.providers);
    this.leaseMs = options.leaseMs ?? 60_000;
    this.referralPollIntervalMs = options.referralPollIntervalMs ?? 300_000;
    this.retryDelayMs = options.retryDelayMs ?? 5_000;
  }

  /** Nothing to prepare: registrations make their own rows. */
  protected async prepare(): Promise<boolean> {
    return false;
  }

  protected async claim(limit: number): Promise<SyncClaim[]> {
    const result = await this.knex.raw<{ rows: SyncClaim[] }>(
      `update co_sell_syncs set due_at = now() + make_interval(secs => ?), claims = claims + 1, updated_at = now()
        where id in (select id from co_sell_syncs where due_at <= now() order by due_at limit ? for update skip locked)
        returning id, deal_id, integration_id, account_id, livemode, claims, failures`,
      [this.leaseMs / 1000, limit],
    );
    return result.rows;
  }

  protected describe(claim: SyncClaim) {
    return { coSellId: claim.id, dealId: claim.deal_id, integrationId: claim.integration_id };
  }

  protected async work(claim: SyncClaim): Promise<void> {
    const em = this.fork(claim);
    const deal = await em.findOne(Deal, { id: claim.deal_id });
    const registration = deal?.coSell;
    if (!deal || registration?.id !== claim.id || !OPEN_CO_SELL_STATUSES.includes(registration.status)) {
      return this.settle(claim, { final: true });
    }
    const integration = await em.findOne(Integration, { id: claim.integration_id });
    if (!integration || integration.status === IntegrationStatus.disconnected) {
      // Connected again (new credentials are a new integration): the registration goes on through that one.
      const successor = await em.findOne(Integration, { provider: IntegrationProvider.partner_center, status: { $ne: IntegrationStatus.disconnected } });
      if (successor) return this.settle(claim, { change: { integrationId: successor.id }, moveTo: successor.id });
      return this.settle(claim, {
        change: { statusReason: DISCONNECTED_REASON },
        retry: { delayMs: this.referralPollIntervalMs, error: 'no Partner Center integration is connected' },
      });
    }
    let outcome: Outcome;
    try {
      const client = new PartnerCenterClient(integration.id, this.tokens, this.credentialsOf(em, integration), this.options.providers.partnerCenterApiUrl);
      const referral = registration.referralId ? await this.read(client, registration.referralId) : await this.findOrCreate(client, em, deal);
      outcome = this.followed(claim, registration, referral);
    } catch (error) {
      outcome = this.failedOutcome(claim, error);
    }
    await this.settle(claim, outcome);
  }

  /** The referral an earlier attempt made (found by our registration id), or a new one. */
  private async findOrCreate(client: PartnerCenterClient, em: EntityManager, deal: Deal): Promise<PartnerCenterReferral> {
    const registrationId = deal.coSell!.id;
    const existing = await client.findByExternalReference(registrationId);
    if (existing) return existing;
    const lead = deal.lead ? await em.findOne(Lead, { id: deal.lead.id }) : null;
    // The rules were checked when registering; the deal or its lead may have changed since.
    const unsendable = (reason: string) => new ReferralRefused(`The referral could not be made: ${reason}`);
    if (!lead) throw unsendable('the deal is no longer linked to a lead, whose company and contact Partner Center requires');
    let body: object;
    try {
      body = referralBody({ registrationId, deal, lead });
    } catch (error) {
      throw unsendable((error as Error).message);
    }
    return client.create(body);
  }

  private async read(client: PartnerCenterClient, referralId: string): Promise<PartnerCenterReferral> {
    const referral = await client.get(referralId);
    if (!referral) throw new PartnerCenterUnavailable(`Partner Center has no referral ${referralId} (it answered 404)`);
    return referral;
  }

  /** The registration after reading its referral: the id stored, the status mapped, the reason kept; final statuses end the sync. */
  private followed(claim: SyncClaim, registration: CoSellRegistration, referral: PartnerCenterReferral): Outcome {
    const mapped = coSellStatusOf(referral);
    if (mapped === null) {
      this.options.logger.warn(
        { coSellId: claim.id, status: referral.status, substatus: referral.substatus },
        'a Partner Center referral has a status this service does not map; the co-sell status stays as it was',
      );
    }
    const status = mapped ?? registration.status;
    return {
      change: { referralId: referral.id, status, statusReason: referral.statusReason },
      healthy: true,
      final: FINAL_CO_SELL_STATUSES.includes(status),
    };
  }

  /** Sorts out why an attempt failed: the referral refused (final), the credentials refused, Partner Center unusable, the database, or a bug. */
  private failedOutcome(claim: SyncClaim, error: unknown): Outcome {
    if (error instanceof ReferralRefused) {
      return {
        change: { status: CoSellStatus.rejected, statusReason: error.message.slice(0, 1000) },
        healthy: true,
        final: true,
      };
    }
    const backoff = Math.min(this.retryDelayMs * 2 ** claim.failures, Math.max(this.referralPollIntervalMs, this.retryDelayMs));
    if (error instanceof PartnerCenterRefused) {
      this.tokens.forget(claim.integration_id);
      return { refusal: error.message, retry: { delayMs: backoff, error: error.message } };
    }
    if (error instanceof PartnerCenterUnavailable) {
      return { retry: { delayMs: Math.max(backoff, error.retryAfterMs ?? 0), error: error.message } };
    }
    if (error instanceof ApiError && error.errorCode === 'resource_missing') {
      // The integration was disconnected while the attempt ran (its credentials are destroyed): the next attempt sees it.
      return { retry: { delayMs: 0, error: error.message } };
    }
    if (isTransientDatabaseError(error)) {
      this.options.logger.warn({ coSellId: claim.id, err: error }, 'co-sell sync met a transient database failure; will retry');
      return { retry: { delayMs: backoff, error: 'the database failed transiently' } };
    }
    this.options.logger.error({ coSellId: claim.id, err: error }, 'co-sell sync failed unexpectedly');
    return { retry: { delayMs: backoff, error: 'The attempt failed unexpectedly; the details are in the service log.' } };
  }

  /**
   * Writes an outcome, if this instance still holds the row: the co_sell change with its events,
   * the integration's health, and the row's next time (or its end), in one transaction.
   */
  private async settle(claim: SyncClaim, outcome: Outcome): Promise<void> {
    const em = this.fork(claim);
    try {
      await em.transactional(async () => {
        const sync = await em.findOne(CoSellSync, { id: claim.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!sync || sync.claims !== claim.claims) throw new LeaseLost();
        const services = this.options.servicesFor(em, actingAs(ActorType.sync, claim.integration_id));
        if (outcome.change) await this.change(em, claim, outcome.change);
        if (outcome.healthy || outcome.refusal) {
          const integration = await em.findOne(Integration, { id: claim.integration_id });
          if (integration && outcome.refusal) await services.integrations.markError(integration, outcome.refusal);
          else if (integration) await services.integrations.markHealthy(integration);
        }
        if (outcome.final) {
          em.remove(sync);
        } else if (outcome.moveTo) {
          Object.assign(sync, { integrationId: outcome.moveTo, dueAt: new Date(), failures: 0, lastError: null });
        } else if (outcome.retry) {
          Object.assign(sync, {
            dueAt: new Date(Date.now() + outcome.retry.delayMs),
            failures: sync.failures + 1,
            lastError: outcome.retry.error.slice(0, 1000),
          });
        } else {
          Object.assign(sync, { dueAt: new Date(Date.now() + this.referralPollIntervalMs), failures: 0, lastError: null });
        }
        await em.flush();
      });
    } catch (error) {
      if (error instanceof LeaseLost) {
        this.options.logger.warn({ coSellId: claim.id }, 'co-sell sync lost its lease (another instance goes on with it) or its registration is gone');
        return;
      }
      throw error;
    }
  }

  /** The deal's co_sell with `change` applied, under the deal's row lock; deal.updated and deal.co_sell_updated when a client sees a difference. */
  private async change(em: EntityManager, claim: SyncClaim, change: NonNullable<Outcome['change']>): Promise<void> {
    const deal = await em.findOne(Deal, { id: claim.deal_id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const current = deal?.coSell;
    if (!deal || current?.id !== claim.id) return;
    const recorder = this.options.servicesFor(em, actingAs(ActorType.sync, claim.integration_id)).recorder;
    const before = recorder.snapshot(deal);
    const next = Object.assign(new CoSellRegistration(), current);
    for (const [name, value] of Object.entries(change)) if (value !== undefined) Object.assign(next, { [name]: value });
    // Decided the first time it leaves submitted; later moves (accepted, then won) keep that time.
    if (next.status !== CoSellStatus.submitted && !next.decidedAt) next.decidedAt = new Date();
    deal.coSell = next;
    if (recorder.record('deal.updated', deal, before)) recorder.record('deal.co_sell_updated', deal, before);
  }

  /** Reads the integration's credentials afresh for each grant, and stores a rotated refresh token. */
  private credentialsOf(em: EntityManager, integration: Integration): PartnerCenterCredentialStore {
    const integrations = this.options.servicesFor(em).integrations;
    return {
      read: () => integrations.credentialsOf(integration),
      replace: (credentials) => integrations.replaceCredentials(integration, credentials),
    };
  }

  private fork(claim: SyncClaim): EntityManager {
    return tenantFork(this.options.orm.em, { accountId: claim.account_id, livemode: claim.livemode });
  }
}

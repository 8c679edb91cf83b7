import { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { recordSecurityEventAs } from '../security/security-log';
import { decryptJson, encryptJson } from '../../common/crypto';
import { ApiError, notFound } from '../../common/api-error';
import { isId } from '../../common/ids';
import { findPage, Page } from '../../common/pagination';
import { createScoped } from '../../db/tenant';
import type { EventRecorder } from '../../events/event-recorder';
import { validateCredentials } from './integration-credentials';
import { outboxSignal } from '../../events/outbox.subscriber';
import { Integration, IntegrationProvider, IntegrationStatus, IntegrationType } from './integration.entity';
import { IntegrationConnectInput, IntegrationListInput, IntegrationUpdateInput } from './integration.inputs';
import { DELIVERY_RECORDS } from './sync/delivery-records';
import { defaultStageMap, IntegrationSettings } from './sync/stage-map';
import { isSyncProvider, PsaProvider, SyncProvider } from './providers/crm-client';
import { SyncRun, SyncTrigger } from './sync/sync.entities';
import type { ProviderSettings } from './providers/provider-settings';
import { VERIFIERS } from './providers/verification';

/** The model a model provider's requests name unless settings.model says otherwise. */
function defaultModel(provider: IntegrationProvider, credentials: Record<string, string>): string | undefined {
  if (provider === IntegrationProvider.openai) return DEFAULT_OPENAI_MODEL;
  if (provider === IntegrationProvider.azure_openai) return credentials.deployment;
  return undefined;
}

/** OpenAI's small, cheap model with structured outputs. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

/** At most this much of a provider's reason is kept in last_error. */
const MAX_LAST_ERROR = 1000;

/**
 * Integration rules. Works on a request's EntityManager, already scoped to one account and mode by
 * the tenant filter, so nothing here names an account. Credentials go in encrypted under `key`
 * and come out only through credentialsOf, for code that calls the provider; never to a client.
 */
export class IntegrationService {
  constructor(
    private readonly em: EntityManager,
    private readonly key: Buffer,
    private readonly events: EventRecorder,
    /** How CRMs are reached to verify credentials; without it a CRM cannot be connected. */
    private readonly providers?: ProviderSettings,
  ) {}

  /**
   * One integration that is not disconnected per provider, account and mode: the partial unique
   * index integrations_connected_provider_unique refuses a second (409 resource_conflict),
   * race-free. The credentials of a provider in VERIFIERS (the CRMs, the PSAs, Microsoft 365,
   * Partner Center, the model providers) are proven with it first (422 integration_auth_failed, 502 integration_unreachable, nothing
   * stored).
   */
  async connect(input: IntegrationConnectInput): Promise<Integration> {
    const { credentials: given, hint } = validateCredentials(input.type, input.provider, input.credentials);
    // Settings are checked before the provider is called: a refused setting costs no call.
    const settings = this.settingsFor(input.type, input.provider, input.settings ?? {}, defaultModel(input.provider, given));
    let credentials = given;
    const verify = VERIFIERS[input.provider];
    if (verify) {
      if (!this.providers) throw new Error('IntegrationService has no provider settings: credentials cannot be verified');
      // A provider that replaced a credential while proving it (a rotated refresh token) gets the new one stored.
      credentials = (await verify(given, this.providers)) ?? given;
    }
    const name = input.name?.trim();
    const syncing = isSyncProvider(input.provider) ? input.provider : null;
    const integration = createScoped(this.em, Integration, {
      type: input.type,
      provider: input.provider,
      status: IntegrationStatus.connected,
      name: name ? name : null,
      credentialsEncrypted: encryptJson(credentials, this.key),
      credentialsHint: hint,
      connectedAt: new Date(),
      settings,
    });
    this.events.record('integration.connected', integration);
    recordSecurityEventAs(this.em, this.events.acting, {
      type: 'integration.connected',
      details: { integration: integration.id, provider: integration.provider },
    });
    // The first run pushes what exists (and, from a CRM, pulls what it has): the backfill.
    if (syncing) createScoped(this.em, SyncRun, { integration, trigger: SyncTrigger.connect });
    await this.em.flush();
    if (syncing) outboxSignal.emit('work');
    return integration;
  }

  /** Changes the name or settings; settings it names are replaced whole (a stage map maps every stage). */
  async update(id: string, input: IntegrationUpdateInput): Promise<Integration> {
    const integration = await this.get(id);
    if (integration.status === IntegrationStatus.disconnected) {
      throw new ApiError('resource_conflict', `Integration ${id} is disconnected; connect the provider again to change it`, { param: 'id' });
    }
    const before = this.events.snapshot(integration);
    if (input.name !== undefined) integration.name = input.name?.trim() || null;
    if (input.settings) {
      // Azure's default model is the deployment, which only the credentials name.
      const given = { ...integration.settings, ...input.settings };
      const credentials = integration.provider === IntegrationProvider.azure_openai && !given.model ? await this.credentialsOf(integration) : {};
      integration.settings = this.settingsFor(integration.type, integration.provider, given, defaultModel(integration.provider, credentials));
    }
    this.events.record('integration.updated', integration, before);
    await this.em.flush();
    return integration;
  }

  /**
   * CRMs and PSAs always hold a stage map (the provider's default unless given), PSAs also the
   * kind of delivery record (their default unless given), ConnectWise the fallback sales rep;
   * model providers hold the model (`defaultModel` unless given; none for a compatible server,
   * which must be told); Microsoft 365 has none of them.
   */
  private settingsFor(
    type: IntegrationType,
    integrationProvider: IntegrationProvider,
    given: IntegrationSettings,
    defaultModelName?: string,
  ): IntegrationSettings {
    const provider: SyncProvider | null = isSyncProvider(integrationProvider) ? integrationProvider : null;
    if (type === IntegrationType.llm) return { model: this.modelFor(integrationProvider, given, defaultModelName) };
    if (given.model) {
      throw new ApiError('parameter_invalid', `settings.model applies to llm integrations, not ${type}`, { param: 'settings.model' });
    }
    if (!provider) {
      if (given.stageMap) throw new ApiError('parameter_invalid', `settings.stage_map applies to CRM and PSA integrations, not ${type}`, { param: 'settings' });
    }
    const records = provider && provider in DELIVERY_RECORDS ? DELIVERY_RECORDS[provider as PsaProvider] : null;
    if (given.deliveryRecord && !records?.includes(given.deliveryRecord)) {
      const allowed = records ? `${provider} takes ${records.join(' or ')}` : `it applies to PSA integrations, not ${type}`;
      throw new ApiError('parameter_invalid', `settings.delivery_record cannot be '${given.deliveryRecord}': ${allowed}`, {
        param: 'settings.delivery_record',
      });
    }
    if (given.salesRep && provider !== 'connectwise') {
      throw new ApiError('parameter_invalid', `settings.sales_rep applies to ConnectWise integrations, not ${provider ?? type}`, {
        param: 'settings.sales_rep',
      });
    }
    if (!provider) return {};
    const stageMap = given.stageMap ? { ...given.stageMap } : defaultStageMap(provider);
    if (!records) return { stageMap };
    const psa = { stageMap, deliveryRecord: given.deliveryRecord ?? records[0] };
    return provider === 'connectwise' ? { ...psa, salesRep: given.salesRep?.trim() || null } : psa;
  }

  /** A model provider's model: the one given, else the provider's default; settings that apply to other types are refused. */
  private modelFor(provider: IntegrationProvider, given: IntegrationSettings, fallback: string | undefined): string {
    if (given.stageMap) throw new ApiError('parameter_invalid', 'settings.stage_map applies to CRM and PSA integrations, not llm', { param: 'settings' });
    if (given.deliveryRecord) {
      throw new ApiError('parameter_invalid', `settings.delivery_record cannot be '${given.deliveryRecord}': it applies to PSA integrations, not llm`, {
        param: 'settings.delivery_record',
      });
    }
    if (given.salesRep) {
      throw new ApiError('parameter_invalid', `settings.sales_rep applies to ConnectWise integrations, not ${provider}`, { param: 'settings.sales_rep' });
    }
    const model = given.model?.trim() || fallback;
    if (!model)
      throw new ApiError('parameter_missing', `settings.model is required for ${provider}: name the model the server should run`, { param: 'settings.model' });
    return model;
  }

  /** Connected and disconnected integrations alike: a disconnected one is kept as history. */
  async get(id: string): Promise<Integration> {
    const integration = isId('int', id) ? await this.em.findOne(Integration, { id }) : null;
    if (!integration) throw notFound('integration', id);
    return integration;
  }

  list(input: IntegrationListInput = {}): Promise<Page<Integration>> {
    const filters: FilterQuery<Integration>[] = [];
    if (input.status) filters.push({ status: input.status });
    if (input.type) filters.push({ type: input.type });
    if (input.provider) filters.push({ provider: input.provider });
    // Newest first only: there are a handful per account, so other orders buy nothing.
    return findPage(this.em, Integration, filters, input);
  }

  /**
   * Disconnects and destroys the credentials (the column is set to NULL, not just hidden). Idempotent,
   * like DELETE should be: disconnecting a disconnected integration returns it unchanged, keeping
   * the first disconnected_at.
   */
  async disconnect(id: string): Promise<Integration> {
    const integration = await this.get(id);
    if (integration.status === IntegrationStatus.disconnected) return integration;
    const before = this.events.snapshot(integration);
    integration.status = IntegrationStatus.disconnected;
    integration.disconnectedAt = new Date();
    integration.credentialsEncrypted = null;
    this.events.record('integration.disconnected', integration, before);
    recordSecurityEventAs(this.em, this.events.acting, {
      type: 'integration.disconnected',
      details: { integration: integration.id, provider: integration.provider },
    });
    await this.em.flush();
    return integration;
  }

  /**
   * The provider refused the credentials or failed (for a sync engine to call): the integration
   * moves to `error`, with the reason and its time, and `integration.error` is written once per
   * move (a second failure while in error only updates the reason). A disconnected integration is
   * left as it is.
   */
  async markError(integration: Integration, reason: string): Promise<Integration> {
    if (integration.status === IntegrationStatus.disconnected) return integration;
    const before = this.events.snapshot(integration);
    const wasError = integration.status === IntegrationStatus.error;
    integration.status = IntegrationStatus.error;
    integration.lastError = reason.slice(0, MAX_LAST_ERROR);
    integration.lastErrorAt = new Date();
    if (!wasError) this.events.record('integration.error', integration, before);
    await this.em.flush();
    return integration;
  }

  /**
   * A call to the provider succeeded (for a sync engine to call): an integration in `error` moves
   * back to `connected`, and last_synced_at is set. last_error stays, as history.
   */
  async markHealthy(integration: Integration, syncedAt: Date = new Date()): Promise<Integration> {
    if (integration.status === IntegrationStatus.disconnected) return integration;
    integration.status = IntegrationStatus.connected;
    integration.lastSyncedAt = syncedAt;
    await this.em.flush();
    return integration;
  }

  /**
   * Stores credentials the provider replaced since they were given (Partner Center's token endpoint
   * rotates the refresh token at each grant), encrypted like the first ones. Not a change a client
   * sees (nothing about credentials is shown but the hint, which names the client secret), so no
   * event and no updated_at; a disconnected integration's destroyed credentials stay destroyed.
   */
  async replaceCredentials(integration: Integration, credentials: Record<string, string>): Promise<void> {
    await this.em.nativeUpdate(
      Integration,
      { id: integration.id, status: { $ne: IntegrationStatus.disconnected } },
      { credentialsEncrypted: encryptJson(credentials, this.key) },
    );
  }

  /** The provider's connected integration in this account and mode, or null (co-sell needs microsoft365 in test mode, partner_center in live mode). */
  connectedIntegration(provider: IntegrationProvider): Promise<Integration | null> {
    return this.em.findOne(Integration, { provider, status: IntegrationStatus.connected });
  }

  /** The decrypted credentials of a connected integration, for calling the provider. Never for a response. */
  async credentialsOf(integration: Integration): Promise<Record<string, string>> {
    // credentialsEncrypted is lazy (not loaded with the row): read it now, and a disconnect made meanwhile shows.
    const row = await this.em.findOne(Integration, { id: integration.id }, { populate: ['credentialsEncrypted'], refresh: true });
    if (!row?.credentialsEncrypted) {
      throw new ApiError('resource_missing', `Integration ${integration.id} is disconnected; its credentials were destroyed`, { param: 'id' });
    }
    return decryptJson<Record<string, string>>(row.credentialsEncrypted, this.key);
  }
}

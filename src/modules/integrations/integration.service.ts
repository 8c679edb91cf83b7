import { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { decryptJson, encryptJson } from '../../common/crypto';
import { ApiError, notFound } from '../../common/api-error';
import { isId } from '../../common/ids';
import { findPage, Page } from '../../common/pagination';
import { createScoped } from '../../db/tenant';
import type { EventRecorder } from '../../events/event-recorder';
import { validateCredentials } from './integration-credentials';
import { Integration, IntegrationProvider, IntegrationStatus } from './integration.entity';
import { IntegrationConnectInput, IntegrationListInput } from './integration.inputs';

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
  ) {}

  /**
   * One connected integration per provider, account and mode: the partial unique index
   * integrations_connected_provider_unique refuses a second (409 resource_conflict), race-free.
   */
  async connect(input: IntegrationConnectInput): Promise<Integration> {
    const { credentials, hint } = validateCredentials(input.type, input.provider, input.credentials);
    const name = input.name?.trim();
    const integration = createScoped(this.em, Integration, {
      type: input.type,
      provider: input.provider,
      status: IntegrationStatus.connected,
      name: name ? name : null,
      credentialsEncrypted: encryptJson(credentials, this.key),
      credentialsHint: hint,
      connectedAt: new Date(),
    });
    this.events.record('integration.connected', integration);
    await this.em.flush();
    return integration;
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
    await this.em.flush();
    return integration;
  }

  /** The provider's connected integration in this account and mode, or null (co-sell needs microsoft365). */
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

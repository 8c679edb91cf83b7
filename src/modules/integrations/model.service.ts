import type { EntityManager } from '@mikro-orm/postgresql';
import { Integration, IntegrationStatus, IntegrationType } from './integration.entity';
import type { IntegrationService } from './integration.service';
import type { ProviderSettings } from './providers/provider-settings';
import { LlmClient } from './providers/llm-client';
import { isLlmProvider } from './providers/llm-fetch';

/** The account's connected model, ready to call, and what to do when it refuses the key. */
export interface ConnectedModel {
  client: LlmClient;
  integrationId: string;
  /** The provider refused the credentials: the integration moves to `error` (integration.error), and writers use templates until it is fixed. */
  refused(reason: string): Promise<void>;
}

/**
 * The model of the account and mode (an `llm` integration that is connected), for agents that
 * write. One is connected at most per provider; with several, the earliest connected is used.
 * An integration in `error` is not used: its key was refused, or its server kept failing.
 */
export class ModelService {
  constructor(
    private readonly em: EntityManager,
    private readonly integrations: IntegrationService,
    private readonly providers: ProviderSettings,
  ) {}

  async connected(): Promise<ConnectedModel | null> {
    const integration = await this.em.findOne(
      Integration,
      { type: IntegrationType.llm, status: IntegrationStatus.connected },
      { orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    if (!integration || !isLlmProvider(integration.provider)) return null;
    const credentials = await this.integrations.credentialsOf(integration);
    const model = typeof integration.settings?.model === 'string' ? integration.settings.model : null;
    if (!model) return null;
    const client = new LlmClient(integration.provider, credentials, model, this.providers, { timeoutMs: this.providers.llmTimeoutMs });
    return {
      client,
      integrationId: integration.id,
      refused: async (reason) => {
        await this.integrations.markError(integration, reason);
      },
    };
  }
}

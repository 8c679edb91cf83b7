import { SYNC_PROVIDERS } from './providers/crm-client';

/**
 * The kinds of integration and their providers, free of ORM and GraphQL so that the workspace's
 * browser bundle (src/web/workspace/integrations-api.ts) offers exactly what the service takes.
 * integration.entity.ts registers the enums with GraphQL and re-exports them.
 */

export enum IntegrationType {
  crm = 'crm',
  psa = 'psa',
  m365 = 'm365',
  /** A model provider the account brings: its own key, its own model, for the agents that write. */
  llm = 'llm',
}

export enum IntegrationProvider {
  salesforce = 'salesforce',
  hubspot = 'hubspot',
  connectwise = 'connectwise',
  autotask = 'autotask',
  halopsa = 'halopsa',
  microsoft365 = 'microsoft365',
  /** Microsoft Partner Center's referrals API, where live co-sell registrations go (type m365: it is Microsoft's, like microsoft365). */
  partner_center = 'partner_center',
  /** OpenAI's API (OPENAI_API_URL). */
  openai = 'openai',
  /** A model deployment of an Azure OpenAI resource. */
  azure_openai = 'azure_openai',
  /** Any server speaking OpenAI's Chat Completions API at a base URL the account names (Ollama, vLLM, llama.cpp's server, LM Studio). */
  openai_compatible = 'openai_compatible',
}

/** Which providers each type offers (CONTRACT §9). */
export const PROVIDERS_BY_TYPE: Record<IntegrationType, IntegrationProvider[]> = {
  crm: [IntegrationProvider.salesforce, IntegrationProvider.hubspot],
  psa: [IntegrationProvider.connectwise, IntegrationProvider.autotask, IntegrationProvider.halopsa],
  // Partner Center sits beside Microsoft 365 under m365 (CONTRACT §9's set of types stays as it is):
  // the one-per-provider index lets an account hold both.
  m365: [IntegrationProvider.microsoft365, IntegrationProvider.partner_center],
  llm: [IntegrationProvider.openai, IntegrationProvider.azure_openai, IntegrationProvider.openai_compatible],
};

/**
 * The providers whose integrations get runs: the CRMs and PSAs (our objects) and Microsoft 365 (the
 * agents' follow-ups). Partner Center, an m365 provider too, is worked by the co-sell worker.
 */
export const RUN_PROVIDERS: readonly string[] = [...SYNC_PROVIDERS, IntegrationProvider.microsoft365];

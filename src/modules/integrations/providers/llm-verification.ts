import type { ProviderSettings } from './provider-settings';
import { AZURE_OPENAI_API_VERSION, LLM_NAMES, llmEndpoint, LlmProvider } from './llm-fetch';
import { jsonOf, ProviderResponse } from './provider-http';
import { callOptions, isSuccess, notUsable, refused, verificationCall } from './verification-outcomes';

/** OpenAI's error body ({error: {message, type, param, code}}), which Azure OpenAI and most compatible servers answer too. */
function openaiReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { error?: { message?: unknown; code?: unknown } | string; detail?: unknown } | undefined;
  const error = body?.error;
  if (typeof error === 'string') return error;
  if (typeof error?.message === 'string' && error.message) return typeof error.code === 'string' ? `${error.code}: ${error.message}` : error.message;
  if (typeof error?.code === 'string') return error.code;
  return typeof body?.detail === 'string' ? body.detail : `answered ${response.status}`;
}

/** The key is the one secret: the deployment and the base URL are identifiers the reason may name. */
const secretsOf = (credentials: Record<string, string>) => ({ api_key: credentials.api_key });

/**
 * OpenAI and compatible servers: `GET {base}/models` with the key as a bearer token ("List
 * models"), the cheapest authenticated read, which costs no tokens. 401 (a wrong or revoked key)
 * and 403 (a key without access, a region OpenAI does not serve) are refusals.
 */
function verifyModels(provider: 'openai' | 'openai_compatible') {
  return async (credentials: Record<string, string>, settings: ProviderSettings): Promise<void> => {
    const name = LLM_NAMES[provider];
    const endpoint = llmEndpoint(provider, credentials, settings);
    const options = callOptions(settings, Date.now() + settings.timeoutMs, endpoint.host);
    const secrets = secretsOf(credentials);
    const models = await verificationCall(
      name,
      { method: 'GET', url: `${endpoint.url}/models`, headers: { authorization: `Bearer ${credentials.api_key}` } },
      options,
      secrets,
    );
    if (isSuccess(models)) return;
    if (models.status === 401 || models.status === 403) throw refused(name, openaiReason(models), secrets);
    throw notUsable(name, models, secrets);
  };
}

/**
 * Azure OpenAI: the data plane has no read that proves both the key and the deployment, so the
 * smallest chat completion on the deployment is made (`POST
 * {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=…` with the `api-key`
 * header, a one-word prompt). 401/403 are a refused key, 404 (DeploymentNotFound) a deployment the
 * resource does not have, 400 a deployment that cannot take chat completions (an embeddings
 * model): each a refusal in Azure's words.
 */
async function verifyAzureOpenai(credentials: Record<string, string>, settings: ProviderSettings): Promise<void> {
  const name = LLM_NAMES.azure_openai;
  const endpoint = llmEndpoint('azure_openai', credentials, settings);
  const options = callOptions(settings, Date.now() + settings.timeoutMs, endpoint.host);
  const deployment = credentials.deployment;
  const secrets = secretsOf(credentials);
  const completion = await verificationCall(
    name,
    {
      method: 'POST',
      url: `${endpoint.url}/openai/deployments/${encodeURIComponent(deployment)}/chat/completions?api-version=${AZURE_OPENAI_API_VERSION}`,
      headers: { 'api-key': credentials.api_key, 'content-type': 'application/json' },
      // No token limit: o-series deployments refuse max_tokens, and some others max_completion_tokens, though Azure's 2024-10-21 document lists both.
      body: JSON.stringify({ messages: [{ role: 'user', content: 'ping' }] }),
    },
    options,
    secrets,
  );
  if (isSuccess(completion)) return;
  if (completion.status === 401 || completion.status === 403) throw refused(name, openaiReason(completion), secrets);
  if (completion.status === 404) throw refused(name, `the deployment ${deployment} was not found (${openaiReason(completion)})`, secrets);
  if (completion.status === 400) throw refused(name, `the deployment ${deployment} refused a chat completion (${openaiReason(completion)})`, secrets);
  throw notUsable(name, completion, secrets);
}

export const LLM_VERIFIERS: Record<LlmProvider, (credentials: Record<string, string>, settings: ProviderSettings) => Promise<void>> = {
  openai: verifyModels('openai'),
  openai_compatible: verifyModels('openai_compatible'),
  azure_openai: verifyAzureOpenai,
};

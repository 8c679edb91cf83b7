import { outboundRequest } from '../../../http/outbound-request';
import type { ProviderSettings } from './provider-settings';
import { callOptions } from './verification-outcomes';

/**
 * Where a model provider is reached, and how that host is guarded: OpenAI at OPENAI_API_URL (the
 * operator's), an Azure OpenAI resource at its endpoint and a compatible server at its base_url
 * (both named by the customer, so through the address guard unless private addresses are allowed;
 * AZURE_OPENAI_ENDPOINT_URL outside production stands in for every Azure endpoint).
 */
export interface LlmEndpoint {
  /** Without a trailing slash. OpenAI and compatible servers: the base the API's paths follow (…/v1); Azure: the resource's endpoint. */
  url: string;
  host: 'configured' | 'named';
}

export type LlmProvider = 'openai' | 'azure_openai' | 'openai_compatible';

export const LLM_PROVIDERS: readonly LlmProvider[] = ['openai', 'azure_openai', 'openai_compatible'];

export const isLlmProvider = (provider: string): provider is LlmProvider => (LLM_PROVIDERS as readonly string[]).includes(provider);

/** The Azure OpenAI data-plane API version every call names: the GA version with structured outputs (json_schema). */
export const AZURE_OPENAI_API_VERSION = '2024-10-21';

/** The names people know, for messages. */
export const LLM_NAMES: Record<LlmProvider, string> = {
  openai: 'OpenAI',
  azure_openai: 'Azure OpenAI',
  openai_compatible: 'The model server',
};

const trimmed = (url: string) => url.replace(/\/+$/, '');

export function llmEndpoint(provider: LlmProvider, credentials: Record<string, string>, settings: ProviderSettings): LlmEndpoint {
  switch (provider) {
    case 'openai':
      return { url: settings.openaiApiUrl, host: 'configured' };
    case 'azure_openai':
      return settings.azureOpenaiEndpointUrl
        ? { url: settings.azureOpenaiEndpointUrl, host: 'configured' }
        : { url: trimmed(credentials.endpoint), host: 'named' };
    case 'openai_compatible':
      return { url: trimmed(credentials.base_url), host: 'named' };
  }
}

/** A model's answer can be long (a drafted e-mail and its reasoning fields), but never this long. */
const MAX_ANSWER_CHARS = 1024 * 1024;

/** Why the guarded exchange gave no answer; its message says "timed out" for the deadline, which the SDK reports as a timeout. */
export class LlmTransportError extends Error {}

/** Headers an answer may not carry with a body (the Fetch API refuses a body for these statuses). */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * The `fetch` the openai SDK is given, so that every request it makes goes through the service's
 * one outbound exchange (src/http/outbound-request.ts): the address guard checked on the
 * connection itself, no redirects followed, a deadline of `timeoutMs` per request, a bounded
 * answer. Nothing here logs: the headers carry the key and the bodies the prompts.
 */
export function guardedFetch(settings: ProviderSettings, host: LlmEndpoint['host'], timeoutMs: number) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const target = new URL(url);
    if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new LlmTransportError(`${target.protocol} is not http or https`);
    if (init?.body !== undefined && init.body !== null && typeof init.body !== 'string') throw new LlmTransportError('only text bodies are sent');
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    // The answer is read as text as it arrives: never ask for a compressed one.
    delete headers['accept-encoding'];
    const body = init?.body ?? undefined;
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body).toString();
    const options = callOptions(settings, Date.now() + timeoutMs, host);
    const outcome = await outboundRequest(
      { method: init?.method ?? 'GET', url, headers, body },
      { deadline: options.deadline, allowPrivate: !options.guard, resolve: options.resolve, maxAnswerChars: MAX_ANSWER_CHARS },
    );
    switch (outcome.kind) {
      case 'answered': {
        if (outcome.text.length >= MAX_ANSWER_CHARS) throw new LlmTransportError(`the answer was longer than ${MAX_ANSWER_CHARS} characters`);
        const status = outcome.status ?? 0;
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(outcome.headers)) {
          if (value === undefined) continue;
          for (const one of Array.isArray(value) ? value : [value]) answerHeaders.append(name, one);
        }
        // The answer was read whole and decoded here: the Fetch API must not decode it again.
        answerHeaders.delete('content-encoding');
        answerHeaders.delete('content-length');
        if (status < 200 || status > 599) throw new LlmTransportError(`answered with status ${status}`);
        return new Response(NO_BODY.has(status) ? null : outcome.text, { status, headers: answerHeaders });
      }
      case 'broken':
        throw new LlmTransportError('the connection broke during the answer');
      case 'refused':
        throw new LlmTransportError(outcome.message);
      case 'timed-out':
        throw new LlmTransportError(`timed out after ${timeoutMs} ms`);
      case 'network-error':
        throw new LlmTransportError(outcome.code ?? 'network error');
      case 'unsendable':
        throw new LlmTransportError(`the request could not be sent (${outcome.error.code ?? 'invalid request'})`);
    }
  };
}

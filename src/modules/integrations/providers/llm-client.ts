import OpenAI, { AzureOpenAI } from 'openai';
import type { JsonSchema } from '../../../common/json-schema';
import type { ProviderSettings } from './provider-settings';
import { AZURE_OPENAI_API_VERSION, guardedFetch, LLM_NAMES, llmEndpoint, LlmProvider } from './llm-fetch';
import { LlmAuthError, LlmMalformedOutput, LlmModelRefusal, LlmRequestRejected, LlmTimeout, LlmUnavailable } from './llm-errors';
import { schemaProblem } from './llm-schema';
import { FailureRule, pauseAfterFailure } from './provider-session';
import { cleanReason } from './verification-outcomes';

export * from './llm-errors';

/** What one completion asks: instructions, the input, and the JSON Schema the answer must fit. */
export interface LlmRequest {
  system: string;
  user: string;
  /** A strict structured-outputs schema: every property required, additionalProperties false. */
  schema: JsonSchema;
  /** The schema's name for the provider (letters, digits, _ and -). */
  schemaName: string;
}

/** Tokens spent, as the provider counted them, and the model that answered. */
export interface LlmUsage {
  prompt_tokens: number;
  completion_tokens: number;
  model: string;
}

export interface LlmCompletion<T> {
  value: T;
  usage: LlmUsage;
}

export interface LlmClientOptions {
  /** The deadline of each request, connection to last byte (default 60 s: a model writes slower than a CRM reads). */
  timeoutMs?: number;
  /** Requests made at most for one completion, the first included (default 3). */
  maxAttempts?: number;
  /** A wait longer than this (a Retry-After, or a backoff) is not waited for: the completion fails as unavailable (default 30 s). */
  maxRetryAfterMs?: number;
  /** The first backoff after a 5xx or a dropped connection, doubled each time (default 1 s). */
  backoffMs?: number;
  /** How waiting is done (tests pass one that records the waits and returns at once). */
  sleep?: (ms: number) => Promise<void>;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * An account's model, reached through the openai SDK (OpenAI, Azure OpenAI, or any server speaking
 * Chat Completions), with every request going through the service's guarded outbound exchange
 * (llm-fetch.ts). The SDK's own retries are off: this class retries 429 (after Retry-After, when
 * it is not too long), 5xx and dropped connections with backoff, a bounded number of times, and
 * never a timeout (a hung model would multiply the wait). Nothing is logged: the prompts carry
 * customers' data and the headers the key; error messages have every credential value taken out.
 *
 * The SDK owns the transport (it builds each request and reads its answer through our fetch), so
 * a ProviderSession cannot carry the call; the decision to try again is still the session's one
 * function (pauseAfterFailure), given this client's schedule.
 */
export class LlmClient {
  private readonly sdk: OpenAI;
  private readonly name: string;
  private readonly timeoutMs: number;
  /** After a 429 its Retry-After, else a pause doubling from options.backoffMs: as many further tries as pauses. */
  private readonly retries: Pick<FailureRule, 'backoffMs' | 'pauseForRetryAfter'>;
  private readonly maxWaitMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    provider: LlmProvider,
    private readonly credentials: Record<string, string>,
    /** The model named in each request (Azure routes by the deployment, and answers with the deployment's model). */
    readonly model: string,
    settings: ProviderSettings,
    options: LlmClientOptions = {},
  ) {
    this.name = LLM_NAMES[provider];
    this.timeoutMs = options.timeoutMs ?? 60_000;
    const firstBackoffMs = options.backoffMs ?? 1_000;
    const backoffMs = Array.from({ length: Math.max(1, options.maxAttempts ?? 3) - 1 }, (_, i) => firstBackoffMs * 2 ** i);
    this.retries = { backoffMs, pauseForRetryAfter: true };
    this.maxWaitMs = options.maxRetryAfterMs ?? 30_000;
    this.sleep = options.sleep ?? sleepFor;
    const endpoint = llmEndpoint(provider, credentials, settings);
    const common = {
      apiKey: credentials.api_key,
      fetch: guardedFetch(settings, endpoint.host, this.timeoutMs),
      // Past our own deadline, so the guarded exchange's timeout is the one that ends a request.
      timeout: this.timeoutMs + 1_000,
      maxRetries: 0,
      logLevel: 'off' as const,
    };
    // Every option named, so nothing is read from the process's OPENAI_* variables.
    this.sdk =
      provider === 'azure_openai'
        ? new AzureOpenAI({ ...common, baseURL: `${endpoint.url}/openai`, deployment: credentials.deployment, apiVersion: AZURE_OPENAI_API_VERSION })
        : new OpenAI({ ...common, baseURL: endpoint.url, organization: null, project: null, webhookSecret: null });
  }

  /** A structured answer: the model's JSON, parsed and checked against `request.schema`, and the tokens it cost. */
  async complete<T>(request: LlmRequest): Promise<LlmCompletion<T>> {
    const completion = await this.withRetries(() =>
      this.sdk.chat.completions.create({
        model: this.model,
        messages: [
          { role: 'system', content: request.system },
          { role: 'user', content: request.user },
        ],
        response_format: { type: 'json_schema', json_schema: { name: request.schemaName, schema: request.schema, strict: true } },
      }),
    );
    const usage: LlmUsage = {
      prompt_tokens: completion.usage?.prompt_tokens ?? 0,
      completion_tokens: completion.usage?.completion_tokens ?? 0,
      model: completion.model || this.model,
    };
    const message = completion.choices?.[0]?.message;
    if (!message) throw new LlmMalformedOutput(`${this.name} answered no choice`, usage);
    if (message.refusal) throw new LlmModelRefusal(`the model refused: ${this.clean(message.refusal)}`, usage);
    if (typeof message.content !== 'string' || message.content === '') throw new LlmMalformedOutput('the model answered no content', usage);
    let value: unknown;
    try {
      value = JSON.parse(message.content);
    } catch {
      throw new LlmMalformedOutput(`the model's answer is not JSON (finish_reason ${completion.choices[0].finish_reason})`, usage);
    }
    const problem = schemaProblem(value, request.schema);
    if (problem) throw new LlmMalformedOutput(`the model's answer does not fit the schema ${request.schemaName}: ${problem}`, usage);
    return { value: value as T, usage };
  }

  /** 429s and 5xx share one count of tries, so maxAttempts bounds a completion's requests whatever went wrong. */
  private async withRetries<T>(call: () => Promise<T>): Promise<T> {
    for (let failures = 0; ; failures++) {
      try {
        return await call();
      } catch (error) {
        const failure = this.failureOf(error);
        const waitMs = failure instanceof LlmUnavailable ? pauseAfterFailure(this.retries, this.maxWaitMs, failures, failure.retryAfterMs) : undefined;
        if (waitMs === undefined) throw failure;
        await this.sleep(waitMs);
      }
    }
  }

  /** The SDK's error (or anything else thrown) as one of ours. */
  private failureOf(error: unknown): Error {
    if (error instanceof OpenAI.APIConnectionTimeoutError) return new LlmTimeout(`${this.name} did not answer within ${this.timeoutMs} ms`);
    if (error instanceof OpenAI.APIConnectionError) {
      const cause = (error as { cause?: unknown }).cause;
      return new LlmUnavailable(`${this.name} could not be reached (${this.clean(cause instanceof Error ? cause.message : error.message)})`);
    }
    if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
      const reason = this.clean(error.message);
      if (error.status === 401 || error.status === 403) return new LlmAuthError(`${this.name} refused the credentials: ${reason}`, error.status);
      if (error.status === 429) return new LlmUnavailable(`${this.name} is rate limiting: ${reason}`, error.status, retryAfterMs(error.headers));
      if (error.status >= 500) return new LlmUnavailable(`${this.name} failed: ${reason}`, error.status);
      return new LlmRequestRejected(`${this.name} rejected the request: ${reason}`, error.status);
    }
    // A 200 whose body is no chat completion (a proxy's HTML page): the server is not usable as a model now.
    // By name: the Fetch API's Response.json() may throw another realm's SyntaxError.
    if ((error as { name?: unknown } | null)?.name === 'SyntaxError')
      return new LlmUnavailable(`${this.name} answered something that is not a chat completion`);
    return error instanceof Error ? error : new Error(String(error));
  }

  private clean(text: string): string {
    return cleanReason(text, { api_key: this.credentials.api_key });
  }
}

/** Retry-After-Ms (OpenAI's), else Retry-After in seconds or as an HTTP date; undefined without either. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const millis = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(millis) && millis >= 0) return millis;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  const ms = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.max(0, ms) : undefined;
}

import { randomUUID } from 'node:crypto';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';

/**
 * What the fake model answers to one chat completion, in the order scripted: JSON content, text
 * that is not JSON, a refusal (the message's `refusal` set, content null), a 429 with
 * Retry-After, or a 5xx. The base fake's hang() plays a model that never answers.
 */
export type ChatScript =
  | { kind: 'json'; value: unknown; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { kind: 'malformed'; text?: string }
  | { kind: 'refusal'; text?: string }
  | { kind: 'rate_limited'; retryAfterS: number }
  | { kind: 'failure'; status: number };

/** One chat completion the fake received, its body parsed: what a test asserts (model, messages, response_format). */
export interface SeenChat {
  path: string;
  /** The Azure deployment in the path, or null for OpenAI's /v1/chat/completions. */
  deployment: string | null;
  apiVersion: string | null;
  /** The key sent: the bearer token (OpenAI, compatible servers) or the api-key header (Azure). */
  key: string | null;
  body: {
    model?: string;
    messages?: Array<{ role: string; content: string }>;
    response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
    max_tokens?: number;
  };
}

const OPENAI_PREFIX = '/v1';
const AZURE_DEPLOYMENT = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;

/**
 * A loopback model provider speaking OpenAI's Chat Completions API as its API reference documents
 * it: `GET /v1/models` ("List models"), `POST /v1/chat/completions` ("Create chat completion",
 * bearer key), and Azure OpenAI's `POST /openai/deployments/{deployment}/chat/completions
 * ?api-version=…` with the `api-key` header. One server plays OpenAI (OPENAI_API_URL = {url}/v1), a
 * compatible server (base_url = {url}/v1) and every Azure resource (AZURE_OPENAI_ENDPOINT_URL = {url}).
 * Errors are OpenAI's `{error: {message, type, param, code}}`. Chat completions answer from the
 * script, then `{"ok": true}` once it is used up.
 */
export class FakeChatCompletions extends FakeProvider {
  /** Keys that are accepted (OpenAI's bearer tokens and Azure's api-key alike). */
  readonly keys = new Set<string>(['sk-fake-openai-key-0001']);
  /** Azure deployments that exist, and the model each runs. */
  readonly deployments = new Map<string, string>([['gpt-4o-mini', 'gpt-4o-mini-2024-07-18']]);
  private readonly script: ChatScript[] = [];
  private readonly acceptAny: boolean;

  constructor(options: { acceptAny?: boolean } = {}) {
    super();
    this.acceptAny = options.acceptAny ?? false;
  }

  /** The next chat completions' answers, in order. */
  answerWith(...steps: ChatScript[]): void {
    this.script.push(...steps);
  }

  /** Forgets what was scripted and not yet answered (between tests). */
  clearScript(): void {
    this.script.length = 0;
  }

  /** The chat completions received, oldest first. */
  chats(): SeenChat[] {
    return this.requests.flatMap((request) => {
      const [path, query] = request.path.split('?');
      const azure = AZURE_DEPLOYMENT.exec(path);
      if (request.method !== 'POST' || (!azure && path !== `${OPENAI_PREFIX}/chat/completions`)) return [];
      let body: SeenChat['body'] = {};
      try {
        body = JSON.parse(request.body) as SeenChat['body'];
      } catch {
        // Recorded all the same: a test sees that the body was not JSON.
      }
      return [
        {
          path,
          deployment: azure ? decodeURIComponent(azure[1]) : null,
          apiVersion: new URLSearchParams(query ?? '').get('api-version'),
          key: keyOf(request),
          body,
        },
      ];
    });
  }

  protected answer(request: SeenRequest): FakeAnswer {
    const [path, query] = request.path.split('?');
    const azure = AZURE_DEPLOYMENT.exec(path);
    if (azure) return this.azureChat(request, decodeURIComponent(azure[1]), new URLSearchParams(query ?? '').get('api-version'));
    if (!this.authorized(bearerOf(request))) {
      // OpenAI shows part of the key it refused; the fake shows all of it, so a test proves we never pass it on.
      return openaiError(
        401,
        `Incorrect API key provided: ${bearerOf(request) ?? ''}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    if (request.method === 'GET' && path === `${OPENAI_PREFIX}/models`) {
      const created = 1_700_000_000;
      return {
        status: 200,
        body: {
          object: 'list',
          data: ['gpt-4o-mini', 'gpt-4o'].map((id) => ({ id, object: 'model', created, owned_by: 'system' })),
        },
      };
    }
    if (request.method === 'POST' && path === `${OPENAI_PREFIX}/chat/completions`) return this.chat(request, null);
    return openaiError(404, `Invalid URL (${request.method} ${path})`, 'invalid_request_error', null);
  }

  protected rateLimitedAnswer(retryAfterS: number): FakeAnswer {
    const answer = openaiError(429, 'Rate limit reached for requests', 'requests', 'rate_limit_exceeded');
    return { ...answer, headers: { 'retry-after': String(retryAfterS) } };
  }

  protected failureAnswer(status: number): FakeAnswer {
    return openaiError(status, 'The server had an error while processing your request. Sorry about that!', 'server_error', null);
  }

  private authorized(key: string | null): boolean {
    return key !== null && (this.acceptAny || this.keys.has(key));
  }

  private azureChat(request: SeenRequest, deployment: string, apiVersion: string | null): FakeAnswer {
    if (!apiVersion) return openaiError(404, 'Resource not found', null, '404');
    if (!this.authorized((request.headers['api-key'] as string | undefined) ?? null)) {
      return openaiError(
        401,
        'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
        null,
        '401',
      );
    }
    const model = this.deployments.get(deployment);
    if (!model) {
      return openaiError(
        404,
        'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
        null,
        'DeploymentNotFound',
      );
    }
    return this.chat(request, model);
  }

  /** A chat completion as "Create chat completion" answers it, from the next scripted step. */
  private chat(request: SeenRequest, deployedModel: string | null): FakeAnswer {
    let body: { model?: unknown; messages?: unknown };
    try {
      body = JSON.parse(request.body) as typeof body;
    } catch {
      return openaiError(400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null);
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return openaiError(400, "Missing required parameter: 'messages'.", 'invalid_request_error', 'missing_required_parameter');
    }
    if (deployedModel === null && typeof body.model !== 'string') {
      return openaiError(400, 'you must provide a model parameter', 'invalid_request_error', null);
    }
    const step: ChatScript = this.script.shift() ?? { kind: 'json', value: { ok: true } };
    if (step.kind === 'rate_limited') return this.rateLimitedAnswer(step.retryAfterS);
    if (step.kind === 'failure') return this.failureAnswer(step.status);
    const promptChars = JSON.stringify(body.messages).length;
    const message =
      step.kind === 'json'
        ? { role: 'assistant', content: JSON.stringify(step.value), refusal: null }
        : step.kind === 'malformed'
          ? { role: 'assistant', content: step.text ?? '{"subject": "Hello", "body": ', refusal: null }
          : { role: 'assistant', content: null, refusal: step.text ?? "I'm sorry, I can't help with that request." };
    const usage = step.kind === 'json' && step.usage ? step.usage : { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: 12 };
    return {
      status: 200,
      headers: { 'x-request-id': `req_${randomUUID().replace(/-/g, '')}` },
      body: {
        id: `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 24)}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: deployedModel ?? (body.model as string),
        choices: [{ index: 0, message, logprobs: null, finish_reason: step.kind === 'malformed' ? 'length' : 'stop' }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        system_fingerprint: 'fp_fake',
      },
    };
  }
}

function keyOf(request: SeenRequest): string | null {
  const apiKey = request.headers['api-key'];
  return typeof apiKey === 'string' ? apiKey : bearerOf(request);
}

function openaiError(status: number, message: string, type: string | null, code: string | null): FakeAnswer {
  return { status, body: { error: { message, type, param: null, code } } };
}

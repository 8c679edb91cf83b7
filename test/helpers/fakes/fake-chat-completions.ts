import { randomUUID } from 'node:crypto';
import { bearerOf, FakeAnswer, FakeProvider, SeenRequest } from './fake-provider';
import { ConformanceLog, DocumentedOperation, OpenApiConformance } from './openapi-conformance';

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
  body: ChatBody;
}

interface ChatBody {
  model?: string;
  messages?: Array<{ role: string; content: string }>;
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
  max_tokens?: number;
  max_completion_tokens?: number;
}

/** An answer of the fake that OpenAI's or Azure's document refuses: the fake is wrong, and the test that saw it fails. */
export class ChatAnswerViolation extends Error {
  override readonly name = 'ChatAnswerViolation';
}

/** An error as OpenAI writes it; Azure leaves out the fields it has no value for (its document types them as strings, never null). */
interface ErrorFields {
  message: string;
  type: string | null;
  param: string | null;
  code: string | null;
}

/** The documents' paths follow their servers' base: https://api.openai.com/v1 and https://{endpoint}/openai. */
const OPENAI_PREFIX = '/v1';
const AZURE_PREFIX = '/openai';
const AZURE_DEPLOYMENT = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;
/** OpenAI's reasoning models (o1, o3-mini, o4-mini, …): the document says max_tokens "is not compatible with o-series models". */
const O_SERIES = /^o\d/;

/**
 * A loopback model provider speaking OpenAI's Chat Completions API as OpenAI's published OpenAPI
 * document describes it, and Azure OpenAI's as Azure's data-plane document for api-version
 * 2024-10-21 does (both pinned and vendored in test/fixtures/provider-specs/openai):
 * `GET /v1/models` ("List models") and `POST /v1/chat/completions` ("Create chat completion")
 * with a bearer key, and Azure's `POST /openai/deployments/{deployment}/chat/completions
 * ?api-version=…` with the `api-key` header. One server plays OpenAI (OPENAI_API_URL = {url}/v1),
 * a compatible server (base_url = {url}/v1) and every Azure resource (AZURE_OPENAI_ENDPOINT_URL =
 * {url}).
 *
 * Every request is checked against its document (openapi-conformance.ts) once its key is accepted:
 * one the document refuses is answered 400 as OpenAI answers invalid input ({error: {message, type:
 * invalid_request_error, param, code}}), one no document describes 404. Every answer is checked
 * against the operation's response schema, and one that violates it fails the test that caused it
 * (ChatAnswerViolation, thrown outside the exchange, which gets a 500); OpenAI's document describes
 * success answers only, Azure's its errors too. `conformance` keeps every call and every violation.
 * Beyond the schemas, a deployment or model of the o-series refuses max_tokens as OpenAI does (400
 * unsupported_parameter). Errors are OpenAI's `{error: {message, type, param, code}}`, Azure's
 * `{error: {code, message}}`. Chat completions answer from the script, then `{"ok": true}` once it
 * is used up.
 */
export class FakeChatCompletions extends FakeProvider {
  /** Keys that are accepted (OpenAI's bearer tokens and Azure's api-key alike). */
  readonly keys = new Set<string>(['sk-fake-openai-key-0001']);
  /** Azure deployments that exist, and the model each runs. */
  readonly deployments = new Map<string, string>([['gpt-4o-mini', 'gpt-4o-mini-2024-07-18']]);
  /** Every request by the documented operation it was for, and what the documents refused (`requests` has the raw requests). */
  override readonly conformance: ConformanceLog = { calls: [], violations: [] };
  private documents?: OpenApiConformance;
  private readonly script: ChatScript[] = [];
  private readonly acceptAny: boolean;

  constructor(options: { acceptAny?: boolean } = {}) {
    super();
    this.acceptAny = options.acceptAny ?? false;
  }

  override async start(): Promise<this> {
    this.documents = await OpenApiConformance.load('openai');
    return super.start();
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
      let body: ChatBody = {};
      try {
        body = JSON.parse(request.body) as ChatBody;
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
    const path = request.path.split('?')[0];
    const azure = path.startsWith(`${AZURE_PREFIX}/`);
    const prefix = azure ? AZURE_PREFIX : path.startsWith(`${OPENAI_PREFIX}/`) ? OPENAI_PREFIX : undefined;
    const relative = prefix === undefined ? undefined : request.path.slice(prefix.length);
    const documented = relative === undefined ? undefined : this.documents!.match(request.method, relative);
    let answer: FakeAnswer;
    if (relative === undefined || !documented) {
      this.conformance.violations.push({
        side: 'request',
        method: request.method,
        path,
        operation: null,
        errors: ['no vendored document describes this operation'],
      });
      answer = azure
        ? errorAnswer(404, { message: 'Resource not found', type: null, param: null, code: '404' }, true)
        : errorAnswer(404, { message: `Invalid URL (${request.method} ${path})`, type: 'invalid_request_error', param: null, code: null }, false);
    } else {
      answer = this.documentedAnswer(request, relative, documented, azure);
    }
    this.conformance.calls.push({ method: request.method, path, operation: documented?.name ?? null, status: answer.status });
    if (!documented) return answer;
    const errors = this.documents!.checkAnswer(documented, answer.status, answer.body);
    if (errors.length === 0) return answer;
    this.conformance.violations.push({ side: 'answer', method: request.method, path, operation: documented.name, status: answer.status, errors });
    const violation = new ChatAnswerViolation(`the fake's ${answer.status} to ${documented.name} violates the document: ${errors.join('; ')}`);
    // Thrown outside the exchange, so the test fails on it (jest's uncaught-error handling) while the client gets an answer.
    setImmediate(() => {
      throw violation;
    });
    return errorAnswer(500, { message: violation.message, type: 'server_error', param: null, code: null }, azure);
  }

  protected rateLimitedAnswer(retryAfterS: number, azure = false): FakeAnswer {
    const answer = azure
      ? errorAnswer(
          429,
          {
            message: `Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after ${retryAfterS} seconds.`,
            type: null,
            param: null,
            code: '429',
          },
          true,
        )
      : errorAnswer(429, { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' }, false);
    return { ...answer, headers: { 'retry-after': String(retryAfterS) } };
  }

  protected failureAnswer(status: number, azure = false): FakeAnswer {
    return azure
      ? errorAnswer(
          status,
          { message: 'The service is temporarily unable to process your request. Please try again later.', type: null, param: null, code: String(status) },
          true,
        )
      : errorAnswer(
          status,
          { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
          false,
        );
  }

  private authorized(key: string | null): boolean {
    return key !== null && (this.acceptAny || this.keys.has(key));
  }

  /** A documented request: its key (and Azure's api-version and deployment), then what the document says of it, then its answer. */
  private documentedAnswer(request: SeenRequest, relative: string, documented: DocumentedOperation, azure: boolean): FakeAnswer {
    const [path, query] = request.path.split('?');
    let deployedModel: string | null = null;
    if (azure) {
      // Azure answers a call without api-version 404, whatever its key.
      if (!new URLSearchParams(query ?? '').get('api-version')) {
        const errors = ["/query must have required property 'api-version'"];
        this.conformance.violations.push({ side: 'request', method: request.method, path, operation: documented.name, errors });
        return errorAnswer(404, { message: 'Resource not found', type: null, param: null, code: '404' }, true);
      }
      const refusal = this.azureRefusal(request, path);
      if (typeof refusal !== 'string') return refusal;
      deployedModel = refusal;
    } else if (!this.authorized(bearerOf(request))) {
      // OpenAI shows part of the key it refused; the fake shows all of it, so a test proves we never pass it on.
      return errorAnswer(
        401,
        {
          message: `Incorrect API key provided: ${bearerOf(request) ?? ''}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
        false,
      );
    }
    let body: unknown;
    if (request.method === 'POST') {
      try {
        body = JSON.parse(request.body);
      } catch {
        return errorAnswer(
          400,
          { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', param: null, code: null },
          azure,
        );
      }
    }
    const refused = this.documents!.checkRequest(documented, { method: request.method, path: relative, headers: request.headers, body });
    if (refused.length > 0) {
      this.conformance.violations.push({ side: 'request', method: request.method, path, operation: documented.name, errors: refused });
      const missing = refused[0].includes('must have required property');
      return errorAnswer(
        400,
        {
          message: `Invalid request: ${refused.join('; ')}`,
          type: 'invalid_request_error',
          param: paramOf(refused[0]),
          code: missing ? 'missing_required_parameter' : 'invalid_value',
        },
        azure,
      );
    }
    if (request.method === 'GET') return this.models();
    return this.chat(body as ChatBody, deployedModel, azure);
  }

  /** Azure's refusals before the body is read (the key, the deployment), else the deployment's model. */
  private azureRefusal(request: SeenRequest, path: string): FakeAnswer | string {
    if (!this.authorized((request.headers['api-key'] as string | undefined) ?? null)) {
      const message =
        'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.';
      return errorAnswer(401, { message, type: null, param: null, code: '401' }, true);
    }
    const model = this.deployments.get(decodeURIComponent(AZURE_DEPLOYMENT.exec(path)![1]));
    if (model) return model;
    const message =
      'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.';
    return errorAnswer(404, { message, type: null, param: null, code: 'DeploymentNotFound' }, true);
  }

  /** "List models": the models the key may use. */
  private models(): FakeAnswer {
    const created = 1_700_000_000;
    return { status: 200, body: { object: 'list', data: ['gpt-4o-mini', 'gpt-4o'].map((id) => ({ id, object: 'model', created, owned_by: 'system' })) } };
  }

  /** A chat completion as "Create chat completion" answers it, from the next scripted step. */
  private chat(body: ChatBody, deployedModel: string | null, azure: boolean): FakeAnswer {
    const model = deployedModel ?? body.model ?? '';
    if (O_SERIES.test(model) && body.max_tokens !== undefined) {
      const message = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
      return errorAnswer(400, { message, type: 'invalid_request_error', param: 'max_tokens', code: 'unsupported_parameter' }, azure);
    }
    const step: ChatScript = this.script.shift() ?? { kind: 'json', value: { ok: true } };
    if (step.kind === 'rate_limited') return this.rateLimitedAnswer(step.retryAfterS, azure);
    if (step.kind === 'failure') return this.failureAnswer(step.status, azure);
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
        model,
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

function errorAnswer(status: number, fields: ErrorFields, azure: boolean): FakeAnswer {
  const error = azure ? Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null)) : fields;
  return { status, body: { error } };
}

/** The field an Ajv message is about, as OpenAI names it in `param` (messages[0].role), or null for the whole request. */
function paramOf(error: string): string | null {
  const where = error.split(' ', 1)[0];
  // '/requestBody/messages/0/role' or '/query': the part after requestBody or query.
  const segments = where === '(root)' ? [] : where.split('/').slice(2);
  const missing = /must have required property '([^']+)'/.exec(error)?.[1];
  if (missing) segments.push(missing);
  return segments.reduce<string | null>(
    (param, segment) => (/^\d+$/.test(segment) ? `${param ?? ''}[${segment}]` : param ? `${param}.${segment}` : segment),
    null,
  );
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import {
  LlmAuthError,
  LlmClient,
  LlmMalformedOutput,
  LlmModelRefusal,
  LlmRequestRejected,
  LlmTimeout,
  LlmUnavailable,
} from '../../src/modules/integrations/providers/llm-client';
import type { LlmProvider } from '../../src/modules/integrations/providers/llm-fetch';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { FakeChatCompletions, FakeCrms, startFakeCrms } from '../helpers/fakes';
import { providerSettings } from '../helpers/provider-settings';
import { closedPort, expectRefused, SecretLedger, storedFor } from '../helpers/verification';

/**
 * Model providers (issue 23, "A model provider, the account's own"): connecting OpenAI, Azure
 * OpenAI or a compatible server is proven with the provider through real HTTP to the loopback
 * Chat Completions fake (test/helpers/fakes/fake-chat-completions.ts), settings.model is checked
 * per provider, and the model client (providers/llm-client.ts) is driven against the same fake:
 * the requests it sends, the answers it accepts, and how it fails.
 */

const ledger = new SecretLedger();
const DEPLOYMENT = 'gpt-4o-mini';

describe('model providers', () => {
  let fakes: FakeCrms;
  let chat: FakeChatCompletions;
  let app: TestApp;
  let account: TestAccount;

  const request = async (method: 'POST' | 'GET', path: string, body?: unknown): Promise<HttpResponse> => {
    const res = await app.request(method, path, { key: account.testKey, body });
    ledger.responses.push(res.text);
    return res;
  };
  const connect = (payload: unknown) => request('POST', '/v1/integrations', payload);
  /** A key the fake accepts, remembered as a secret. */
  const goodKey = () => {
    const key = ledger.secret('sk-proj-');
    chat.keys.add(key);
    return key;
  };
  const openai = (api_key: string, settings?: Record<string, unknown>) => ({ type: 'llm', provider: 'openai', credentials: { api_key }, settings });
  const azure = (api_key: string, deployment = DEPLOYMENT, settings?: Record<string, unknown>) => ({
    type: 'llm',
    provider: 'azure_openai',
    credentials: { api_key, endpoint: 'https://acme.openai.azure.com', deployment },
    settings,
  });
  const compatible = (base_url: string, api_key: string, settings: Record<string, unknown> | undefined = { model: 'llama3.1:8b' }) => ({
    type: 'llm',
    provider: 'openai_compatible',
    credentials: { base_url, api_key },
    settings,
  });

  beforeAll(async () => {
    fakes = await startFakeCrms();
    chat = fakes.chat;
    app = await startTestApp({
      crms: fakes,
      env: { LOG_LEVEL: 'info', INTEGRATION_TIMEOUT_MS: '1500' },
      logStream: ledger.logStream,
      operationLimits: { ...OPERATION_LIMITS, connectIntegration: { windowS: 60, max: 1_000_000 } },
    });
  });
  beforeEach(async () => {
    await app.reset();
    chat.recover();
    chat.clearScript();
    chat.requests.length = 0;
    chat.conformance.calls.length = 0;
    chat.conformance.violations.length = 0;
    account = await app.createAccount();
  });
  // Every request our service sent, and every answer the fake gave, is what OpenAI's or Azure's document allows.
  afterEach(() => expect(chat.conformance.violations).toEqual([]));
  afterAll(async () => {
    await app.close();
    await fakes.close();
  });

  describe('connecting', () => {
    it('openai: proven by GET /models with the key as a bearer token; model gpt-4o-mini unless given', async () => {
      const key = goodKey();
      const res = await connect(openai(key));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ type: 'llm', provider: 'openai', status: 'connected', credentials_hint: key.slice(-4) });
      expect(res.body.settings).toEqual({ stage_map: null, delivery_record: null, sales_rep: null, model: 'gpt-4o-mini' });
      const calls = chat.seen('/v1/models');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ method: 'GET', headers: { authorization: `Bearer ${key}` } });
      expect(await storedFor(app, account.account.id)).toEqual({ integrations: 1, events: 1 });

      const other = await app.createAccount();
      const chosen = await app.request('POST', '/v1/integrations', { key: other.testKey, body: openai(goodKey(), { model: 'gpt-4o' }) });
      expect(chosen.status).toBe(201);
      expect(chosen.body.settings.model).toBe('gpt-4o');
    });

    it('openai: a key OpenAI refuses is 422 integration_auth_failed in its words, without the key; nothing stored', async () => {
      const key = ledger.secret('sk-proj-wrong-');
      const res = await connect(openai(key));
      const message = expectRefused(res, 422, 'integration_auth_failed');
      expect(message).toMatch(/^OpenAI refused the credentials: invalid_api_key: Incorrect API key provided: \[redacted\]/);
      expect(res.text).not.toContain(key);
      expect(res.body.error.param).toBe('credentials');
      expect(await storedFor(app, account.account.id)).toEqual({ integrations: 0, events: 0 });
    });

    it('openai: 5xx, 429 and no answer are 502 integration_unreachable; nothing stored', async () => {
      chat.fail(503);
      expect(expectRefused(await connect(openai(goodKey())), 502, 'integration_unreachable')).toMatch(/^OpenAI could not be reached \(answered 503\)/);
      chat.rateLimit(9);
      const limited = await connect(openai(goodKey()));
      expect(expectRefused(limited, 502, 'integration_unreachable')).toMatch(/rate limited/);
      chat.hang();
      const started = Date.now();
      expect(expectRefused(await connect(openai(goodKey())), 502, 'integration_unreachable')).toMatch(/timed out/);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await storedFor(app, account.account.id)).toEqual({ integrations: 0, events: 0 });
    });

    it("azure_openai: proven by the smallest chat completion on the deployment, with the api-key header; the model is the deployment's", async () => {
      const key = goodKey();
      const res = await connect(azure(key));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ provider: 'azure_openai', credentials_hint: key.slice(-4) });
      expect(res.body.settings.model).toBe(DEPLOYMENT);
      const [call] = chat.chats();
      expect(call).toMatchObject({ path: `/openai/deployments/${DEPLOYMENT}/chat/completions`, deployment: DEPLOYMENT, apiVersion: '2024-10-21', key });
      expect(call.body).toEqual({ messages: [{ role: 'user', content: 'ping' }] });
      expect(chat.requests[0].headers.authorization).toBeUndefined();
    });

    it('azure_openai: an o-series deployment connects (it refuses max_tokens, so verification sends no token limit)', async () => {
      chat.deployments.set('o3-mini', 'o3-mini-2025-01-31');
      const res = await connect(azure(goodKey(), 'o3-mini'));
      expect(res.status).toBe(201);
      expect(res.body.settings.model).toBe('o3-mini');
      expect(chat.chats()).toMatchObject([{ deployment: 'o3-mini', body: { messages: [{ role: 'user', content: 'ping' }] } }]);
    });

    it('azure_openai: a refused key and a deployment the resource lacks are 422 in Azure words', async () => {
      const wrong = ledger.secret('azure-wrong-');
      const refusedKey = await connect(azure(wrong));
      expect(expectRefused(refusedKey, 422, 'integration_auth_failed')).toMatch(
        /^Azure OpenAI refused the credentials: 401: Access denied due to invalid subscription key/,
      );
      expect(refusedKey.text).not.toContain(wrong);
      const missing = await connect(azure(goodKey(), 'gpt-35-nowhere'));
      expect(expectRefused(missing, 422, 'integration_auth_failed')).toMatch(
        /^Azure OpenAI refused the credentials: the deployment gpt-35-nowhere was not found \(DeploymentNotFound: The API deployment for this resource does not exist/,
      );
      expect(await storedFor(app, account.account.id)).toEqual({ integrations: 0, events: 0 });
    });

    it('openai_compatible: proven by GET {base_url}/models; a server that is not there is 502', async () => {
      const key = goodKey();
      const res = await connect(compatible(`${chat.url}/v1/`, key));
      expect(res.status).toBe(201);
      expect(res.body.settings.model).toBe('llama3.1:8b');
      expect(chat.seen('/v1/models')[0].headers.authorization).toBe(`Bearer ${key}`);

      await app.reset();
      account = await app.createAccount();
      const port = await closedPort();
      const gone = await connect(compatible(`http://127.0.0.1:${port}/v1`, goodKey()));
      expect(expectRefused(gone, 502, 'integration_unreachable')).toMatch(/^The model server could not be reached \(ECONNREFUSED\)/);
      const wrong = ledger.secret('local-wrong-');
      expectRefused(await connect(compatible(`${chat.url}/v1`, wrong)), 422, 'integration_auth_failed');
      expect(await storedFor(app, account.account.id)).toEqual({ integrations: 0, events: 0 });
    });
  });

  describe('settings.model', () => {
    it('is required for openai_compatible (400 parameter_missing, before the server is called)', async () => {
      const res = await connect(compatible(`${chat.url}/v1`, goodKey(), {}));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'parameter_missing', param: 'settings[model]' });
      expect(chat.requests).toHaveLength(0);
    });

    it('must be printable ASCII without spaces, at most 200 characters', async () => {
      for (const model of ['gpt 4o', '', 'x'.repeat(201)]) {
        const res = await connect(openai(goodKey(), { model }));
        expect({ model, status: res.status, param: res.body.error?.param }).toEqual({ model, status: 400, param: 'settings[model]' });
        expect(res.body.error.code).toBe('parameter_invalid');
      }
    });

    it('applies to llm integrations only; llm integrations take no stage_map, delivery_record or sales_rep', async () => {
      const crm = await connect({ type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-0123456789' }, settings: { model: 'gpt-4o' } });
      expect(crm.status).toBe(400);
      expect(crm.body.error).toMatchObject({ code: 'parameter_invalid', param: 'settings[model]' });
      expect(crm.body.error.message).toBe('settings[model] applies to llm integrations, not crm');
      const rep = await connect(openai(goodKey(), { sales_rep: 'jdoe' }));
      expect(rep.body.error).toMatchObject({ code: 'parameter_invalid', param: 'settings[sales_rep]' });
      const record = await connect(openai(goodKey(), { delivery_record: 'project' }));
      expect(record.body.error).toMatchObject({ code: 'parameter_invalid', param: 'settings[delivery_record]' });
    });

    it('is changed by an update; null sets the default again (Azure: the deployment; a compatible server has none)', async () => {
      const made = await connect(azure(goodKey(), DEPLOYMENT, { model: 'gpt-4o' }));
      expect(made.body.settings.model).toBe('gpt-4o');
      const reset = await request('POST', `/v1/integrations/${made.body.id}`, { settings: { model: null } });
      expect(reset.status).toBe(200);
      expect(reset.body.settings.model).toBe(DEPLOYMENT);
      const changed = await request('POST', `/v1/integrations/${made.body.id}`, { settings: { model: 'gpt-4.1-mini' } });
      expect(changed.body.settings.model).toBe('gpt-4.1-mini');

      const local = await connect(compatible(`${chat.url}/v1`, goodKey()));
      expect(local.status).toBe(201);
      const cleared = await request('POST', `/v1/integrations/${local.body.id}`, { settings: { model: null } });
      expect(cleared.status).toBe(400);
      expect(cleared.body.error).toMatchObject({ code: 'parameter_missing', param: 'settings[model]' });
      const graphql = await app.graphql(`query ($id: ID!) { integration(id: $id) { settings { model } } }`, { id: local.body.id }, account.testKey);
      expect(graphql.body.data.integration.settings.model).toBe('llama3.1:8b');
    });
  });

  describe('the model client', () => {
    const SCHEMA = {
      type: 'object',
      properties: { subject: { type: 'string' }, body: { type: 'string' }, tone: { type: ['string', 'null'], enum: ['warm', 'formal', null] } },
      required: ['subject', 'body', 'tone'],
      additionalProperties: false,
    };
    const ASK = { system: 'You draft follow-up e-mails.', user: 'Lead: Ada Lovelace at Acme.', schema: SCHEMA, schemaName: 'follow_up_email' };
    const DRAFT = { subject: 'Following up', body: 'Hi Ada, …', tone: 'warm' };

    let sleeps: number[];
    const settings = () => providerSettings({ openaiApiUrl: `${chat.url}/v1`, azureOpenaiEndpointUrl: chat.url });
    const client = (provider: LlmProvider, credentials: Record<string, string>, model = 'gpt-4o-mini', timeoutMs = 2_000) =>
      new LlmClient(provider, credentials, model, settings(), { timeoutMs, sleep: async (ms) => void sleeps.push(ms) });
    const failure = async (promise: Promise<unknown>): Promise<Error> => {
      try {
        await promise;
      } catch (error) {
        return error as Error;
      }
      throw new Error('the completion succeeded');
    };

    beforeEach(() => {
      sleeps = [];
    });

    it('asks OpenAI for strict structured output and answers the parsed JSON and the usage', async () => {
      const key = goodKey();
      chat.answerWith({ kind: 'json', value: DRAFT, usage: { prompt_tokens: 57, completion_tokens: 21 } });
      const result = await client('openai', { api_key: key }).complete<typeof DRAFT>(ASK);
      expect(result).toEqual({ value: DRAFT, usage: { prompt_tokens: 57, completion_tokens: 21, model: 'gpt-4o-mini' } });
      const [call] = chat.chats();
      expect(call).toMatchObject({ path: '/v1/chat/completions', key, deployment: null });
      expect(call.body).toEqual({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: ASK.system },
          { role: 'user', content: ASK.user },
        ],
        response_format: { type: 'json_schema', json_schema: { name: 'follow_up_email', schema: SCHEMA, strict: true } },
      });
      expect(chat.conformance.calls).toEqual([{ method: 'POST', path: '/v1/chat/completions', operation: 'POST /chat/completions', status: 200 }]);
    });

    it("reaches an Azure deployment with the api-key header and the API version, answering the deployment's model", async () => {
      const key = goodKey();
      chat.answerWith({ kind: 'json', value: DRAFT });
      const result = await client('azure_openai', { api_key: key, endpoint: 'https://acme.openai.azure.com', deployment: DEPLOYMENT }, DEPLOYMENT).complete(
        ASK,
      );
      expect(result.value).toEqual(DRAFT);
      expect(result.usage.model).toBe('gpt-4o-mini-2024-07-18');
      expect(chat.chats()[0]).toMatchObject({ deployment: DEPLOYMENT, apiVersion: '2024-10-21', key, body: { model: DEPLOYMENT } });
      expect(chat.conformance.calls.map((call) => call.operation)).toEqual(['POST /deployments/{deployment-id}/chat/completions']);
    });

    it('reaches a compatible server at its base_url with the model it was given', async () => {
      chat.answerWith({ kind: 'json', value: DRAFT });
      const result = await client('openai_compatible', { base_url: `${chat.url}/v1`, api_key: goodKey() }, 'llama3.1:8b').complete(ASK);
      expect(result.usage.model).toBe('llama3.1:8b');
      expect(chat.chats()[0].body.model).toBe('llama3.1:8b');
    });

    it('refuses an answer that is not JSON, or does not fit the schema, with the usage it cost', async () => {
      const llm = client('openai', { api_key: goodKey() });
      chat.answerWith({ kind: 'malformed' });
      const malformed = await failure(llm.complete(ASK));
      expect(malformed).toBeInstanceOf(LlmMalformedOutput);
      expect(malformed.message).toBe("the model's answer is not JSON (finish_reason length)");
      expect((malformed as LlmMalformedOutput).usage).toMatchObject({ completion_tokens: 12, model: 'gpt-4o-mini' });
      chat.answerWith({ kind: 'json', value: { ...DRAFT, tone: 'sarcastic' } }, { kind: 'json', value: { subject: 'x', body: 'y', tone: null, extra: 1 } });
      expect((await failure(llm.complete(ASK))).message).toMatch(/does not fit the schema follow_up_email: \$\.tone must be one of/);
      expect((await failure(llm.complete(ASK))).message).toMatch(/\$\.extra is not allowed/);
      expect(chat.chats()).toHaveLength(3);
    });

    it("a refusal is LlmModelRefusal in the model's words", async () => {
      chat.answerWith({ kind: 'refusal', text: 'I cannot write that e-mail.' });
      const refusal = await failure(client('openai', { api_key: goodKey() }).complete(ASK));
      expect(refusal).toBeInstanceOf(LlmModelRefusal);
      expect(refusal.message).toBe('the model refused: I cannot write that e-mail.');
    });

    it('waits out a 429 for its Retry-After, then answers (two requests in the fake, one wait)', async () => {
      chat.answerWith({ kind: 'rate_limited', retryAfterS: 2 }, { kind: 'json', value: DRAFT });
      const result = await client('openai', { api_key: goodKey() }).complete(ASK);
      expect(result.value).toEqual(DRAFT);
      expect(chat.chats()).toHaveLength(2);
      expect(sleeps).toEqual([2_000]);
    });

    it('does not wait for a Retry-After longer than it allows: unavailable, with the wait named', async () => {
      chat.answerWith({ kind: 'rate_limited', retryAfterS: 120 });
      const error = await failure(client('openai', { api_key: goodKey() }).complete(ASK));
      expect(error).toBeInstanceOf(LlmUnavailable);
      expect(error).toMatchObject({ status: 429, retryAfterMs: 120_000 });
      expect(chat.chats()).toHaveLength(1);
      expect(sleeps).toEqual([]);
    });

    it('retries a 5xx with backoff, and fails as unavailable when it persists', async () => {
      chat.answerWith({ kind: 'failure', status: 502 }, { kind: 'json', value: DRAFT });
      expect((await client('openai', { api_key: goodKey() }).complete(ASK)).value).toEqual(DRAFT);
      expect(sleeps).toEqual([1_000]);
      sleeps = [];
      chat.requests.length = 0;
      chat.fail(503);
      const error = await failure(client('openai', { api_key: goodKey() }).complete(ASK));
      expect(error).toBeInstanceOf(LlmUnavailable);
      expect(error).toMatchObject({ status: 503 });
      expect(chat.chats()).toHaveLength(3);
      expect(sleeps).toEqual([1_000, 2_000]);
    });

    it('gives up on a model that never answers at the deadline, without retrying', async () => {
      chat.hang();
      const started = Date.now();
      const error = await failure(client('openai', { api_key: goodKey() }, 'gpt-4o-mini', 400).complete(ASK));
      expect(error).toBeInstanceOf(LlmTimeout);
      expect(error.message).toBe('OpenAI did not answer within 400 ms');
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(chat.chats()).toHaveLength(1);
    });

    it('a refused key is LlmAuthError (401), without the key; a missing deployment is LlmRequestRejected (404)', async () => {
      const wrong = ledger.secret('sk-proj-revoked-');
      const auth = await failure(client('openai', { api_key: wrong }).complete(ASK));
      expect(auth).toBeInstanceOf(LlmAuthError);
      expect(auth).toMatchObject({ status: 401 });
      expect(auth.message).toMatch(/^OpenAI refused the credentials: /);
      expect(auth.message).not.toContain(wrong);
      ledger.responses.push(auth.message);
      const missing = await failure(
        client('azure_openai', { api_key: goodKey(), endpoint: 'https://acme.openai.azure.com', deployment: 'nowhere' }, 'nowhere').complete(ASK),
      );
      expect(missing).toBeInstanceOf(LlmRequestRejected);
      expect(missing).toMatchObject({ status: 404 });
      expect(sleeps).toEqual([]);
    });

    it('a 200 that is no chat completion (a proxy page) is unavailable, not a crash', async () => {
      const proxy = http.createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('<html>502 Bad Gateway</html>');
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
      try {
        const { port } = proxy.address() as AddressInfo;
        const error = await failure(client('openai_compatible', { base_url: `http://127.0.0.1:${port}/v1`, api_key: goodKey() }, 'llama3.1:8b').complete(ASK));
        expect(error).toBeInstanceOf(LlmUnavailable);
        expect(error.message).toBe('The model server answered something that is not a chat completion');
        expect(sleeps).toEqual([1_000, 2_000]);
      } finally {
        proxy.closeAllConnections();
        await new Promise<void>((resolve) => proxy.close(() => resolve()));
      }
    });

    it('refuses a private address unless private addresses are allowed (the guard sits under the SDK)', async () => {
      const guarded = new LlmClient(
        'openai_compatible',
        { base_url: `${chat.url}/v1`, api_key: goodKey() },
        'llama3.1:8b',
        {
          ...settings(),
          allowPrivateUrls: false,
        },
        { sleep: async (ms) => void sleeps.push(ms), maxAttempts: 1 },
      );
      const error = await failure(guarded.complete(ASK));
      expect(error).toBeInstanceOf(LlmUnavailable);
      expect(error.message).toMatch(/^The model server could not be reached/);
      expect(chat.chats()).toHaveLength(0);
    });
  });

  it('no response, error message or log line ever held a key', () => {
    ledger.expectNothingLeaked();
  });
});

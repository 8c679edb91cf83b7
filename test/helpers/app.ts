import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MikroORM } from '@mikro-orm/postgresql';
import { createApp } from '../../src/app';
import { Config, loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { Account } from '../../src/modules/accounts/account.entity';
import { AccountService } from '../../src/modules/accounts/account.service';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { Plan } from '../../src/modules/accounts/plan';
import { PriorLeadScorer } from '../../src/modules/scoring/prior-model';
import { truncateAll, workerOrm } from './database';

export interface HttpResponse<T = any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as-is (not JSON-encoded) when a string is wanted verbatim. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestAccount {
  account: Account;
  testKey: string;
  liveKey: string;
}

export interface TestApp {
  baseUrl: string;
  orm: MikroORM;
  config: Config;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  graphql<T = any>(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<HttpResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  createAccount(options?: { email?: string; name?: string; plan?: Plan }): Promise<TestAccount>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

let accountCounter = 0;

/**
 * Boots the real application on this worker's database, listening on a free loopback port, so
 * integration tests go through real HTTP, real Apollo and real PostgreSQL.
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const orm = await workerOrm();
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', PORT: '0', ...env });
  const logger = createLogger(config.logLevel);
  const { app, stop } = await createApp({ orm, config, logger, scorer: new PriorLeadScorer() });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const request: TestApp['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed as never, text };
  };

  return {
    baseUrl,
    orm,
    config,
    request,
    graphql: (query, variables, key) => request('POST', '/graphql', { key, body: { query, variables } }),
    async createAccount(options = {}) {
      const em = orm.em.fork();
      accountCounter += 1;
      const account = await new AccountService(em).create({
        email: options.email ?? `owner${accountCounter}-${Date.now()}@example.test`,
        name: options.name ?? `Account ${accountCounter}`,
        plan: options.plan,
      });
      const keys = new ApiKeyService(em);
      const testKey = (await keys.create(account, KeyType.test, 'test key')).secret;
      const liveKey = (await keys.create(account, KeyType.live, 'live key')).secret;
      return { account, testKey, liveKey };
    },
    reset: () => truncateAll(orm),
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stop();
      await orm.close();
    },
  };
}

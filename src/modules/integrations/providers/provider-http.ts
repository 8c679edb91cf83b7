import type http from 'node:http';
import { outboundRequest } from '../../../http/outbound-request';
import type { HostResolver } from '../../../http/address-guard';

/** How calls to a provider are made: one deadline for the whole exchange, and the address guard. */
export interface ProviderCallOptions {
  /** The moment the call gives up (Date.now() milliseconds); shared by every call of one verification. */
  deadline: number;
  /** Refuse loopback, private and other non-public addresses, checked on the connection itself. */
  guard: boolean;
  resolve: HostResolver;
}

export interface ProviderRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** How much of the answer to keep (default MAX_ANSWER_CHARS): a CRM's batch and search answers are longer than a token answer. */
  maxAnswerChars?: number;
}

export interface ProviderResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The start of the answer (at most the request's maxAnswerChars): enough for a token answer or an error message. */
  text: string;
}

/** No answer: refused connection, unknown host, a reset, the deadline, or an address the guard refused. */
export class ProviderUnreachable extends Error {}

const MAX_ANSWER_CHARS = 64 * 1024;
const USER_AGENT = 'sales-pipeline-api-integrations';

/**
 * One HTTP exchange with a provider, through the service's one outbound exchange
 * (src/http/outbound-request.ts, shared with webhook deliveries): guarded addresses, no redirects,
 * one deadline, a bounded answer, nothing logged (headers and bodies carry secrets).
 */
export async function providerRequest(request: ProviderRequest, options: ProviderCallOptions): Promise<ProviderResponse> {
  const target = new URL(request.url);
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new ProviderUnreachable(`${target.protocol} is not http or https`);
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT, ...request.headers };
  if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body).toString();
  const outcome = await outboundRequest(
    { method: request.method, url: request.url, headers, body: request.body },
    { deadline: options.deadline, allowPrivate: !options.guard, resolve: options.resolve, maxAnswerChars: request.maxAnswerChars ?? MAX_ANSWER_CHARS },
  );
  switch (outcome.kind) {
    case 'answered':
      return { status: outcome.status ?? 0, headers: outcome.headers, text: outcome.text };
    case 'broken':
      throw new ProviderUnreachable('the connection broke during the answer');
    case 'refused':
      throw new ProviderUnreachable(outcome.message);
    case 'timed-out':
      throw new ProviderUnreachable('timed out');
    case 'network-error':
      throw new ProviderUnreachable(outcome.code ?? 'network error');
    case 'unsendable':
      // A header no HTTP message can carry (a provider's token with a line break): nothing is sent.
      throw new ProviderUnreachable(`the request could not be sent (${outcome.error.code ?? 'invalid request'})`);
  }
}

/** The answer as JSON, or undefined when it is not JSON. */
export function jsonOf(response: ProviderResponse): unknown {
  try {
    return JSON.parse(response.text);
  } catch {
    return undefined;
  }
}

/** Retry-After in whole seconds (delta-seconds or an HTTP date), when the provider sent one. */
export function retryAfterOf(response: ProviderResponse): number | undefined {
  const value = response.headers['retry-after'];
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const seconds = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Math.ceil((Date.parse(value) - Date.now()) / 1000);
  return Number.isFinite(seconds) ? Math.max(1, seconds) : undefined;
}

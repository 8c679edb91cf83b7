import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { checkPublicUrl, guardedLookup, HostResolver, UrlRefused } from '../../webhooks/url-guard';

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
  /** How much of the answer to keep (default MAX_ANSWER_CHARS); a larger answer is cut there. Data reads (a query page, a describe) need more. */
  maxAnswerChars?: number;
}

export interface ProviderResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The start of the answer (at most MAX_ANSWER_CHARS unless the request asked for more): enough for a token answer or an error message. */
  text: string;
}

/** No answer: refused connection, unknown host, a reset, the deadline, or an address the guard refused. */
export class ProviderUnreachable extends Error {}

const MAX_ANSWER_CHARS = 64 * 1024;
const USER_AGENT = 'sales-pipeline-api-integrations';

/**
 * One HTTP exchange with a provider, over node:http like webhook deliveries: the connection goes
 * only to addresses the guard passed (the check and the connection share one lookup, so DNS
 * rebinding gains nothing), redirects are not followed, and nothing here logs (headers and bodies
 * carry secrets).
 */
export async function providerRequest(request: ProviderRequest, options: ProviderCallOptions): Promise<ProviderResponse> {
  const target = new URL(request.url);
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new ProviderUnreachable(`${target.protocol} is not http or https`);
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address never goes through `lookup`, so it is checked here.
  if (options.guard && isIP(host)) {
    try {
      await checkPublicUrl(request.url, options.resolve);
    } catch (error) {
      throw new ProviderUnreachable((error as Error).message);
    }
  }
  const remaining = options.deadline - Date.now();
  if (remaining <= 0) throw new ProviderUnreachable('timed out');
  const client = target.protocol === 'https:' ? https : http;
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT, ...request.headers };
  if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body).toString();
  return new Promise<ProviderResponse>((resolve, reject) => {
    let settled = false;
    let outgoing: http.ClientRequest | undefined;
    const finish = (outcome: ProviderResponse | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing?.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish(new ProviderUnreachable('timed out')), remaining);
    const onResponse = (response: http.IncomingMessage) => {
      const status = response.statusCode ?? 0;
      const maxChars = request.maxAnswerChars ?? MAX_ANSWER_CHARS;
      let text = '';
      response.setEncoding('utf8');
      const done = () => finish({ status, headers: response.headers, text: text.slice(0, maxChars) });
      response.on('data', (chunk: string) => {
        text += chunk;
        if (text.length >= maxChars) done();
      });
      response.on('end', done);
      response.on('error', () => finish(new ProviderUnreachable('the connection broke during the answer')));
    };
    try {
      const lookup = guardedLookup(options.resolve, !options.guard) as unknown as typeof import('node:dns').lookup;
      outgoing = client.request(target, { method: request.method, headers, lookup, agent: false }, onResponse);
    } catch (error) {
      // A header no HTTP message can carry (a provider's token with a line break): nothing is sent.
      finish(new ProviderUnreachable(`the request could not be sent (${(error as NodeJS.ErrnoException).code ?? 'invalid request'})`));
      return;
    }
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      const refused = error instanceof UrlRefused || error.code === 'EREFUSED_URL';
      finish(new ProviderUnreachable(refused ? error.message : (error.code ?? 'network error')));
    });
    outgoing.end(request.body);
  });
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

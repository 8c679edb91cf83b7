import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { checkPublicUrl, guardedLookup, HostResolver, UrlRefused } from './address-guard';

/**
 * The one way this service calls an address someone else gave it: webhook deliveries
 * (webhooks/webhook-sender.ts) and CRM provider calls (integrations/providers/provider-http.ts)
 * both go through `outboundRequest`, under the address policy of address-guard.ts beside it: in
 * src/http because neither module owns the other's transport.
 */

export interface OutboundRequest {
  method: string;
  url: string;
  /** Sent as they are: each caller decides its content-type, content-length and user-agent. */
  headers: Record<string, string>;
  body?: string;
}

export interface OutboundOptions {
  /** The moment the exchange gives up (Date.now() milliseconds): connecting, sending and reading all count. */
  deadline: number;
  /** Connect to loopback, private and other non-public addresses too; otherwise they are refused. */
  allowPrivate: boolean;
  resolve: HostResolver;
  /** How much of the answer is read; the exchange ends there and the rest is never downloaded. */
  maxAnswerChars: number;
}

/** How an exchange ended. Never a rejection, so each caller words every case in its own terms. */
export type OutboundOutcome =
  /** The answer, whole or cut at maxAnswerChars. */
  | { kind: 'answered'; status: number | undefined; headers: http.IncomingHttpHeaders; text: string }
  /** The connection broke after the status line: what was read before it broke. */
  | { kind: 'broken'; status: number | undefined; headers: http.IncomingHttpHeaders; text: string }
  /** The address guard refused the host (literal or resolved); nothing was sent. */
  | { kind: 'refused'; message: string }
  | { kind: 'timed-out' }
  /** No answer: refused connection, unknown host, a reset. */
  | { kind: 'network-error'; code: string | undefined; message: string }
  /** node:http would not build the request (a protocol other than http(s), a header with a line break); nothing was sent. */
  | { kind: 'unsendable'; error: NodeJS.ErrnoException };

/**
 * One HTTP exchange over node:http: the connection goes only to addresses the guard passed (the
 * check and the connection share one lookup, so DNS rebinding gains nothing), redirects are not
 * followed, a fresh connection is used (`agent: false`: no pooled socket to a host checked for
 * someone else), one deadline covers the whole exchange, and only the start of the answer is
 * read. Nothing here logs: headers and bodies carry secrets.
 */
export async function outboundRequest(request: OutboundRequest, options: OutboundOptions): Promise<OutboundOutcome> {
  const target = new URL(request.url);
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address never goes through `lookup`, so it is checked here.
  if (!options.allowPrivate && isIP(host)) {
    try {
      await checkPublicUrl(request.url, options.resolve);
    } catch (error) {
      return { kind: 'refused', message: (error as Error).message };
    }
  }
  const remaining = options.deadline - Date.now();
  if (remaining <= 0) return { kind: 'timed-out' };
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<OutboundOutcome>((resolve) => {
    let settled = false;
    let outgoing: http.ClientRequest | undefined;
    const finish = (outcome: OutboundOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing?.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: 'timed-out' }), remaining);
    const onResponse = (response: http.IncomingMessage) => {
      const answer = { status: response.statusCode, headers: response.headers };
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (text.length >= options.maxAnswerChars) finish({ kind: 'answered', ...answer, text: text.slice(0, options.maxAnswerChars) });
      });
      response.on('end', () => finish({ kind: 'answered', ...answer, text }));
      response.on('error', () => finish({ kind: 'broken', ...answer, text: text.slice(0, options.maxAnswerChars) }));
    };
    try {
      const lookup = guardedLookup(options.resolve, options.allowPrivate) as unknown as typeof import('node:dns').lookup;
      outgoing = client.request(target, { method: request.method, headers: request.headers, lookup, agent: false }, onResponse);
    } catch (error) {
      finish({ kind: 'unsendable', error: error as NodeJS.ErrnoException });
      return;
    }
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof UrlRefused || error.code === 'EREFUSED_URL') finish({ kind: 'refused', message: error.message });
      else finish({ kind: 'network-error', code: error.code, message: error.message });
    });
    outgoing.end(request.body);
  });
}

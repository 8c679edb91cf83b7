import { outboundRequest } from '../../http/outbound-request';
import type { HostResolver } from '../../http/address-guard';

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  resolve: HostResolver;
  userAgent: string;
}

export interface SendResult {
  /** The HTTP status, or null when no answer came. */
  status: number | null;
  latencyMs: number;
  error: string | null;
  snippet: string | null;
}

/** How much of an answer's body is kept: enough to see an error page's message, not a whole page. */
export const SNIPPET_CHARS = 1000;

/**
 * POSTs one signed payload through the service's one outbound exchange
 * (src/http/outbound-request.ts). Redirects are not followed (a 3xx is a failed attempt, like
 * Stripe), the whole exchange has one deadline, the connection goes only to addresses the guard
 * passed, and only the start of the answer is read.
 */
export async function sendWebhook(url: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const outcome = await outboundRequest(
    {
      method: 'POST',
      url,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), 'user-agent': options.userAgent },
      body,
    },
    { deadline: Date.now() + options.timeoutMs, allowPrivate: options.allowPrivate, resolve: options.resolve, maxAnswerChars: SNIPPET_CHARS },
  );
  const latencyMs = Math.round(performance.now() - started);
  switch (outcome.kind) {
    case 'answered':
    case 'broken': {
      const status = outcome.status ?? null;
      return { status, latencyMs, error: failure(status), snippet: outcome.text || null };
    }
    case 'refused':
      return { status: null, latencyMs, error: outcome.message, snippet: null };
    case 'timed-out':
      return { status: null, latencyMs, error: `timed out after ${options.timeoutMs} ms`, snippet: null };
    case 'network-error':
      return { status: null, latencyMs, error: `${outcome.code ?? 'network error'}: ${outcome.message}`, snippet: null };
    case 'unsendable':
      // A rejection, as before: subscription URLs are validated when stored and the headers are ours, so this is a bug, not a failed attempt.
      throw outcome.error;
  }
}

function failure(status: number | null): string | null {
  if (status !== null && status >= 200 && status < 300) return null;
  if (status !== null && status >= 300 && status < 400) return `answered ${status}; redirects are not followed`;
  return `answered ${status}`;
}

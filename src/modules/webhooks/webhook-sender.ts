import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { checkPublicUrl, guardedLookup, HostResolver, UrlRefused } from './url-guard';

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
 * POSTs one signed payload. Redirects are not followed (a 3xx is a failed attempt, like Stripe),
 * the whole exchange has one deadline, the connection goes only to addresses the guard passed,
 * and only the start of the answer is read.
 */
export async function sendWebhook(url: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const target = new URL(url);
  try {
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    // A literal address never goes through `lookup`, so it is checked here.
    if (!options.allowPrivate && isIP(host)) await checkPublicUrl(url, options.resolve);
  } catch (error) {
    return { status: null, latencyMs: elapsed(), error: (error as Error).message, snippet: null };
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.destroy();
      resolve({ ...result, latencyMs: elapsed() });
    };
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body).toString(),
          'user-agent': options.userAgent,
        },
        lookup: guardedLookup(options.resolve, options.allowPrivate) as unknown as typeof import('node:dns').lookup,
        agent: false,
      },
      (response) => {
        const status = response.statusCode ?? null;
        let snippet = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          snippet += chunk;
          if (snippet.length >= SNIPPET_CHARS) finish({ status, error: failure(status), snippet: snippet.slice(0, SNIPPET_CHARS) });
        });
        response.on('end', () => finish({ status, error: failure(status), snippet: snippet || null }));
        response.on('error', () => finish({ status, error: failure(status), snippet: snippet.slice(0, SNIPPET_CHARS) || null }));
      },
    );
    const deadline = setTimeout(() => finish({ status: null, error: `timed out after ${options.timeoutMs} ms`, snippet: null }), options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      const message = error instanceof UrlRefused || error.code === 'EREFUSED_URL' ? error.message : `${error.code ?? 'network error'}: ${error.message}`;
      finish({ status: null, error: message, snippet: null });
    });
    request.end(body);
  });
}

function failure(status: number | null): string | null {
  if (status !== null && status >= 200 && status < 300) return null;
  if (status !== null && status >= 300 && status < 400) return `answered ${status}; redirects are not followed`;
  return `answered ${status}`;
}

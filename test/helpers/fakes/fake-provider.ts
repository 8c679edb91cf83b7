import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http, { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ConformanceLog } from './openapi-conformance';

/** Where `npm run test:providers` gathers what every fake answered (scripts/test-providers.js); unset in other runs. */
const REPORT_DIR = process.env.PROVIDER_CONFORMANCE_DIR;

/** What a fake leaves for `npm run test:providers`: every answer's route and status, and its document's log when it has one. */
export interface FakeReport {
  fake: string;
  answered: Array<{ method: string; path: string; status: number }>;
  conformance?: ConformanceLog;
}

/** One request a fake received, as it arrived (tests check what our service sent). */
export interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** How a fake answers every request until recover(): normally, 429 with Retry-After, a 5xx, or never (a hang). */
export type FakeMode = { kind: 'normal' } | { kind: 'rate_limited'; retryAfterS: number } | { kind: 'failing'; status: number } | { kind: 'hanging' };

export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** The request was carried out, but the connection breaks before any answer (the caller cannot tell whether it was). */
  dropConnection?: boolean;
}

/**
 * A loopback HTTP server that plays a provider: subclasses answer its documented routes; this
 * keeps what it saw, the switches for 429, 5xx and hangs, and closes every connection on close()
 * (a hanging request included), so no test leaves a socket behind.
 */
export abstract class FakeProvider {
  readonly requests: SeenRequest[] = [];
  /** Every answer given (a hang or a dropped connection is none), for the provider report. */
  private readonly answered: FakeReport['answered'] = [];
  /** Set by a fake that checks its provider's published document (openapi-conformance.ts). */
  readonly conformance?: ConformanceLog;
  private mode: FakeMode = { kind: 'normal' };
  /** How long every answer takes (0: at once); widens the window in which overlapping calls would show. */
  latencyMs = 0;
  /** Requests being answered now, and the most there ever were at once (since resetPeak), by bearer token ('' without one). */
  private readonly inFlight = new Map<string, number>();
  private readonly peaks = new Map<string, number>();
  private server?: Server;
  url = '';

  /** The answer to a request in normal mode. */
  protected abstract answer(request: SeenRequest): FakeAnswer;
  /** The provider's own shape of a 429 and of a 5xx. */
  protected abstract rateLimitedAnswer(retryAfterS: number): FakeAnswer;
  protected abstract failureAnswer(status: number): FakeAnswer;

  async start(): Promise<this> {
    const server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (REPORT_DIR) {
      const report: FakeReport = { fake: this.constructor.name, answered: this.answered, conformance: this.conformance };
      writeFileSync(path.join(REPORT_DIR, `${this.constructor.name}-${process.pid}-${randomUUID()}.json`), JSON.stringify(report));
    }
  }

  rateLimit(retryAfterS = 7): void {
    this.mode = { kind: 'rate_limited', retryAfterS };
  }

  fail(status = 503): void {
    this.mode = { kind: 'failing', status };
  }

  /** Reads requests and never answers, until recover() or close(). */
  hang(): void {
    this.mode = { kind: 'hanging' };
  }

  /** The most requests with this bearer token (any, without one) there were at once since resetPeak(). */
  peakInFlight(token?: string): number {
    return token === undefined ? Math.max(0, ...this.peaks.values()) : (this.peaks.get(token) ?? 0);
  }

  resetPeak(): void {
    this.peaks.clear();
  }

  recover(): void {
    this.mode = { kind: 'normal' };
  }

  /** Requests to one path (without the query). */
  seen(path: string): SeenRequest[] {
    return this.requests.filter((request) => request.path.split('?')[0] === path);
  }

  protected correlationId(): string {
    return randomUUID();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const request: SeenRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body };
      this.requests.push(request);
      const mode = this.mode;
      if (mode.kind === 'hanging') return;
      const token = bearerOf(request) ?? '';
      const now = (this.inFlight.get(token) ?? 0) + 1;
      this.inFlight.set(token, now);
      this.peaks.set(token, Math.max(this.peaks.get(token) ?? 0, now));
      const respond = () => {
        const answer =
          mode.kind === 'rate_limited'
            ? this.rateLimitedAnswer(mode.retryAfterS)
            : mode.kind === 'failing'
              ? this.failureAnswer(mode.status)
              : this.answer(request);
        const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
        this.inFlight.set(token, (this.inFlight.get(token) ?? 1) - 1);
        if (answer.dropConnection) {
          res.socket?.destroy();
          return;
        }
        this.answered.push({ method: request.method, path: request.path.split('?')[0], status: answer.status });
        res.writeHead(answer.status, { 'content-type': 'application/json;charset=UTF-8', ...answer.headers });
        res.end(text);
      };
      if (this.latencyMs > 0) setTimeout(respond, this.latencyMs);
      else respond();
    });
  }
}

/** The bearer token of a request, or null. */
export function bearerOf(request: SeenRequest): string | null {
  const match = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
  return match ? match[1] : null;
}

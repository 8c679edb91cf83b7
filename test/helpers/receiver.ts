import http, { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './app';
import { eventually } from './wait';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the whole request had arrived. */
  receivedAt: number;
}

export interface Answer {
  status: number;
  body?: string;
  /** Wait this long before answering (to outlast a sender's timeout). */
  delayMs?: number;
  /** Never answer: the request stays open until the sender gives up or the receiver stops. */
  hang?: boolean;
}

/**
 * A real HTTP server on loopback that webhooks are sent to. It records every request and answers
 * as `answer` says; it can be stopped and started again on the same port (a receiver that is down
 * for a while).
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  answer: (request: ReceivedRequest, index: number) => Answer = () => ({ status: 200, body: 'ok' });
  private server?: Server;
  private port = 0;
  /** Requests open at each moment: +1 when one has arrived, -1 when its connection is done. */
  private readonly openings: Array<{ path: string; change: 1 | -1 }> = [];

  async start(): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        };
        const index = this.requests.push(request) - 1;
        this.openings.push({ path: request.path, change: 1 });
        res.on('close', () => this.openings.push({ path: request.path, change: -1 }));
        const answer = this.answer(request, index);
        if (answer.hang) return;
        const reply = () => {
          if (res.destroyed) return;
          res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '');
        };
        if (!answer.delayMs) return reply();
        // A reply still waiting when the connection closes (the sender gave up, or stop()) is dropped,
        // so no timer outlives the receiver.
        const timer = setTimeout(reply, answer.delayMs);
        res.on('close', () => clearTimeout(timer));
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  url(path = '/hook'): string {
    if (!this.port) throw new Error('start the receiver first');
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Requests open right now, at paths that `matches` accepts (all by default). */
  openNow(matches: (path: string) => boolean = () => true): number {
    return this.openings.reduce((open, step) => (matches(step.path) ? open + step.change : open), 0);
  }

  /** The most requests that were ever open at once, at paths that `matches` accepts (all by default). */
  peakOpen(matches: (path: string) => boolean = () => true): number {
    let open = 0;
    let peak = 0;
    for (const step of this.openings) {
      if (!matches(step.path)) continue;
      open += step.change;
      peak = Math.max(peak, open);
    }
    return peak;
  }

  /** Parsed bodies of the requests received so far. */
  events(): Array<{ id: string; type: string; livemode: boolean; data: { object: Record<string, unknown>; previous_attributes: Record<string, unknown> } }> {
    return this.requests.map((request) => JSON.parse(request.body));
  }
}

export { eventually } from './wait';

/**
 * Every event is fanned out and no delivery is pending: whatever a receiver has by now is all it
 * will ever get, so a test can check that something did not arrive without waiting a length of time.
 */
export async function settled(app: TestApp): Promise<void> {
  await eventually(async () => {
    const [row] = await app.orm.em.getConnection().execute<Array<{ events: number; pending: number }>>(
      `select (select count(*) from event_fan_outs)::int as events,
              (select count(*) from webhook_deliveries where status = 'pending')::int as pending`,
    );
    expect(row).toEqual({ events: 0, pending: 0 });
  });
}

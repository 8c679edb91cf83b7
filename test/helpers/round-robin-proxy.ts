import http, { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A load balancer in front of several instances, on loopback: each request goes to the next
 * target in turn, streamed both ways with its headers. `served` counts requests per target, so a
 * test can see every instance took its share. A target that cannot be reached answers 502.
 */
export class RoundRobinProxy {
  readonly served: number[];
  private next = 0;
  private server?: Server;
  /** Its own connections to the targets, closed with the proxy. */
  private readonly agent = new http.Agent({ keepAlive: true });

  constructor(private readonly targets: string[]) {
    this.served = targets.map(() => 0);
  }

  async start(): Promise<this> {
    const server = http.createServer((req, res) => {
      const index = this.next++ % this.targets.length;
      this.served[index] += 1;
      const upstream = http.request(new URL(req.url ?? '/', this.targets[index]), { method: req.method, headers: req.headers, agent: this.agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('bad gateway');
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return this;
  }

  get url(): string {
    if (!this.server) throw new Error('start the proxy first');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.agent.destroy();
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

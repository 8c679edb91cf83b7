import http, { IncomingHttpHeaders, Server } from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import { checkPublicUrl, guardedLookup, HostResolver, isPublicAddress, UrlRefused } from '../../src/http/address-guard';
import { webhookUrlProblem } from '../../src/modules/webhooks/url-guard';
import { SendOptions, sendWebhook, SNIPPET_CHARS } from '../../src/modules/webhooks/webhook-sender';

/**
 * The webhook address guard (CONTRACT §10: only http(s); with the guard on, loopback, private,
 * link-local and metadata addresses are refused at creation and again at delivery) and the sender
 * that uses it, against a real HTTP server on loopback. No database.
 */

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

/** A resolver that answers from a table and fails like the system one (ENOTFOUND) for anything else. */
function fakeResolver(table: Record<string, LookupAddress[]>): jest.Mock<Promise<LookupAddress[]>, [string]> {
  return jest.fn(async (hostname: string) => {
    const answer = table[hostname];
    if (answer) return answer;
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  });
}

describe('isPublicAddress', () => {
  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888'])(
    'is true for the public unicast address %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.5.5.5', 'loopback (all of 127/8)'],
    ['10.0.0.1', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12, low end'],
    ['172.31.255.255', 'private 172.16/12, high end'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local, the cloud metadata address'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fe80::1', 'IPv6 link-local'],
    ['fd00::1', 'IPv6 unique local (fd00::/8)'],
    ['fc00::1', 'IPv6 unique local (fc00::/8)'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['64:ff9b::a00:1', 'NAT64 embedding 10.0.0.1'],
    ['2002:7f00:1::1', '6to4 embedding 127.0.0.1'],
    ['::127.0.0.1', 'IPv4-compatible loopback (::/96)'],
    ['::169.254.169.254', 'IPv4-compatible metadata address'],
    ['::10.0.0.1', 'IPv4-compatible private'],
    ['::a9fe:a9fe', 'IPv4-compatible metadata address, in hex'],
    ['100::1', 'IPv6 discard-only (100::/64)'],
    ['4000::1', 'IPv6 outside global unicast (2000::/3)'],
    ['fec0::1', 'IPv6 site-local (deprecated)'],
  ])('is false for %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    '',
    'not an ip',
    'localhost',
    'example.com',
    '999.999.999.999',
    '1.2.3.4.5',
    '::g',
    '12345:::',
    '[::1]',
    ' 8.8.8.8',
    '8.8.8.8/32',
    '8.8.8',
    '134744072',
  ])('is false for the garbage string %j', (text) => {
    expect(isPublicAddress(text)).toBe(false);
  });
});

describe('webhookUrlProblem', () => {
  it.each([
    'http://example.com/hook',
    'https://example.com/hook',
    'https://hooks.example.com:8443/a/b?c=d#e',
    'http://127.0.0.1:8080/hook',
    'https://[2606:4700:4700::1111]/',
  ])('is null for the http(s) URL %s', (url) => {
    expect(webhookUrlProblem(url)).toBeNull();
  });

  it.each([
    ['ftp://example.com/hook'],
    ['javascript:alert(1)'],
    ['file:///etc/passwd'],
    ['gopher://example.com/'],
    ['/relative/hook'],
    ['example.com/hook'],
    ['//example.com/hook'],
    [''],
    ['http://user:password@example.com/hook'],
    ['https://user@example.com/hook'],
    ['https://:password@example.com/hook'],
  ])('gives a message for %j', (url) => {
    const problem = webhookUrlProblem(url);
    expect(typeof problem).toBe('string');
    expect(problem!.length).toBeGreaterThan(0);
  });

  it('names the protocol, the credentials or the absolute-URL rule in its message', () => {
    expect(webhookUrlProblem('ftp://example.com/')).toMatch(/http or https/);
    expect(webhookUrlProblem('/hook')).toMatch(/absolute/);
    expect(webhookUrlProblem('https://user:pw@example.com/')).toMatch(/credentials/);
  });

  it('allows 2048 characters and refuses one more', () => {
    const prefix = 'https://example.com/';
    const atLimit = prefix + 'a'.repeat(2048 - prefix.length);
    expect(atLimit).toHaveLength(2048);
    expect(webhookUrlProblem(atLimit)).toBeNull();
    expect(webhookUrlProblem(`${atLimit}a`)).toMatch(/2048/);
    expect(webhookUrlProblem(prefix + 'a'.repeat(10_000))).toMatch(/2048/);
  });
});

describe('checkPublicUrl', () => {
  it.each([
    ['http://127.0.0.1:8080/hook'],
    ['http://10.1.2.3/'],
    ['http://169.254.169.254/latest/meta-data'],
    ['http://[::1]:9000/'],
    ['http://[::ffff:127.0.0.1]/'],
    ['http://[fe80::1]/'],
    ['http://2130706433/'],
    ['http://0x7f.1/'],
    ['http://0.0.0.0/'],
    ['http://[::127.0.0.1]/'],
    ['http://[::169.254.169.254]/latest/meta-data'],
    ['http://[::10.0.0.1]/'],
  ])('refuses the literal address in %s without asking the resolver', async (url) => {
    const resolve = fakeResolver({});
    await expect(checkPublicUrl(url, resolve)).rejects.toBeInstanceOf(UrlRefused);
    expect(resolve).not.toHaveBeenCalled();
  });

  it.each([['http://8.8.8.8/hook'], ['https://[2606:4700:4700::1111]:8443/hook']])(
    'passes the public literal address in %s without asking the resolver',
    async (url) => {
      const resolve = fakeResolver({});
      await expect(checkPublicUrl(url, resolve)).resolves.toBeUndefined();
      expect(resolve).not.toHaveBeenCalled();
    },
  );

  it('passes a name that resolves only to public addresses', async () => {
    const resolve = fakeResolver({ 'public.example': [v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')] });
    await expect(checkPublicUrl('https://public.example/hook', resolve)).resolves.toBeUndefined();
    expect(resolve).toHaveBeenCalledWith('public.example');
  });

  it.each([
    ['a public and a private v4 address', [v4('93.184.216.34'), v4('10.0.0.5')], '10.0.0.5'],
    ['a private address first', [v4('192.168.0.10'), v4('93.184.216.34')], '192.168.0.10'],
    ['a public v4 and a loopback v6 address', [v4('93.184.216.34'), v6('::1')], '::1'],
    ['a public v6 and the metadata address', [v6('2606:4700:4700::1111'), v4('169.254.169.254')], '169.254.169.254'],
  ])('refuses a name that resolves to %s (any private address refuses)', async (_label, answer, blocked) => {
    const resolve = fakeResolver({ 'mixed.example': answer });
    const error = await checkPublicUrl('https://mixed.example/hook', resolve).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UrlRefused);
    expect((error as Error).message).toContain(blocked);
  });

  it('refuses a name that does not resolve with a UrlRefused error', async () => {
    const resolve = fakeResolver({});
    const error = await checkPublicUrl('https://nowhere.invalid/hook', resolve).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UrlRefused);
    expect((error as Error).message).toMatch(/nowhere\.invalid does not resolve/);
  });

  it('refuses a name that resolves to no address at all', async () => {
    const resolve: HostResolver = async () => [];
    await expect(checkPublicUrl('https://empty.example/hook', resolve)).rejects.toBeInstanceOf(UrlRefused);
  });
});

describe('guardedLookup', () => {
  interface LookupOutcome {
    error: NodeJS.ErrnoException | null;
    address: string | LookupAddress[];
    family?: number;
  }

  function lookup(resolve: HostResolver, allowPrivate: boolean, hostname: string, all: boolean): Promise<LookupOutcome> {
    return new Promise((done) => {
      guardedLookup(resolve, allowPrivate)(hostname, { all }, (error, address, family) => done({ error, address, family }));
    });
  }

  const resolve = fakeResolver({
    'private.example': [v4('10.0.0.5')],
    'mixed.example': [v4('93.184.216.34'), v6('fd00::1')],
    'public.example': [v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')],
    'loop6.example': [v6('::1')],
  });

  describe('with allowPrivate=false', () => {
    it.each([
      ['private.example', true],
      ['private.example', false],
      ['mixed.example', true],
      ['mixed.example', false],
      ['loop6.example', true],
      ['loop6.example', false],
    ])('calls back with an error for %s (all: %s)', async (hostname, all) => {
      const outcome = await lookup(resolve, false, hostname, all);
      expect(outcome.error).toBeInstanceOf(UrlRefused);
      expect(outcome.error!.code).toBe('EREFUSED_URL');
      expect(outcome.error!.message).toMatch(/non-public/);
    });

    it('calls back with every address for a public answer when all: true', async () => {
      const outcome = await lookup(resolve, false, 'public.example', true);
      expect(outcome.error).toBeNull();
      expect(outcome.address).toEqual([v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')]);
    });

    it('calls back with the first address and its family for a public answer when all is not set', async () => {
      const outcome = await lookup(resolve, false, 'public.example', false);
      expect(outcome.error).toBeNull();
      expect(outcome.address).toBe('93.184.216.34');
      expect(outcome.family).toBe(4);
    });

    it('calls back with an error for a name that does not resolve', async () => {
      const outcome = await lookup(resolve, false, 'nowhere.invalid', false);
      expect(outcome.error).toBeInstanceOf(UrlRefused);
      expect(outcome.error!.code).toBe('EREFUSED_URL');
    });
  });

  describe('with allowPrivate=true', () => {
    it('passes a private answer through (all: true)', async () => {
      const outcome = await lookup(resolve, true, 'mixed.example', true);
      expect(outcome.error).toBeNull();
      expect(outcome.address).toEqual([v4('93.184.216.34'), v6('fd00::1')]);
    });

    it('passes a private answer through (all not set)', async () => {
      const outcome = await lookup(resolve, true, 'private.example', false);
      expect(outcome.error).toBeNull();
      expect(outcome.address).toBe('10.0.0.5');
      expect(outcome.family).toBe(4);
      const loop = await lookup(resolve, true, 'loop6.example', false);
      expect(loop).toEqual({ error: null, address: '::1', family: 6 });
    });
  });
});

describe('sendWebhook', () => {
  interface Seen {
    method: string;
    path: string;
    headers: IncomingHttpHeaders;
    body: string;
  }
  type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

  /** The path of the request drained() sends: answered at once and left out of `seen`. */
  const DRAIN_PATH = '/drained';

  /** A loopback server that records requests and answers as `handler` says. */
  class LocalServer {
    readonly seen: Seen[] = [];
    handler: Handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    private readonly server: Server = http.createServer((req, res) => {
      if (req.url === DRAIN_PATH) {
        res.writeHead(204).end();
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
        this.handler(req, res, body);
      });
    });
    port = 0;

    async start(): Promise<this> {
      await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
      this.port = (this.server.address() as AddressInfo).port;
      return this;
    }

    url(path = '/hook', host = '127.0.0.1'): string {
      return `http://${host}:${this.port}${path}`;
    }

    /**
     * Resolves once this server has answered a request sent after the call. What the code under
     * test sent before it returned has arrived by then (loopback connections are accepted in the
     * order they were made), so a test can assert what did not arrive without sleeping.
     */
    async drained(): Promise<void> {
      await new Promise<void>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: this.port, path: DRAIN_PATH, agent: false }, (res) => res.resume().on('end', resolve)).on('error', reject);
      });
    }

    async stop(): Promise<void> {
      this.server.closeAllConnections();
      await new Promise<void>((resolve) => this.server.close(() => resolve()));
    }
  }

  const BODY = JSON.stringify({ id: 'evt_1', object: 'event', type: 'lead.created', data: { object: { company: 'Acme' } } });
  const HEADERS = { 'webhook-id': 'msg_123', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,c2lnbmF0dXJl' };
  const options = (overrides: Partial<SendOptions> = {}): SendOptions => ({
    timeoutMs: 5_000,
    allowPrivate: true,
    resolve: fakeResolver({ 'receiver.test': [v4('127.0.0.1')] }),
    userAgent: 'url-guard-test/1.0',
    ...overrides,
  });

  let server: LocalServer;
  beforeEach(async () => {
    server = await new LocalServer().start();
  });
  afterEach(() => server.stop());

  describe('with allowPrivate=true', () => {
    it('POSTs the body with the given headers as application/json and returns the status and snippet', async () => {
      server.handler = (_req, res) => res.writeHead(202, { 'content-type': 'text/plain' }).end('accepted, thanks');
      const result = await sendWebhook(server.url('/hook?x=1'), { ...HEADERS, 'content-type': 'text/plain' }, BODY, options());
      expect(result).toEqual({ status: 202, error: null, snippet: 'accepted, thanks', latencyMs: expect.any(Number) });
      expect(result.latencyMs).toBeGreaterThanOrEqual(0);
      expect(server.seen).toHaveLength(1);
      const [seen] = server.seen;
      expect(seen.method).toBe('POST');
      expect(seen.path).toBe('/hook?x=1');
      expect(seen.body).toBe(BODY);
      expect(seen.headers['content-type']).toBe('application/json');
      expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(BODY)));
      expect(seen.headers['user-agent']).toBe('url-guard-test/1.0');
      for (const [name, value] of Object.entries(HEADERS)) expect(seen.headers[name]).toBe(value);
    });

    it('counts the body length in bytes, not characters', async () => {
      const body = JSON.stringify({ company: 'Ünïcødé — 会社' });
      await sendWebhook(server.url(), HEADERS, body, options());
      expect(server.seen[0].body).toBe(body);
      expect(server.seen[0].headers['content-length']).toBe(String(Buffer.byteLength(body)));
    });

    it('sends to a host name through the given resolver', async () => {
      const resolve = fakeResolver({ 'receiver.test': [v4('127.0.0.1')] });
      const result = await sendWebhook(server.url('/named', 'receiver.test'), HEADERS, BODY, options({ resolve }));
      expect(result.status).toBe(200);
      expect(result.error).toBeNull();
      expect(resolve).toHaveBeenCalledWith('receiver.test');
      expect(server.seen.map((seen) => seen.path)).toEqual(['/named']);
    });

    it(`caps the snippet at SNIPPET_CHARS (${SNIPPET_CHARS}) characters`, async () => {
      server.handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(SNIPPET_CHARS * 5));
      const result = await sendWebhook(server.url(), HEADERS, BODY, options());
      expect(result.status).toBe(200);
      expect(result.error).toBeNull();
      expect(result.snippet).toBe('x'.repeat(SNIPPET_CHARS));
    });

    it('reports a non-2xx answer as an error, keeping its status and snippet', async () => {
      server.handler = (_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
      const result = await sendWebhook(server.url(), HEADERS, BODY, options());
      expect(result.status).toBe(500);
      expect(result.error).toMatch(/500/);
      expect(result.snippet).toBe('boom');
    });

    it('reports a 3xx as an error and does not follow the redirect', async () => {
      const target = await new LocalServer().start();
      try {
        server.handler = (_req, res) => res.writeHead(302, { location: target.url('/elsewhere') }).end();
        const result = await sendWebhook(server.url(), HEADERS, BODY, options());
        expect(result.status).toBe(302);
        expect(result.error).toMatch(/302/);
        expect(result.error).toMatch(/redirect/);
        // A (wrongly) followed redirect would have arrived before these later requests are answered.
        await Promise.all([server.drained(), target.drained()]);
        expect(server.seen).toHaveLength(1);
        expect(target.seen).toHaveLength(0);
      } finally {
        await target.stop();
      }
    });

    it.each([301, 307, 308])('reports %i as an error too', async (status) => {
      server.handler = (_req, res) => res.writeHead(status, { location: server.url('/again') }).end();
      const result = await sendWebhook(server.url(), HEADERS, BODY, options());
      expect(result.status).toBe(status);
      expect(result.error).toMatch(/redirects are not followed/);
      await server.drained();
      expect(server.seen.map((seen) => seen.path)).toEqual(['/hook']);
    });

    it('reports a timeout as an error after roughly timeoutMs when the server never answers', async () => {
      server.handler = () => undefined; // never answers
      const started = Date.now();
      const result = await sendWebhook(server.url(), HEADERS, BODY, options({ timeoutMs: 300 }));
      const took = Date.now() - started;
      expect(result.status).toBeNull();
      expect(result.snippet).toBeNull();
      expect(result.error).toMatch(/timed out after 300 ms/);
      expect(took).toBeGreaterThanOrEqual(280);
      expect(took).toBeLessThan(2_000);
      expect(result.latencyMs).toBeGreaterThanOrEqual(280);
      expect(result.latencyMs).toBeLessThan(2_000);
      expect(server.seen).toHaveLength(1); // it did arrive; only the answer never came
    });

    it('reports a timeout when the server sends headers but never finishes the body', async () => {
      server.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      };
      const result = await sendWebhook(server.url(), HEADERS, BODY, options({ timeoutMs: 300 }));
      expect(result.status).toBeNull();
      expect(result.error).toMatch(/timed out/);
    });

    it('reports connection refused as an error', async () => {
      const closed = await new LocalServer().start();
      const url = closed.url();
      await closed.stop();
      const result = await sendWebhook(url, HEADERS, BODY, options());
      expect(result.status).toBeNull();
      expect(result.snippet).toBeNull();
      expect(result.error).toMatch(/ECONNREFUSED/);
    });
  });

  describe('with allowPrivate=false', () => {
    it('refuses a URL with the literal address 127.0.0.1 and sends nothing', async () => {
      const resolve = fakeResolver({});
      const result = await sendWebhook(server.url(), HEADERS, BODY, options({ allowPrivate: false, resolve }));
      expect(result.status).toBeNull();
      expect(result.snippet).toBeNull();
      expect(result.error).toMatch(/127\.0\.0\.1/);
      expect(resolve).not.toHaveBeenCalled();
      await server.drained();
      expect(server.seen).toHaveLength(0);
    });

    it('refuses a host name whose resolver answers 127.0.0.1 and sends nothing', async () => {
      const resolve = fakeResolver({ 'rebound.example': [v4('127.0.0.1')] });
      const result = await sendWebhook(server.url('/hook', 'rebound.example'), HEADERS, BODY, options({ allowPrivate: false, resolve }));
      expect(result.status).toBeNull();
      expect(result.snippet).toBeNull();
      expect(result.error).toMatch(/127\.0\.0\.1/);
      expect(result.error).toMatch(/non-public/);
      expect(resolve).toHaveBeenCalledWith('rebound.example');
      await server.drained();
      expect(server.seen).toHaveLength(0);
    });

    it('refuses a host name that resolves to a public and a loopback address', async () => {
      const resolve = fakeResolver({ 'mixed.example': [v4('93.184.216.34'), v4('127.0.0.1')] });
      const result = await sendWebhook(server.url('/hook', 'mixed.example'), HEADERS, BODY, options({ allowPrivate: false, resolve }));
      expect(result.status).toBeNull();
      expect(result.error).toMatch(/127\.0\.0\.1/);
      expect(server.seen).toHaveLength(0);
    });

    it('refuses a host name that does not resolve', async () => {
      const result = await sendWebhook(server.url('/hook', 'nowhere.invalid'), HEADERS, BODY, options({ allowPrivate: false, resolve: fakeResolver({}) }));
      expect(result.status).toBeNull();
      expect(result.error).toMatch(/does not resolve/);
      expect(server.seen).toHaveLength(0);
    });
  });
});

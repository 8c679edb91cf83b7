import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundOptions, OutboundOutcome, outboundRequest } from '../../src/http/outbound-request';

/**
 * The one outbound exchange (webhook deliveries and CRM calls) against a loopback server, for what
 * the sendWebhook tests in url-guard.test.ts and the provider tests in integration-verify do not
 * reach: the answer's headers, a connection that breaks mid-answer, and the cases that must send
 * nothing at all. "Nothing sent" is proven by connections: a good exchange made afterwards must be
 * the server's first.
 */

let server: http.Server;
let connections = 0;
let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
const base = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

beforeEach(async () => {
  connections = 0;
  handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  server = http.createServer((req, res) => handler(req, res));
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const options = (overrides: Partial<OutboundOptions> = {}): OutboundOptions => ({
  deadline: Date.now() + 5_000,
  allowPrivate: true,
  resolve: () => Promise.reject(new Error('no names in these tests')),
  maxAnswerChars: 100,
  ...overrides,
});
const get = (url: string, overrides: Partial<OutboundOptions> = {}, headers: Record<string, string> = {}) =>
  outboundRequest({ method: 'GET', url, headers }, options(overrides));

/** Makes one good exchange and expects it to have been the only connection the server ever saw. */
async function expectNothingSentBefore(): Promise<void> {
  expect(await get(`${base()}/after`)).toMatchObject({ kind: 'answered', status: 200 });
  expect(connections).toBe(1);
}

it("returns the status, the answer's headers and its start, cut at maxAnswerChars", async () => {
  handler = (_req, res) => res.writeHead(429, { 'retry-after': '7' }).end('y'.repeat(1_000));
  const outcome = await get(`${base()}/limited`);
  expect(outcome).toMatchObject({ kind: 'answered', status: 429, text: 'y'.repeat(100) });
  expect((outcome as Extract<OutboundOutcome, { kind: 'answered' }>).headers['retry-after']).toBe('7');
});

it('keeps the status and what was read when the connection breaks during the answer', async () => {
  handler = (_req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.write('partial', () => res.socket?.destroy());
  };
  expect(await get(`${base()}/breaks`)).toMatchObject({ kind: 'broken', status: 503, text: 'partial' });
});

it.each(['127.0.0.1', '[::1]'])('refuses the literal address %s with the guard on, before connecting', async (host) => {
  const outcome = await get(`http://${host}:${(server.address() as AddressInfo).port}/hook`, { allowPrivate: false });
  expect(outcome).toEqual({ kind: 'refused', message: expect.stringMatching(/non-public address/) });
  await expectNothingSentBefore();
});

it('times out without connecting when the deadline has already passed', async () => {
  expect(await get(`${base()}/late`, { deadline: Date.now() - 1 })).toEqual({ kind: 'timed-out' });
  await expectNothingSentBefore();
});

it('sends nothing when a header cannot be carried by HTTP', async () => {
  const outcome = await get(`${base()}/bad`, {}, { authorization: 'Bearer a\r\nx-injected: 1' });
  expect(outcome).toMatchObject({ kind: 'unsendable', error: { code: 'ERR_INVALID_CHAR' } });
  await expectNothingSentBefore();
});

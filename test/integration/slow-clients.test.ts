import net from 'node:net';
import { startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * What Node answers before express sees a request (an oversized head, a request that arrives too
 * slowly, bytes that are not HTTP) comes in the contract's error shape, and a client that trickles
 * its request is cut off at the server's deadlines while everyone else is served.
 */

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from sending the first byte to the connection's end. */
  elapsedMs: number;
}

/** Sends raw bytes (optionally more later), and resolves with the answer once the server ends the connection. */
function raw(baseUrl: string, first: string, more?: (socket: net.Socket) => void): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(first);
      more?.(socket);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), elapsedMs: Date.now() - started });
    });
  });
}

function expectContractError(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers['x-request-id']).toMatch(/^req_/);
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  const body = JSON.parse(answer.body) as { error: Record<string, string> };
  expect(body.error).toMatchObject({ type: 'invalid_request_error', code, request_id: answer.headers['x-request-id'] });
  expect(body.error.message.length).toBeGreaterThan(0);
}

describe('clients that send too much or too slowly', () => {
  let app: TestApp;
  let owner: TestAccount;
  const timeouts = { headersTimeoutMs: 600, requestTimeoutMs: 1_200, keepAliveTimeoutMs: 5_000, checkIntervalMs: 100 };

  beforeAll(async () => {
    app = await startTestApp({ serverTimeouts: timeouts });
    owner = await app.createAccount();
  });
  afterAll(() => app.close());

  it('answers an oversized header block or request line with 431 in the contract shape (Node answered a bare 431)', async () => {
    const headers = await raw(app.baseUrl, `GET /v1/leads HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectContractError(headers, 431, 'request_headers_too_large');
    const line = await raw(app.baseUrl, `GET /v1/leads?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectContractError(line, 431, 'request_headers_too_large');
  });

  it('answers bytes that are not HTTP with 400 malformed_request', async () => {
    expectContractError(await raw(app.baseUrl, 'HELLO THERE\r\n\r\n'), 400, 'malformed_request');
  });

  it('cuts off a client that trickles its head (408 at the headers deadline), while others are served', async () => {
    const slow = raw(app.baseUrl, 'GET /v1/leads HTTP/1.1\r\nHost: x\r\n');
    const meanwhile = await app.request('GET', '/v1/leads', { key: owner.testKey });
    expect(meanwhile.status).toBe(200);
    const answer = await slow;
    expectContractError(answer, 408, 'request_timeout');
    expect(answer.elapsedMs).toBeGreaterThanOrEqual(timeouts.headersTimeoutMs - 50);
    expect(answer.elapsedMs).toBeLessThan(10_000);
  });

  it('cuts off a client that trickles its body (408 at the request deadline)', async () => {
    const head = `POST /v1/leads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${owner.testKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    let timer: NodeJS.Timeout | undefined;
    const answer = await raw(app.baseUrl, head, (socket) => {
      // One byte every 100 ms: the body would take 10 s.
      timer = setInterval(() => socket.writable && socket.write('{'), 100);
    });
    clearInterval(timer);
    expect([408, 400]).toContain(answer.status);
    if (answer.status === 408) expectContractError(answer, 408, 'request_timeout');
    expect(answer.elapsedMs).toBeLessThan(10_000);
  });
});

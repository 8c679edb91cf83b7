import express, { NextFunction, Request, Response } from 'express';
import { once } from 'node:events';
import { request as httpRequest, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jsonBody } from '../../src/http/json-body';

/**
 * The plain JSON body read directly (src/http/json-body.ts) takes one of two ways: a body Node's
 * parser has already buffered whole is taken with one read(), one still arriving is collected as
 * it comes. Both must read every body the same: this sends each body both ways, on a real HTTP
 * server, holding the request before the body middleware until the way under test is certain.
 */
describe('jsonBody: a body already buffered and a body still arriving read the same', () => {
  type Way = 'buffered' | 'arriving';
  let server: Server;
  let port: number;
  /** Per request (by its x-test header): the way it must take, and what the middleware saw. */
  const ways = new Map<string, { way: Way; reached: () => void; complete?: boolean }>();

  /** Waits (one turn of the event loop at a time) until `condition` holds. */
  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setImmediate(resolve));
  };

  beforeAll(async () => {
    const app = express();
    app.use(async (req: Request, _res: Response, next: NextFunction) => {
      const test = ways.get(req.headers['x-test'] as string)!;
      // Buffered: the whole message parsed before the body is read. Arriving: the rest of the body
      // is only sent once the request has got here (`reached`), so it cannot be buffered yet.
      if (test.way === 'buffered') await until(() => req.complete);
      test.complete = req.complete;
      test.reached();
      next();
    });
    app.use(jsonBody((res, error) => res.status(error.status).json({ code: error.errorCode, message: error.message })));
    app.use((req: Request, res: Response) => res.json({ body: req.body as unknown }));
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  let sent = 0;
  const send = (bytes: Buffer, way: Way) =>
    new Promise<{ status: number; answer: unknown; complete: boolean | undefined }>((resolve, reject) => {
      const id = String((sent += 1));
      let reached!: () => void;
      const arrived = new Promise<void>((done) => (reached = done));
      const test: { way: Way; reached: () => void; complete?: boolean } = { way, reached };
      ways.set(id, test);
      const req = httpRequest(
        { host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': 'application/json', 'content-length': bytes.length, 'x-test': id } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode!, answer: JSON.parse(Buffer.concat(chunks).toString('utf8')), complete: test.complete }));
        },
      );
      req.on('error', reject);
      if (way === 'buffered') req.end(bytes);
      else {
        // The first byte goes with the headers; the rest once the request reached the middleware.
        req.write(bytes.subarray(0, 1));
        void arrived.then(() => req.end(bytes.subarray(1)));
      }
    });

  const utf8 = (text: string) => Buffer.from(text, 'utf8');
  const bodies: Array<[string, Buffer]> = [
    ['an object', utf8('{"query":"{ lead(id: \\"x\\") { id } }","variables":{"id":"lead_1"}}')],
    ['a byte order mark first', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('{"company":"Marked"}')])],
    ['invalid UTF-8 in a string', Buffer.concat([utf8('{"company":"Bad'), Buffer.from([0xff, 0xfe]), utf8('"}')])],
    ['multi-byte characters', utf8('{"company":"Zürich 株式会社 🚀"}')],
    ['malformed JSON', utf8('{"company":')],
    ['a string', utf8('"x"')],
  ];

  it.each(bodies)('%s', async (_what, bytes) => {
    const buffered = await send(bytes, 'buffered');
    const arriving = await send(bytes, 'arriving');
    // Each took the way under test: whole before the read, and not yet whole.
    expect(buffered.complete).toBe(true);
    expect(arriving.complete).toBe(false);
    expect({ status: arriving.status, answer: arriving.answer }).toEqual({ status: buffered.status, answer: buffered.answer });
  });

  it('reads what the contract says either way', async () => {
    for (const way of ['buffered', 'arriving'] as const) {
      expect(await send(bodies[1][1], way)).toMatchObject({ status: 200, answer: { body: { company: 'Marked' } } });
      expect(await send(bodies[2][1], way)).toMatchObject({ status: 200, answer: { body: { company: 'Bad\ufffd\ufffd' } } });
      expect(await send(bodies[4][1], way)).toMatchObject({ status: 400, answer: { code: 'invalid_json' } });
      expect(await send(bodies[5][1], way)).toMatchObject({ status: 400, answer: { code: 'parameter_invalid' } });
    }
  });
});

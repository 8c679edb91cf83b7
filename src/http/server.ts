import http, { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, ErrorCode } from '../common/api-error';
import { newId } from '../common/ids';
import { restError } from '../rest/rest-error';
import { apiSecurityHeaders } from './security-headers';

export interface ServerTimeouts {
  /** The whole request head must arrive within this (slow-header clients, "slowloris"). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** How often the server looks for requests past their deadline. */
  checkIntervalMs: number;
}

/**
 * Deliberate values instead of Node's (60 s for the head, 300 s for a request): a client that
 * trickles bytes holds a socket and memory for at most these. The largest body (1 MiB) arrives in
 * 30 s over anything faster than 300 kbit/s.
 */
export const SERVER_TIMEOUTS: ServerTimeouts = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, checkIntervalMs: 1_000 };

/** What Node found wrong with a request before the app saw it, as the contract's error. */
function clientErrorOf(error: NodeJS.ErrnoException): { code: ErrorCode; status: number; reason: string; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'request_headers_too_large',
        status: 431,
        reason: 'Request Header Fields Too Large',
        message: 'The request line and headers must be at most 16 KiB together',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', status: 408, reason: 'Request Timeout', message: 'The request did not arrive in time; send it again, faster' };
    default:
      return { code: 'malformed_request', status: 400, reason: 'Bad Request', message: 'The request is not valid HTTP/1.1' };
  }
}

/**
 * Answers what Node refuses before express runs (an oversized head, a request that took too long,
 * bytes that are not HTTP) in the contract's error shape and with the API's headers, where Node
 * would write a bare status line and an empty body.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { code, status, reason, message } = clientErrorOf(error);
  const requestId = newId('req');
  const body = JSON.stringify(restError({ message, extensions: new ApiError(code, message).extensions }, requestId).body);
  const headers = [
    ...apiSecurityHeaders(),
    ['Content-Type', 'application/json; charset=utf-8'],
    ['Content-Length', String(Buffer.byteLength(body))],
    ['X-Request-Id', requestId],
    ['Connection', 'close'],
  ];
  socket.end(`HTTP/1.1 ${status} ${reason}\r\n${headers.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n${body}`);
}

/** The HTTP server of the app (not listening yet), with the timeouts and the client-error answers above. */
export function createHttpServer(app: (req: IncomingMessage, res: ServerResponse) => void, timeouts: ServerTimeouts = SERVER_TIMEOUTS): Server {
  const server = http.createServer(
    { requestTimeout: timeouts.requestTimeoutMs, headersTimeout: timeouts.headersTimeoutMs, connectionsCheckingInterval: timeouts.checkIntervalMs },
    app,
  );
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  server.on('clientError', answerClientError);
  return server;
}

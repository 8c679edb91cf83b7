import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpResponse, TestApp } from './app';

/**
 * What the connect-verification suites (CRMs, PSAs, Microsoft 365) share: a port nothing listens
 * on, what a connect left in the database, and the shape of a refusal.
 */

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** How many integrations and events an account has: a refused connect leaves both as they were. */
export async function storedFor(app: TestApp, accountId: string): Promise<{ integrations: number; events: number }> {
  const sql = app.orm.em.fork().getConnection();
  const integrations = await sql.execute<unknown[]>('select id from integrations where account_id = ?', [accountId]);
  const events = await sql.execute<unknown[]>('select id from events where account_id = ?', [accountId]);
  return { integrations: integrations.length, events: events.length };
}

/** A refusal in the contract's shape (422 invalid_request_error, 502 api_error); answers its message. */
export function expectRefused(res: HttpResponse, status: number, code: string): string {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { error: { code } } });
  expect(res.body.error.type).toBe(status === 422 ? 'invalid_request_error' : 'api_error');
  return res.body.error.message as string;
}

/**
 * Every secret a suite sent, and every response and log line it saw: the suite's last test checks
 * that no secret ever showed up in either.
 */
export class SecretLedger {
  readonly secrets = new Set<string>();
  readonly responses: string[] = [];
  readonly logLines: string[] = [];
  /** For startTestApp's logStream. */
  readonly logStream = { write: (line: string) => void this.logLines.push(line) };

  /** A new secret value, remembered. */
  secret(prefix: string): string {
    const value = `${prefix}${randomBytes(12).toString('hex')}`;
    this.secrets.add(value);
    return value;
  }

  expectNothingLeaked(): void {
    expect(this.logLines.some((line) => line.includes('"/v1/integrations"'))).toBe(true);
    const everything = `${this.responses.join('\n')}\n${this.logLines.join('\n')}`;
    for (const value of this.secrets) expect(everything).not.toContain(value);
  }
}

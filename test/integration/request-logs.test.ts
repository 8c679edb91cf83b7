import { randomUUID } from 'node:crypto';
import { Account } from '../../src/modules/accounts/account.entity';
import { createLogger } from '../../src/logger';
import { Metrics } from '../../src/http/metrics';
import { RequestLogRetention } from '../../src/modules/request-logs/request-log-retention';
import { RequestLogWriter } from '../../src/modules/request-logs/request-log-writer';
import { signUp } from '../helpers/web';
import { startTestApp, TestAccount, TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';

/**
 * The accounts' request logs (issue 24): every authenticated request is handed to a buffer when
 * its answer is sent and stored later in batches, so the tests wait for the writer (a condition,
 * never a fixed time). Read through GraphQL `requestLogs`, newest first, per account and mode.
 */

const LOG_FIELDS = 'id object livemode method route operationName status requestId keyPrefix latencyMs createdAt';

interface LogRow {
  id: string;
  object: string;
  livemode: boolean;
  method: string;
  route: string;
  operationName: string | null;
  status: number;
  requestId: string;
  keyPrefix: string | null;
  latencyMs: number;
  createdAt: string;
}

interface LogPage {
  data: LogRow[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** The key as the API shows keys: its prefix (sk_test_), an ellipsis and its last 4 characters. */
const shown = (key: string) => `${/^(?:sk|rk)_(?:test|live)_/.exec(key)![0]}…${key.slice(-4)}`;

/** A lead id of the right shape that no account has: GET answers 404. */
const MISSING_LEAD = 'lead_01J0000000000000000000000';

/** A series of the app's /metrics (`request_logs_written_total`, `request_logs_dropped_total{reason="buffer_full"}`); 0 when absent. */
async function metric(app: TestApp, series: string): Promise<number> {
  const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('request logs', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ requestLogs: { flushIntervalMs: 50 } });
    await app.reset();
  });
  afterAll(() => app.close());

  /** One page of the key's (or session's) request logs. */
  async function logs(key: string, filter: Record<string, unknown> = {}): Promise<LogPage> {
    const res = await app.graphql<{ data: { requestLogs: LogPage } }>(
      `query RequestLogs($filter: RequestLogListInput) { requestLogs(filter: $filter) { data { ${LOG_FIELDS} } hasMore nextCursor } }`,
      { filter },
      key,
    );
    if (res.status !== 200 || !res.body.data) throw new Error(`requestLogs answered ${res.status}: ${res.text}`);
    return res.body.data.requestLogs;
  }

  /** Waits until the writer has stored a log of every one of these request ids; the rows by request id. */
  async function stored(key: string, requestIds: string[], filter: Record<string, unknown> = {}): Promise<Map<string, LogRow>> {
    return waitFor(`request logs of ${requestIds.join(', ')}`, async () => {
      const rows = new Map((await logs(key, { limit: 100, ...filter })).data.map((row) => [row.requestId, row]));
      return requestIds.every((id) => rows.has(id)) && rows;
    });
  }

  async function rowsOf(account: Account | string): Promise<Array<{ request_id: string }>> {
    const id = typeof account === 'string' ? account : account.id;
    return app.orm.em.getKnex()('request_logs').where({ account_id: id }).select('request_id');
  }

  it('stores each request made with a key: method, route pattern, status, the X-Request-Id answered, the key shown, latency', async () => {
    const a = await app.createAccount();
    const created = await app.request('POST', '/v1/leads', { key: a.testKey, body: { company: 'Logged Co', contact_email: 'logged@example.test' } });
    expect(created.status).toBe(201);
    const read = await app.request('GET', `/v1/leads/${created.body.id}`, { key: a.testKey });
    const missing = await app.request('GET', `/v1/leads/${MISSING_LEAD}`, { key: a.testKey, headers: { 'x-request-id': `client-${randomUUID()}` } });
    expect(missing.status).toBe(404);
    const gql = await app.request('POST', '/graphql', {
      key: a.testKey,
      body: { query: 'query LeadNames { leads(filter: { limit: 1 }) { data { company } } }' },
    });
    const named = await app.request('POST', '/graphql', {
      key: a.testKey,
      body: { query: 'query A { leads { data { id } } } query B { deals { data { id } } }', operationName: 'B' },
    });
    expect([read.status, gql.status, named.status]).toEqual([200, 200, 200]);
    const answered = [created, read, missing, gql, named].map((res) => res.headers.get('x-request-id')!);
    expect(answered[2]).toMatch(/^client-/); // the client's own id, echoed, is the one logged

    const rows = await stored(a.testKey, answered);
    const [postRow, getRow, missingRow, gqlRow, namedRow] = answered.map((id) => rows.get(id)!);
    const common = { object: 'request_log', livemode: false, keyPrefix: shown(a.testKey) };
    expect(postRow).toMatchObject({ ...common, method: 'POST', route: '/v1/leads', operationName: null, status: 201 });
    expect(getRow).toMatchObject({ ...common, method: 'GET', route: '/v1/leads/:id', status: 200 });
    expect(missingRow).toMatchObject({ ...common, method: 'GET', route: '/v1/leads/:id', status: 404 });
    expect(gqlRow).toMatchObject({ ...common, method: 'POST', route: '/graphql', operationName: 'LeadNames', status: 200 });
    expect(namedRow).toMatchObject({ ...common, route: '/graphql', operationName: 'B' });
    for (const row of [postRow, getRow, missingRow, gqlRow, namedRow]) {
      expect(row.id).toMatch(/^rlog_[0-9A-Z]{26}$/);
      expect(row.latencyMs).toBeGreaterThanOrEqual(0);
      expect(Math.abs(Date.parse(row.createdAt) - Date.now())).toBeLessThan(60_000);
    }
    // Newest first: the order the requests were answered in, reversed.
    const order = (await logs(a.testKey, { limit: 100 })).data.map((row) => row.requestId).filter((id) => answered.includes(id));
    expect(order).toEqual([...answered].reverse());
    // A live key's requests are logged in live mode, with that key shown.
    const live = await app.request('GET', '/v1/leads?limit=1', { key: a.liveKey });
    const liveRow = (await stored(a.liveKey, [live.headers.get('x-request-id')!])).get(live.headers.get('x-request-id')!)!;
    expect(liveRow).toMatchObject({ livemode: true, keyPrefix: shown(a.liveKey), route: '/v1/leads', status: 200 });
  });

  it('filters: errors (status 400 and above, or below), one status, one method; bad filters are BAD_USER_INPUT', async () => {
    const a = await app.createAccount();
    const ok = await app.request('GET', '/v1/leads?limit=1', { key: a.testKey });
    const notFound = await app.request('GET', `/v1/leads/${MISSING_LEAD}`, { key: a.testKey });
    const invalid = await app.request('POST', '/v1/leads', { key: a.testKey, body: { company: '' } });
    expect([ok.status, notFound.status, invalid.status]).toEqual([200, 404, 400]);
    const [okId, notFoundId, invalidId] = [ok, notFound, invalid].map((res) => res.headers.get('x-request-id')!);
    await stored(a.testKey, [okId, notFoundId, invalidId]);

    const errors = (await logs(a.testKey, { errors: true, limit: 100 })).data;
    expect(errors.map((row) => row.requestId).sort()).toEqual([notFoundId, invalidId].sort());
    const fine = (await logs(a.testKey, { errors: false, limit: 100 })).data;
    expect(fine.map((row) => row.requestId)).toContain(okId);
    expect(fine.every((row) => row.status < 400)).toBe(true);
    expect((await logs(a.testKey, { status: 404 })).data.map((row) => row.requestId)).toEqual([notFoundId]);
    expect((await logs(a.testKey, { method: 'POST', errors: true })).data.map((row) => row.requestId)).toEqual([invalidId]);

    for (const filter of [{ status: 42 }, { method: 'FETCH' }, { limit: 0 }, { limit: 101 }, { cursor: 'garbage' }]) {
      const res = await app.graphql('query ($filter: RequestLogListInput) { requestLogs(filter: $filter) { data { id } } }', { filter }, a.testKey);
      expect({ filter, code: res.body.errors?.[0]?.extensions?.code }).toEqual({ filter, code: 'BAD_USER_INPUT' });
    }
  });

  it('pages newest first with limit and cursor, each log once', async () => {
    const a = await app.createAccount();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await app.request('GET', `/v1/leads/${MISSING_LEAD}`, { key: a.testKey })).headers.get('x-request-id')!);
    await stored(a.testKey, ids, { status: 404 });

    const seen: string[] = [];
    const pages: LogPage[] = [];
    let cursor: string | null = null;
    do {
      const page: LogPage = await logs(a.testKey, { status: 404, limit: 2, ...(cursor ? { cursor } : {}) });
      pages.push(page);
      seen.push(...page.data.map((row) => row.requestId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages.map((page) => [page.data.length, page.hasMore])).toEqual([
      [2, true],
      [2, true],
      [1, false],
    ]);
    expect(seen).toEqual([...ids].reverse());
  });

  it("shows another account, or the other mode, none of an account's logs", async () => {
    const a = await app.createAccount();
    const b = await app.createAccount();
    const aId = (await app.request('GET', `/v1/leads/${MISSING_LEAD}`, { key: a.testKey })).headers.get('x-request-id')!;
    const bId = (await app.request('GET', `/v1/leads/${MISSING_LEAD}`, { key: b.testKey })).headers.get('x-request-id')!;
    await stored(a.testKey, [aId]);
    await stored(b.testKey, [bId]);

    const others: Array<[TestAccount, string, string]> = [
      [b, b.testKey, shown(b.testKey)],
      [a, a.liveKey, shown(a.liveKey)],
    ];
    for (const [, key, keyShown] of others) {
      const rows = (await logs(key, { limit: 100 })).data;
      expect(rows.map((row) => row.requestId)).not.toContain(aId);
      // All they see is their own: requests made with that very key (the reads of the logs included).
      expect(rows.every((row) => row.keyPrefix === keyShown)).toBe(true);
    }
  });

  it("logs the web app's session calls to /graphql, with no key", async () => {
    // Signs up, verifies and logs in (test/helpers/web.ts): the session cookie and its CSRF token.
    const { email, cookie, csrf } = await signUp(app, `session-${randomUUID()}@example.test`);
    const session = (query: string, variables: Record<string, unknown> = {}, requestId?: string) =>
      fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf, ...(requestId ? { 'x-request-id': requestId } : {}) },
        body: JSON.stringify({ query, variables }),
      });

    const requestId = `dashboard-${randomUUID()}`;
    expect((await session('query Dashboard { leads(filter: { limit: 5 }) { data { id } } }', {}, requestId)).status).toBe(200);
    const row = await waitFor('the session request logged', async () => {
      const res = await session(`query RequestLogs { requestLogs(filter: { limit: 100 }) { data { ${LOG_FIELDS} } } }`);
      const body = (await res.json()) as { data: { requestLogs: LogPage } };
      return body.data.requestLogs.data.find((log) => log.requestId === requestId);
    });
    expect(row).toMatchObject({ method: 'POST', route: '/graphql', operationName: 'Dashboard', status: 200, keyPrefix: null, livemode: false });
    // A web page (no /graphql) is not an API request and is not logged.
    const account = await app.orm.em.fork().findOneOrFail(Account, { email });
    expect((await rowsOf(account)).length).toBeGreaterThan(0);
    const logged = await app.orm.em
      .getKnex()('request_logs')
      .where({ account_id: account.id })
      .whereNot({ route: '/graphql' })
      .count<{ count: string }[]>('* as count');
    expect(Number(logged[0].count)).toBe(0);
  });

  it('the retention job removes logs older than 7 days, in batches, and keeps the rest', async () => {
    const a = await app.createAccount();
    const knex = app.orm.em.getKnex();
    const row = (ageDays: number, n: number) => {
      const at = new Date(Date.now() - ageDays * 86_400_000 - n * 1000).toISOString();
      return {
        id: `rlog_${randomUUID()}`,
        created_at: at,
        updated_at: at,
        account_id: a.account.id,
        livemode: false,
        method: 'GET',
        route: '/v1/leads',
        status: 200,
        request_id: `aged-${ageDays}-${n}`,
        key_prefix: shown(a.testKey),
        latency_ms: 1.5,
      };
    };
    await knex('request_logs').insert([...Array.from({ length: 5 }, (_, n) => row(8, n)), ...Array.from({ length: 3 }, (_, n) => row(6, n))]);

    const retention = new RequestLogRetention({ orm: app.orm, logger: createLogger('silent'), batchSize: 2, pollIntervalMs: 60_000 });
    retention.start();
    try {
      await waitFor('the expired logs removed', async () => !(await rowsOf(a.account)).some((r) => r.request_id.startsWith('aged-8-')));
    } finally {
      await retention.stop();
    }
    expect((await rowsOf(a.account)).map((r) => r.request_id).sort()).toEqual(['aged-6-0', 'aged-6-1', 'aged-6-2']);
    expect((await logs(a.testKey, { limit: 100 })).data.filter((log) => log.requestId.startsWith('aged-')).length).toBe(3);
  });

  it("stores a batch's rows and skips those of an account that no longer exists (request_logs has no foreign key)", async () => {
    const a = await app.createAccount();
    const writer = new RequestLogWriter({ em: app.orm.em, logger: createLogger('silent'), metrics: new Metrics(), flushIntervalMs: 60_000 });
    const record = (accountId: string, requestId: string) => ({
      accountId,
      livemode: false,
      method: 'GET',
      route: '/v1/leads',
      operationName: null,
      status: 200,
      requestId,
      keyPrefix: shown(a.testKey),
      latencyMs: 1,
      createdAt: new Date(),
    });
    const gone = `acct_${'0'.repeat(26)}`;
    writer.add(record(a.account.id, 'kept-1'));
    writer.add(record(gone, 'skipped'));
    writer.add(record(a.account.id, 'kept-2'));
    await writer.stop();
    expect((await rowsOf(a.account)).map((r) => r.request_id).sort()).toEqual(['kept-1', 'kept-2']);
    expect(await rowsOf(gone)).toEqual([]);
    const [{ constraints }] = (await app.orm.em
      .getConnection()
      .execute(`select count(*)::int as constraints from pg_constraint where conrelid = 'request_logs'::regclass and contype = 'f'`)) as Array<{
      constraints: number;
    }>;
    expect(constraints).toBe(0);
  });

  it('stores every column of a batch as given: nulls, fractions, milliseconds, and text an array literal must escape', async () => {
    const a = await app.createAccount();
    const writer = new RequestLogWriter({ em: app.orm.em, logger: createLogger('silent'), metrics: new Metrics(), flushIntervalMs: 60_000 });
    const at = new Date('2026-11-29T10:11:12.345Z');
    const odd = ['NULL', 'a,b', '{x}', 'quote " and \\ backslash', 'naïve – 東京', ''];
    const records = odd.map((text, i) => ({
      accountId: a.account.id,
      livemode: i % 2 === 0,
      method: text,
      route: `/v1/${text}`,
      operationName: i === 0 ? null : text,
      status: 200 + i,
      requestId: `odd-${i}`,
      keyPrefix: i === 1 ? null : text,
      latencyMs: 1.25 + i,
      createdAt: new Date(at.getTime() + i),
    }));
    records.forEach((record) => writer.add(record));
    await writer.stop();
    const stored: Array<Record<string, unknown>> = await app.orm.em.getKnex()('request_logs').where({ account_id: a.account.id }).select('*');
    const rows = stored.sort((x, y) => String(x.request_id).localeCompare(String(y.request_id)));
    expect(
      rows.map((r) => ({
        livemode: r.livemode,
        method: r.method,
        route: r.route,
        operationName: r.operation_name,
        status: r.status,
        keyPrefix: r.key_prefix,
        latencyMs: r.latency_ms,
        createdAt: new Date(r.created_at as string).toISOString(),
        updatedAt: new Date(r.updated_at as string).toISOString(),
      })),
    ).toEqual(
      records.map(({ accountId, requestId, createdAt, ...columns }) => ({
        ...columns,
        createdAt: createdAt.toISOString(),
        updatedAt: createdAt.toISOString(),
      })),
    );
    expect(rows.every((r) => /^rlog_[0-9A-Z]{26}$/.test(String(r.id)))).toBe(true);
  });

  it('with REQUEST_LOGS=off stores nothing', async () => {
    const off = await startTestApp({ env: { REQUEST_LOGS: 'off' }, requestLogs: { flushIntervalMs: 50 } });
    try {
      const a = await off.createAccount();
      const offIds: string[] = [];
      for (let i = 0; i < 3; i++) offIds.push((await off.request('GET', '/v1/leads?limit=1', { key: a.testKey })).headers.get('x-request-id')!);
      // A request to the app with logs on, made after them, and written: a writer of the off app would have written by now too.
      const onId = (await app.request('GET', '/v1/leads?limit=1', { key: a.testKey })).headers.get('x-request-id')!;
      await waitFor('the request logged by the app with logs on', async () => (await rowsOf(a.account)).some((r) => r.request_id === onId));
      expect((await rowsOf(a.account)).map((r) => r.request_id)).toEqual([onId]);
      expect(offIds.every((id) => id.startsWith('req_'))).toBe(true);
      expect(await metric(off, 'request_logs_written_total')).toBe(0);
      expect(await metric(app, 'request_logs_written_total')).toBeGreaterThan(0);
    } finally {
      await off.close();
    }
  });
});

/**
 * A database slower than the requests (request_logs locked, inserts waiting, then failing at the
 * statement timeout): requests answer as usual while the writer cannot write, the buffer stays at
 * its bound by dropping the oldest, every log is either stored or counted as dropped, and the
 * newest are the ones kept.
 */
describe('request logs when the database does not keep up', () => {
  const MAX_BUFFERED = 10;
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({
      env: { DATABASE_STATEMENT_TIMEOUT_MS: '1000' },
      requestLogs: { flushIntervalMs: 20, batchSize: 4, maxBuffered: MAX_BUFFERED },
    });
  });
  afterAll(() => app.close());

  it('never holds a request: drops the oldest logs and counts them, stores the newest once the database is back', async () => {
    const a = await app.createAccount();
    const knex = app.orm.em.getKnex();
    const rowsOf = (): Promise<Array<{ request_id: string }>> => knex('request_logs').where({ account_id: a.account.id }).select('request_id');
    const send = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const res = await app.request('GET', '/v1/leads?limit=1', { key: a.testKey });
        expect(res.status).toBe(200);
        requestIds.push(res.headers.get('x-request-id')!);
      }
    };
    const requestIds: string[] = [];
    const lock = await knex.transaction();
    try {
      await lock.raw('lock table request_logs in access exclusive mode');
      await send(40);
      // All 40 answered while no log could be written (the lock is still held): no request waited for the writer.
      expect(await metric(app, 'request_logs_written_total')).toBe(0);
      await waitFor('the oldest logs dropped from the full buffer', async () => (await metric(app, 'request_logs_dropped_total{reason="buffer_full"}')) > 0);
      // Held past the statement timeout: the insert that was waiting fails, and its rows are counted as dropped.
      await waitFor('a batch insert failed', async () => (await metric(app, 'request_logs_dropped_total{reason="write_failed"}')) > 0);
      await send(5);
    } finally {
      await lock.rollback();
    }

    const dropped = async () =>
      (await metric(app, 'request_logs_dropped_total{reason="buffer_full"}')) + (await metric(app, 'request_logs_dropped_total{reason="write_failed"}'));
    // Every log is accounted for: stored, or counted as dropped.
    await waitFor('every log stored or counted as dropped', async () => (await rowsOf()).length + (await dropped()) === requestIds.length);
    const kept = (await rowsOf()).map((r) => r.request_id);
    expect(await metric(app, 'request_logs_written_total')).toBe(kept.length);
    // Bounded: at most the buffer and one batch were ever held; the newest (sent last) are among those kept.
    expect(kept.length).toBeLessThanOrEqual(MAX_BUFFERED + 4);
    expect(kept).toEqual(expect.arrayContaining(requestIds.slice(-5)));

    // And the writer goes on: a request now is stored as usual.
    const after = (await app.request('GET', '/v1/leads?limit=1', { key: a.testKey })).headers.get('x-request-id')!;
    await waitFor('a request after the outage stored', async () => (await rowsOf()).some((r) => r.request_id === after));
  });
});

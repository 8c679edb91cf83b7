import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { mapDatabaseError } from '../../src/db/database-errors';
import { startTestApp, TestAccount, TestApp } from '../helpers/app';
import { workerDatabaseUrl } from '../helpers/database';
import { waitFor } from '../helpers/wait';

/**
 * No request holds the database for long (DATABASE_STATEMENT_TIMEOUT_MS,
 * DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS): a statement past its limit is stopped and answered 503
 * in the contract's shape, and the pool goes on serving everyone else.
 */

describe('database time limits on request connections', () => {
  let app: TestApp;
  let owner: TestAccount;
  let locker: Client;

  beforeAll(async () => {
    app = await startTestApp({ env: { DATABASE_STATEMENT_TIMEOUT_MS: '400', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '400' } });
    owner = await app.createAccount();
    locker = new Client({ connectionString: await workerDatabaseUrl() });
    await locker.connect();
  });
  afterAll(async () => {
    await locker.end();
    await app.close();
  });

  it('sets both limits on the connections of the pool', async () => {
    const [settings] = await app.orm.em
      .getConnection()
      .execute<Array<{ statement: string; idle: string }>>(
        "select current_setting('statement_timeout') as statement, current_setting('idle_in_transaction_session_timeout') as idle",
      );
    expect(settings).toEqual({ statement: '400ms', idle: '400ms' });
  });

  it('answers 503 to a request whose statement runs past the limit, writes nothing, and serves others meanwhile', async () => {
    const lead = await app.request('POST', '/v1/leads', { key: owner.testKey, body: { company: 'Before', contact_email: 'before@timeouts.test' } });
    expect(lead.status).toBe(201);
    await locker.query('begin');
    await locker.query('lock table leads in access exclusive mode');
    try {
      const started = Date.now();
      const [list, create, deals] = await Promise.all([
        app.request('GET', '/v1/leads', { key: owner.testKey }),
        app.request('POST', '/v1/leads', {
          key: owner.testKey,
          headers: { 'idempotency-key': randomUUID() },
          body: { company: 'Held', contact_email: 'held@timeouts.test' },
        }),
        app.request('GET', '/v1/deals', { key: owner.testKey }),
      ]);
      for (const held of [list, create]) {
        expect(held.status).toBe(503);
        expect(held.body.error).toMatchObject({ type: 'api_error', code: 'service_unavailable' });
        expect(held.body.error.message).toMatch(/took too long in the database/);
        expect(held.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(deals.status).toBe(200);
      // GraphQL answers the same.
      const gql = await app.graphql('{ leads { hasMore } }', {}, owner.testKey);
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'INTERNAL_SERVER_ERROR', errorCode: 'service_unavailable' });
    } finally {
      await locker.query('rollback');
    }
    const after = await app.request('GET', '/v1/leads', { key: owner.testKey });
    expect(after.status).toBe(200);
    expect(after.body.data.map((l: { company: string }) => l.company)).toEqual(['Before']);
  });

  it('ends a transaction left idle past its limit, answered 503, and the pool goes on', async () => {
    const em = app.orm.em.fork();
    const connection = em.getConnection();
    const stuck = await em.begin().then(async () => {
      const [row] = await em.getConnection().execute<Array<{ pid: number }>>('select pg_backend_pid() as pid', [], 'all', em.getTransactionContext());
      return row.pid;
    });
    await waitFor('the idle transaction to be ended', async () => {
      const { rows } = await locker.query('select 1 from pg_stat_activity where pid = $1', [stuck]);
      return rows.length === 0;
    });
    const failure = await em
      .getConnection()
      .execute('select 1', [], 'all', em.getTransactionContext())
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeDefined();
    expect(mapDatabaseError(failure)).toMatchObject({ errorCode: 'service_unavailable' });
    await em.rollback().catch(() => undefined);
    expect(connection).toBeDefined();
    for (let i = 0; i < 5; i++) expect((await app.request('GET', '/v1/leads', { key: owner.testKey })).status).toBe(200);
  });
});

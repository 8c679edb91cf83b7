import { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { findPage, NEWEST_FIRST } from '../../src/common/pagination';
import { findFirstLean, findLean } from '../../src/db/lean';
import { StoredTimestamp } from '../../src/db/stored-timestamp';
import { scopeTo, TenantScope } from '../../src/db/tenant';
import { AccountService } from '../../src/modules/accounts/account.service';
import { Lead } from '../../src/modules/leads/lead.entity';
import { LeadStatus } from '../../src/modules/leads/lead-status';
import { truncateAll, workerOrm } from '../helpers/database';

/**
 * findLean builds each shape of criteria's SQL once with the query builder and reuses it with the
 * next query's values. Reused statements must answer exactly what em.find answers, for every
 * tenant, and must really be reused (the query builder is not asked again).
 */
describe('findLean statements on a real database', () => {
  let orm: MikroORM;
  const scopes: TenantScope[] = [];

  beforeAll(async () => {
    orm = await workerOrm();
    await truncateAll(orm);
    const accounts = new AccountService(orm.em.fork());
    for (const name of ['A', 'B']) {
      const account = await accounts.create({ name, email: `${name.toLowerCase()}@lean.test` });
      scopes.push({ accountId: account.id, livemode: false }, { accountId: account.id, livemode: true });
    }
    let n = 0;
    for (const scope of scopes) {
      const em = orm.em.fork();
      for (let i = 0; i < 12; i++, n++) {
        em.create(Lead, {
          account: scope.accountId,
          livemode: scope.livemode,
          company: `Company ${n}`,
          contactEmail: `c${n}@lean.test`,
          industry: i % 3 ? 'software' : 'retail',
          employees: i % 4 ? 10 * i : null,
          status: i % 2 ? LeadStatus.new : LeadStatus.contacted,
          score: (n * 37) % 101,
          scoreLabel: 'warm',
          scoreSignals: [{ name: 'industry', value: 'software', impact: n, description: `signal ${n}` }],
          scoreBase: 40,
          modelVersion: 'prior-v1',
          scoredAt: new Date(),
          createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
        } as never);
      }
      await em.flush();
    }
  });
  afterAll(() => orm.close());

  const scoped = (scope: TenantScope): EntityManager => scopeTo(orm.em.fork(), scope);
  const ids = (leads: Array<{ id: string }>) => leads.map((lead) => lead.id);

  it('answers what em.find answers, for each tenant, and reuses the statement of a known shape', async () => {
    const cases = [
      { where: { status: LeadStatus.new }, limit: 5 },
      { where: { status: LeadStatus.contacted }, limit: 3 },
      { where: { industry: { $in: ['software', 'retail'] } }, limit: 20 },
      { where: { industry: { $in: ['retail'] } }, limit: 20 },
      { where: { $or: [{ createdAt: { $lt: new Date(Date.UTC(2026, 0, 1, 0, 0, 30)) } }, { employees: null }] }, limit: 7 },
      { where: { $or: [{ createdAt: { $lt: new Date(Date.UTC(2026, 0, 1, 0, 0, 20)) } }, { employees: null }] }, limit: 2 },
      { where: { employees: null }, limit: 50 },
      { where: { employees: 30 }, limit: 50 },
      { where: {}, limit: 4 },
    ];
    for (const { where, limit } of cases) {
      for (const scope of scopes) {
        const orderBy = [{ createdAt: 'desc' as const, id: 'desc' as const }];
        const lean = await findLean(scoped(scope), Lead, where as never, { orderBy: orderBy as never, limit });
        const found = await scoped(scope).find(Lead, where as never, { orderBy: orderBy as never, limit });
        expect(ids(lean)).toEqual(ids(found));
        expect(lean.every((lead) => lead.account.id === scope.accountId && lead.livemode === scope.livemode)).toBe(true);
      }
    }
  });

  it("reads timestamps as Dates that print exactly as em.find's, the ISO text written from PostgreSQL's own", async () => {
    for (const scope of scopes) {
      const orderBy = [{ createdAt: 'desc' as const, id: 'desc' as const }];
      const lean = await findLean(scoped(scope), Lead, {}, { orderBy: orderBy as never, limit: 50 });
      const found = await scoped(scope).find(Lead, {}, { orderBy: orderBy as never, limit: 50 });
      expect(lean).toHaveLength(found.length);
      lean.forEach((lead, i) => {
        for (const name of ['createdAt', 'updatedAt', 'scoredAt'] as const) {
          // Whole seconds (createdAt, printed without a fraction) and the clock's milliseconds (scoredAt).
          expect(lead[name]).toBeInstanceOf(StoredTimestamp);
          expect(lead[name]!.getTime()).toBe(found[i][name]!.getTime());
          expect(lead[name]!.toISOString()).toBe(found[i][name]!.toISOString());
        }
      });
      expect(JSON.stringify(lean.map((lead) => [lead.createdAt, lead.scoredAt]))).toBe(JSON.stringify(found.map((lead) => [lead.createdAt, lead.scoredAt])));
    }
  });

  /** The text of every statement pooled connections are given until `restore`. */
  const watchStatements = () => {
    const statements: string[] = [];
    const pg = orm.em.getConnection().getKnex().client as { acquireConnection(): Promise<{ query: (...args: unknown[]) => unknown }> };
    const acquire = pg.acquireConnection.bind(pg);
    // Each pooled connection's query is wrapped once, and given back its own when the test ends.
    const watched = new Map<{ query: (...args: unknown[]) => unknown }, (...args: unknown[]) => unknown>();
    const spy = jest.spyOn(pg, 'acquireConnection').mockImplementation(async () => {
      const connection = await acquire();
      if (watched.has(connection)) return connection;
      const query = connection.query;
      watched.set(connection, query);
      connection.query = (...args: unknown[]) => {
        const text = (args[0] as { text?: string }).text ?? String(args[0]);
        statements.push(text);
        return query.apply(connection, args);
      };
      return connection;
    });
    const restore = () => {
      spy.mockRestore();
      for (const [connection, query] of watched) connection.query = query;
    };
    return { statements, restore };
  };

  it('leaves a lazy property (Lead.scoreSignals) out of lean reads unless populated, as em.find does', async () => {
    const em = scoped(scopes[0]);
    const { statements, restore } = watchStatements();
    try {
      const [first] = await findLean(em, Lead, {}, { orderBy: [{ createdAt: 'desc', id: 'desc' }] as never, limit: 3 });
      expect(first.scoreSignals).toBeUndefined();
      expect(first.company).toMatch(/^Company /);
      const byId = await findFirstLean(em, Lead, { id: first.id });
      expect(byId!.scoreSignals).toBeUndefined();
      expect(byId!.scoredAt).toBeInstanceOf(Date);
      const populated = await findFirstLean(em, Lead, { id: first.id }, {}, { populate: ['scoreSignals'] });
      const managed = await scoped(scopes[0]).findOneOrFail(Lead, first.id, { populate: ['scoreSignals'] });
      expect(populated!.scoreSignals).toEqual(managed.scoreSignals);
      expect(populated!.scoreSignals).toHaveLength(1);
    } finally {
      restore();
    }
    // The page, the lead by id, and the populated read, on the lean paths (em.find's own read is `select "l0".*`).
    const lean = statements.filter((text) => /^select "(l0"\."id|id)"/.test(text) && /from "leads"/.test(text));
    expect(lean).toHaveLength(3);
    expect(lean.map((text) => text.includes('score_signals'))).toEqual([false, false, true]);
  });

  it('writes a page limit into the text only where asked, a statement per limit, so PostgreSQL keeps one generic plan', async () => {
    const orderBy = [{ createdAt: 'desc' as const, id: 'desc' as const }];
    const where = { status: LeadStatus.new, scoreLabel: 'warm' } as never;
    const page = (scope: TenantScope, criteria: object, limit: number, limitInText: boolean) =>
      findLean(scoped(scope), Lead, criteria as never, { orderBy: orderBy as never, limit, limitInText });
    // A shape's first call goes through the query builder (its values in the text); the next ones
    // run its prepared statement, whose text is what PostgreSQL caches plans for.
    const { statements, restore } = watchStatements();
    try {
      for (const limit of [2, 5, 2, 5]) {
        const lean = await page(scopes[2], where, limit, true);
        expect(ids(lean)).toEqual(ids(await scoped(scopes[2]).find(Lead, where, { orderBy: orderBy as never, limit })));
      }
      for (let i = 0; i < 2; i++) expect(await page(scopes[2], where, 5, false)).toHaveLength(5);
    } finally {
      restore();
    }
    // findLean's prepared statements (em.find's, compared with above, carry their values in the text).
    const prepared = (texts: string[]) => texts.filter((text) => /from "leads"/.test(text) && /\$1\b/.test(text));
    const pages = prepared(statements);
    expect(pages.map((text) => / limit (\d+|\$\d+)$/.exec(text)?.[1])).toEqual(['2', '5', '$5']);

    // Beyond LITERAL_LIMITS_PER_SHAPE (8) limits of one shape, the others are parameters again.
    const shape = { industry: 'software' };
    const more = watchStatements();
    try {
      for (let limit = 1; limit <= 10; limit++) for (let i = 0; i < 2; i++) expect(await page(scopes[3], shape, limit, true)).toHaveLength(Math.min(limit, 8));
    } finally {
      more.restore();
    }
    const limits = prepared(more.statements).map((text) => / limit (\d+|\$\d+)$/.exec(text)?.[1]);
    expect(limits).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '$4', '$4', '$4']);

    // Why: on a tenant with many rows, PostgreSQL re-plans a prepared page whose limit is a
    // parameter on every execution (its generic plan, made without the limit, never looks cheap
    // enough), and keeps the generic plan of one whose limit is in the text.
    const big = await new AccountService(orm.em.fork()).create({ name: 'Big', email: 'big@lean.test' });
    const knex = orm.em.getKnex();
    await knex.raw(
      `insert into leads (id, created_at, updated_at, account_id, livemode, company, contact_email, status, score, score_label, score_signals, score_base, model_version, scored_at, metadata)
       select 'lead_big' || g, now() - g * interval '1 second', now(), ?, true, 'Big ' || g, 'big' || g || '@lean.test', 'new', 50, 'warm', '[]', 40, 'prior-v1', now(), '{}'
         from generate_series(1, 20000) g`,
      [big.id],
    );
    await knex.raw('analyze leads');
    const [literal, parameter] = [pages[0], pages[2]];
    type PgClient = { query(query: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: Array<Record<string, unknown>> }> };
    const pool = knex.client as { acquireConnection(): Promise<PgClient>; releaseConnection(connection: PgClient): Promise<unknown> };
    const connection = await pool.acquireConnection();
    try {
      const values = [LeadStatus.new, 'warm', big.id, true];
      for (let i = 0; i < 8; i++) {
        expect((await connection.query({ name: 'test_literal_limit', text: literal, values })).rows).toHaveLength(2);
        expect((await connection.query({ name: 'test_parameter_limit', text: parameter, values: [...values, 5] })).rows).toHaveLength(5);
      }
      const { rows } = await connection.query({
        text: `select name, generic_plans::int, custom_plans::int from pg_prepared_statements where name like 'test_%' order by name`,
      });
      expect(rows).toEqual([
        { name: 'test_literal_limit', generic_plans: 3, custom_plans: 5 },
        { name: 'test_parameter_limit', generic_plans: 0, custom_plans: 8 },
      ]);
      await connection.query({ text: 'deallocate test_literal_limit' });
      await connection.query({ text: 'deallocate test_parameter_limit' });
    } finally {
      await pool.releaseConnection(connection);
    }
  });

  it('findPage writes the limit into the text for filters of equalities only, and sends it as a parameter for ranges and patterns', async () => {
    const em = () => scoped(scopes[1]);
    const limitOf = async (filters: object[]) => {
      const { statements, restore } = watchStatements();
      try {
        // Twice: the second call runs the shape's prepared statement.
        for (let i = 0; i < 2; i++) await findPage(em(), Lead, filters as never, { limit: 3 }, NEWEST_FIRST, { lean: true });
      } finally {
        restore();
      }
      const [text] = statements.filter((each) => /from "leads"/.test(each) && /\$1\b/.test(each));
      return / limit (\d+|\$\d+)$/.exec(text)?.[1];
    };
    expect(await limitOf([])).toBe('4');
    expect(await limitOf([{ status: LeadStatus.new }, { industry: { $in: ['software'] } }])).toBe('4');
    expect(await limitOf([{ score: { $gte: 10 } }])).toMatch(/^\$\d$/);
    expect(await limitOf([{ $or: [{ company: { $ilike: '%1%' } }, { contactEmail: { $ilike: '%1%' } }] }])).toMatch(/^\$\d$/);
    // A cursor is a range on the sort's own columns: the limit stays in the text.
    const first = await findPage(em(), Lead, [], { limit: 3 }, NEWEST_FIRST, { lean: true });
    const { statements, restore } = watchStatements();
    try {
      for (let i = 0; i < 2; i++)
        await findPage(em(), Lead, [{ status: LeadStatus.new }] as never, { limit: 3, cursor: first.nextCursor }, NEWEST_FIRST, { lean: true });
    } finally {
      restore();
    }
    expect(statements.filter((each) => /from "leads"/.test(each) && /\$1\b/.test(each)).map((each) => / limit (\d+|\$\d+)$/.exec(each)?.[1])).toEqual(['4']);
  });

  it('asks the query builder once per shape, then runs the statement with the new values', async () => {
    const em = scoped(scopes[1]);
    const builder = jest.spyOn(em, 'createQueryBuilder');
    const where = (score: number) => ({ score: { $gte: score } });
    const first = await findLean(em, Lead, where(90), { limit: 100 });
    const second = await findLean(em, Lead, where(10), { limit: 100 });
    expect(builder).toHaveBeenCalledTimes(1);
    expect(second.length).toBeGreaterThan(first.length);
    expect(second.every((lead) => lead.score! >= 10)).toBe(true);
    expect(ids(second)).toEqual(ids(await scoped(scopes[1]).find(Lead, where(10), { limit: 100 })));
  });
});

import { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { findFirstLean, findLean } from '../../src/db/lean';
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

  it('leaves a lazy property (Lead.scoreSignals) out of lean reads unless populated, as em.find does', async () => {
    const em = scoped(scopes[0]);
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
      spy.mockRestore();
      for (const [connection, query] of watched) connection.query = query;
    }
    // The page, the lead by id, and the populated read, on the lean paths (em.find's own read is `select "l0".*`).
    const lean = statements.filter((text) => /^select "(l0"\."id|id)"/.test(text) && /from "leads"/.test(text));
    expect(lean).toHaveLength(3);
    expect(lean.map((text) => text.includes('score_signals'))).toEqual([false, false, true]);
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

import { MikroORM } from '@mikro-orm/postgresql';
import { initAppOrm } from '../../src/app/orm';
import { preparedRows, selectRows } from '../../src/db/lean';
import { FAN_OUT_BATCH, markUnowed } from '../../src/events/outbox-fan-out';
import { workerDatabaseUrl } from '../helpers/database';

/**
 * selectRows (the hot reads: the API key, a lead by id, a page) names its statements, so pg
 * prepares each once per connection and PostgreSQL parses and plans it once per connection. A
 * pool of one connection makes "this connection" observable in pg_prepared_statements.
 */
describe('prepared statements of the hot reads', () => {
  const orms: MikroORM[] = [];
  const connect = async (preparedStatements?: boolean) => {
    const orm = await initAppOrm({ clientUrl: await workerDatabaseUrl(), poolMax: 1, preparedStatements });
    orms.push(orm);
    return orm;
  };
  const prepared = async (orm: MikroORM) =>
    (await selectRows(orm.em.fork(), 'select name, statement from pg_prepared_statements order by name', [])) as Array<{ name: string; statement: string }>;

  afterAll(async () => {
    await orms[0]?.em.getConnection().execute('drop table if exists prepared_probe');
    await Promise.all(orms.map((orm) => orm.close()));
  });

  it('prepares a statement once on the connection and runs it again by name', async () => {
    const orm = await connect();
    const sql = 'select ? :: int + 1 as next';
    expect(await selectRows(orm.em.fork(), sql, [1])).toEqual([{ next: 2 }]);
    expect(await selectRows(orm.em.fork(), sql, [41])).toEqual([{ next: 42 }]);
    const mine = (await prepared(orm)).filter((row) => row.statement === 'select $1 :: int + 1 as next');
    expect(mine).toHaveLength(1);
    expect(mine[0].name).toMatch(/^lean_\d+_\d+$/);
  });

  it('prepares again when a migration changed the columns a prepared statement answers', async () => {
    const orm = await connect();
    const em = orm.em.fork();
    await em.getConnection().execute('drop table if exists prepared_probe');
    await em.getConnection().execute('create table prepared_probe (a int)');
    await em.getConnection().execute('insert into prepared_probe values (1)');
    expect(await selectRows(em, 'select * from prepared_probe', [])).toEqual([{ a: 1 }]);
    // PostgreSQL refuses to run the prepared `select *` now ("cached plan must not change result type").
    await em.getConnection().execute('alter table prepared_probe add column b int not null default 2');
    expect(await selectRows(em, 'select * from prepared_probe', [])).toEqual([{ a: 1, b: 2 }]);
    expect(await selectRows(em, 'select * from prepared_probe', [])).toEqual([{ a: 1, b: 2 }]);
  });

  it('prepares the statement of the outbox fan-out too, with the batch size in its text (one plan kept, not one a batch)', async () => {
    const orm = await connect();
    const knex = orm.em.getKnex();
    for (let i = 0; i < 2; i++) expect(await markUnowed(knex, [])).toEqual({ taken: expect.any(Number), marked: expect.any(Number) });
    const mine = (await prepared(orm)).filter((row) => row.statement.includes('from event_fan_outs order by event_id'));
    expect(mine).toHaveLength(1);
    expect(mine[0].statement).toContain(`order by event_id limit ${FAN_OUT_BATCH} for update skip locked`);
  });

  it('runs every statement unnamed with DATABASE_PREPARED_STATEMENTS=off (preparedStatements: false)', async () => {
    const orm = await connect(false);
    expect(await selectRows(orm.em.fork(), 'select ? :: int * 2 as twice', [21])).toEqual([{ twice: 42 }]);
    expect(await preparedRows(orm.em.getKnex(), 'select ? :: int * 3 as thrice', [14])).toEqual([{ thrice: 42 }]);
    expect(await markUnowed(orm.em.getKnex(), [])).toEqual({ taken: expect.any(Number), marked: expect.any(Number) });
    expect(await prepared(orm)).toEqual([]);
  });
});

/**
 * copyRows (COPY … FROM STDIN, the request logs' bulk write): every value arrives as it was sent,
 * whatever characters COPY's text format gives a meaning to, and a batch that fails stores nothing
 * and leaves the pooled connection usable.
 */
import type { Knex } from '@mikro-orm/knex';
import { copyRows, CopyValue } from '../../src/db/copy';
import { selectRows } from '../../src/db/lean';
import { startTestApp, TestApp } from '../helpers/app';

describe('copyRows', () => {
  let app: TestApp;
  let knex: Knex;

  beforeAll(async () => {
    app = await startTestApp();
    knex = app.orm.em.getKnex();
    await knex.raw('create table if not exists copy_rows_probe (name text, flag boolean, amount double precision, at timestamptz(3), note text)');
  });
  afterAll(async () => {
    await knex.raw('drop table if exists copy_rows_probe');
    await app.close();
  });
  beforeEach(() => knex.raw('truncate copy_rows_probe'));

  const columns = ['name', 'flag', 'amount', 'at', 'note'];
  const stored = async () =>
    (
      await knex.raw<{ rows: Array<Record<string, unknown>> }>(
        'select name, flag, amount, (extract(epoch from at) * 1000)::float8 as at_ms, note from copy_rows_probe order by name',
      )
    ).rows;

  it('stores each value as sent: tabs, newlines, carriage returns, backslashes, \\N as text, non-ASCII, null, booleans, numbers', async () => {
    const at = new Date('2026-11-28T12:34:56.789Z');
    const rows: CopyValue[][] = [
      ['a plain', true, 1.5, at.toISOString(), null],
      ['b tab\there', false, -2, at.toISOString(), 'line one\nline two\r\nend'],
      ['c back\\slash \\N \\t', true, 0, at.toISOString(), '\\N'],
      ['d naïve … 日本', false, 1e-3, at.toISOString(), ''],
    ];
    expect(await copyRows(app.orm.em, 'copy_rows_probe', columns, rows)).toBe(4);
    expect(await stored()).toEqual(rows.map(([name, flag, amount, , note]) => ({ name, flag, amount, at_ms: at.getTime(), note })));
  });

  it('stores nothing of a batch with a bad row, and the pool serves the next statement', async () => {
    const good: CopyValue[] = ['good', true, 1, new Date().toISOString(), null];
    const bad: CopyValue[] = ['bad', true, 'not a number', new Date().toISOString(), null];
    await expect(copyRows(app.orm.em, 'copy_rows_probe', columns, [good, bad])).rejects.toThrow(/double precision|invalid input/);
    expect(await stored()).toEqual([]);
    // Every connection of the pool still answers (a failed COPY must not leave one mid-protocol).
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => selectRows(app.orm.em, 'select ?::int as n', [i])));
    expect(answers.map(([row]) => row.n)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(await copyRows(app.orm.em, 'copy_rows_probe', columns, [good])).toBe(1);
    expect((await stored()).map((row) => row.name)).toEqual(['good']);
  });

  it('sends nothing for no rows', async () => {
    expect(await copyRows(app.orm.em, 'copy_rows_probe', columns, [])).toBe(0);
  });
});

import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/core';
import type { EntityManager as SqlEntityManager } from '@mikro-orm/postgresql';
import { from as copyFrom } from 'pg-copy-streams';
import type { Submittable } from 'pg';
import { converted } from './lean';

/** One value of a copied row: text as it is, numbers and booleans as PostgreSQL reads them, null as NULL. */
export type CopyValue = string | number | boolean | null;

interface CopyPool {
  acquireConnection(): Promise<{ query<T extends Submittable>(query: T): T }>;
  releaseConnection(connection: unknown): Promise<unknown>;
}

/** The characters COPY's text format gives a meaning to: each is written as its backslash escape. */
const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function field(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c]) : value;
}

/**
 * Appends rows to a table with COPY … FROM STDIN (text format), on a connection of MikroORM's pool
 * (its statement timeout), outside any transaction: for bulk writes off the request path (the
 * request logs). COPY loads rows without a plan, a parameter to parse or a row at a time through
 * the executor; against `insert … select from json_populate_recordset(?)` it took PostgreSQL
 * 6.5 µs of CPU a row instead of 14 (docs/benchmark.md, fourteenth pass). The whole batch is one
 * statement: it is stored or, on an error, none of it is. `table` and `columns` are the caller's
 * constants, never input. Resolves with the rows stored.
 */
export async function copyRows(em: EntityManager, table: string, columns: readonly string[], rows: ReadonlyArray<readonly CopyValue[]>): Promise<number> {
  if (!rows.length) return 0;
  let text = '';
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) text += (i ? '\t' : '') + field(row[i]);
    text += '\n';
  }
  return converted(em, async () => {
    const pool = (em as SqlEntityManager).getKnex().client as CopyPool;
    const connection = await pool.acquireConnection();
    try {
      const copy = connection.query(copyFrom(`copy ${table} (${columns.join(', ')}) from stdin`));
      await pipeline(Readable.from([text]), copy);
      return copy.rowCount;
    } finally {
      await pool.releaseConnection(connection);
    }
  });
}

import { EntityMetadata, helper, Platform, Reference, ReferenceKind } from '@mikro-orm/core';
import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@mikro-orm/postgresql';
import { converted, selectRows } from './lean';
import { inSavepoint } from './savepoint';

type Value = (entity: Record<string, unknown>) => unknown;

/** How one entity class is written: `insert into "table" ("a", "b")` and each column's value. */
interface Table {
  insert: string;
  row: string;
  values: Value[];
}

const tables = new WeakMap<EntityMetadata, Table>();

/** The id of a many-to-one's target (an entity, a Ref, or a lean row's LeanReference). */
function targetId(value: unknown): unknown {
  const target = Reference.unwrapReference(value as object) as { id?: unknown };
  return target instanceof Object && '__helper' in target ? helper(target).getPrimaryKey() : target.id;
}

/**
 * Columns and values of an entity class from MikroORM's own metadata (field names, custom types),
 * worked out once per class. Only what a new row holds is supported: scalars and many-to-one
 * references. Anything else (embeddables, formulas read back) throws at once rather than being
 * written wrong; collections have no column and must be written separately.
 */
function tableOf(meta: EntityMetadata, platform: Platform): Table {
  const known = tables.get(meta);
  if (known) return known;
  const fields: string[] = [];
  const values: Value[] = [];
  for (const prop of meta.props) {
    if (prop.persist === false || prop.kind === ReferenceKind.ONE_TO_MANY || prop.kind === ReferenceKind.MANY_TO_MANY) continue;
    const name = prop.name;
    // A flush runs onCreate and leaves a column with a database default out; this statement writes
    // every column as the instance holds it, so it refuses what it would silently get wrong.
    const given = (entity: Record<string, unknown>) => {
      if (prop.onCreate)
        throw new Error(`insertLean cannot run ${meta.className}.${name}'s onCreate: give it an initializer, or create it with em.create and flush`);
      const value = entity[name];
      if (value === undefined && (prop.default !== undefined || prop.defaultRaw !== undefined)) {
        throw new Error(`insertLean would write NULL over ${meta.className}.${name}'s database default: set it on the instance`);
      }
      return value;
    };
    if (prop.kind === ReferenceKind.SCALAR && !prop.embedded && !prop.formula && prop.fieldNames.length === 1) {
      const custom = prop.customType;
      values.push((entity) => {
        const value = given(entity);
        if (value === undefined || value === null) return null;
        return custom ? custom.convertToDatabaseValue(value, platform, { mode: 'query' }) : value;
      });
    } else if (prop.kind === ReferenceKind.MANY_TO_ONE && prop.fieldNames.length === 1) {
      values.push((entity) => {
        const value = given(entity);
        return value === undefined || value === null ? null : targetId(value);
      });
    } else {
      throw new Error(`insertLean does not support ${meta.className}.${name} (${prop.kind}); create it with em.create and flush`);
    }
    fields.push(platform.quoteIdentifier(prop.fieldNames[0]));
  }
  const table = {
    insert: `insert into ${platform.quoteIdentifier(meta.tableName)} (${fields.join(', ')}) values `,
    row: `(${fields.map(() => '?').join(', ')})`,
    values,
  };
  tables.set(meta, table);
  return table;
}

/** Statements by the classes and counts of the rows they insert (`Lead:1,Event:2`). */
const statements = new Map<string, string>();
const MAX_STATEMENTS = 1_000;

/**
 * Inserts new entities in one statement (data-modifying CTEs): every row or none (docs/DESIGN.md, "Lean
 * creates"). Build them with `createScoped(…, { persist: false })` so no flush writes them again. Columns are
 * written as the instance holds them, so defaults belong in the class: onCreate, or undefined over a database
 * default, is refused before anything is written. In a request's transaction it runs in a savepoint, as
 * flushes do there; failures are MikroORM's DriverExceptions, as from em.flush, for the one error mapping.
 */
export async function insertLean(em: EntityManager, entities: object[]): Promise<void> {
  if (entities.length === 0) return;
  const platform = em.getPlatform();
  const groups: Array<{ table: Table; meta: EntityMetadata; rows: Record<string, unknown>[] }> = [];
  for (const entity of entities) {
    const meta = em.getMetadata().get(entity.constructor.name);
    const last = groups[groups.length - 1];
    if (last?.meta === meta) last.rows.push(entity as Record<string, unknown>);
    else groups.push({ meta, table: tableOf(meta, platform), rows: [entity as Record<string, unknown>] });
  }
  const key = groups.map((group) => `${group.meta.className}:${group.rows.length}`).join(',');
  let sql = statements.get(key);
  if (!sql) {
    const inserts = groups.map((group) => group.table.insert + group.rows.map(() => group.table.row).join(', '));
    const last = inserts.pop()!;
    sql = inserts.length ? `with ${inserts.map((insert, i) => `written${i} as (${insert})`).join(', ')} ${last}` : last;
    if (statements.size < MAX_STATEMENTS) statements.set(key, sql);
  }
  const bindings: Knex.RawBinding[] = [];
  for (const group of groups) for (const row of group.rows) for (const value of group.table.values) bindings.push(value(row) as Knex.RawBinding);

  const knex = em.getKnex();
  const outer = em.getTransactionContext<Knex.Transaction>();
  if (outer) return void (await converted(em, () => inSavepoint(em, outer, (savepoint) => knex.raw(sql, bindings).transacting(savepoint))));
  // Outside a transaction, as a prepared statement (selectRows): one per shape of rows, parsed and
  // planned once per connection. Values knex would expand or embed (an array, a raw fragment) keep knex's way.
  if (bindings.every((value) => typeof value !== 'object' || value === null || value instanceof Date || Buffer.isBuffer(value))) {
    await selectRows(em, sql, bindings);
    return;
  }
  await converted(em, () => knex.raw(sql, bindings));
}

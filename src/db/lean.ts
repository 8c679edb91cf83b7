import { EntityClass, EntityManager, EntityMetadata, EntityProperty, FilterQuery, Platform, QueryOrderMap, Ref, ReferenceKind } from '@mikro-orm/core';
import type { Knex } from '@mikro-orm/knex';
import type { EntityManager as SqlEntityManager } from '@mikro-orm/postgresql';
import { dateOf } from './stored-timestamp';
import { tenantFilter, tenantOf } from './tenant-scope';

type Row = Record<string, unknown>;
type Step = (target: Record<string, unknown>, row: Row) => void;

/**
 * A relation on a lean row: its id, which is all the API's output reads (`Deal.leadId`). Anything
 * that would load the related entity is a mistake on a read path and says so.
 */
export class LeanReference {
  constructor(readonly id: string) {}

  unwrap(): never {
    throw new Error(`lean rows are read-only: load the entity through its service to follow a relation (${this.id})`);
  }

  load(): never {
    return this.unwrap();
  }
}

/**
 * An entity as lean reads return it (findLean, findFirstLean, lean pages): its columns and its
 * class's getters and methods, but each relation only a LeanReference (its id), and nothing
 * tracked. For answers that print it; a change loads the managed entity through its service.
 */
export type Lean<T> = {
  [K in keyof T]: NonNullable<T[K]> extends Ref<object> ? LeanReference | Extract<T[K], null | undefined> : T[K];
};

/**
 * The class of an entity's lean instances: a subclass keeping the class's own getters and methods, with the
 * persisted properties as plain data properties instead of MikroORM's tracking setters, the cost lean rows avoid.
 * A subclass so that createLean can use a plain `new`: Reflect.construct with another new.target left V8 unable to
 * specialise the objects (docs/benchmark.md, eleventh pass). Its prototype's `constructor` is the entity's class.
 */
function leanClass(entity: new () => object, names: string[]): new () => object {
  const LeanInstance = class extends entity {};
  for (const name of names) Object.defineProperty(LeanInstance.prototype, name, { value: undefined, writable: true, configurable: true });
  Object.defineProperty(LeanInstance.prototype, 'constructor', { value: entity, writable: true, configurable: true });
  return LeanInstance;
}

function scalarStep(prop: EntityProperty, platform: Platform, column: string, name: string): Step {
  const custom = prop.customType;
  const convert: (value: unknown) => unknown = custom
    ? (value) => custom.convertToJSValue(value, platform)
    : prop.runtimeType === 'Date'
      ? dateOf
      : prop.runtimeType === 'boolean'
        ? (value) => Boolean(value)
        : (value) => value;
  return (target, row) => {
    const value = row[column];
    target[name] = value === null || value === undefined ? null : convert(value);
  };
}

function propertySteps(meta: EntityMetadata, prop: EntityProperty, platform: Platform): Step {
  if (prop.kind === ReferenceKind.SCALAR) return scalarStep(prop, platform, prop.fieldNames[0], prop.name);
  if (prop.kind === ReferenceKind.MANY_TO_ONE && prop.fieldNames.length === 1) {
    const column = prop.fieldNames[0];
    return (target, row) => {
      const id = row[column];
      target[prop.name] = id === null || id === undefined ? null : new LeanReference(String(id));
    };
  }
  if (prop.kind === ReferenceKind.EMBEDDED && !prop.object && !prop.array && prop.embeddable) {
    // An inline embeddable (Deal.coSell): its own columns, null when all of them are.
    const parts = Object.values(prop.embeddedProps).map((child) => ({
      column: child.fieldNames[0],
      step: scalarStep(child, platform, child.fieldNames[0], child.embedded![1]),
    }));
    const { prototype } = leanClass(
      prop.embeddable as new () => object,
      Object.values(prop.embeddedProps).map((child) => child.embedded![1]),
    );
    return (target, row) => {
      if (parts.every((part) => row[part.column] === null || row[part.column] === undefined)) {
        target[prop.name] = null;
        return;
      }
      const embedded = Object.create(prototype) as Record<string, unknown>;
      for (const part of parts) part.step(embedded, row);
      target[prop.name] = embedded;
    };
  }
  if (prop.kind === ReferenceKind.EMBEDDED && prop.object && prop.embeddable) {
    // A JSON embeddable (Proposal.customer, Proposal.lineItems): one column holding the object, or
    // an array of them, keyed by the children's field names, as MikroORM writes it.
    const children = Object.values(prop.embeddedProps);
    const nested = children.find((child) => child.kind !== ReferenceKind.SCALAR);
    if (nested) throw new Error(`lean reads do not support ${meta.className}.${prop.name}.${nested.name} (${nested.kind}); read it with em.find`);
    const steps = children.map((child) => scalarStep(child, platform, child.fieldNames[0], child.embedded![1]));
    const { prototype } = leanClass(
      prop.embeddable as new () => object,
      children.map((child) => child.embedded![1]),
    );
    const one = (value: Row) => {
      const embedded = Object.create(prototype) as Record<string, unknown>;
      for (const step of steps) step(embedded, value);
      return embedded;
    };
    const column = prop.fieldNames[0];
    return (target, row) => {
      const value = row[column];
      target[prop.name] = value === null || value === undefined ? null : prop.array ? (value as Row[]).map(one) : one(value as Row);
    };
  }
  throw new Error(`lean reads do not support ${meta.className}.${prop.name} (${prop.kind}); read it with em.find`);
}

const classes = new WeakMap<EntityMetadata, new () => object>();

/** The lean class of an entity (leanClass over its persisted properties), made once. */
function leanClassOf(meta: EntityMetadata): new () => object {
  let LeanInstance = classes.get(meta);
  if (!LeanInstance) {
    LeanInstance = leanClass(
      meta.class as new () => object,
      meta.hydrateProps.map((prop) => prop.name),
    );
    classes.set(meta, LeanInstance);
  }
  return LeanInstance;
}

const hydrators = new WeakMap<EntityMetadata, (row: Row) => object>();

/**
 * Builds (once per entity) a function turning a row into an instance: a constructor generated from the metadata,
 * one statement per property, as MikroORM generates its own hydrators, so V8 specialises each assignment site and
 * keeps the properties in the object (one loop over every property made each site see them all). Custom types and
 * embeddables call their step (propertySteps), with what the code needs passed in as arguments.
 */
function hydratorFor<T extends object>(meta: EntityMetadata<T>, platform: Platform): (row: Row) => T {
  let hydrate = hydrators.get(meta);
  if (!hydrate) {
    const values: unknown[] = [];
    const given = (value: unknown) => `a${values.push(value) - 1}`;
    let toDate: string | undefined;
    const statements = meta.hydrateProps.map((prop) => {
      const statement = hydrateStatement(prop);
      // A lazy property's column is in the row only when the read asked for it (leanSelection).
      return prop.lazy ? `if (row[${JSON.stringify(prop.fieldNames[0])}] !== undefined) { ${statement} }` : statement;
    });
    function hydrateStatement(prop: EntityProperty<T>): string {
      const target = `this[${JSON.stringify(prop.name)}]`;
      const read = (column: string) => `v = row[${JSON.stringify(column)}];`;
      if (prop.kind === ReferenceKind.SCALAR && !prop.customType && (prop.runtimeType === 'Date' || prop.runtimeType === 'boolean')) {
        const convert = prop.runtimeType === 'Date' ? `${(toDate ??= given(dateOf))}(v)` : 'Boolean(v)';
        return `${read(prop.fieldNames[0])} ${target} = v === null || v === undefined ? null : ${convert};`;
      }
      if (prop.kind === ReferenceKind.SCALAR && !prop.customType) return `${read(prop.fieldNames[0])} ${target} = v === undefined ? null : v;`;
      if (prop.kind === ReferenceKind.MANY_TO_ONE && prop.fieldNames.length === 1) {
        return `${read(prop.fieldNames[0])} ${target} = v === null || v === undefined ? null : new ${given(LeanReference)}(String(v));`;
      }
      return `${given(propertySteps(meta, prop, platform))}(this, row);`;
    }
    const names = values.map((_, i) => `a${i}`);
    // Generated from entity metadata (names quoted by JSON.stringify), never from input.
    const make = new Function(...names, `return function LeanRow(row) { let v; ${statements.join(' ')} };`) as (...args: unknown[]) => new (row: Row) => object;
    const LeanRow = make(...values);
    LeanRow.prototype = leanClassOf(meta).prototype;
    hydrate = (row) => new LeanRow(row);
    hydrators.set(meta, hydrate);
  }
  return hydrate as (row: Row) => T;
}

/**
 * A new instance of `entity` that no EntityManager tracks, for insertLean (src/db/lean-insert.ts)
 * to write: the class's constructor runs (its initializers: id, timestamps, defaults) on the lean
 * prototype, then `data`'s defined values are assigned. em.create does the same work and more for
 * a row that is never flushed (a managed instance, its helper, reference propagation). Relations
 * are given as LeanReference ids.
 */
export function createLean<T extends object>(em: EntityManager, entity: EntityClass<T>, data: Record<string, unknown>): T {
  const LeanInstance = leanClassOf(em.getMetadata().get<T>(entity.name));
  const instance = new LeanInstance() as Record<string, unknown>;
  for (const name in data) if (data[name] !== undefined) instance[name] = data[name];
  return instance as T;
}

/**
 * What a lean read selects: `*`, or, for an entity with lazy properties (MikroORM's `lazy: true`,
 * which em.find leaves out too), every other property, plus the lazy ones named in `populate`.
 * A lazy property is a large column that no list or answer prints (`Lead.scoreSignals`, about
 * 800 bytes of JSON a lead, which only the score explanation reads): not selecting it saves
 * PostgreSQL sending it and the service parsing it on every row of every page.
 */
function leanSelection<T>(meta: EntityMetadata<T>, populate: readonly string[] = []): Array<EntityProperty<T>> | undefined {
  if (!meta.hydrateProps.some((prop) => prop.lazy)) return undefined;
  return meta.hydrateProps.filter((prop) => !prop.lazy || populate.includes(prop.name));
}

/** A read-only instance of `entity` from a row keyed by column names (raw SQL, `row_to_json`). */
export function hydrateLean<T extends object>(em: EntityManager, entity: EntityClass<T>, row: Row): Lean<T> {
  return hydratorFor(em.getMetadata().get<T>(entity.name), em.getPlatform())(row) as Lean<T>;
}

export interface LeanOptions<T> {
  orderBy?: QueryOrderMap<T>[];
  limit?: number;
  /**
   * The limit written into the statement's text instead of sent as a parameter, so PostgreSQL's generic plan
   * knows it and is kept; with a parameter a page is re-planned on every execution (docs/DESIGN.md, "Prepared
   * statements"). Only for criteria whose best plan does not depend on their values (findPage says which); a
   * shape keeps at most LITERAL_LIMITS_PER_SHAPE such statements, and other limits are sent as parameters.
   */
  limitInText?: boolean;
}

const LITERAL_LIMITS_PER_SHAPE = 8;
/** The limits written into statements' text so far, by the shape of their criteria and order. */
const literalLimits = new Map<string, Set<number>>();

/**
 * Read-only instances of an entity for query resolvers: the same SQL as em.find and the same tenant
 * filter (applied from the fork's parameters), but rows are not tracked by the unit of work. A
 * managed entity costs about 45 µs to build (property accessors, identity map, change-tracking
 * snapshot) against 1 µs for these; reads never flush, so they need none of it. Writes load
 * managed entities through the services as before.
 */
export async function findLean<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  options: LeanOptions<T> = {},
): Promise<Array<Lean<T>>> {
  const hydrate = hydratorFor(em.getMetadata().get<T>(entity.name), em.getPlatform());
  // The query builder's bindings are the criteria's values in order (the tenant filter's last,
  // then the limit), so a statement built once serves every query of the same shape.
  const values: unknown[] = [];
  const shape = shapeOf(where, values);
  const tenant = tenantFilter.cond(tenantOf(em)) as Record<string, unknown>;
  const tenantShape = shapeOf(tenant, values);
  const shapeKey =
    shape === undefined || tenantShape === undefined ? undefined : `${entity.name}|${shape}|${tenantShape}|${JSON.stringify(options.orderBy ?? null)}`;
  const literal = options.limitInText && shapeKey !== undefined && options.limit !== undefined && literalLimitFor(shapeKey, options.limit);
  if (options.limit !== undefined && !literal) values.push(options.limit);
  const key = shapeKey === undefined ? undefined : `${shapeKey}|${literal ? options.limit : options.limit !== undefined}`;
  const known = key === undefined ? null : leanStatements.get(key);
  if (known) return (await selectRows(em, known, values)).map(hydrate) as Array<Lean<T>>;

  const selection = leanSelection(em.getMetadata().get<T>(entity.name));
  const qb = (em as SqlEntityManager)
    .createQueryBuilder(entity)
    .select((selection?.map((prop) => prop.name) ?? '*') as never)
    .where(where as never);
  await qb.applyFilters();
  if (options.orderBy) qb.orderBy(options.orderBy as never);
  if (options.limit !== undefined) qb.limit(options.limit);
  // knex writes a skipped binding's integer (parseInt of it) into the text.
  if (literal) qb.getKnexQuery().limit(options.limit!, { skipBinding: true });
  // Shapes are few (the API's filters); the bound only guards against ones a client could multiply.
  if (key !== undefined && known === undefined && leanStatements.size < MAX_LEAN_STATEMENTS) {
    const { sql, bindings } = qb.getKnexQuery().toSQL();
    leanStatements.set(key, sameValues(bindings, values) ? sql : null);
  }
  const rows = await converted(em, () => qb.execute<Row[]>('all', false));
  return rows.map(hydrate) as Array<Lean<T>>;
}

/** Whether `limit` may be written into the text of the shape's statement: it already is, or the shape has room for one more. */
function literalLimitFor(shapeKey: string, limit: number): boolean {
  if (!Number.isSafeInteger(limit) || limit < 0) return false;
  let limits = literalLimits.get(shapeKey);
  if (limits?.has(limit)) return true;
  if (limits && limits.size >= LITERAL_LIMITS_PER_SHAPE) return false;
  if (!limits) {
    if (literalLimits.size >= MAX_LEAN_STATEMENTS) return false;
    literalLimits.set(shapeKey, (limits = new Set()));
  }
  limits.add(limit);
  return true;
}

/** findLean's statements by the shape of their criteria; null for a shape whose bindings are not its values in order. */
const leanStatements = new Map<string, string | null>();
const MAX_LEAN_STATEMENTS = 1_000;

/**
 * The structure of criteria with their values left out (`{"status":s,"createdAt":{"$lt":d}}`),
 * collecting the values in order; undefined when they hold anything but plain data (an entity, a
 * raw fragment), which only the query builder may read.
 */
function shapeOf(value: unknown, values: unknown[]): string | undefined {
  if (value === null) return 'null';
  if (value instanceof Date) {
    values.push(value);
    return 'd';
  }
  if (Array.isArray(value)) {
    const items = value.map((item) => shapeOf(item, values));
    return items.includes(undefined) ? undefined : `[${items.join(',')}]`;
  }
  if (typeof value === 'object') {
    if (Object.getPrototypeOf(value) !== Object.prototype || Object.getOwnPropertySymbols(value).length) return undefined;
    const parts: string[] = [];
    for (const [name, item] of Object.entries(value)) {
      const part = shapeOf(item, values);
      if (part === undefined) return undefined;
      parts.push(`${JSON.stringify(name)}:${part}`);
    }
    return `{${parts.join(',')}}`;
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    values.push(value);
    return typeof value;
  }
  return undefined;
}

function sameValues(bindings: readonly unknown[], values: readonly unknown[]): boolean {
  return (
    bindings.length === values.length &&
    bindings.every((binding, i) => {
      const value = values[i];
      return binding instanceof Date && value instanceof Date ? binding.getTime() === value.getTime() : binding === value;
    })
  );
}

/**
 * Runs a query outside em.find, with its failures converted as em.find converts them (to
 * MikroORM's DriverException family), so the one error mapping (src/db/database-errors.ts) sees
 * the same errors on every path: a lost connection is 503 here too.
 */
export async function converted<T>(em: EntityManager, query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    throw em.getDriver().convertException(error as Error);
  }
}

/** A pooled connection as knex hands it out: a pg client, with MikroORM's type parsers. */
interface PooledClient {
  query(query: { text: string; values: readonly unknown[]; name?: string }): Promise<{ rows: Row[] }>;
}

interface KnexPool {
  acquireConnection(): Promise<PooledClient>;
  releaseConnection(connection: PooledClient): Promise<unknown>;
}

/** A statement as selectRows sends it: pg's `$1, $2…` placeholders, and its prepared statement's name. */
interface Numbered {
  text: string;
  name?: string;
}

/**
 * Statements with `?` placeholders as pg's `$1, $2…`, by knex's own rule (`\?` stays a literal
 * `?`), each named once: pg prepares a named statement once per connection and then only binds and
 * executes it, so PostgreSQL parses and plans it once per connection instead of on every request
 * (the baseline's and PostGraphile's way). Names carry a generation, renewed when PostgreSQL says a
 * prepared statement's result type changed (a migration altered its table while this process ran).
 */
const numberedStatements = new Map<string, Numbered>();
let generation = 0;

function numbered(sql: string): Numbered {
  let statement = numberedStatements.get(sql);
  if (statement === undefined) {
    let count = 0;
    const text = sql.replace(/(\\*)(\?)/g, (_match, escapes: string) => (escapes.length % 2 ? '?' : `$${++count}`));
    // Beyond the bound (statements a client could multiply), a statement runs unnamed and is not kept.
    if (numberedStatements.size >= MAX_LEAN_STATEMENTS * 2) return { text };
    statement = { text, name: `lean_${generation}_${numberedStatements.size}` };
    numberedStatements.set(sql, statement);
  }
  return statement;
}

/** PostgreSQL's answer to a prepared statement whose result columns changed since it was prepared. */
const isStalePlan = (error: unknown): boolean =>
  (error as { code?: unknown }).code === '0A000' && /cached plan must not change result type/.test((error as Error).message);

/** Pools whose statements run unnamed (DATABASE_PREPARED_STATEMENTS=off: a pooler that cannot keep prepared statements). */
const unprepared = new WeakSet<object>();

export function withoutPreparedStatements(orm: { em: EntityManager }): void {
  unprepared.add((orm.em as SqlEntityManager).getKnex().client);
}

/**
 * Rows of one SQL statement (`?` placeholders), for the hot reads and the creates' inserts. Outside a transaction
 * it runs as a prepared statement on MikroORM's own pool (its limits, timeouts and type parsers), skipping
 * `execute`'s interpolation and knex's query runner (docs/DESIGN.md, "Prepared statements"). In the EntityManager's
 * transaction (a request under an Idempotency-Key) it runs there, so a request's read sees its own writes.
 */
export function selectRows(em: EntityManager, sql: string, params: unknown[]): Promise<Row[]> {
  const transaction = em.getTransactionContext();
  if (transaction) return converted(em, () => em.getConnection().execute<Row[]>(sql, params, 'all', transaction));
  return converted(em, () => preparedRows((em as SqlEntityManager).getKnex(), sql, params));
}

/**
 * selectRows' way on a knex instance, for the workers that hold one (the outbox fan-out): one
 * statement (`?` placeholders) on a connection of its pool, prepared once per connection, its
 * errors as pg raises them.
 */
export async function preparedRows(knex: Knex, sql: string, params: unknown[]): Promise<Row[]> {
  const pool = knex.client as KnexPool;
  const connection = await pool.acquireConnection();
  try {
    const { text, name } = numbered(sql);
    if (name === undefined || unprepared.has(pool)) return (await connection.query({ text, values: params })).rows;
    try {
      return (await connection.query({ name, text, values: params })).rows;
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      // Every statement prepared before is renamed, so each connection prepares it afresh.
      generation += 1;
      numberedStatements.clear();
      return (await connection.query({ ...numbered(sql), values: params })).rows;
    }
  } finally {
    await pool.releaseConnection(connection);
  }
}

const firstStatements = new Map<string, string>();

/**
 * The first tenant row with the given property values, in `orderBy` order, read-only: for the
 * reads every request of a kind makes (a lead or deal by id, the current scoring model). Their
 * SQL is simple enough to build once per entity and shape, from the tenant filter's own condition,
 * instead of through the query builder per request (0.1 ms against 0.5 ms of CPU).
 */
export async function findFirstLean<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  equal: Partial<Record<keyof T & string, string | number | boolean>>,
  orderBy: Partial<Record<keyof T & string, 'asc' | 'desc'>> = {},
  options: { populate?: ReadonlyArray<keyof T & string> } = {},
): Promise<Lean<T> | null> {
  const meta = em.getMetadata().get<T>(entity.name);
  const condition = { ...(tenantFilter.cond(tenantOf(em)) as Record<string, unknown>), ...equal };
  const names = Object.keys(condition);
  const order = Object.entries(orderBy) as Array<[string, 'asc' | 'desc']>;
  const populate = options.populate ?? [];
  const key = `${meta.className}|${names.join(',')}|${order.map(([name, direction]) => `${name} ${direction}`).join(',')}|${populate.join(',')}`;
  let sql = firstStatements.get(key);
  if (!sql) {
    const props = meta.properties as Record<string, EntityProperty>;
    const column = (name: string) => {
      const prop = props[name];
      if (!prop || prop.fieldNames.length !== 1) throw new Error(`findFirstLean: ${meta.className}.${name} is not a single column`);
      return em.getPlatform().quoteIdentifier(prop.fieldNames[0]);
    };
    const where = names.map((name) => `${column(name)} = ?`).join(' and ');
    const sorted = order.length ? ` order by ${order.map(([name, direction]) => `${column(name)} ${direction}`).join(', ')}` : '';
    const selection = leanSelection(meta, populate);
    const columns = selection?.flatMap((prop) => prop.fieldNames.map((field) => em.getPlatform().quoteIdentifier(field))).join(', ') ?? '*';
    sql = `select ${columns} from ${em.getPlatform().quoteIdentifier(meta.tableName)} where ${where}${sorted} limit 1`;
    firstStatements.set(key, sql);
  }
  const [row] = await selectRows(
    em,
    sql,
    names.map((name) => condition[name]),
  );
  return row ? hydrateLean(em, entity, row) : null;
}

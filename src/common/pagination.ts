import { EntityClass, EntityManager, FilterQuery, QueryOrder } from '@mikro-orm/core';
import { findLean, Lean } from '../db/lean';
import { ClassType, Field, ObjectType } from 'type-graphql';
import { camelToSnake } from './case';
import { ApiError } from './api-error';

/** CONTRACT §4: `limit` 1–100, default 20. */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The list envelope of CONTRACT §4: `{object: "list", data, has_more, next_cursor}`. */
export function ListPage<T extends object>(itemClass: ClassType<T>) {
  // Not emitted on its own: type-graphql 2 emits only types reachable from a resolver.
  @ObjectType({ simpleResolvers: true })
  abstract class ListPageClass {
    @Field({ description: 'Always "list".' })
    get object(): 'list' {
      return 'list';
    }

    @Field(() => [itemClass])
    data!: T[];

    @Field({ description: 'True when another page follows.' })
    hasMore!: boolean;

    @Field(() => String, { nullable: true, description: 'Pass as `cursor` to fetch the next page; null on the last page.' })
    nextCursor!: string | null;
  }
  return ListPageClass;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** A column a list may be sorted by. */
export interface SortableField {
  /** Entity property name. */
  property: string;
  /** date: a timestamp; day: a calendar date (YYYY-MM-DD); number: a whole number (scores, counts, minor units); string: text. */
  kind: 'date' | 'day' | 'number' | 'string';
  nullable?: boolean;
}

export interface Sort {
  /** As the client wrote it, normalised to snake_case: `-created_at`. */
  key: string;
  field: SortableField;
  descending: boolean;
}

interface CursorPayload {
  s: string;
  v: string | number | null;
  i: string;
}

/** What toPage writes for a date; PostgreSQL has no year 0000. */
const ISO_MILLIS = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ISO_DAY = /^(?!0000)\d{4}-\d{2}-\d{2}$/;

/** The field name a `sort` value names (`-created_at`, `createdAt`), when it is one of `names`. */
export function sortKeyOf(value: string, names: readonly string[]): { key: string; name: string; descending: boolean } | undefined {
  const key = camelToSnake(value.trim());
  const descending = key.startsWith('-');
  const name = descending ? key.slice(1) : key;
  return names.includes(name) ? { key, name, descending } : undefined;
}

export const sortRefusal = (names: readonly string[]): string => `sort must be one of ${names.join(', ')}, optionally prefixed with -`;

/**
 * The sort asked for, or the fallback. SortedPageInput refuses any other field before a resolver
 * runs; a service called with one anyway (from code) gets the same refusal.
 */
export function parseSort(value: string | undefined | null, fields: Record<string, SortableField>, fallback: string): Sort {
  const parsed = sortKeyOf(value ?? fallback, Object.keys(fields));
  if (!parsed) throw new ApiError('parameter_invalid', sortRefusal(Object.keys(fields)), { param: 'sort' });
  return { key: parsed.key, field: fields[parsed.name], descending: parsed.descending };
}

export function orderByFor(sort: Sort): Record<string, QueryOrder>[] {
  const direction = sort.descending ? QueryOrder.DESC : QueryOrder.ASC;
  // Nulls always last, in both directions, so the keyset condition below stays simple.
  const main = sort.field.nullable ? (sort.descending ? QueryOrder.DESC_NULLS_LAST : QueryOrder.ASC_NULLS_LAST) : direction;
  return [{ [sort.field.property]: main }, { id: direction }];
}

function decodeCursor(cursor: string, sort: Sort): { value: unknown; id: string } {
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorPayload;
  } catch {
    throw new ApiError('parameter_invalid', 'cursor is not a cursor this API returned', { param: 'cursor' });
  }
  if (!payload || typeof payload !== 'object' || typeof payload.i !== 'string' || payload.i.includes('\u0000') || !('v' in payload)) {
    throw new ApiError('parameter_invalid', 'cursor is not a cursor this API returned', { param: 'cursor' });
  }
  if (payload.s !== sort.key) {
    throw new ApiError('parameter_invalid', `cursor was made for sort=${String(payload.s)}; pass the same sort`, { param: 'cursor' });
  }
  const raw = payload.v;
  const { kind, nullable } = sort.field;
  const bad = () => new ApiError('parameter_invalid', 'cursor is not a cursor this API returned', { param: 'cursor' });
  if (raw === null) {
    if (!nullable) throw bad();
    return { value: null, id: payload.i };
  }
  if (kind === 'date') {
    // Only the shape toPage writes: a far-off year such as +275760 is a valid JS date but not a PostgreSQL one.
    const date = new Date(String(raw));
    if (typeof raw !== 'string' || !ISO_MILLIS.test(raw) || Number.isNaN(date.getTime())) throw bad();
    return { value: date, id: payload.i };
  }
  if (kind === 'day') {
    // A real calendar day: 2026-02-30 would reach PostgreSQL and fail there.
    const day = new Date(`${String(raw)}T00:00:00.000Z`);
    if (typeof raw !== 'string' || !ISO_DAY.test(raw) || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== raw) throw bad();
    return { value: raw, id: payload.i };
  }
  // Sortable numbers are whole (a score, a count, minor units in a bigint column): 1.5 or 1e308 would fail in the database.
  if (kind === 'number' && !Number.isSafeInteger(raw)) throw bad();
  if (kind === 'string' && (typeof raw !== 'string' || raw.includes('\u0000'))) throw bad();
  return { value: raw, id: payload.i };
}

/**
 * The keyset condition "rows after the cursor" for a sort with an id tie-breaker: the same index
 * range scan on page 1 and on page 5,000 (never OFFSET). Nulls sort last.
 *
 * The `(v < x) or (v = x and id < y)` form alone lets PostgreSQL start the scan at the top of the
 * index and filter its way down (a page at row 990,000 read 990,000 rows); the redundant bound
 * `v <= x` in front of it is what makes the scan start at the cursor.
 */
export function afterCursor(sort: Sort, cursor: string | null | undefined): Record<string, unknown> | undefined {
  if (!cursor) return undefined;
  const { value, id } = decodeCursor(cursor, sort);
  const property = sort.field.property;
  const beyond = sort.descending ? '$lt' : '$gt';
  const upTo = sort.descending ? '$lte' : '$gte';
  if (value === null) return { [property]: null, id: { [beyond]: id } };
  const after = { $or: [{ [property]: { [beyond]: value } }, { [property]: value, id: { [beyond]: id } }] };
  if (sort.field.nullable) return { $or: [{ $and: [{ [property]: { [upTo]: value } }, after] }, { [property]: null }] };
  return { $and: [{ [property]: { [upTo]: value } }, after] };
}

/** Turns `limit + 1` fetched rows into a page and the cursor of its last row. */
export function toPage<T extends { id: string }>(rows: T[], limit: number, sort: Sort): Page<T> {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  let nextCursor: string | null = null;
  if (hasMore && last) {
    const raw = (last as unknown as Record<string, unknown>)[sort.field.property];
    const v = raw instanceof Date ? raw.toISOString() : ((raw ?? null) as string | number | null);
    nextCursor = Buffer.from(JSON.stringify({ s: sort.key, v, i: last.id } satisfies CursorPayload)).toString('base64url');
  }
  return { data, hasMore, nextCursor };
}

/**
 * Whether a filter only says which values columns have (`{ stage: { $in: [...] } }`, `{ status: 'won' }`),
 * with no range or pattern: then the best plan of a page is the same whatever the values (the
 * sort's index, or the filter's), and one generic plan serves every call (findLean's limitInText).
 * With a range (`score >= x`) or a pattern, which index is best depends on how many rows match, so
 * PostgreSQL keeps planning each call for its values. The cursor's condition is on the sort's own
 * columns, which the sort's index serves whatever the position.
 */
function equalitiesOnly(filter: unknown): boolean {
  if (filter === null || typeof filter !== 'object' || filter instanceof Date) return true;
  if (Array.isArray(filter)) return filter.every(equalitiesOnly);
  return Object.entries(filter).every(([key, value]) => {
    if (key === '$and' || key === '$or') return Array.isArray(value) && value.every(equalitiesOnly);
    if (key === '$in' || key === '$eq') return Array.isArray(value) ? value.every((item) => typeof item !== 'object' || item === null) : equalitiesOnly(value);
    if (key.startsWith('$')) return false;
    return equalitiesOnly(value);
  });
}

/** What a list asks for (CONTRACT §4). */
type PageQuery = { limit?: number | null; cursor?: string | null; sort?: string | null };

/** Newest first: the one order of resources whose lists offer no `sort`. */
export const NEWEST_FIRST: Record<string, SortableField> = { created_at: { property: 'createdAt', kind: 'date' } };

/**
 * One keyset page of an entity (CONTRACT §4): the filters given, the cursor's position, one row
 * more than the limit to learn whether there is a next page. Every list of the API goes through it.
 * `lean` pages hold read-only rows (src/db/lean.ts) for the hot lists, which only ever print them.
 */
export async function findPage<T extends { id: string }>(
  em: EntityManager,
  entity: EntityClass<T>,
  filters: Array<FilterQuery<T>>,
  input: PageQuery,
  sortable: Record<string, SortableField>,
  options: { lean: true },
): Promise<Page<Lean<T>>>;
export async function findPage<T extends { id: string }>(
  em: EntityManager,
  entity: EntityClass<T>,
  filters: Array<FilterQuery<T>>,
  input: PageQuery,
  sortable?: Record<string, SortableField>,
): Promise<Page<T>>;
export async function findPage<T extends { id: string }>(
  em: EntityManager,
  entity: EntityClass<T>,
  filters: Array<FilterQuery<T>>,
  input: PageQuery,
  sortable: Record<string, SortableField> = NEWEST_FIRST,
  options: { lean?: boolean } = {},
): Promise<Page<T> | Page<Lean<T>>> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const sort = parseSort(input.sort, sortable, '-created_at');
  const keyset = afterCursor(sort, input.cursor);
  const conditions = keyset ? [...filters, keyset as FilterQuery<T>] : filters;
  const where = (conditions.length ? { $and: conditions } : {}) as FilterQuery<T>;
  const query = { orderBy: orderByFor(sort) as never, limit: limit + 1 };
  const rows = options.lean ? await findLean(em, entity, where, { ...query, limitInText: filters.every(equalitiesOnly) }) : await em.find(entity, where, query);
  return toPage(rows as T[], limit, sort);
}

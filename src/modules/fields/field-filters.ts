import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { FieldObject, FieldType } from './field.entity';
import { definitionsOf } from './field-values';

/**
 * List filters on custom fields (issue 68): `fields[seats][gte]=100`, `fields[tier]=gold,silver`,
 * `fields[renewal]=true` in REST (the adapter folds the brackets into one `fields` object), the
 * same object in GraphQL (`fields: {seats: {gte: 100}, tier: ["gold", "silver"]}`). A key is one
 * of the mode's fields; a plain value is equality (a comma list or an array: any of them; a
 * multi_select: holding any of them); numbers, money, dates and times also take gt, gte, lt, lte.
 * The conditions are MikroORM's JSON-property queries ("fields"->>'seats')::float8 >= 100, and
 * containment of the column for a multi_select.
 */

const RANGES = ['gt', 'gte', 'lt', 'lte'] as const;
type Range = (typeof RANGES)[number];
const ORDERED: readonly FieldType[] = [FieldType.number, FieldType.money, FieldType.date, FieldType.datetime];
const MAX_VALUES = 100;

const refuse = (key: string, message: string) => new ApiError('parameter_invalid', `fields[${key}] ${message}`, { param: `fields.${key}` });

/** One value as the field's type compares it: numbers as numbers, times normalised to UTC, booleans as booleans. */
function comparable(key: string, type: FieldType, value: unknown): unknown {
  const text = typeof value === 'string' ? value.trim() : value;
  switch (type) {
    case FieldType.number:
    case FieldType.money: {
      const number = typeof text === 'number' ? text : typeof text === 'string' && text !== '' ? Number(text) : NaN;
      if (!Number.isFinite(number)) throw refuse(key, 'must be compared with a number');
      return number;
    }
    case FieldType.boolean:
      if (text === true || text === 'true') return true;
      if (text === false || text === 'false') return false;
      throw refuse(key, 'must be true or false');
    case FieldType.date:
      if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(text)) throw refuse(key, 'must be compared with a date as YYYY-MM-DD');
      return text;
    case FieldType.datetime: {
      const time = typeof text === 'string' ? new Date(text) : null;
      if (!time || Number.isNaN(time.getTime())) throw refuse(key, 'must be compared with an ISO 8601 time');
      return time.toISOString();
    }
    default:
      if (typeof text !== 'string' || text === '' || text.length > 1000) throw refuse(key, 'must be compared with a text of 1 to 1,000 characters');
      return text;
  }
}

/** The values of an equality filter: a comma list or an array. */
function valuesOf(key: string, given: unknown): unknown[] {
  const values = Array.isArray(given)
    ? given
    : typeof given === 'string'
      ? given
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean)
      : [given];
  if (values.length === 0 || values.length > MAX_VALUES) throw refuse(key, `must name 1 to ${MAX_VALUES} values`);
  return values;
}

/** The conditions of a list's `fields` filter, checked against the mode's definitions of `objectType`. */
export async function fieldConditions<T>(
  em: EntityManager,
  objectType: FieldObject,
  filter: Record<string, unknown> | null | undefined,
): Promise<Array<FilterQuery<T>>> {
  if (!filter || Object.keys(filter).length === 0) return [];
  const byKey = new Map((await definitionsOf(em, objectType)).map((field) => [field.key, field]));
  const conditions: Array<FilterQuery<T>> = [];
  const on = (key: string, condition: unknown) => conditions.push({ fields: { [key]: condition } } as FilterQuery<T>);
  for (const [key, given] of Object.entries(filter)) {
    const field = byKey.get(key);
    if (!field) throw new ApiError('parameter_unknown', `fields[${key}] is not a field of ${objectType}s in this mode`, { param: `fields.${key}` });
    if (field.type === FieldType.long_text) throw refuse(key, 'is a long_text field, which lists cannot filter on');
    if (given !== null && typeof given === 'object' && !Array.isArray(given)) {
      if (!ORDERED.includes(field.type))
        throw refuse(key, `takes a value or a comma list: only number, money, date and datetime fields take ${RANGES.join(', ')}`);
      const entries = Object.entries(given as Record<string, unknown>);
      const unknown = entries.find(([operator]) => !(RANGES as readonly string[]).includes(operator));
      if (unknown || entries.length === 0) throw refuse(key, `takes ${RANGES.join(', ')} (fields[${key}][gte]=…)`);
      on(key, Object.fromEntries(entries.map(([operator, value]) => [`$${operator as Range}`, comparable(key, field.type, value)])));
      continue;
    }
    const values = valuesOf(key, given).map((value) => comparable(key, field.type, value));
    if (field.type === FieldType.multi_select) {
      // Containment on the whole column ("fields" @> '{"tags":["a"]}'), one per value.
      conditions.push({ $or: values.map((value) => ({ fields: { $contains: { [key]: [value] } } })) } as FilterQuery<T>);
    } else {
      on(key, values.length === 1 ? values[0] : { $in: values });
    }
  }
  return conditions;
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { findLean, type Lean } from '../../db/lean';
import { ApiError } from '../../common/api-error';
import { checkOwner } from '../members/ownership';
import { CustomField, FieldObject, FieldType } from './field.entity';

/**
 * The values of custom fields on a lead or deal (`fields`): each checked by its field's type, an
 * undefined key refused, null clearing, required fields held on create and never cleared. Errors
 * name the value as `fields.<key>` (REST: `fields[<key>]`).
 */

type Values = Record<string, unknown>;

const param = (key: string) => `fields.${key}`;
const invalid = (key: string, what: string) => new ApiError('parameter_invalid', `fields[${key}] must be ${what}`, { param: param(key) });

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[0-9][0-9 ().-]{2,31}$/;
const MAX_NUMBER = 1e15;
const MAX_MONEY = 10_000_000_000_000;

function isCalendarDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const hasAtMostTwoDecimals = (value: number) => Math.abs(Math.round(value * 100) - value * 100) < 1e-6;

/** One value, checked and normalised by its field's type; `held` is what the record holds now (an archived option stays acceptable there). */
function checked(field: Lean<CustomField>, value: unknown, held: unknown): unknown {
  const { key } = field;
  switch (field.type) {
    case FieldType.text:
    case FieldType.long_text: {
      const max = field.type === FieldType.text ? 1_000 : 65_535;
      if (typeof value !== 'string' || value.length === 0 || value.length > max) throw invalid(key, `a text of 1 to ${max} characters (null clears it)`);
      return value;
    }
    case FieldType.number:
      if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > MAX_NUMBER)
        throw invalid(key, `a number from -${MAX_NUMBER} to ${MAX_NUMBER}`);
      return value;
    case FieldType.money:
      if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > MAX_MONEY || !hasAtMostTwoDecimals(value)) {
        throw invalid(key, `an amount from -${MAX_MONEY} to ${MAX_MONEY} with at most 2 decimals`);
      }
      return value;
    case FieldType.date:
      if (typeof value !== 'string' || !isCalendarDate(value)) throw invalid(key, 'a date as YYYY-MM-DD');
      return value;
    case FieldType.datetime: {
      const time = typeof value === 'string' && DATETIME.test(value) ? new Date(value) : null;
      if (!time || Number.isNaN(time.getTime()) || time.getUTCFullYear() < 1)
        throw invalid(key, 'an ISO 8601 time with its offset, such as 2027-03-31T09:00:00Z');
      return time.toISOString();
    }
    case FieldType.boolean:
      if (typeof value !== 'boolean') throw invalid(key, 'true or false');
      return value;
    case FieldType.select: {
      if (typeof value !== 'string' || !offered(field, value, held === value)) throw invalid(key, `one of ${optionList(field)}`);
      return value;
    }
    case FieldType.multi_select: {
      const before = Array.isArray(held) ? held : [];
      if (
        !Array.isArray(value) ||
        new Set(value).size !== value.length ||
        !value.every((item) => typeof item === 'string' && offered(field, item, before.includes(item)))
      ) {
        throw invalid(key, `a list of distinct values among ${optionList(field)}`);
      }
      return value;
    }
    case FieldType.url: {
      let url: URL | null = null;
      try {
        url = typeof value === 'string' && value.length <= 2048 ? new URL(value) : null;
      } catch {
        url = null;
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw invalid(key, 'an http or https URL of at most 2,048 characters');
      return value;
    }
    case FieldType.email:
      if (typeof value !== 'string' || value.length > 254 || !EMAIL.test(value)) throw invalid(key, 'an email address');
      return value;
    case FieldType.phone:
      if (typeof value !== 'string' || !PHONE.test(value)) throw invalid(key, 'a phone number: digits, spaces and + ( ) . - (at most 32)');
      return value;
    case FieldType.member:
      if (typeof value !== 'string') throw invalid(key, 'a member id (usr_…)');
      return value; // an active member: checked against the database by applyFieldValues
  }
}

/** An option value the field accepts now: offered and not archived, or archived but already held by the record. */
function offered(field: Lean<CustomField>, value: string, alreadyHeld: boolean): boolean {
  const option = field.options.find((candidate) => candidate.value === value);
  return option !== undefined && (!option.archived || alreadyHeld);
}

const optionList = (field: Lean<CustomField>) =>
  field.options
    .filter((option) => !option.archived)
    .map((option) => option.value)
    .join(', ') || '(no options)';

/**
 * The fields defined on `objectType` in the EntityManager's account and mode, read lean (a
 * prepared statement and plain rows: every create of a lead or deal reads them, to hold required
 * fields; em.find's query building and hydration cost a create about 0.8 ms of CPU).
 */
export function definitionsOf(em: EntityManager, objectType: FieldObject): Promise<Array<Lean<CustomField>>> {
  return findLean(em, CustomField, { objectType }, { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

/**
 * The record's values after a create (`current` empty) or an update: `given` merged into `current`
 * key by key, each checked, null removing its key; on create every required field must be given.
 * Answers `current` itself when nothing is given on an update (no read of the definitions).
 */
export async function applyFieldValues(
  em: EntityManager,
  objectType: FieldObject,
  current: Values,
  given: Values | null | undefined,
  creating: boolean,
): Promise<Values> {
  if (!creating && (given === undefined || given === null)) return current;
  const definitions = await definitionsOf(em, objectType);
  const byKey = new Map(definitions.map((field) => [field.key, field]));
  const next: Values = { ...current };
  for (const [key, value] of Object.entries(given ?? {})) {
    const field = byKey.get(key);
    if (!field) {
      throw new ApiError('parameter_unknown', `fields[${key}] is not a field of ${objectType}s in this mode: define it with POST /v1/fields`, {
        param: param(key),
      });
    }
    if (value === null) {
      if (field.required) throw invalid(key, 'given: the field is required (it cannot be cleared)');
      delete next[key];
      continue;
    }
    next[key] = checked(field, value, Object.hasOwn(current, key) ? current[key] : undefined);
    if (field.type === FieldType.member) await checkOwner(em, value as string, param(key));
  }
  if (creating) {
    const missing = definitions.find((field) => field.required && !Object.hasOwn(next, field.key));
    if (missing) throw new ApiError('parameter_missing', `fields[${missing.key}] is required on ${objectType}s`, { param: param(missing.key) });
  }
  return next;
}

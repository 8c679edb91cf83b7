import type { FakeAnswer } from './fake-provider';
import { ConditionsError, matching, matchingChildren, page } from './fake-connectwise-conditions';

/**
 * The record plumbing every ConnectWise PSA collection of the fake shares, as the Manage REST API
 * behaves for all of them: lists filtered by `conditions`/`childConditions` and paged, records
 * made with the next id and `_info`, references given as `{id}` answered with the referenced
 * record's id and name, PATCH as a list of `{op: "replace", path, value}` operations, and
 * ConnectWise's error bodies (`{code, message, errors: [{code, message, resource, field}]}`).
 */

export type CwRecord = { id: number; [field: string]: unknown };
export interface Reference {
  id: number;
  name?: string;
  identifier?: string;
}
export interface FieldError {
  code: string;
  message: string;
  resource: string;
  field: string;
}

export const notFound = (what: string): FakeAnswer => ({ status: 404, body: { code: 'NotFound', message: `${what} not found` } });

export const invalid = (resource: string, errors: FieldError[]): FakeAnswer => ({
  status: 400,
  body: { code: 'InvalidObject', message: `${resource} object is invalid`, errors },
});

export const required = (resource: string, field: string): FieldError => ({
  code: 'NullValue',
  message: `The ${field} field is required.`,
  resource,
  field,
});

export const tooLong = (resource: string, field: string, max: number): FieldError => ({
  code: 'InvalidField',
  message: `The field ${field} must be a string with a maximum length of ${max}.`,
  resource,
  field,
});

/** A collection of one kind of record (companies, opportunities, a project's phases…). */
export class Collection<T extends CwRecord> {
  private readonly records = new Map<number, T>();
  private nextId: number;

  constructor(firstId = 1) {
    this.nextId = firstId;
  }

  all(): T[] {
    return [...this.records.values()];
  }

  get(id: number): T | undefined {
    return this.records.get(id);
  }

  add(fields: Omit<T, 'id' | '_info'>): T {
    const record = { ...fields, id: this.nextId++, _info: { lastUpdated: new Date().toISOString(), updatedBy: 'ApiMember' } } as unknown as T;
    this.records.set(record.id, record);
    return record;
  }

  touch(record: T): void {
    (record as CwRecord)._info = { lastUpdated: new Date().toISOString(), updatedBy: 'ApiMember' };
  }

  delete(id: number): boolean {
    return this.records.delete(id);
  }

  /** GET of the collection: conditions, childConditions, orderBy (`field asc|desc`; id by default) and paging. */
  list(query: URLSearchParams, records: T[] = this.all()): FakeAnswer {
    try {
      const selected = matchingChildren(matching(records, query.get('conditions')), query.get('childConditions'));
      const [field, direction] = (query.get('orderBy') ?? 'id asc').trim().split(/\s+/);
      const sign = direction?.toLowerCase() === 'desc' ? -1 : 1;
      const sorted = [...selected].sort((a, b) => sign * ((a[field] as number | string) < (b[field] as number | string) ? -1 : 1));
      return { status: 200, body: page(sorted, query) };
    } catch (error) {
      if (error instanceof ConditionsError) return { status: 400, body: { code: 'InvalidObject', message: `conditions: ${error.message}` } };
      throw error;
    }
  }
}

/** A `{op, path, value}` list (ConnectWise's PATCH body), checked for shape; paths are top-level fields, `/` separated below. */
export function patchOperations(body: unknown): Array<{ path: string[]; value: unknown }> | undefined {
  if (!Array.isArray(body)) return undefined;
  const operations: Array<{ path: string[]; value: unknown }> = [];
  for (const operation of body as Array<{ op?: unknown; path?: unknown; value?: unknown }>) {
    if (typeof operation?.path !== 'string' || !['replace', 'add'].includes(String(operation.op).toLowerCase())) return undefined;
    operations.push({ path: operation.path.replace(/^\//, '').split('/'), value: operation.value });
  }
  return operations;
}

/** The JSON body of a request, or undefined when it is not JSON. */
export function jsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The id of a `{id}` reference in a body, when it is one. */
export function referenceId(value: unknown): number | undefined {
  const id = (value as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'number' && Number.isInteger(id) ? id : undefined;
}

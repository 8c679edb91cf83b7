import { randomBytes } from 'node:crypto';
import type { FakeAnswer } from './fake-provider';
import { compareBy, conditionFields, FieldReader, matches, parseSoql, SoqlError } from './fake-salesforce-soql';

/**
 * The data of the fake Salesforce org (see fake-salesforce.ts for the routes that reach it):
 * Leads and Opportunities with the standard fields of the Object Reference for Salesforce that
 * syncing uses, and the External ID field an admin adds for us; describe and SOQL queries. The
 * sObject Collections writes are in fake-salesforce-collections.ts.
 */

export const EXTERNAL_ID_FIELD = 'Sales_Pipeline_Id__c';
export type FakeSObject = 'Lead' | 'Opportunity';
export const isSObject = (name: string): name is FakeSObject => name === 'Lead' || name === 'Opportunity';

/** A record as Salesforce holds it: Id, IsDeleted, SystemModstamp ("2026-11-24T06:30:00.000+0000") and its fields by API name. */
export interface FakeSalesforceRecord {
  Id: string;
  IsDeleted: boolean;
  SystemModstamp: string;
  [field: string]: unknown;
}

export interface FieldDescribe {
  name: string;
  type: string;
  label: string;
  length: number;
  externalId: boolean;
  unique: boolean;
  nillable: boolean;
  createable: boolean;
  updateable: boolean;
}

const field = (name: string, type: string, options: Partial<FieldDescribe> = {}): FieldDescribe => ({
  name,
  type,
  label: name.replace(/__c$/, '').replace(/_/g, ' '),
  length: type === 'string' || type === 'email' || type === 'url' || type === 'picklist' ? 255 : 0,
  externalId: false,
  unique: false,
  nillable: true,
  createable: true,
  updateable: true,
  ...options,
});
const system = { createable: false, updateable: false, nillable: false };
const externalIdField = () => field(EXTERNAL_ID_FIELD, 'string', { length: 64, externalId: true, unique: true });

/** The fields of each object (Object Reference for Salesforce, "Lead", "Opportunity"), the required ones not nillable. */
function standardFields(sobject: FakeSObject): FieldDescribe[] {
  const common = [field('Id', 'id', { ...system, length: 18 }), field('IsDeleted', 'boolean', system), field('SystemModstamp', 'datetime', system)];
  if (sobject === 'Lead') {
    return [
      ...common,
      field('FirstName', 'string', { length: 40 }),
      field('LastName', 'string', { length: 80, nillable: false }),
      field('Company', 'string', { nillable: false }),
      field('Email', 'email', { length: 80 }),
      field('Industry', 'picklist'),
      field('NumberOfEmployees', 'int'),
      field('Website', 'url'),
      field('Country', 'string', { length: 80 }),
      field('LeadSource', 'picklist'),
      field('Status', 'picklist', { nillable: false }),
      externalIdField(),
    ];
  }
  return [
    ...common,
    field('Name', 'string', { length: 120, nillable: false }),
    field('Amount', 'currency'),
    field('StageName', 'picklist', { nillable: false }),
    field('CloseDate', 'date', { nillable: false }),
    externalIdField(),
  ];
}

/** Key prefixes of the object types ("Standard Field Record ID Prefix Decoder"). */
const PREFIX: Record<FakeSObject, string> = { Lead: '00Q', Opportunity: '006' };
/** Defaults Salesforce fills in on create (a Lead's Status is the org's default status). */
export const DEFAULTS: Record<FakeSObject, Record<string, unknown>> = { Lead: { Status: 'Open - Not Contacted' }, Opportunity: {} };

/** The 18-character id: the 15-character one and the three characters that encode its upper-case letters. */
function eighteen(id15: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
  let suffix = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let index = 0; index < 5; index++) if (/[A-Z]/.test(id15[chunk * 5 + index])) bits |= 1 << index;
    suffix += alphabet[bits];
  }
  return id15 + suffix;
}

/** Salesforce's dateTime as the REST API writes it: milliseconds and +0000. */
const salesforceTime = (ms: number) => new Date(ms).toISOString().replace('Z', '+0000');
const timeOf = (value: string) => Date.parse(value.replace(/\+0000$/, 'Z'));

export const error = (status: number, errorCode: string, message: string): FakeAnswer => ({ status, body: [{ message, errorCode }] });

export class FakeSalesforceOrg {
  private readonly data: Record<FakeSObject, FakeSalesforceRecord[]> = { Lead: [], Opportunity: [] };
  private readonly fields: Record<FakeSObject, FieldDescribe[]> = { Lead: standardFields('Lead'), Opportunity: standardFields('Opportunity') };
  private readonly cursors = new Map<string, { object: FakeSObject; rows: Array<Record<string, unknown>>; offset: number }>();
  private sequence = 0;
  private clock = 0;

  /** The SystemModstamp of the next write: whole seconds, as Salesforce's are, each later than the last. */
  tick(): string {
    this.clock = Math.max(Math.floor(Date.now() / 1000) * 1000, this.clock + 1000);
    return salesforceTime(this.clock);
  }

  live(sobject: FakeSObject): FakeSalesforceRecord[] {
    return this.data[sobject].filter((record) => !record.IsDeleted);
  }

  /** Every record of an object, deleted ones (in the recycle bin) included. */
  all(sobject: FakeSObject): FakeSalesforceRecord[] {
    return this.data[sobject];
  }

  /** The fields of an object as describe reports them. */
  fieldsOf(sobject: FakeSObject): FieldDescribe[] {
    return this.fields[sobject];
  }

  removeField(sobject: FakeSObject, name: string): void {
    this.fields[sobject] = this.fields[sobject].filter((candidate) => candidate.name !== name);
  }

  create(sobject: FakeSObject, fields: Record<string, unknown>, stamp: string): FakeSalesforceRecord {
    const id15 = `${PREFIX[sobject]}5g00000${String(++this.sequence).padStart(5, '0')}`;
    const record: FakeSalesforceRecord = { ...DEFAULTS[sobject], ...fields, Id: eighteen(id15), IsDeleted: false, SystemModstamp: stamp };
    this.data[sobject].push(record);
    return record;
  }

  edit(sobject: FakeSObject, id: string, fields: Record<string, unknown>): FakeSalesforceRecord {
    const record = this.live(sobject).find((candidate) => candidate.Id === id);
    if (!record) throw new Error(`no live ${sobject} ${id}`);
    Object.assign(record, fields, { SystemModstamp: this.tick() });
    return record;
  }

  describe(sobject: FakeSObject): unknown {
    return { name: sobject, label: sobject, custom: false, createable: true, updateable: true, deletable: true, queryable: true, fields: this.fields[sobject] };
  }

  query(soql: string, version: string, batchSize: number): FakeAnswer {
    try {
      const parsed = parseSoql(soql);
      if (!isSObject(parsed.object)) throw new SoqlError('INVALID_TYPE', `sObject type '${parsed.object}' is not supported.`);
      const sobject = parsed.object;
      const known = new Set(this.fields[sobject].map((candidate) => candidate.name));
      for (const name of [...parsed.fields, ...conditionFields(parsed.where), ...parsed.orderBy.map((order) => order.field)]) {
        if (!known.has(name)) throw new SoqlError('INVALID_FIELD', `No such column '${name}' on entity '${sobject}'.`);
      }
      const read: FieldReader = (record, name) => {
        const value = record[name];
        if (value === null || value === undefined) return null;
        if (name === 'SystemModstamp') return timeOf(String(value));
        return typeof value === 'number' ? value : String(value);
      };
      let rows = this.live(sobject).filter((record) => parsed.where === null || matches(parsed.where, record, read));
      rows.sort(compareBy(parsed.orderBy, read));
      if (parsed.limit !== null) rows = rows.slice(0, parsed.limit);
      const selected = rows.map((record) => {
        const row: Record<string, unknown> = { attributes: { type: sobject, url: `/services/data/${version}/sobjects/${sobject}/${record.Id}` } };
        for (const name of parsed.fields) row[name] = record[name] ?? null;
        return row;
      });
      return this.page(sobject, selected, 0, version, batchSize, null);
    } catch (problem) {
      if (problem instanceof SoqlError) return error(400, problem.errorCode, problem.message);
      throw problem;
    }
  }

  queryMore(locator: string, version: string, batchSize: number): FakeAnswer {
    const [id, offset] = locator.split('-');
    const cursor = this.cursors.get(id);
    if (!cursor || Number(offset) !== cursor.offset) return error(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
    return this.page(cursor.object, cursor.rows, cursor.offset, version, batchSize, id);
  }

  private page(
    object: FakeSObject,
    rows: Array<Record<string, unknown>>,
    offset: number,
    version: string,
    batchSize: number,
    locator: string | null,
  ): FakeAnswer {
    const records = rows.slice(offset, offset + batchSize);
    const end = offset + records.length;
    const body: Record<string, unknown> = { totalSize: rows.length, done: end >= rows.length, records };
    if (end < rows.length) {
      const id = locator ?? `01g5g00000${randomBytes(4).toString('hex').toUpperCase()}`;
      this.cursors.set(id, { object, rows, offset: end });
      body.nextRecordsUrl = `/services/data/${version}/query/${id}-${end}`;
    } else if (locator) this.cursors.delete(locator);
    return { status: 200, body };
  }
}

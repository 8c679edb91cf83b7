import type { FakeAnswer } from './fake-provider';
import { DEFAULTS, error, FakeSalesforceOrg, FakeSalesforceRecord, FakeSObject, isSObject } from './fake-salesforce-org';

/**
 * The sObject Collections writes of the fake org (REST API Developer Guide, "sObject
 * Collections"): upsert on an external id field, update by Id, delete. Each takes up to 200
 * records and answers one result per record, in order; a body that is not well formed, a record
 * without attributes.type, or a field the object lacks or that may not be written is 400 for the
 * whole call. The records a call writes share one SystemModstamp, later than any before.
 */

interface CollectionBody {
  allOrNone: boolean;
  records: Array<Record<string, unknown>>;
}

interface SaveResult {
  id?: string | null;
  success: boolean;
  errors: Array<{ statusCode: string; message: string; fields: string[] }>;
  created?: boolean;
}

const ID = /^[a-zA-Z0-9]{15}(?:[a-zA-Z0-9]{3})?$/;
const blank = (value: unknown) => value === null || value === undefined || value === '';
const failure = (statusCode: string, message: string, fields: string[] = [], id: string | null = null): SaveResult => ({
  id,
  success: false,
  errors: [{ statusCode, message, fields }],
});
const rolledBack = () =>
  failure('ALL_OR_NONE_OPERATION_ROLLED_BACK', 'Record rolled back because not all records were valid and the request was using AllOrNone header');
const typeOf = (record: Record<string, unknown>) => (record.attributes as { type?: unknown } | undefined)?.type;
const withoutAttributes = ({ attributes: _attributes, ...fields }: Record<string, unknown>) => fields;

/** {allOrNone, records} with at most 200 records, or the 400 Salesforce answers instead. */
function readBody(body: string): CollectionBody | FakeAnswer {
  let parsed: { allOrNone?: unknown; records?: unknown };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return error(400, 'JSON_PARSER_ERROR', 'Unexpected character in the request body');
  }
  if (!Array.isArray(parsed.records)) return error(400, 'INVALID_FIELD', 'records is required');
  if (parsed.records.length > 200) return error(400, 'EXCEEDED_ID_LIMIT', 'record limit reached. cannot submit more than 200 records into this call');
  return { allOrNone: parsed.allOrNone === true, records: parsed.records as Array<Record<string, unknown>> };
}

/** Every record has a type (`only` when given) and writes only fields of it that may be written; `skip` names what is not a field (an update's id). */
function checkFields(org: FakeSalesforceOrg, records: Array<Record<string, unknown>>, only: FakeSObject | null, skip: string[] = []): FakeAnswer | null {
  for (const record of records) {
    const type = typeOf(record);
    if (typeof type !== 'string' || !isSObject(type) || (only !== null && type !== only)) {
      return error(400, 'INVALID_TYPE', `Each record must have attributes.type ${only ?? 'of a supported sObject'}`);
    }
    const known = new Map(org.fieldsOf(type).map((candidate) => [candidate.name, candidate]));
    for (const name of Object.keys(record)) {
      if (name === 'attributes' || skip.includes(name)) continue;
      const described = known.get(name);
      if (!described) return error(400, 'INVALID_FIELD', `No such column '${name}' on sobject of type ${type}`);
      if (!described.createable || !described.updateable) return error(400, 'INVALID_FIELD_FOR_INSERT_UPDATE', `Unable to create/update fields: ${name}.`);
    }
  }
  return null;
}

/** The required fields (not nillable, writable) a record would lack once written. */
function missingRequired(org: FakeSalesforceOrg, sobject: FakeSObject, merged: Record<string, unknown>): string[] {
  return org
    .fieldsOf(sobject)
    .filter((candidate) => !candidate.nillable && candidate.createable && blank(merged[candidate.name]))
    .map((candidate) => candidate.name);
}

/** PATCH /composite/sobjects/{SObject}/{ExternalIdField}: each record created, or updated where the field's value is found. */
export function upsertRecords(org: FakeSalesforceOrg, sobject: FakeSObject, externalIdField: string, body: string): FakeAnswer {
  if (!org.fieldsOf(sobject).find((candidate) => candidate.name === externalIdField)?.externalId) {
    return error(404, 'NOT_FOUND', 'The requested resource does not exist');
  }
  const parsed = readBody(body);
  if ('status' in parsed) return parsed;
  const refused = checkFields(org, parsed.records, sobject);
  if (refused) return refused;
  const stamp = org.tick();
  const values = parsed.records.map((record) => record[externalIdField]);
  const results = parsed.records.map((record, index): SaveResult => {
    const value = values[index];
    const fail = (statusCode: string, message: string, fields: string[]) => ({ ...failure(statusCode, message, fields), created: false });
    if (blank(value)) return fail('REQUIRED_FIELD_MISSING', `Required fields are missing: [${externalIdField}]`, [externalIdField]);
    if (values.indexOf(value) !== index || values.lastIndexOf(value) !== index) {
      return fail('DUPLICATE_VALUE', `Duplicate external id specified: ${String(value)}`, [externalIdField]);
    }
    const fields = withoutAttributes(record);
    const existing = org.live(sobject).find((candidate) => candidate[externalIdField] === value);
    const missing = missingRequired(org, sobject, { ...DEFAULTS[sobject], ...existing, ...fields });
    if (missing.length > 0) return fail('REQUIRED_FIELD_MISSING', `Required fields are missing: [${missing.join(', ')}]`, missing);
    if (existing) {
      Object.assign(existing, fields, { SystemModstamp: stamp });
      return { id: existing.Id, success: true, errors: [], created: false };
    }
    return { id: org.create(sobject, fields, stamp).Id, success: true, errors: [], created: true };
  });
  return { status: 200, body: results };
}

/**
 * PATCH /composite/sobjects ("Update Records Using sObject Collections"): each record names its
 * id (Salesforce takes `id` or `Id`) and type. A missing id is MISSING_ARGUMENT, an id of another
 * object MALFORMED_ID, one in the recycle bin ENTITY_IS_DELETED, one the org never had (or emptied
 * from the bin) INVALID_CROSS_REFERENCE_KEY; required fields left blank and a unique field's value
 * held by another record (or set twice in the call) are refused as an upsert refuses them.
 */
export function updateRecords(org: FakeSalesforceOrg, body: string): FakeAnswer {
  const parsed = readBody(body);
  if ('status' in parsed) return parsed;
  const refused = checkFields(org, parsed.records, null, ['id', 'Id']);
  if (refused) return refused;
  const ids = parsed.records.map((record) => record.id ?? record.Id);
  const fieldsOf = (record: Record<string, unknown>) => {
    const { id: _id, Id: _Id, ...fields } = withoutAttributes(record);
    return fields;
  };
  const plans = parsed.records.map((record, index): { target: FakeSalesforceRecord; fields: Record<string, unknown> } | SaveResult => {
    const sobject = typeOf(record) as FakeSObject;
    const id = ids[index];
    if (blank(id)) return failure('MISSING_ARGUMENT', 'Id not specified in an update call', ['Id']);
    const other: FakeSObject = sobject === 'Lead' ? 'Opportunity' : 'Lead';
    if (typeof id !== 'string' || !ID.test(id) || org.all(other).some((candidate) => candidate.Id === id)) {
      return failure('MALFORMED_ID', `${sobject} ID: id value of incorrect type: ${String(id)}`, ['Id']);
    }
    const target = org.all(sobject).find((candidate) => candidate.Id === id);
    if (!target) return failure('INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id');
    if (target.IsDeleted) return failure('ENTITY_IS_DELETED', 'entity is deleted');
    const fields = fieldsOf(record);
    const missing = missingRequired(org, sobject, { ...target, ...fields });
    if (missing.length > 0) return failure('REQUIRED_FIELD_MISSING', `Required fields are missing: [${missing.join(', ')}]`, missing);
    for (const unique of org.fieldsOf(sobject).filter((candidate) => candidate.unique && !blank(fields[candidate.name]))) {
      const value = fields[unique.name];
      const twice = parsed.records.findIndex((another, at) => at !== index && typeOf(another) === sobject && ids[at] !== id && another[unique.name] === value);
      const holder =
        org.live(sobject).find((candidate) => candidate !== target && candidate[unique.name] === value)?.Id ?? (twice >= 0 ? ids[twice] : undefined);
      if (holder !== undefined) {
        return failure('DUPLICATE_VALUE', `duplicate value found: ${unique.name} duplicates value on record with id: ${String(holder)}`, [unique.name]);
      }
    }
    return { target, fields };
  });
  const refusedAny = plans.some((plan) => 'success' in plan);
  if (parsed.allOrNone && refusedAny) return { status: 200, body: plans.map((plan) => ('success' in plan ? plan : rolledBack())) };
  const stamp = org.tick();
  return {
    status: 200,
    body: plans.map((plan): SaveResult => {
      if ('success' in plan) return plan;
      Object.assign(plan.target, plan.fields, { SystemModstamp: stamp });
      return { id: plan.target.Id, success: true, errors: [] };
    }),
  };
}

/** DELETE /composite/sobjects?ids=…&allOrNone=: to the recycle bin (IsDeleted), one DeleteResult per id, in order. */
export function deleteRecords(org: FakeSalesforceOrg, idList: string | null, allOrNone: boolean): FakeAnswer {
  const ids = (idList ?? '').split(',').filter(Boolean);
  if (ids.length === 0) return error(400, 'MALFORMED_ID', 'ids is required');
  if (ids.length > 200) return error(400, 'EXCEEDED_ID_LIMIT', 'record limit reached. cannot submit more than 200 records into this call');
  const all = [...org.all('Lead'), ...org.all('Opportunity')];
  const found = ids.map((id) => all.find((record) => record.Id === id));
  const problems = ids.map((id, index) => {
    const record = found[index];
    if (!ID.test(id)) return failure('MALFORMED_ID', `malformed id ${id}`, [], id);
    if (!record) return failure('INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id', [], id);
    if (record.IsDeleted) return failure('ENTITY_IS_DELETED', 'entity is deleted', [], id);
    return null;
  });
  if (allOrNone && problems.some((problem) => problem !== null)) {
    return { status: 200, body: ids.map((id, index) => problems[index] ?? { ...rolledBack(), id }) };
  }
  const stamp = org.tick();
  return {
    status: 200,
    body: ids.map((id, index) => {
      const record = found[index];
      if (problems[index] || !record) return problems[index];
      record.IsDeleted = true;
      record.SystemModstamp = stamp;
      return { id, success: true, errors: [] };
    }),
  };
}

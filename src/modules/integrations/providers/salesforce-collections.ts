import { CrmSetupIncomplete, ExternalIds, OutboundRemoval, PushOutcome } from './crm-client';
import { jsonOf, ProviderResponse } from './provider-http';
import { salesforceReason } from './salesforce-auth';
import { EXTERNAL_ID_FIELD, SalesforceObject } from './salesforce-mapping';
import { SalesforceSession } from './salesforce-session';

/** sObject Collections take up to 200 records or ids a call; a changes page is as long. */
export const BATCH_SIZE = 200;

/** A SaveResult / UpsertResult / DeleteResult of sObject Collections: {id, success, errors: [{statusCode, message, fields}], created?}. */
interface CollectionResult {
  id?: string | null;
  success?: boolean;
  created?: boolean;
  errors?: Array<{ statusCode?: string; message?: string; fields?: string[] }>;
}

/** One object to write: our id, the record (see leadRecord, dealRecord) and its Salesforce Id when we know it. */
export interface RecordWrite {
  id: string;
  record: Record<string, unknown>;
  salesforceId?: string;
}

/**
 * How Salesforce says a record by that Id is not there (in the recycle bin, emptied from it, or
 * never of this org). Deleting it is then done already; updating it falls back to the upsert.
 */
const GONE = new Set(['ENTITY_IS_DELETED', 'NOT_FOUND', 'INVALID_CROSS_REFERENCE_KEY']);
const isGone = (result: CollectionResult) => Boolean(result.errors?.length) && (result.errors ?? []).every((error) => GONE.has(error.statusCode ?? ''));

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/** What a Salesforce admin does to add our External ID field to an object. */
export function setupSteps(objects: SalesforceObject[]): string {
  return objects
    .map(
      (object) =>
        `Setup → Object Manager → ${object} → Fields & Relationships → New: data type Text, length 64, field name ${EXTERNAL_ID_FIELD.replace(/__c$/, '')} ` +
        `(API name ${EXTERNAL_ID_FIELD}), tick "Unique" and "External ID", and make it visible to the integration user's profile`,
    )
    .join('; then ');
}

/** A 2xx answer's JSON; anything else here is an answer the client does not know how to read. */
export function salesforceJson<T>(session: SalesforceSession, response: ProviderResponse, what: string): T {
  const body = jsonOf(response);
  if (response.status < 200 || response.status >= 300 || body === undefined) {
    throw new Error(`Salesforce answered ${what} with ${response.status} (${session.clean(salesforceReason(response))})`);
  }
  return body as T;
}

/**
 * The writes of the sync over sObject Collections (REST API Developer Guide, "sObject
 * Collections"), each call up to 200 records with allOrNone false, so one refused record does not
 * hold back the others: updates by Salesforce Id, upserts on our External ID field, deletes.
 */
export class SalesforceCollections {
  constructor(private readonly session: SalesforceSession) {}

  /**
   * Records whose Salesforce Id we know are updated by that Id: a record a person made in
   * Salesforce and we imported has no Sales_Pipeline_Id__c yet, so an upsert on our id would make a
   * second one. The update writes our id into it, and later pushes find it either way. Only the
   * records without a known Id go through the upsert, which matches what a push repeated after a
   * crash wrote before instead of duplicating it.
   */
  async write(object: SalesforceObject, writes: RecordWrite[]): Promise<PushOutcome[]> {
    const outcomes = new Map<RecordWrite, PushOutcome>();
    const known = writes.filter((write) => write.salesforceId);
    const toUpsert = writes.filter((write) => !write.salesforceId);
    const updated = await this.update(object, known);
    known.forEach((write, index) => {
      const result = updated[index];
      if (result.success && result.id) outcomes.set(write, { id: write.id, external: { [object]: result.id } });
      // Deleted in Salesforce since we linked it (or emptied from the recycle bin): written anew by
      // the upsert on our id rather than lost; the link then moves to the record the upsert names.
      else if (isGone(result)) toUpsert.push(write);
      else outcomes.set(write, { id: write.id, error: this.resultError(result) });
    });
    const upserted = await this.upsert(object, toUpsert);
    toUpsert.forEach((write, index) => outcomes.set(write, upserted[index]));
    return writes.map((write) => outcomes.get(write) as PushOutcome);
  }

  /**
   * PATCH /composite/sobjects/{object}/Sales_Pipeline_Id__c ("Upsert Records Using sObject
   * Collections"): the results come in the order of the records, each {id, success, errors,
   * created}; a refused record keeps Salesforce's statusCode and message.
   */
  async upsert(object: SalesforceObject, writes: RecordWrite[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const batch of chunks(writes, BATCH_SIZE)) {
      const response = await this.session.rest('PATCH', `/composite/sobjects/${object}/${EXTERNAL_ID_FIELD}`, {
        allOrNone: false,
        records: batch.map((write) => write.record),
      });
      if (response.status === 404) {
        // "Insert or Update (Upsert) a Record Using an External ID": an unknown external ID field is 404 NOT_FOUND.
        throw new CrmSetupIncomplete(
          `Salesforce refused the upsert on ${object}.${EXTERNAL_ID_FIELD} (${this.session.clean(salesforceReason(response))}): the External ID field is missing. ` +
            `A Salesforce admin adds it: ${setupSteps([object])}.`,
        );
      }
      const results = this.collectionResults(response, `upsert ${object}`, batch.length);
      batch.forEach((write, index) => {
        const result = results[index];
        if (result.success && result.id) outcomes.push({ id: write.id, external: { [object]: result.id } });
        else outcomes.push({ id: write.id, error: this.resultError(result) });
      });
    }
    return outcomes;
  }

  /**
   * DELETE /composite/sobjects?ids=…&allOrNone=false ("Delete Records Using sObject Collections"):
   * records go to the recycle bin. What we never pushed has nothing to delete, and a record
   * already deleted (ENTITY_IS_DELETED) or gone for good is success.
   */
  async remove(object: SalesforceObject, removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    const byId = new Map<string, PushOutcome>();
    const targets = removals.filter((removal) => {
      if (removal.external[object]) return true;
      byId.set(removal.id, { id: removal.id, external: {} });
      return false;
    });
    for (const batch of chunks(targets, BATCH_SIZE)) {
      const ids = batch.map((removal) => removal.external[object]);
      const response = await this.session.rest('DELETE', `/composite/sobjects?ids=${ids.map(encodeURIComponent).join(',')}&allOrNone=false`);
      const results = this.collectionResults(response, `delete ${object}`, batch.length);
      batch.forEach((removal, index) => {
        const result = results[index];
        const external: ExternalIds = { [object]: removal.external[object] };
        byId.set(removal.id, result.success || isGone(result) ? { id: removal.id, external } : { id: removal.id, external, error: this.resultError(result) });
      });
    }
    return removals.map((removal) => byId.get(removal.id) as PushOutcome);
  }

  /**
   * PATCH /composite/sobjects ("Update Records Using sObject Collections"): each record carries
   * attributes {type} and the id to update, besides its fields (our External ID among them);
   * answered with a SaveResult {id, success, errors} per record, in order.
   */
  private async update(object: SalesforceObject, writes: RecordWrite[]): Promise<CollectionResult[]> {
    const results: CollectionResult[] = [];
    for (const batch of chunks(writes, BATCH_SIZE)) {
      const response = await this.session.rest('PATCH', '/composite/sobjects', {
        allOrNone: false,
        records: batch.map((write) => ({ ...write.record, id: write.salesforceId })),
      });
      results.push(...this.collectionResults(response, `update ${object}`, batch.length));
    }
    return results;
  }

  private collectionResults(response: ProviderResponse, what: string, expected: number): CollectionResult[] {
    if (response.status === 400) {
      const reason = this.session.clean(salesforceReason(response));
      if (reason.startsWith('INVALID_FIELD'))
        throw new CrmSetupIncomplete(`Salesforce refused to ${what}: ${reason}; give the integration user's profile edit access to these fields`);
      throw new Error(`Salesforce refused to ${what}: ${reason}`);
    }
    const results = salesforceJson<CollectionResult[]>(this.session, response, what);
    if (!Array.isArray(results) || results.length !== expected) throw new Error(`Salesforce's answer to ${what} did not have one result per record`);
    return results;
  }

  private resultError(result: CollectionResult): string {
    const errors = result.errors ?? [];
    if (errors.length === 0) return 'Salesforce refused the record without a reason';
    return this.session.clean(errors.map((error) => `${error.statusCode ?? 'ERROR'}: ${error.message ?? ''}`.trim()).join('; '));
  }
}

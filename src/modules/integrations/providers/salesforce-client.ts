import {
  ChangePage,
  CrmClient,
  CrmClientOptions,
  CrmLeadFields,
  CrmSetupIncomplete,
  ExternalIds,
  OutboundDeal,
  OutboundLead,
  OutboundRemoval,
  PushOutcome,
  RemoteDeal,
  RemoteRecord,
} from './crm-client';
import type { ProviderSettings } from './crm-verification';
import { jsonOf, ProviderResponse } from './provider-http';
import { salesforceReason } from './salesforce-auth';
import {
  changesQuery,
  ChangeCursor,
  dealRecord,
  decodeCursor,
  encodeCursor,
  EXTERNAL_ID_FIELD,
  leadRecord,
  parseSalesforceDateTime,
  remoteDeal,
  remoteLead,
  SalesforceObject,
  SalesforceRecord,
} from './salesforce-mapping';
import { SalesforceSession } from './salesforce-session';

/** sObject Collections take up to 200 records or ids a call; a changes page is as long. */
const BATCH_SIZE = 200;

/** An UpsertResult / DeleteResult of sObject Collections: {id, success, errors: [{statusCode, message, fields}], created?}. */
interface CollectionResult {
  id?: string | null;
  success?: boolean;
  created?: boolean;
  errors?: Array<{ statusCode?: string; message?: string; fields?: string[] }>;
}

/** A query answer ("Execute a SOQL Query"): {totalSize, done, records, nextRecordsUrl?}. */
interface QueryResult {
  totalSize: number;
  done: boolean;
  records: SalesforceRecord[];
  nextRecordsUrl?: string;
}

/** Deleting a record already gone (in the recycle bin, or emptied from it) is what we asked for. */
const ALREADY_GONE = new Set(['ENTITY_IS_DELETED', 'NOT_FOUND', 'INVALID_CROSS_REFERENCE_KEY']);

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/** What a Salesforce admin does to add our External ID field to an object. */
function setupSteps(objects: SalesforceObject[]): string {
  return objects
    .map(
      (object) =>
        `Setup → Object Manager → ${object} → Fields & Relationships → New: data type Text, length 64, field name ${EXTERNAL_ID_FIELD.replace(/__c$/, '')} ` +
        `(API name ${EXTERNAL_ID_FIELD}), tick "Unique" and "External ID", and make it visible to the integration user's profile`,
    )
    .join('; then ');
}

/**
 * The Salesforce side of the two-way sync (see CrmClient), over the REST API on the org's
 * instance_url: sObject Collections upserts on our External ID field `Sales_Pipeline_Id__c`,
 * sObject Collections deletes, and SOQL on SystemModstamp for what changed.
 */
class SalesforceClient implements CrmClient {
  readonly provider = 'salesforce' as const;
  readonly batchSize = BATCH_SIZE;
  private readonly session: SalesforceSession;

  constructor(credentials: Record<string, string>, settings: ProviderSettings, options: CrmClientOptions = {}) {
    this.session = new SalesforceSession(credentials, settings, options);
  }

  /**
   * The refresh-token grant, then a describe of Lead and Opportunity ("sObject Describe":
   * fields[] with name and externalId) to make sure both carry our External ID field. A field
   * the integration user cannot see is not described either, hence "visible to" in the steps.
   */
  async open(): Promise<void> {
    await this.session.grant();
    const missing: SalesforceObject[] = [];
    for (const object of ['Lead', 'Opportunity'] as const) {
      const response = await this.session.rest('GET', `/sobjects/${object}/describe`);
      if (response.status === 404) {
        missing.push(object);
        continue;
      }
      const describe = this.json<{ fields?: Array<{ name?: string; externalId?: boolean }> }>(response, `describe ${object}`);
      const field = describe.fields?.find((candidate) => candidate.name === EXTERNAL_ID_FIELD);
      if (!field || field.externalId !== true) missing.push(object);
    }
    if (missing.length > 0) {
      throw new CrmSetupIncomplete(
        `Salesforce has no External ID field ${EXTERNAL_ID_FIELD} on ${missing.join(' and ')} that the integration user can see, ` +
          `and syncing matches records on it. A Salesforce admin adds it: ${setupSteps(missing)}.`,
      );
    }
  }

  upsertLeads(leads: OutboundLead[]): Promise<PushOutcome[]> {
    return this.upsert(
      'Lead',
      leads.map((lead) => ({ id: lead.id, record: leadRecord(lead) })),
    );
  }

  /**
   * Opportunities (see dealRecord). A deal we pushed before goes without CloseDate when it has
   * none; if its Opportunity was deleted in Salesforce meanwhile, the upsert creates a new one and
   * Salesforce asks for the required CloseDate: those few are pushed once more with the default.
   */
  async upsertDeals(deals: OutboundDeal[]): Promise<PushOutcome[]> {
    const today = new Date();
    const outcomes = await this.upsert(
      'Opportunity',
      deals.map((deal) => ({ id: deal.id, record: dealRecord(deal, today) })),
    );
    const lacking = deals.filter((deal, index) => /REQUIRED_FIELD_MISSING: [^;]*CloseDate/.test(outcomes[index].error ?? '') && deal.fields.closeDate === null);
    if (lacking.length === 0) return outcomes;
    const again = await this.upsert(
      'Opportunity',
      lacking.map((deal) => ({ id: deal.id, record: dealRecord({ ...deal, external: {} }, today) })),
    );
    const byId = new Map(again.map((outcome) => [outcome.id, outcome]));
    return outcomes.map((outcome) => byId.get(outcome.id) ?? outcome);
  }

  archiveLeads(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    return this.remove('Lead', removals);
  }

  archiveDeals(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    return this.remove('Opportunity', removals);
  }

  changedLeads(cursor: string | null): Promise<ChangePage<RemoteRecord<CrmLeadFields>>> {
    return this.changes('Lead', cursor, remoteLead);
  }

  changedDeals(cursor: string | null): Promise<ChangePage<RemoteDeal>> {
    return this.changes('Opportunity', cursor, remoteDeal);
  }

  /**
   * PATCH /composite/sobjects/{object}/Sales_Pipeline_Id__c with allOrNone false ("Upsert Records
   * Using sObject Collections"): the results come in the order of the records, each {id, success,
   * errors, created}; a refused record keeps Salesforce's statusCode and message.
   */
  private async upsert(object: SalesforceObject, items: Array<{ id: string; record: Record<string, unknown> }>): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const batch of chunks(items, BATCH_SIZE)) {
      const response = await this.session.rest('PATCH', `/composite/sobjects/${object}/${EXTERNAL_ID_FIELD}`, {
        allOrNone: false,
        records: batch.map((item) => item.record),
      });
      if (response.status === 404) {
        // "Insert or Update (Upsert) a Record Using an External ID": an unknown external ID field is 404 NOT_FOUND.
        throw new CrmSetupIncomplete(
          `Salesforce refused the upsert on ${object}.${EXTERNAL_ID_FIELD} (${this.session.clean(salesforceReason(response))}): the External ID field is missing. ` +
            `A Salesforce admin adds it: ${setupSteps([object])}.`,
        );
      }
      const results = this.collectionResults(response, `upsert ${object}`, batch.length);
      batch.forEach((item, index) => {
        const result = results[index];
        if (result.success && result.id) outcomes.push({ id: item.id, external: { [object]: result.id } });
        else outcomes.push({ id: item.id, error: this.resultError(result) });
      });
    }
    return outcomes;
  }

  /**
   * DELETE /composite/sobjects?ids=…&allOrNone=false ("Delete Records Using sObject Collections"):
   * records go to the recycle bin. What we never pushed has nothing to delete, and a record
   * already deleted (ENTITY_IS_DELETED) or gone for good is success.
   */
  private async remove(object: SalesforceObject, removals: OutboundRemoval[]): Promise<PushOutcome[]> {
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
        const gone = result.errors?.length && result.errors.every((error) => ALREADY_GONE.has(error.statusCode ?? ''));
        byId.set(removal.id, result.success || gone ? { id: removal.id, external } : { id: removal.id, external, error: this.resultError(result) });
      });
    }
    return removals.map((removal) => byId.get(removal.id) as PushOutcome);
  }

  /**
   * One page of records changed since the cursor, by SOQL on SystemModstamp ("Execute a SOQL
   * Query": GET /query?q=…, answered {totalSize, done, records, nextRecordsUrl}; a page longer
   * than the org's query batch continues at nextRecordsUrl). Deleted records are not returned by
   * /query; a page of BATCH_SIZE records says there may be more.
   */
  private async changes<Remote>(object: SalesforceObject, cursor: string | null, toRemote: (record: SalesforceRecord) => Remote): Promise<ChangePage<Remote>> {
    const from: ChangeCursor | null = cursor === null ? null : decodeCursor(cursor);
    const soql = changesQuery(object, from, BATCH_SIZE);
    let result = this.queryResult(await this.session.rest('GET', `/query?q=${encodeURIComponent(soql)}`), object);
    const records = [...result.records];
    while (!result.done && result.nextRecordsUrl && records.length < BATCH_SIZE) {
      result = this.queryResult(await this.session.rest('GET', result.nextRecordsUrl), object);
      records.push(...result.records);
    }
    if (records.length === 0) return { records: [], cursor, more: false };
    const last = records[records.length - 1];
    const more = records.length >= BATCH_SIZE;
    const next = encodeCursor({ at: parseSalesforceDateTime(last.SystemModstamp), afterId: more ? last.Id : null });
    return { records: records.map(toRemote), cursor: next, more };
  }

  private queryResult(response: ProviderResponse, object: SalesforceObject): QueryResult {
    if (response.status === 400) {
      const reason = this.session.clean(salesforceReason(response));
      // INVALID_FIELD: a field the integration user's profile cannot see (field-level security).
      if (reason.startsWith('INVALID_FIELD'))
        throw new CrmSetupIncomplete(`Salesforce refused the query of ${object}: ${reason}; give the integration user's profile read access to these fields`);
      throw new Error(`Salesforce refused the query of ${object}: ${reason}`);
    }
    const result = this.json<QueryResult>(response, `query ${object}`);
    if (!Array.isArray(result.records)) throw new Error(`Salesforce's answer to the query of ${object} had no records`);
    return result;
  }

  private collectionResults(response: ProviderResponse, what: string, expected: number): CollectionResult[] {
    if (response.status === 400) {
      const reason = this.session.clean(salesforceReason(response));
      if (reason.startsWith('INVALID_FIELD'))
        throw new CrmSetupIncomplete(`Salesforce refused to ${what}: ${reason}; give the integration user's profile edit access to these fields`);
      throw new Error(`Salesforce refused to ${what}: ${reason}`);
    }
    const results = this.json<CollectionResult[]>(response, what);
    if (!Array.isArray(results) || results.length !== expected) throw new Error(`Salesforce's answer to ${what} did not have one result per record`);
    return results;
  }

  private resultError(result: CollectionResult): string {
    const errors = result.errors ?? [];
    if (errors.length === 0) return 'Salesforce refused the record without a reason';
    return this.session.clean(errors.map((error) => `${error.statusCode ?? 'ERROR'}: ${error.message ?? ''}`.trim()).join('; '));
  }

  /** A 2xx answer's JSON; anything else here is an answer this client does not know how to read. */
  private json<T>(response: ProviderResponse, what: string): T {
    const body = jsonOf(response);
    if (response.status < 200 || response.status >= 300 || body === undefined) {
      throw new Error(`Salesforce answered ${what} with ${response.status} (${this.session.clean(salesforceReason(response))})`);
    }
    return body as T;
  }
}

/** A Salesforce client for one integration's credentials ({client_id, client_secret, refresh_token}). */
export function createSalesforceClient(credentials: Record<string, string>, settings: ProviderSettings, options?: CrmClientOptions): CrmClient {
  return new SalesforceClient(credentials, settings, options);
}

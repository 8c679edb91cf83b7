import {
  ChangePage,
  CHANGES_SETTLE_MS,
  CrmClient,
  CrmClientOptions,
  CrmLeadFields,
  CrmSetupIncomplete,
  OutboundDeal,
  OutboundLead,
  OutboundRemoval,
  PushOutcome,
  RemoteDeal,
  RemoteRecord,
} from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { ProviderResponse } from './provider-http';
import { salesforceReason } from './salesforce-auth';
import { BATCH_SIZE, SalesforceCollections, salesforceJson, setupSteps } from './salesforce-collections';
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

/** A query answer ("Execute a SOQL Query"): {totalSize, done, records, nextRecordsUrl?}. */
interface QueryResult {
  totalSize: number;
  done: boolean;
  records: SalesforceRecord[];
  nextRecordsUrl?: string;
}

/**
 * The Salesforce side of the two-way sync (see CrmClient), over the REST API on the org's
 * instance_url: sObject Collections writes (see SalesforceCollections: updates by Salesforce Id
 * where we know it, upserts on our External ID field `Sales_Pipeline_Id__c` otherwise, deletes),
 * and SOQL on SystemModstamp for what changed.
 */
class SalesforceClient implements CrmClient {
  readonly provider = 'salesforce' as const;
  readonly batchSize = BATCH_SIZE;
  private readonly session: SalesforceSession;
  /** How far behind now the last cursor of a changes query stays (CHANGES_SETTLE_MS by default). */
  private readonly settleMs: number;
  private readonly collections: SalesforceCollections;

  constructor(credentials: Record<string, string>, settings: ProviderSettings, options: CrmClientOptions = {}) {
    this.session = new SalesforceSession(credentials, settings, options);
    this.settleMs = options.changesSettleMs ?? CHANGES_SETTLE_MS;
    this.collections = new SalesforceCollections(this.session);
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
      const describe = salesforceJson<{ fields?: Array<{ name?: string; externalId?: boolean }> }>(this.session, response, `describe ${object}`);
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
    return this.collections.write(
      'Lead',
      leads.map((lead) => ({ id: lead.id, record: leadRecord(lead), salesforceId: lead.external.Lead })),
    );
  }

  /**
   * Opportunities (see dealRecord). A deal whose Opportunity we know goes without CloseDate when it
   * has none, whether it is updated by Id or (deleted in Salesforce meanwhile) upserted on our id:
   * the upsert may still find a record carrying our id, whose date is kept. When it finds none it
   * creates one, and Salesforce asks for the required CloseDate: those few are upserted once more
   * with the default.
   */
  async upsertDeals(deals: OutboundDeal[]): Promise<PushOutcome[]> {
    const today = new Date();
    const outcomes = await this.collections.write(
      'Opportunity',
      deals.map((deal) => ({ id: deal.id, record: dealRecord(deal, today), salesforceId: deal.external.Opportunity })),
    );
    const lacking = deals.filter((deal, index) => /REQUIRED_FIELD_MISSING: [^;]*CloseDate/.test(outcomes[index].error ?? '') && deal.fields.closeDate === null);
    if (lacking.length === 0) return outcomes;
    const again = await this.collections.upsert(
      'Opportunity',
      lacking.map((deal) => ({ id: deal.id, record: dealRecord({ ...deal, external: {} }, today) })),
    );
    const byId = new Map(again.map((outcome) => [outcome.id, outcome]));
    return outcomes.map((outcome) => byId.get(outcome.id) ?? outcome);
  }

  archiveLeads(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    return this.collections.remove('Lead', removals);
  }

  archiveDeals(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    return this.collections.remove('Opportunity', removals);
  }

  changedLeads(cursor: string | null): Promise<ChangePage<RemoteRecord<CrmLeadFields>>> {
    return this.changes('Lead', cursor, remoteLead);
  }

  changedDeals(cursor: string | null): Promise<ChangePage<RemoteDeal>> {
    return this.changes('Opportunity', cursor, remoteDeal);
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
    const lastAt = parseSalesforceDateTime(last.SystemModstamp);
    // A full page goes on from its last record; the last page's cursor stays settleMs behind now.
    const next = more
      ? encodeCursor({ at: lastAt, afterId: last.Id })
      : this.settleMs === 0
        ? encodeCursor({ at: lastAt, afterId: null })
        : encodeCursor({ at: new Date(Math.min(lastAt.getTime(), Date.now() - this.settleMs)), afterId: null });
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
    const result = salesforceJson<QueryResult>(this.session, response, `query ${object}`);
    if (!Array.isArray(result.records)) throw new Error(`Salesforce's answer to the query of ${object} had no records`);
    return result;
  }
}

/** A Salesforce client for one integration's credentials ({client_id, client_secret, refresh_token}). */
export function createSalesforceClient(credentials: Record<string, string>, settings: ProviderSettings, options?: CrmClientOptions): CrmClient {
  return new SalesforceClient(credentials, settings, options);
}

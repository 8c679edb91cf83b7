import {
  ChangePage,
  CHANGES_SETTLE_MS,
  CrmClient,
  CrmClientOptions,
  CrmLeadFields,
  OutboundDeal,
  OutboundLead,
  OutboundRemoval,
  PushOutcome,
  RemoteDeal,
  RemoteRecord,
} from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { BATCH_SIZE, BatchAnswer, batchUpsert, chunks, IdPropertyMissing, ObjectType, writeObjects } from './hubspot-batch';
import { remoteOf, searchChanges } from './hubspot-changes';
import { HubSpotHttp } from './hubspot-http';
import { HubSpotSetup } from './hubspot-setup';
import {
  companyKeyOf,
  companyProperties,
  CONTACT_READ_PROPERTIES,
  contactProperties,
  DEAL_READ_PROPERTIES,
  dealFieldsOf,
  dealProperties,
  HubSpotProperties,
  leadFieldsOf,
} from './hubspot-mapping';

const DEFAULT_MAX_WAIT_MS = 30_000;
const DEFAULT_REQUESTS_PER_10S = 100;

interface AssociationResult {
  from?: { id?: string };
  to?: { id?: string };
}

/**
 * The CrmClient of HubSpot (CRM API v3 objects, properties and search; v4 associations), over
 * HubSpotHttp. A lead is a contact and a company (one per company name, shared by its leads),
 * associated with each other; a deal is a deal associated with its lead's contact and company.
 * Every record carries our id in `sales_pipeline_id`, a unique-value property open() makes sure of
 * (hubspot-setup.ts: once per account and process; again when a write says it is gone, and that
 * write is tried once more). A contact or deal already linked to a HubSpot record is written by that record's id
 * (it may have been made in HubSpot, without our id yet); the others, and companies, by batch
 * upsert on `sales_pipeline_id`, so a repeated push updates rather than duplicates (hubspot-batch.ts).
 */
export function createHubSpotClient(credentials: Record<string, string>, settings: ProviderSettings, options: CrmClientOptions = {}): CrmClient {
  const token = credentials.access_token ?? '';
  const http = new HubSpotHttp(token, settings, {
    maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    requestsPer10s: options.hubspotRequestsPer10s ?? DEFAULT_REQUESTS_PER_10S,
  });
  return new HubSpotClient(http, new HubSpotSetup(http, settings.hubspotApiUrl, token), options.changesSettleMs ?? CHANGES_SETTLE_MS);
}

class HubSpotClient implements CrmClient {
  readonly provider = 'hubspot' as const;
  readonly batchSize = BATCH_SIZE;

  constructor(
    private readonly http: HubSpotHttp,
    private readonly setup: HubSpotSetup,
    private readonly settleMs: number,
  ) {}

  open(): Promise<void> {
    return this.setup.ensure();
  }

  async upsertLeads(leads: OutboundLead[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const chunk of chunks(leads)) outcomes.push(...(await this.withIdProperty(() => this.upsertLeadChunk(chunk))));
    return outcomes;
  }

  /**
   * Runs a chunk's writes; when HubSpot says our id property is gone (deleted there since it was
   * set up), sets it up again and runs them once more. Writing again is safe: every write is an
   * upsert by our id or an update by record id.
   */
  private async withIdProperty<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof IdPropertyMissing)) throw error;
      this.setup.forget();
      await this.setup.ensure();
      return write();
    }
  }

  private async upsertLeadChunk(leads: OutboundLead[]): Promise<PushOutcome[]> {
    const contacts = await writeObjects(
      this.http,
      'contacts',
      leads.map((lead) => ({ key: lead.id, recordId: lead.external.contact, properties: contactProperties(lead.id, lead.fields) })),
    );
    // One company input per key: HubSpot refuses a batch that names one id twice.
    const companyInputs = new Map<string, HubSpotProperties>();
    for (const lead of leads) {
      if (!('id' in contacts.get(lead.id)!)) continue;
      const key = companyKeyOf(lead.fields);
      if (!companyInputs.has(key)) companyInputs.set(key, companyProperties(lead.fields));
    }
    const companies = await batchUpsert(
      this.http,
      'companies',
      [...companyInputs].map(([key, properties]) => ({ key, properties })),
    );
    const pairs: Array<[string, string]> = [];
    for (const lead of leads) {
      const contact = contacts.get(lead.id)!;
      const company = companies.get(companyKeyOf(lead.fields));
      if ('id' in contact && company && 'id' in company) pairs.push([contact.id, company.id]);
    }
    const associated = await this.associate('contacts', 'companies', pairs);
    return leads.map((lead): PushOutcome => {
      const contact = contacts.get(lead.id)!;
      if ('error' in contact) return { id: lead.id, error: `contact: ${contact.error}` };
      const company = companies.get(companyKeyOf(lead.fields))!;
      if ('error' in company) return { id: lead.id, external: { contact: contact.id }, error: `company: ${company.error}` };
      const external = { contact: contact.id, company: company.id };
      const failed = associated.get(`${contact.id}>${company.id}`);
      return failed === undefined ? { id: lead.id, external } : { id: lead.id, external, error: `associating the contact with its company: ${failed}` };
    });
  }

  async upsertDeals(deals: OutboundDeal[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const chunk of chunks(deals)) outcomes.push(...(await this.withIdProperty(() => this.upsertDealChunk(chunk))));
    return outcomes;
  }

  private async upsertDealChunk(chunk: OutboundDeal[]): Promise<PushOutcome[]> {
    const written = await writeObjects(
      this.http,
      'deals',
      chunk.map((deal) => ({ key: deal.id, recordId: deal.external.deal, properties: dealProperties(deal.id, deal.fields) })),
    );
    const toContacts: Array<[string, string]> = [];
    const toCompanies: Array<[string, string]> = [];
    for (const deal of chunk) {
      const record = written.get(deal.id)!;
      if (!('id' in record)) continue;
      if (deal.lead?.external.contact) toContacts.push([record.id, deal.lead.external.contact]);
      if (deal.lead?.external.company) toCompanies.push([record.id, deal.lead.external.company]);
    }
    const failures = new Map([...(await this.associate('deals', 'contacts', toContacts)), ...(await this.associate('deals', 'companies', toCompanies))]);
    return chunk.map((deal): PushOutcome => {
      const record = written.get(deal.id)!;
      if ('error' in record) return { id: deal.id, error: record.error };
      const failed = [deal.lead?.external.contact, deal.lead?.external.company].map((to) => failures.get(`${record.id}>${to}`)).find(Boolean);
      return failed === undefined
        ? { id: deal.id, external: { deal: record.id } }
        : { id: deal.id, external: { deal: record.id }, error: `associating the deal: ${failed}` };
    });
  }

  archiveLeads(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    // The company stays: other leads of the same company may share it.
    return this.archive('contacts', 'contact', removals);
  }

  archiveDeals(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    return this.archive('deals', 'deal', removals);
  }

  async changedLeads(cursor: string | null): Promise<ChangePage<RemoteRecord<CrmLeadFields>>> {
    const page = await searchChanges(this.http, 'contacts', CONTACT_READ_PROPERTIES, cursor, this.settleMs);
    return {
      ...page,
      records: page.results.map((object) => ({
        ...remoteOf(object, 'contacts'),
        external: { contact: object.id },
        fields: leadFieldsOf(object.properties ?? {}),
      })),
    };
  }

  /** leadExternal is left out: a search answer holds no associations, and reading them costs a call per page. */
  async changedDeals(cursor: string | null): Promise<ChangePage<RemoteDeal>> {
    const page = await searchChanges(this.http, 'deals', DEAL_READ_PROPERTIES, cursor, this.settleMs);
    return {
      ...page,
      records: page.results.map((object) => ({
        ...remoteOf(object, 'deals'),
        external: { deal: object.id },
        fields: dealFieldsOf(object.properties ?? {}),
      })),
    };
  }

  /** POST /crm/v4/associations/{from}/{to}/batch/associate/default: the pairs (`from>to`) it did not make, with the reason. */
  private async associate(fromType: ObjectType, toType: ObjectType, pairs: Array<[string, string]>): Promise<Map<string, string>> {
    const failures = new Map<string, string>();
    for (const chunk of chunks(pairs)) {
      const answer = await this.http.post<BatchAnswer<AssociationResult>>(
        `/crm/v4/associations/${fromType}/${toType}/batch/associate/default`,
        { inputs: chunk.map(([from, to]) => ({ from: { id: from }, to: { id: to } })) },
        // HubSpot's OpenAPI document exempts this endpoint from the ten-secondly limit.
        'none',
      );
      const made = new Set((answer.body?.results ?? []).map((result) => `${result.from?.id}>${result.to?.id}`));
      const reason = answer.status >= 400 ? answer.reason : (answer.body?.errors?.[0]?.message ?? 'HubSpot did not make the association');
      for (const [from, to] of chunk) if (!made.has(`${from}>${to}`)) failures.set(`${from}>${to}`, reason);
    }
    return failures;
  }

  /** POST …/batch/archive; a record without an id here, or gone there already (404), is archived. */
  private async archive(objectType: ObjectType, key: string, removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const chunk of chunks(removals)) {
      const inputs = chunk.flatMap((removal) => (removal.external[key] ? [{ id: removal.external[key] }] : []));
      const answer = inputs.length === 0 ? undefined : await this.http.post(`/crm/v3/objects/${objectType}/batch/archive`, { inputs });
      const refused = answer && answer.status >= 400 && answer.status !== 404 ? answer.reason : undefined;
      for (const removal of chunk) outcomes.push(refused && removal.external[key] ? { id: removal.id, error: refused } : { id: removal.id });
    }
    return outcomes;
  }
}

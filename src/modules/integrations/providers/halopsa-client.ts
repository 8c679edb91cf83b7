/**
 * The HaloPSA client of the sync engine: push only. A lead's company becomes a HaloPSA client,
 * matched (same name, or the domain of its website or contact e-mail) or made
 * (halopsa-companies.ts); a deal an opportunity of its lead's client that follows its name,
 * value, status and target date; a won deal's latest issued proposal, once, its delivery record
 * (halopsa-delivery.ts). Calls, pacing and retries: halopsa-http.ts.
 *
 * Settings (the integration's `settings`, handed to createHaloPsaClient as options):
 * - `deliveryRecord` (settings.delivery_record): what a won deal's proposal becomes, `"contract"`
 *   (the default, also when unset or empty: a HaloPSA client contract, linked as `contract`) or
 *   `"ticket"` (a HaloPSA ticket, linked as `ticket`). Any other value stops the run at open()
 *   with CrmSetupIncomplete naming the accepted values.
 * - `requestsPer5Minutes`: the tenant's API requests per rolling five minutes (default 300,
 *   HaloPSA's limit on hosted instances).
 * - the stage map (settings.stageMap, applied by the engine): our stages onto HaloPSA status
 *   names, DEFAULT_HaloPSA_STAGE_MAP unless set; the client looks each name up once per run.
 *
 * Crash safety: each opportunity carries our deal id in `third_party_id_string`, the field GET
 * /api/Opportunities filters on (`?third_party_id_string=`); before an opportunity is made it is
 * looked for by that id, so a push repeated after a crash (made at HaloPSA, never linked here)
 * updates the first instead of making a second. A delivery ticket carries our proposal id the
 * same way, a delivery contract is found by its ref (the proposal number) among the client's
 * contracts, and a client by its name.
 */
import {
  ChangePage,
  CrmClient,
  CrmClientOptions,
  CrmLeadFields,
  CrmSetupIncomplete,
  CrmUnavailable,
  DeliveryOrder,
  OutboundDeal,
  OutboundLead,
  OutboundRemoval,
  PushOutcome,
  RemoteDeal,
  RemoteRecord,
} from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { HaloCompanies } from './halopsa-companies';
import { hasDeliveryRecord, makeDeliveryRecord } from './halopsa-delivery';
import { DEFAULT_REQUESTS_PER_5_MINUTES, HaloPsaHttp, halopsaReason } from './halopsa-http';
import { deliveryKindOf, HALO_DELIVERY_KINDS, HaloDeliveryKind, HaloTicket, nameKey, opportunityBody } from './halopsa-mapping';

export { DEFAULT_HaloPSA_STAGE_MAP } from './halopsa-mapping';

/** How the HaloPSA client is made, besides the CrmClient options: the integration's settings it needs. */
export interface HaloPsaClientOptions extends CrmClientOptions {
  /** settings.delivery_record: 'contract' (default) or 'ticket'. */
  deliveryRecord?: string | null;
  /** HaloPSA's requests per rolling five minutes for the tenant; default 300. */
  requestsPer5Minutes?: number;
}

const DEFAULT_MAX_WAIT_MS = 30_000;
/** HaloPSA has no batch upsert: the engine hands over this many at most, and they are written one by one. */
const BATCH_SIZE = 50;

export function createHaloPsaClient(credentials: Record<string, string>, settings: ProviderSettings, options: HaloPsaClientOptions = {}): CrmClient {
  const http = new HaloPsaHttp(credentials, settings, {
    maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    requestsPer5Minutes: options.requestsPer5Minutes ?? DEFAULT_REQUESTS_PER_5_MINUTES,
  });
  return new HaloPsaClient(http, options.deliveryRecord);
}

const emptyPage = <Record>(): ChangePage<Record> => ({ records: [], cursor: null, more: false });

class HaloPsaClient implements CrmClient {
  readonly provider = 'halopsa' as const;
  readonly batchSize = BATCH_SIZE;
  private readonly companies: HaloCompanies;
  private readonly deliveryKind: HaloDeliveryKind | undefined;
  /** Status ids by lower-case name, read once per run. */
  private statuses?: Map<string, number>;

  constructor(
    private readonly http: HaloPsaHttp,
    private readonly deliveryRecord: string | null | undefined,
  ) {
    this.companies = new HaloCompanies(http);
    this.deliveryKind = deliveryKindOf(deliveryRecord);
  }

  async open(): Promise<void> {
    if (!this.deliveryKind) {
      throw new CrmSetupIncomplete(
        `settings.delivery_record is "${this.deliveryRecord}"; HaloPSA's delivery record is one of ${HALO_DELIVERY_KINDS.map((kind) => `"${kind}"`).join(', ')}`,
      );
    }
    await this.http.authenticate();
    await this.statusIds();
  }

  async upsertLeads(leads: OutboundLead[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const lead of leads) {
      const company = lead.external.company;
      // Linked already: the customer's client stays as the MSP keeps it (we never rename it).
      if (company) {
        outcomes.push({ id: lead.id, external: { company } });
        continue;
      }
      const resolved = await this.companies.resolve(lead.fields);
      outcomes.push('error' in resolved ? { id: lead.id, error: resolved.error } : { id: lead.id, external: { company: String(resolved.id) } });
    }
    return outcomes;
  }

  async upsertDeals(deals: OutboundDeal[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const deal of deals) outcomes.push(await this.upsertDeal(deal));
    return outcomes;
  }

  private async upsertDeal(deal: OutboundDeal): Promise<PushOutcome> {
    const clientId = Number(deal.lead?.external.company);
    if (!deal.lead?.external.company || !Number.isInteger(clientId)) {
      return { id: deal.id, error: "the deal has no lead synced to HaloPSA; a HaloPSA opportunity needs its lead's company as a client" };
    }
    const statusId = (await this.statusIds()).get(nameKey(deal.fields.stage));
    if (statusId === undefined) {
      return {
        id: deal.id,
        error: `HaloPSA has no status named "${deal.fields.stage}"; add it (Configuration › Tickets › Statuses) or map this stage onto one it has in the integration's stage map`,
      };
    }
    const body = opportunityBody(deal.id, deal.fields, clientId, statusId);
    let opportunityId = deal.external.opportunity ? Number(deal.external.opportunity) : undefined;
    if (opportunityId !== undefined) {
      const updated = await this.http.post<HaloTicket>('/api/Opportunities', [{ id: opportunityId, ...body }]);
      // Deleted at HaloPSA meanwhile: found by our id or made again below.
      if (updated.status === 404) opportunityId = undefined;
      else if (updated.status >= 400) return { id: deal.id, error: `HaloPSA refused the opportunity: ${updated.reason}` };
    }
    if (opportunityId === undefined) {
      const written = await this.writeByOurId(deal.id, body);
      if ('error' in written) return { id: deal.id, error: written.error };
      opportunityId = written.id;
    }
    // The delivery record already linked stays in the links as it is.
    const external: Record<string, string> = { ...deal.external, opportunity: String(opportunityId) };
    if (!deal.delivery || hasDeliveryRecord(deal.external)) return { id: deal.id, external };
    const made = await makeDeliveryRecord(
      this.http,
      this.deliveryKind ?? 'contract',
      deal as OutboundDeal & { delivery: DeliveryOrder },
      clientId,
      opportunityId,
    );
    if ('error' in made) return { id: deal.id, external, error: `delivery record: ${made.error}` };
    return { id: deal.id, external: { ...external, [this.deliveryKind ?? 'contract']: made.id } };
  }

  /** The opportunity that carries our deal id, updated, or a new one. */
  private async writeByOurId(dealId: string, body: Record<string, unknown>): Promise<{ id: number } | { error: string }> {
    const query = new URLSearchParams({ third_party_id_string: dealId, pageinate: 'true', page_size: '10', page_no: '1' });
    const found = await this.http.get<{ tickets?: HaloTicket[] }>(`/api/Opportunities?${query}`);
    if (found.status >= 400) return { error: `HaloPSA would not search its opportunities: ${found.reason}` };
    const existing = (found.body?.tickets ?? []).find((ticket) => ticket.third_party_id_string === dealId);
    const written = await this.http.post<HaloTicket | HaloTicket[]>('/api/Opportunities', [existing ? { id: existing.id, ...body } : body]);
    if (written.status >= 400) return { error: `HaloPSA refused the opportunity: ${written.reason}` };
    const record = Array.isArray(written.body) ? written.body[0] : written.body;
    if (typeof record?.id !== 'number') return { error: `HaloPSA answered ${written.status} to the opportunity without its id` };
    return { id: record.id };
  }

  /** Companies are the MSP's customers, kept whatever happens to a lead here: nothing is called. */
  archiveLeads(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    return Promise.resolve(removals.map((removal) => ({ id: removal.id })));
  }

  /** The opportunity is deleted (DELETE /api/Opportunities/{id}); gone already is success. A delivery record is work under way and stays. */
  async archiveDeals(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const removal of removals) {
      const id = removal.external.opportunity;
      if (!id) {
        outcomes.push({ id: removal.id });
        continue;
      }
      const reason = new URLSearchParams({ reason: 'Deleted in Sales Pipeline' });
      const answer = await this.http.api('DELETE', `/api/Opportunities/${encodeURIComponent(id)}?${reason}`);
      const refused = answer.status >= 400 && answer.status !== 404;
      outcomes.push(
        refused ? { id: removal.id, error: `HaloPSA would not delete the opportunity: ${this.http.clean(halopsaReason(answer))}` } : { id: removal.id },
      );
    }
    return outcomes;
  }

  /** Push only: HaloPSA is not read back. */
  changedLeads(): Promise<ChangePage<RemoteRecord<CrmLeadFields>>> {
    return Promise.resolve(emptyPage());
  }

  changedDeals(): Promise<ChangePage<RemoteDeal>> {
    return Promise.resolve(emptyPage());
  }

  /** HaloPSA's statuses (GET /api/Status) by lower-case name, read once per client. */
  private async statusIds(): Promise<Map<string, number>> {
    if (this.statuses) return this.statuses;
    const answer = await this.http.get<Array<{ id?: unknown; name?: unknown }> | { statuses?: Array<{ id?: unknown; name?: unknown }> }>('/api/Status');
    if (answer.status >= 400) throw new CrmUnavailable(`HaloPSA would not list its statuses: ${answer.reason}`);
    const list = Array.isArray(answer.body) ? answer.body : (answer.body?.statuses ?? []);
    const statuses = new Map<string, number>();
    for (const status of list) {
      if (typeof status.id === 'number' && typeof status.name === 'string' && !statuses.has(nameKey(status.name)))
        statuses.set(nameKey(status.name), status.id);
    }
    this.statuses = statuses;
    return statuses;
  }
}

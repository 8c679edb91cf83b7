import { defaultStageMap, type StageMap } from '../sync/stage-map';
import {
  ChangePage,
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
import { ConnectwiseCompanies } from './connectwise-companies';
import { ConnectwiseDelivery, DELIVERY_RECORD_KINDS, DeliveryRecordKind } from './connectwise-delivery';
import { CONNECTWISE, ConnectwiseHttp, replace } from './connectwise-http';
import { ConnectwiseOpportunities } from './connectwise-opportunities';
import { ConnectwiseSetup } from './connectwise-setup';

/**
 * The CrmClient of ConnectWise PSA (the Manage REST API of the MSP's site), push only:
 * - a lead is a company and a contact there (`{ company, contact }`, connectwise-companies.ts);
 * - a deal is an opportunity of its lead's company and contact (`{ opportunity }`, with our deal
 *   id in its `source` for crash safety, connectwise-opportunities.ts), and once won with an issued
 *   proposal, also a delivery record (`{ project }` or `{ agreement }`, connectwise-delivery.ts);
 * - removed leads leave their company and contact alone (they are the MSP's customer records); a
 *   removed deal's opportunity is deleted, or closed as Lost when ConnectWise keeps it (a project
 *   or agreement was made from it);
 * - nothing is read back: the change queries answer an empty page without a call.
 *
 * The integration's settings the engine passes in (ConnectwiseOptions):
 * - `deliveryRecord` (settings.delivery_record): 'project' (the default) or 'agreement'; another
 *   value fails open() with CrmSetupIncomplete.
 * - `salesRep` (settings.sales_rep): the identifier or e-mail of the member an opportunity names as
 *   its primary sales rep (ConnectWise requires one) when the deal's owner is not an active
 *   member's identifier or e-mail; without either, the deal is refused with the reason.
 */

/** ConnectWise PSA has no batch writes: the engine hands over this many objects at a time, written one by one. */
const BATCH_SIZE = 50;
const DEFAULT_MAX_WAIT_MS = 30_000;

/** Our stages onto a ConnectWise site's statuses and sales stages (stage-map.ts says why these). */
export const DEFAULT_CONNECTWISE_STAGE_MAP: StageMap = defaultStageMap('connectwise');

/** The integration's ConnectWise settings (settings.delivery_record, settings.sales_rep) besides the engine's limits. */
export interface ConnectwiseOptions extends CrmClientOptions {
  deliveryRecord?: string | null;
  salesRep?: string | null;
}

export function createConnectwiseClient(credentials: Record<string, string>, settings: ProviderSettings, options: ConnectwiseOptions = {}): CrmClient {
  const http = new ConnectwiseHttp(credentials, settings, options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
  return new ConnectwiseClient(http, options);
}

class ConnectwiseClient implements CrmClient {
  readonly provider = 'connectwise' as const;
  readonly batchSize = BATCH_SIZE;
  private readonly setup: ConnectwiseSetup;
  private readonly companies: ConnectwiseCompanies;
  private readonly opportunities: ConnectwiseOpportunities;

  constructor(
    private readonly http: ConnectwiseHttp,
    private readonly options: ConnectwiseOptions,
  ) {
    this.setup = new ConnectwiseSetup(http);
    this.companies = new ConnectwiseCompanies(http, this.setup);
    this.opportunities = new ConnectwiseOpportunities(http);
  }

  async open(): Promise<void> {
    this.deliveryKind();
    await this.setup.load();
  }

  async upsertLeads(leads: OutboundLead[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const lead of leads) outcomes.push(await this.companies.upsert(lead));
    return outcomes;
  }

  async upsertDeals(deals: OutboundDeal[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const deal of deals) outcomes.push(await this.upsertDeal(deal));
    return outcomes;
  }

  private async upsertDeal(deal: OutboundDeal): Promise<PushOutcome> {
    const companyId = Number(deal.lead?.external.company);
    const contactId = Number(deal.lead?.external.contact);
    if (!companyId || !contactId) {
      return {
        id: deal.id,
        error: `the deal has no lead synced to ${CONNECTWISE}; give the deal a lead (its company and contact are the opportunity's), and it follows once the lead is pushed`,
      };
    }
    const placement = this.setup.placement(deal.fields.stage);
    if (!placement) {
      return {
        id: deal.id,
        error: `'${deal.fields.stage}' is neither a sales stage nor an opportunity status in ${CONNECTWISE}; add it there, or map the stage to one it has (settings.stage_map)`,
      };
    }
    const salesRepId = await this.salesRep(deal.fields.owner);
    if (salesRepId === null) {
      return {
        id: deal.id,
        error: `${CONNECTWISE} needs a primary sales rep for the opportunity: set the deal's owner to an active member's identifier or e-mail, or the integration's sales_rep setting`,
      };
    }
    const written = await this.opportunities.write(deal, { companyId, contactId, salesRepId, placement });
    if ('error' in written) return { id: deal.id, error: `opportunity: ${written.error}` };
    const external: Record<string, string> = { opportunity: String(written.id) };
    const kind = this.deliveryKind();
    // Made once: a record linked already (of either kind, should the setting have changed since) is left alone.
    if (deal.delivery && !DELIVERY_RECORD_KINDS.some((made) => deal.external[made])) {
      const delivery = await new ConnectwiseDelivery(this.http, this.setup, kind).ensure({
        dealName: deal.fields.name,
        order: deal.delivery,
        opportunityId: written.id,
        companyId,
        contactId,
      });
      if ('error' in delivery) return { id: deal.id, external, error: `delivery: ${delivery.error}` };
      external[kind] = String(delivery.id);
    }
    return { id: deal.id, external };
  }

  /** Companies and contacts are the MSP's customers: never deleted by us. */
  async archiveLeads(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    return removals.map((removal) => ({ id: removal.id }));
  }

  /** DELETE the opportunity; one ConnectWise keeps (a project or agreement was made from it) is closed as lost instead; gone already is success. */
  async archiveDeals(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const removal of removals) {
      const id = removal.external.opportunity;
      const deleted = id ? await this.http.request({ method: 'DELETE', path: `/sales/opportunities/${id}` }) : undefined;
      if (!deleted || deleted.status < 300 || deleted.status === 404) {
        outcomes.push({ id: removal.id });
        continue;
      }
      const lost = this.setup.lostStatusId();
      const closed =
        lost === null ? deleted : await this.http.request({ method: 'PATCH', path: `/sales/opportunities/${id}`, body: [replace('status', { id: lost })] });
      outcomes.push(closed.status < 300 || closed.status === 404 ? { id: removal.id } : { id: removal.id, error: closed.reason });
    }
    return outcomes;
  }

  /** Push only: nothing is read back from a PSA. */
  async changedLeads(): Promise<ChangePage<RemoteRecord<CrmLeadFields>>> {
    return { records: [], cursor: null, more: false };
  }

  async changedDeals(): Promise<ChangePage<RemoteDeal>> {
    return { records: [], cursor: null, more: false };
  }

  private deliveryKind(): DeliveryRecordKind {
    const kind = (this.options.deliveryRecord ?? 'project').trim().toLowerCase();
    if (!(DELIVERY_RECORD_KINDS as readonly string[]).includes(kind)) {
      throw new CrmSetupIncomplete(`settings.delivery_record must be 'project' or 'agreement' for ${CONNECTWISE}, not '${this.options.deliveryRecord}'`);
    }
    return kind as DeliveryRecordKind;
  }

  /** The deal's owner as a member, else the integration's sales rep; null when neither is an active member. */
  private async salesRep(owner: string | null): Promise<number | null> {
    for (const who of [owner, this.options.salesRep]) {
      if (!who?.trim()) continue;
      const id = await this.setup.member(who);
      if (id !== null) return id;
    }
    return null;
  }
}

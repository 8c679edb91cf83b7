import { DELIVERY_KINDS, DeliveryKind, writeDelivery } from './autotask-delivery';
import { AutotaskCompanies } from './autotask-companies';
import { AutotaskHttp, Written } from './autotask-http';
import {
  dateTime,
  eq,
  FieldInformation,
  fit,
  MAX,
  OPEN_PROBABILITY,
  OPPORTUNITY_STATUS,
  OpportunityPicklists,
  OpportunityTarget,
  probabilityOf,
  today,
} from './autotask-mapping';
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
import type { ProviderSettings } from './provider-settings';

export { DEFAULT_Autotask_STAGE_MAP } from './autotask-mapping';
export { DELIVERY_KINDS } from './autotask-delivery';

/**
 * Autotask PSA as a push-only target of the sync engine (REST API v1.0, webservices*.autotask.net;
 * the HTTP side, limits and retries in autotask-http.ts).
 *
 * - A lead is its company (Companies, `external: { company }`): one already linked is used as it
 *   is, the MSP's record that we never rename; else one matched by name or domain, else a new
 *   prospect (autotask-companies.ts). Companies are never deleted: archiving a lead answers
 *   success without a call.
 * - A deal is an opportunity (Opportunities, `external: { opportunity }`) of its lead's company:
 *   title, amount, projected close date, and the stage map's value, a status label (Active,
 *   Closed, Lost…: DEFAULT_Autotask_STAGE_MAP) or one of the database's own stage labels, looked up
 *   once per client in the entity's picklists. The REST API cannot delete opportunities, so
 *   archiving a deal closes its opportunity as Lost.
 * - A won deal with an issued proposal (`deal.delivery`) gets its delivery record once, with the
 *   proposal's lines as charges (autotask-delivery.ts). The kind is the integration's
 *   settings.delivery_record, passed as `deliveryRecord`: 'contract' (the default:
 *   `external: { contract }`) or 'project' (`external: { project }`); any other value stops the
 *   run at open() with CrmSetupIncomplete.
 *
 * Crash safety: an opportunity carries our deal's id in `promotionName`. Autotask's opportunities
 * have no field meant for another system's id (projects have extProjectNumber, tickets
 * externalID), and user-defined fields exist only once an administrator adds them; promotionName
 * is a short free-text field the REST API filters on with `eq`, which no Autotask process fills.
 * Before an opportunity is created it is looked for by that id, so a push repeated after a crash
 * (made at Autotask, link never written here) updates the first instead of making a second; the
 * delivery record and its lines are found again the same way (autotask-delivery.ts), and a
 * create whose answer was lost is looked for before it is sent again (autotask-http.ts).
 */

/** How the client is made: CrmClientOptions, and Autotask's own. */
export interface AutotaskClientOptions extends CrmClientOptions {
  /** The integration's settings.delivery_record: 'contract' (default) or 'project'. */
  deliveryRecord?: string;
  /** The share of the database's hourly API requests left to its other integrations; default 0.1. */
  autotaskReserve?: number;
}

const DEFAULT_MAX_WAIT_MS = 30_000;
const DEFAULT_RESERVE = 0.1;
/** Autotask writes one record a call; the engine sends this many objects a call. */
const BATCH_SIZE = 50;

export function createAutotaskClient(credentials: Record<string, string>, settings: ProviderSettings, options: AutotaskClientOptions = {}): CrmClient {
  const http = new AutotaskHttp(credentials, settings, {
    maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    reserve: options.autotaskReserve ?? DEFAULT_RESERVE,
  });
  return new AutotaskClient(http, credentials.username ?? '', options.deliveryRecord ?? 'contract');
}

class AutotaskClient implements CrmClient {
  readonly provider = 'autotask' as const;
  readonly batchSize = BATCH_SIZE;
  /** The API user's resource: the owner Autotask requires of every company and opportunity we make. */
  private owner?: number;
  private picklists?: OpportunityPicklists;
  private companies?: AutotaskCompanies;

  constructor(
    private readonly http: AutotaskHttp,
    private readonly username: string,
    private readonly deliveryRecord: string,
  ) {}

  async open(): Promise<void> {
    if (!(DELIVERY_KINDS as readonly string[]).includes(this.deliveryRecord)) {
      throw new CrmSetupIncomplete(`settings.delivery_record for Autotask is 'contract' or 'project', not '${this.deliveryRecord}'`);
    }
    await this.http.connect();
    const [resource] = await this.http.query<{ id: number }>('Resources', [{ op: 'or', items: [eq('userName', this.username), eq('email', this.username)] }]);
    if (!resource) {
      throw new CrmSetupIncomplete(`Autotask has no resource for the API user ${this.username}; its companies and opportunities need one as their owner`);
    }
    this.owner = resource.id;
    this.companies = new AutotaskCompanies(this.http, resource.id);
    this.picklists = OpportunityPicklists.of((await this.http.get<{ fields?: FieldInformation[] }>('Opportunities/entityInformation/fields')).fields ?? []);
  }

  async upsertLeads(leads: OutboundLead[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const lead of leads) {
      // Linked already: that company is the lead's, whatever the MSP has made of it since.
      if (lead.external.company) {
        outcomes.push({ id: lead.id, external: { company: lead.external.company } });
        continue;
      }
      const company = await this.companies!.companyOf(lead.fields);
      outcomes.push('id' in company ? { id: lead.id, external: { company: String(company.id) } } : { id: lead.id, error: `company: ${company.error}` });
    }
    return outcomes;
  }

  async upsertDeals(deals: OutboundDeal[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const deal of deals) outcomes.push(await this.upsertDeal(deal));
    return outcomes;
  }

  archiveLeads(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    // A company is the MSP's customer record, maybe shared by other leads: it stays.
    return Promise.resolve(removals.map((removal) => ({ id: removal.id })));
  }

  async archiveDeals(removals: OutboundRemoval[]): Promise<PushOutcome[]> {
    const outcomes: PushOutcome[] = [];
    for (const removal of removals) {
      const id = Number(removal.external.opportunity);
      if (!removal.external.opportunity || !Number.isInteger(id)) {
        outcomes.push({ id: removal.id });
        continue;
      }
      const closed = await this.http.update('Opportunities', { id, status: OPPORTUNITY_STATUS.lost, probability: 0 });
      // Gone from Autotask already (404) is as good as closed.
      outcomes.push('error' in closed ? { id: removal.id, error: `opportunity: ${closed.error}` } : { id: removal.id });
    }
    return outcomes;
  }

  changedLeads(): Promise<ChangePage<RemoteRecord<CrmLeadFields>>> {
    return Promise.resolve({ records: [], cursor: null, more: false });
  }

  changedDeals(): Promise<ChangePage<RemoteDeal>> {
    return Promise.resolve({ records: [], cursor: null, more: false });
  }

  private async upsertDeal(deal: OutboundDeal): Promise<PushOutcome> {
    const companyId = Number(deal.lead?.external.company);
    if (!deal.lead?.external.company || !Number.isInteger(companyId)) {
      return { id: deal.id, error: "the deal has no lead synced to Autotask; link the deal to a lead, and it follows once the lead's company is pushed" };
    }
    const target = this.picklists!.target(deal.fields.stage);
    if (!target) {
      return {
        id: deal.id,
        error: `Autotask has no opportunity status or active stage named '${deal.fields.stage}'; correct the integration's stage_map`,
      };
    }
    const opportunity = await this.writeOpportunity(deal, companyId, target);
    if (!('id' in opportunity)) return { id: deal.id, error: `opportunity: ${'error' in opportunity ? opportunity.error : 'not made'}` };
    const external: ExternalIds = { opportunity: String(opportunity.id) };
    const kind = this.deliveryRecord as DeliveryKind;
    if (deal.external[kind]) external[kind] = deal.external[kind];
    else if (deal.delivery) {
      const context = { dealName: deal.fields.name, order: deal.delivery, companyId, opportunityId: opportunity.id };
      const record = await writeDelivery(this.http, kind, context);
      if ('error' in record) return { id: deal.id, external, error: `delivery ${kind}: ${record.error}` };
      external[kind] = String(record.id);
    }
    return { id: deal.id, external };
  }

  /** Updates the linked opportunity, else the one carrying the deal's id, else creates it. */
  private async writeOpportunity(deal: OutboundDeal, companyId: number, target: OpportunityTarget): Promise<Written> {
    const probability = probabilityOf(target.status);
    const fields = {
      companyID: companyId,
      title: fit(deal.fields.name, MAX.title),
      amount: deal.fields.amount,
      projectedCloseDate: dateTime(deal.fields.closeDate ?? today()),
      status: target.status,
      ...(target.stage === undefined ? {} : { stage: target.stage }),
      ...(probability === undefined ? {} : { probability }),
    };
    const linked = Number(deal.external.opportunity);
    if (deal.external.opportunity && Number.isInteger(linked)) {
      const updated = await this.http.update('Opportunities', { id: linked, ...fields });
      // Deleted in Autotask since: made again below (found first, if this deal's was only unlinked).
      if (!('missing' in updated)) return updated;
    }
    const find = async () => (await this.http.query<{ id: number }>('Opportunities', [eq('promotionName', deal.id)], 1))[0]?.id;
    const existing = await find();
    if (existing !== undefined) return this.http.update('Opportunities', { id: existing, ...fields });
    return this.http.create(
      'Opportunities',
      {
        ...fields,
        stage: target.stage ?? this.picklists!.defaultStage,
        probability: probability ?? OPEN_PROBABILITY,
        startDate: dateTime(today()),
        cost: 0,
        useQuoteTotals: false,
        ownerResourceID: this.owner,
        promotionName: deal.id,
      },
      find,
    );
  }
}

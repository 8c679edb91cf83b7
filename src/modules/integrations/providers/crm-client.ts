/**
 * What the sync engine asks of a CRM, whichever it is (HubSpot, Salesforce). The engine decides
 * what to push and pull and keeps the links, cursors and runs; a client only speaks its provider's
 * API: batching, pacing under the provider's limits, Retry-After, token refresh, and the mapping
 * of our fields onto the provider's properties.
 *
 * Every object we push carries our id in a provider field of its own (HubSpot: the unique-value
 * property `sales_pipeline_id` on contacts, companies and deals; Salesforce: the External ID field
 * `Sales_Pipeline_Id__c` on Lead and Opportunity), and is written with the provider's upsert by
 * that field. A push repeated after a crash therefore updates what the first one created instead
 * of creating it twice, and a record read back names the object it came from.
 */

/** Our objects that sync. */
export type CrmObjectKind = 'lead' | 'deal';

/** The CRMs: two-way sync. */
export type CrmProvider = 'hubspot' | 'salesforce';
/** The PSAs: push only (we are the source of truth for selling; the PSA for delivering). */
export type PsaProvider = 'connectwise' | 'autotask' | 'halopsa';
/** Every provider the sync engine pushes to. */
export type SyncProvider = CrmProvider | PsaProvider;

export const SYNC_PROVIDERS: readonly string[] = ['hubspot', 'salesforce', 'connectwise', 'autotask', 'halopsa'] satisfies SyncProvider[];
export const isSyncProvider = (provider: string): provider is SyncProvider => SYNC_PROVIDERS.includes(provider);
/** Whether the engine pulls from the provider too (the CRMs) or only pushes (the PSAs). */
export const pullsFrom = (provider: SyncProvider): provider is CrmProvider => provider === 'hubspot' || provider === 'salesforce';

/**
 * The provider's ids of the records one of our objects became, by the provider's object name:
 * a lead is `{ contact, company }` in HubSpot and `{ Lead }` in Salesforce; a deal is `{ deal }` /
 * `{ Opportunity }`. In a PSA a lead is `{ company }` and a deal `{ opportunity }`, plus, once won,
 * its delivery record by kind (`project`, `agreement`, `contract` or `ticket`).
 */
export type ExternalIds = Record<string, string>;

/** A lead's fields as a CRM holds them (null: empty there). */
export interface CrmLeadFields {
  company: string;
  contactEmail: string;
  contactName: string | null;
  industry: string | null;
  employees: number | null;
  website: string | null;
  country: string | null;
  source: string | null;
}

/** A deal's fields as a CRM holds them. `stage` is already the provider's value (the integration's stage map applied). */
export interface CrmDealFields {
  name: string;
  /** In major units (12500.5), as both CRMs store amounts. */
  amount: number;
  currency: string;
  stage: string;
  /** YYYY-MM-DD. */
  closeDate: string | null;
  owner: string | null;
}

export interface OutboundLead {
  id: string;
  fields: CrmLeadFields;
  /** What the links already know (empty for a first push). */
  external: ExternalIds;
}

export interface OutboundDeal {
  id: string;
  fields: CrmDealFields;
  external: ExternalIds;
  /** The deal's lead and its records, to associate with (HubSpot; a PSA's company); null when it has none or it has not been pushed. */
  lead: { id: string; external: ExternalIds } | null;
  /**
   * PSAs only: the work a won deal hands over, from its latest issued proposal. Set while the deal
   * is closed_won and has an issued proposal; the client makes the delivery record once (it is
   * then in `external`) and leaves it alone after.
   */
  delivery?: DeliveryOrder | null;
}

/** A won deal's latest issued proposal, as a PSA's delivery record is made from it. */
export interface DeliveryOrder {
  proposalId: string;
  /** The proposal's number (P-2026-000042): the record's name carries it. */
  number: string;
  title: string;
  currency: string;
  /** Major units, after discount and tax. */
  total: number;
  lines: Array<{ description: string; quantity: number; unitPrice: number; amount: number }>;
}

export interface OutboundRemoval {
  id: string;
  external: ExternalIds;
}

/** What happened to one object of a batch: its records' ids, or the provider's reason for refusing it. */
export interface PushOutcome {
  id: string;
  external?: ExternalIds;
  error?: string;
}

/** A record changed at the provider, as read by a changes query. */
export interface RemoteRecord<Fields> {
  external: ExternalIds;
  /** The value of our id field: set on records we created, null on records made in the CRM. */
  ourId: string | null;
  /** The provider's last-modified time (HubSpot hs_lastmodifieddate, Salesforce SystemModstamp). */
  modifiedAt: Date;
  /** The fields the record has; a required one it lacks (a contact without email) is left out. */
  fields: Partial<Fields>;
}

export interface RemoteDeal extends RemoteRecord<CrmDealFields> {
  /** The provider's ids of a lead's records it is associated with, when the provider reports them. */
  leadExternal?: ExternalIds;
}

/**
 * One page of records changed since a cursor, oldest change first. `cursor` is opaque to the
 * engine: it stores it once the page is applied and passes it back; null asks for everything.
 * Records at the cursor's own time may come again (the engine skips what it already holds).
 */
/**
 * How far behind now a change query's last cursor stays. A record becomes visible a little after
 * its modification time (HubSpot's search index catches up within seconds; a Salesforce record
 * carries the SystemModstamp of a transaction that commits later), so the last stretch is read
 * again by the next query rather than missed; the engine skips what it already holds.
 */
export const CHANGES_SETTLE_MS = 30_000;

export interface ChangePage<Record> {
  records: Record[];
  cursor: string | null;
  /** Whether another call would return more now. */
  more: boolean;
}

/**
 * A provider's client for the sync engine. A PSA's client is push only: its change queries answer
 * an empty page, and the engine does not pull from PSAs.
 */
export interface CrmClient {
  readonly provider: SyncProvider;
  /** How many objects one upsert or archive call takes at most (the provider's batch limit). */
  readonly batchSize: number;
  /**
   * Called once before a run's other calls: authenticates (Salesforce's refresh-token grant) and
   * makes sure what upserts need exists (HubSpot creates its `sales_pipeline_id` properties;
   * Salesforce checks for the External ID fields and says how to add them when they are missing).
   */
  open(): Promise<void>;
  upsertLeads(leads: OutboundLead[]): Promise<PushOutcome[]>;
  upsertDeals(deals: OutboundDeal[]): Promise<PushOutcome[]>;
  /** Archives (HubSpot) or deletes (Salesforce, to its recycle bin) what a deleted lead or deal became; gone already is success. */
  archiveLeads(removals: OutboundRemoval[]): Promise<PushOutcome[]>;
  archiveDeals(removals: OutboundRemoval[]): Promise<PushOutcome[]>;
  changedLeads(cursor: string | null): Promise<ChangePage<RemoteRecord<CrmLeadFields>>>;
  changedDeals(cursor: string | null): Promise<ChangePage<RemoteDeal>>;
}

/**
 * The provider refused the credentials (401, a revoked token, invalid_grant, 403 for missing
 * scopes): the integration moves to `error` and syncing pauses until a call succeeds.
 */
export class CrmAuthRefused extends Error {
  override readonly name = 'CrmAuthRefused';
}

/**
 * The provider could not be used now: no answer, 5xx after the client's retries, or 429 for longer
 * than the client waits. The run fails and the next one resumes; the integration stays connected.
 */
export class CrmUnavailable extends Error {
  override readonly name = 'CrmUnavailable';
  constructor(
    message: string,
    /** When the provider said to come back (Retry-After), in milliseconds from now. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/**
 * A budget of the provider's would be used up (Salesforce's daily API requests past the reserve we
 * leave the org's other tools): the run stops and resumes when the budget allows.
 */
export class CrmLimitReached extends Error {
  override readonly name = 'CrmLimitReached';
}

/**
 * The provider works, but the account there lacks something syncing needs and that we may not add
 * ourselves (Salesforce's External ID fields): the message says what to add, and where.
 */
export class CrmSetupIncomplete extends Error {
  override readonly name = 'CrmSetupIncomplete';
}

/** How a client is made: the configured hosts and deadline (ProviderSettings), and the limits it paces itself by. */
export interface CrmClientOptions {
  /** The longest a client waits at once (Retry-After, a full 10-second window) before giving up with CrmUnavailable; default 30 s. */
  maxWaitMs?: number;
  /** HubSpot: requests per rolling 10 seconds the app may make (100 for Free/Starter private apps, 190 for Professional/Enterprise); default 100. */
  hubspotRequestsPer10s?: number;
  /** Salesforce: the share of the org's daily API requests left to its other tools; the client stops before using it. Default 0.1. */
  salesforceReserve?: number;
  /** How far behind now the last cursor of a changes query stays (CHANGES_SETTLE_MS unless set). */
  changesSettleMs?: number;
}

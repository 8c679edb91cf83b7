import { defaultStageMap, type StageMap } from '../sync/stage-map';
import { domainOfWebsite } from './company-domains';
import type { CrmDealFields, CrmLeadFields, DeliveryOrder } from './crm-client';

/**
 * How our objects become HaloPSA records (halopsa.com/apidoc): a lead's company is a client
 * (`/api/Client`, the "Area" model), a deal an opportunity (`/api/Opportunities`, a ticket of an
 * opportunity type: the "Faults" model), a won deal's proposal a client contract
 * (`/api/ClientContract`, "ContractHeader") or a ticket (`/api/Tickets`, "Faults").
 */

/** Our stages onto HaloPSA status names (stage-map.ts says why these). */
export const DEFAULT_HaloPSA_STAGE_MAP: StageMap = defaultStageMap('halopsa');

/** What a won deal's proposal becomes (settings.delivery_record): a client contract (the default) or a ticket. */
export type HaloDeliveryKind = 'contract' | 'ticket';
export const HALO_DELIVERY_KINDS: readonly HaloDeliveryKind[] = ['contract', 'ticket'];

/** The setting's value read as a kind: unset is the default, a value not in HALO_DELIVERY_KINDS is undefined. */
export function deliveryKindOf(value: string | undefined | null): HaloDeliveryKind | undefined {
  if (value === undefined || value === null || value.trim() === '') return 'contract';
  const kind = value.trim().toLowerCase();
  return (HALO_DELIVERY_KINDS as readonly string[]).includes(kind) ? (kind as HaloDeliveryKind) : undefined;
}

/** A client as /api/Client lists and answers it (the fields we read). */
export interface HaloClient {
  id: number;
  name: string;
  website?: string | null;
  inactive?: boolean;
}

/** A ticket or opportunity as /api/Tickets and /api/Opportunities list and answer it. */
export interface HaloTicket {
  id: number;
  summary?: string;
  client_id?: number;
  third_party_id_string?: string | null;
}

/** A client contract as /api/ClientContract lists and answers it. */
export interface HaloContract {
  id: number;
  ref?: string | null;
  client_id?: number;
}

/** The lower-case name a company is matched by (HaloPSA keeps a customer's name as typed). */
export const nameKey = (name: string): string => name.trim().replace(/\s+/g, ' ').toLowerCase();

/** A new client: its name and website (HaloPSA keeps addresses, and so the country, on the client's sites). */
export function clientBody(fields: CrmLeadFields): Record<string, unknown> {
  const body: Record<string, unknown> = { name: fields.company.trim() };
  const domain = domainOfWebsite(fields.website);
  if (fields.website && domain) body.website = fields.website.trim();
  return body;
}

/**
 * An opportunity's fields: summary, client, value, status and target (expected close) date, and
 * our deal id in `third_party_id_string`, the field GET /api/Opportunities filters on
 * (`?third_party_id_string=`): a create repeated after a crash finds the first one by it.
 */
export function opportunityBody(dealId: string, fields: CrmDealFields, clientId: number, statusId: number): Record<string, unknown> {
  return {
    summary: fields.name,
    client_id: clientId,
    oppvalue: fields.amount,
    status_id: statusId,
    targetdate: fields.closeDate ? `${fields.closeDate}T00:00:00Z` : null,
    third_party_id_string: dealId,
  };
}

const money = (value: number, currency: string) => `${value.toFixed(2)} ${currency}`;

/** The proposal's lines as text: HaloPSA's contracts and tickets have no priced line object of their own to carry them. */
export function linesText(order: DeliveryOrder): string {
  const lines = order.lines.map(
    (line, index) => `${index + 1}. ${line.description} — ${line.quantity} × ${money(line.unitPrice, order.currency)} = ${money(line.amount, order.currency)}`,
  );
  return [`Proposal ${order.number}: ${order.title}`, ...lines, `Total (after discount and tax): ${money(order.total, order.currency)}`].join('\n');
}

/** The delivery record's name: the deal's, with the proposal's number (a contract's ref starts with the number, by which it is found again). */
export const contractRef = (order: DeliveryOrder, dealName: string): string => `${order.number} ${dealName}`.slice(0, 100).trim();
export const refIsFor = (ref: string | null | undefined, order: DeliveryOrder): boolean => ref === order.number || (ref ?? '').startsWith(`${order.number} `);
export const ticketSummary = (order: DeliveryOrder, dealName: string): string => `${dealName} — ${order.number}`;

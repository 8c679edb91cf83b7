import type { DeliveryOrder, OutboundDeal } from './crm-client';
import type { HaloPsaHttp } from './halopsa-http';
import { contractRef, HALO_DELIVERY_KINDS, HaloContract, HaloDeliveryKind, HaloTicket, linesText, refIsFor, ticketSummary } from './halopsa-mapping';

const PAGE_SIZE = 100;
/** A client with more contracts than this is not searched further for ours (it would have been among its newest). */
const MAX_CONTRACT_PAGES = 10;

/** Whether the deal's delivery record exists already (of either kind: a changed setting does not make a second one). */
export const hasDeliveryRecord = (external: Record<string, string>): boolean => HALO_DELIVERY_KINDS.some((kind) => external[kind] !== undefined);

/**
 * Makes a won deal's delivery record once, from its latest issued proposal:
 * - `contract` (the default): a client contract (POST /api/ClientContract) of the deal's client,
 *   its `ref` the proposal's number and the deal's name. A contract is found again by that ref
 *   among the client's contracts (GET /api/ClientContract?client_id=, the filter the API offers;
 *   contracts have no third-party id it filters on), so a create repeated after a crash does
 *   not make a second one.
 * - `ticket`: a ticket (POST /api/Tickets) of the client, named after the deal and the proposal
 *   number, with our proposal id in `third_party_id_string`, which GET /api/Tickets filters on
 *   (opportunities are tickets too and carry our deal id there, so the two never meet).
 * Either is linked to the opportunity it came from by HaloPSA's `createdfrom_id`. HaloPSA's
 * contracts and tickets have no priced line object of their own (a ticket's issued items are
 * stock items of the catalogue, a contract's billing plans charge rates), so the proposal's
 * lines, quantities, prices and total go into the contract's note or the ticket's details, one
 * line each, with our proposal and deal ids.
 */
export async function makeDeliveryRecord(
  http: HaloPsaHttp,
  kind: HaloDeliveryKind,
  deal: OutboundDeal & { delivery: DeliveryOrder },
  clientId: number,
  opportunityId: number,
): Promise<{ id: string } | { error: string }> {
  const order = deal.delivery;
  const text = `${linesText(order)}\n\nFrom Sales Pipeline: deal ${deal.id}, proposal ${order.proposalId}.`;
  return kind === 'contract' ? makeContract(http, deal, clientId, opportunityId, text) : makeTicket(http, deal, clientId, opportunityId, text);
}

async function makeContract(
  http: HaloPsaHttp,
  deal: OutboundDeal & { delivery: DeliveryOrder },
  clientId: number,
  opportunityId: number,
  note: string,
): Promise<{ id: string } | { error: string }> {
  for (let page = 1; page <= MAX_CONTRACT_PAGES; page++) {
    const query = new URLSearchParams({ client_id: String(clientId), pageinate: 'true', page_size: String(PAGE_SIZE), page_no: String(page) });
    const listed = await http.get<{ record_count?: number; contracts?: HaloContract[] }>(`/api/ClientContract?${query}`);
    if (listed.status >= 400) return { error: `HaloPSA would not list the client's contracts: ${listed.reason}` };
    const contracts = listed.body?.contracts ?? [];
    const ours = contracts.find((contract) => refIsFor(contract.ref, deal.delivery));
    if (ours) return { id: String(ours.id) };
    if (contracts.length < PAGE_SIZE || page * PAGE_SIZE >= (listed.body?.record_count ?? 0)) break;
  }
  const created = await http.post<HaloContract | HaloContract[]>('/api/ClientContract', [
    {
      client_id: clientId,
      ref: contractRef(deal.delivery, deal.fields.name),
      start_date: `${deal.fields.closeDate ?? new Date().toISOString().slice(0, 10)}T00:00:00Z`,
      note,
      createdfrom_id: opportunityId,
    },
  ]);
  return idOf(created, 'contract');
}

async function makeTicket(
  http: HaloPsaHttp,
  deal: OutboundDeal & { delivery: DeliveryOrder },
  clientId: number,
  opportunityId: number,
  details: string,
): Promise<{ id: string } | { error: string }> {
  const query = new URLSearchParams({ third_party_id_string: deal.delivery.proposalId, pageinate: 'true', page_size: '10', page_no: '1' });
  const listed = await http.get<{ tickets?: HaloTicket[] }>(`/api/Tickets?${query}`);
  if (listed.status >= 400) return { error: `HaloPSA would not search its tickets: ${listed.reason}` };
  const ours = (listed.body?.tickets ?? []).find((ticket) => ticket.third_party_id_string === deal.delivery.proposalId);
  if (ours) return { id: String(ours.id) };
  const created = await http.post<HaloTicket | HaloTicket[]>('/api/Tickets', [
    {
      summary: ticketSummary(deal.delivery, deal.fields.name),
      details,
      client_id: clientId,
      third_party_id_string: deal.delivery.proposalId,
      createdfrom_id: opportunityId,
    },
  ]);
  return idOf(created, 'ticket');
}

function idOf(created: { status: number; body: { id?: unknown } | Array<{ id?: unknown }> | undefined; reason: string }, kind: HaloDeliveryKind) {
  if (created.status >= 400) return { error: `HaloPSA refused the ${kind}: ${created.reason}` };
  const record = Array.isArray(created.body) ? created.body[0] : created.body;
  return typeof record?.id === 'number' ? { id: String(record.id) } : { error: `HaloPSA answered ${created.status} to the new ${kind} without its id` };
}

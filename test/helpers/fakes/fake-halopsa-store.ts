/**
 * The records of the fake HaloPSA (fake-halopsa.ts), shaped as the Halo API's OpenAPI document
 * (halopsa.com/apidoc; "Halo API" v2) names them: clients ("Area": id, name, website, inactive),
 * tickets ("Faults": opportunities are tickets of an opportunity type, so one table holds both,
 * with summary, details, client_id, status_id, oppvalue, targetdate, third_party_id_string,
 * createdfrom_id) and client contracts ("ContractHeader": ref, client_id, start_date, note,
 * createdfrom_id), plus the instance's statuses.
 */

export interface FakeHaloClient {
  id: number;
  name: string;
  website: string | null;
  inactive: boolean;
}

export interface FakeHaloTicket {
  id: number;
  summary: string;
  details: string;
  client_id: number;
  client_name: string;
  status_id: number;
  is_opportunity: boolean;
  oppvalue: number | null;
  targetdate: string | null;
  third_party_id_string: string | null;
  createdfrom_id: number | null;
  hasbeenclosed: boolean;
  dateclosed: string | null;
}

export interface FakeHaloContract {
  id: number;
  client_id: number;
  client_name: string;
  ref: string;
  start_date: string | null;
  note: string;
  createdfrom_id: number | null;
}

export interface FakeHaloStatus {
  id: number;
  name: string;
  /** Whether a ticket in this status is closed. */
  closes: boolean;
}

/**
 * A new instance's statuses: the ticket statuses HaloPSA installs (New, In Progress, Action
 * Required, With User, Closed with its fixed id 9) and the opportunity closures Won and Lost.
 */
export const DEFAULT_STATUSES: FakeHaloStatus[] = [
  { id: 1, name: 'New', closes: false },
  { id: 2, name: 'In Progress', closes: false },
  { id: 3, name: 'Action Required', closes: false },
  { id: 4, name: 'With User', closes: false },
  { id: 9, name: 'Closed', closes: true },
  { id: 21, name: 'Won', closes: true },
  { id: 22, name: 'Lost', closes: true },
];

/** What a write was refused for: HaloPSA answers 400 with its message, 404 for an id it does not hold. */
export class HaloRefusal extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

type Input = Record<string, unknown>;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const integer = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) ? value : null);

export class FakeHaloStore {
  readonly clients = new Map<number, FakeHaloClient>();
  readonly tickets = new Map<number, FakeHaloTicket>();
  readonly contracts = new Map<number, FakeHaloContract>();
  statuses: FakeHaloStatus[] = DEFAULT_STATUSES.map((status) => ({ ...status }));
  private nextId = { client: 11, ticket: 1001, contract: 501 };

  /** POST /api/Client: an item with an id updates that client, one without makes a new one; a name is required. */
  writeClient(input: Input): FakeHaloClient {
    const id = integer(input.id);
    const existing = id !== null && id > 0 ? this.clients.get(id) : undefined;
    if (id !== null && id > 0 && !existing) throw new HaloRefusal(404, `Client ${id} not found`);
    const name = text(input.name) ?? existing?.name ?? '';
    if (name.trim() === '') throw new HaloRefusal(400, 'Please enter a Client name');
    const client: FakeHaloClient = {
      id: existing?.id ?? this.nextId.client++,
      name,
      website: input.website === undefined ? (existing?.website ?? null) : text(input.website),
      inactive: typeof input.inactive === 'boolean' ? input.inactive : (existing?.inactive ?? false),
    };
    this.clients.set(client.id, client);
    return client;
  }

  /** POST /api/Opportunities and /api/Tickets: one table, an opportunity being a ticket of an opportunity type. */
  writeTicket(input: Input, opportunity: boolean): FakeHaloTicket {
    const id = integer(input.id);
    const existing = id !== null && id > 0 ? this.tickets.get(id) : undefined;
    if (id !== null && id > 0 && (!existing || existing.is_opportunity !== opportunity)) {
      throw new HaloRefusal(404, `${opportunity ? 'Opportunity' : 'Ticket'} ${id} not found`);
    }
    const clientId = input.client_id === undefined ? (existing?.client_id ?? null) : integer(input.client_id);
    const client = clientId === null ? undefined : this.clients.get(clientId);
    if (!client) throw new HaloRefusal(400, 'Please select a valid Client');
    const summary = text(input.summary) ?? existing?.summary ?? '';
    if (summary.trim() === '') throw new HaloRefusal(400, 'Please enter a Summary');
    const statusId = input.status_id === undefined ? (existing?.status_id ?? 1) : integer(input.status_id);
    const status = this.statuses.find((candidate) => candidate.id === statusId);
    if (!status) throw new HaloRefusal(400, `Status ${String(input.status_id)} is not valid`);
    const value = input.oppvalue === undefined ? (existing?.oppvalue ?? null) : typeof input.oppvalue === 'number' ? input.oppvalue : null;
    const ticket: FakeHaloTicket = {
      id: existing?.id ?? this.nextId.ticket++,
      summary,
      details: text(input.details) ?? existing?.details ?? '',
      client_id: client.id,
      client_name: client.name,
      status_id: status.id,
      is_opportunity: opportunity,
      oppvalue: value,
      targetdate: input.targetdate === undefined ? (existing?.targetdate ?? null) : text(input.targetdate),
      third_party_id_string: input.third_party_id_string === undefined ? (existing?.third_party_id_string ?? null) : text(input.third_party_id_string),
      createdfrom_id: input.createdfrom_id === undefined ? (existing?.createdfrom_id ?? null) : integer(input.createdfrom_id),
      hasbeenclosed: status.closes || (existing?.hasbeenclosed ?? false),
      dateclosed: status.closes ? (existing?.dateclosed ?? new Date().toISOString()) : null,
    };
    this.tickets.set(ticket.id, ticket);
    return ticket;
  }

  /** POST /api/ClientContract: a client and a ref are required. */
  writeContract(input: Input): FakeHaloContract {
    const id = integer(input.id);
    const existing = id !== null && id > 0 ? this.contracts.get(id) : undefined;
    if (id !== null && id > 0 && !existing) throw new HaloRefusal(404, `Contract ${id} not found`);
    const clientId = input.client_id === undefined ? (existing?.client_id ?? null) : integer(input.client_id);
    const client = clientId === null ? undefined : this.clients.get(clientId);
    if (!client) throw new HaloRefusal(400, 'Please select a valid Client');
    const ref = text(input.ref) ?? existing?.ref ?? '';
    if (ref.trim() === '') throw new HaloRefusal(400, 'Please enter a Contract Ref');
    const contract: FakeHaloContract = {
      id: existing?.id ?? this.nextId.contract++,
      client_id: client.id,
      client_name: client.name,
      ref,
      start_date: input.start_date === undefined ? (existing?.start_date ?? null) : text(input.start_date),
      note: text(input.note) ?? existing?.note ?? '',
      createdfrom_id: input.createdfrom_id === undefined ? (existing?.createdfrom_id ?? null) : integer(input.createdfrom_id),
    };
    this.contracts.set(contract.id, contract);
    return contract;
  }
}

/**
 * A list endpoint's paging (`pageinate`, `page_size`, `page_no` from 1): the page and the whole
 * count in `record_count`; without `pageinate`, every record (or the first `count`).
 */
export function page<Row>(rows: Row[], query: URLSearchParams): { rows: Row[]; paging: Record<string, number> } {
  if (query.get('pageinate') !== 'true') {
    const count = Number(query.get('count'));
    return { rows: Number.isInteger(count) && count > 0 ? rows.slice(0, count) : rows, paging: { record_count: rows.length } };
  }
  const size = Math.min(Math.max(Number(query.get('page_size')) || 50, 1), 100);
  const number = Math.max(Number(query.get('page_no')) || 1, 1);
  return { rows: rows.slice((number - 1) * size, number * size), paging: { page_no: number, page_size: size, record_count: rows.length } };
}

import type { DeliveryOrder } from './crm-client';
import { CONNECTWISE, ConnectwiseHttp } from './connectwise-http';
import type { ConnectwiseSetup } from './connectwise-setup';

/** The delivery record a won deal becomes (the integration's settings.delivery_record). */
export const DELIVERY_RECORD_KINDS = ['project', 'agreement'] as const;
export type DeliveryRecordKind = (typeof DELIVERY_RECORD_KINDS)[number];

const NAME_MAX = 100;
const PHASE_DESCRIPTION_MAX = 100;
/** A new project's planned length: ConnectWise requires an estimated end; its project manager sets the real one. */
const PROJECT_DAYS = 30;
const ALL = { pageSize: '1000', orderBy: 'id asc' };

export interface DeliveryParts {
  dealName: string;
  order: DeliveryOrder;
  opportunityId: number;
  companyId: number;
  contactId: number;
}

type Line = DeliveryOrder['lines'][number];

const money = (value: number, currency: string) => `${value.toFixed(2)} ${currency}`;
const lineText = (line: Line, currency: string) => `${line.quantity} × ${money(line.unitPrice, currency)} = ${money(line.amount, currency)}`;
const day = (offsetDays = 0) => `${new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10)}T00:00:00Z`;

/** "Acme renewal – P-2026-000042", the deal's name cut so that the proposal number always fits. */
function recordName(dealName: string, number: string): string {
  const suffix = ` – ${number}`;
  return `${dealName.slice(0, Math.max(0, NAME_MAX - suffix.length)).trim()}${suffix}`.slice(0, NAME_MAX);
}

/** The proposal and its lines as text, for the record's description or notes. */
function orderText(order: DeliveryOrder): string {
  const lines = order.lines.map((line) => `- ${line.description}: ${lineText(line, order.currency)}`);
  return [`Proposal ${order.number} "${order.title}" (Sales Pipeline), ${money(order.total, order.currency)} after discount and tax:`, ...lines].join('\n');
}

/** A multiset of keys: what of a list is there already, each taken once. */
function takeFrom(existing: string[]): (key: string) => boolean {
  const left = new Map<string, number>();
  for (const key of existing) left.set(key, (left.get(key) ?? 0) + 1);
  return (key) => {
    const count = left.get(key) ?? 0;
    if (count > 0) left.set(key, count - 1);
    return count > 0;
  };
}

/**
 * A won deal's delivery record, made from its latest issued proposal, once:
 * - `project` (the default): POST /project/projects on the site's first active project board,
 *   fixed fee, linked to the company, contact and opportunity, the proposal in its description;
 *   each line is a project phase (the project's own breakdown of work: the line's description,
 *   with quantity × unit price = amount in the phase's notes, since a phase has no price fields).
 * - `agreement`: POST /finance/agreements of the site's default agreement type, linked likewise,
 *   the proposal in its internal notes; each line is an addition (quantity, unit price, the
 *   line's description) of the active catalog item whose identifier or description is the line's
 *   description, as ConnectWise requires an addition to name a product; a line without one stays
 *   in the notes only.
 * Crash safety: a project or agreement names the opportunity it was made from, which the API
 * filters on (`conditions=opportunity/id=…`), and the opportunity is this deal's alone (it carries
 * our deal id). So a push repeated after a crash finds the record made before, and adds only the
 * phases or additions it lacks (each line is looked for by its description, quantity and price).
 */
export class ConnectwiseDelivery {
  constructor(
    private readonly http: ConnectwiseHttp,
    private readonly setup: ConnectwiseSetup,
    readonly kind: DeliveryRecordKind,
  ) {}

  /** The record's id, or why it could not be made whole. */
  async ensure(parts: DeliveryParts): Promise<{ id: number } | { error: string }> {
    return this.kind === 'project' ? this.project(parts) : this.agreement(parts);
  }

  private async project(parts: DeliveryParts): Promise<{ id: number } | { error: string }> {
    let id = await this.madeFrom('/project/projects', parts.opportunityId);
    if (id === null) {
      const board = await this.setup.projectBoardId();
      if (board === null) {
        return {
          error: `${CONNECTWISE} has no active project board for the won deal's project; add one, or set the integration's delivery_record to 'agreement'`,
        };
      }
      const created = await this.create('/project/projects', {
        name: recordName(parts.dealName, parts.order.number),
        company: { id: parts.companyId },
        contact: { id: parts.contactId },
        opportunity: { id: parts.opportunityId },
        board: { id: board },
        billingMethod: 'FixedFee',
        estimatedStart: day(),
        estimatedEnd: day(PROJECT_DAYS),
        description: orderText(parts.order),
      });
      if ('error' in created) return { error: `project: ${created.error}` };
      id = created.id;
    }
    const path = `/project/projects/${id}/phases`;
    const present = takeFrom(
      (await this.http.list<{ description: string; notes?: string | null }>(path, ALL)).map((phase) => `${phase.description}\n${phase.notes ?? ''}`),
    );
    for (const line of parts.order.lines) {
      const description = line.description.trim().slice(0, PHASE_DESCRIPTION_MAX) || 'Proposal line';
      const notes = lineText(line, parts.order.currency);
      if (present(`${description}\n${notes}`)) continue;
      const phase = await this.create(path, { description, notes });
      if ('error' in phase) return { error: `project phase "${description}": ${phase.error}` };
    }
    return { id };
  }

  private async agreement(parts: DeliveryParts): Promise<{ id: number } | { error: string }> {
    let id = await this.madeFrom('/finance/agreements', parts.opportunityId);
    if (id === null) {
      const type = await this.setup.agreementTypeId();
      if (type === null)
        return {
          error: `${CONNECTWISE} has no active agreement type for the won deal's agreement; add one, or set the integration's delivery_record to 'project'`,
        };
      const created = await this.create('/finance/agreements', {
        name: recordName(parts.dealName, parts.order.number),
        type: { id: type },
        company: { id: parts.companyId },
        contact: { id: parts.contactId },
        opportunity: { id: parts.opportunityId },
        startDate: day(),
        internalNotes: orderText(parts.order),
      });
      if ('error' in created) return { error: `agreement: ${created.error}` };
      id = created.id;
    }
    const path = `/finance/agreements/${id}/additions`;
    type Addition = { product?: { id: number }; description?: string | null; quantity?: number; unitPrice?: number };
    const key = (product: number, description: string, quantity: number, unitPrice: number) => `${product}\n${description}\n${quantity}\n${unitPrice}`;
    const present = takeFrom(
      (await this.http.list<Addition>(path, ALL)).map((addition) =>
        key(addition.product?.id ?? 0, addition.description ?? '', addition.quantity ?? 0, addition.unitPrice ?? 0),
      ),
    );
    for (const line of parts.order.lines) {
      const product = line.description.trim() ? await this.setup.catalogItem(line.description) : null;
      if (product === null || present(key(product, line.description, line.quantity, line.unitPrice))) continue;
      const addition = await this.create(path, {
        product: { id: product },
        billCustomer: 'Billable',
        quantity: line.quantity,
        unitPrice: line.unitPrice,
        description: line.description,
        effectiveDate: day(),
      });
      if ('error' in addition) return { error: `agreement addition "${line.description}": ${addition.error}` };
    }
    return { id };
  }

  /** The project or agreement made from the opportunity, if there is one. */
  private async madeFrom(path: string, opportunityId: number): Promise<number | null> {
    const [found] = await this.http.list<{ id: number }>(path, { conditions: `opportunity/id=${opportunityId}`, ...ALL, pageSize: '1' });
    return found?.id ?? null;
  }

  private async create(path: string, body: unknown): Promise<{ id: number } | { error: string }> {
    const answer = await this.http.request<{ id: number }>({ method: 'POST', path, body });
    return answer.status === 201 || answer.status === 200 ? { id: answer.body!.id } : { error: answer.reason };
  }
}

import type { AutotaskHttp } from './autotask-http';
import { addDays, dateTime, eq, fit, MAX, today } from './autotask-mapping';
import type { DeliveryOrder } from './crm-client';

/**
 * What a won deal's proposal becomes in Autotask (the integration's settings.delivery_record):
 * - `contract` (the default): a Time and Materials contract (Contracts), its lines contract
 *   charges (ContractCharges: billable items, billed with the contract's other work);
 * - `project`: a client project (Projects), its lines project charges (ProjectCharges).
 * Autotask has no line object of a contract or project that needs no catalogue entry (contract
 * services name a Service, project tasks carry no price); charges take a free name, quantity and
 * unit price, as a proposal line has them.
 */
export const DELIVERY_KINDS = ['contract', 'project'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/** Contract type 1 Time and Materials, status 1 Active; project type 5 Client, status 1 New; charge type 1 Operational (system picklists). */
const CONTRACT_TIME_AND_MATERIALS = 1;
const CONTRACT_ACTIVE = 1;
const PROJECT_CLIENT = 5;
const PROJECT_NEW = 1;
const CHARGE_OPERATIONAL = 1;
/** How long a new contract runs, and a new project is first planned for; the MSP adjusts both. */
const CONTRACT_DAYS = 365;
const PROJECT_DAYS = 90;

/**
 * Each kind's entity, and the field that finds it again: our proposal's number (P-2026-000042,
 * unique in an account) in the contract's contractNumber or the project's extProjectNumber, both
 * free reference fields the REST API filters on, together with the opportunity it was won from.
 */
const SHAPES = {
  contract: { entity: 'Contracts', marker: 'contractNumber', charges: 'ContractCharges', parentField: 'contractID', path: 'Contracts' },
  project: { entity: 'Projects', marker: 'extProjectNumber', charges: 'ProjectCharges', parentField: 'projectID', path: 'Projects' },
} as const;

export interface DeliveryContext {
  dealName: string;
  order: DeliveryOrder;
  companyId: number;
  opportunityId: number;
}

/**
 * The delivery record of a won deal, made once: found again by the proposal's number and the
 * opportunity (a push repeated after a crash), else created; then every proposal line it does not
 * yet carry is added as a charge, so a record whose lines were cut short by a crash is completed
 * rather than made twice. The record's id, or Autotask's reason for refusing it or a line.
 */
export async function writeDelivery(http: AutotaskHttp, kind: DeliveryKind, context: DeliveryContext): Promise<{ id: number } | { error: string }> {
  const shape = SHAPES[kind];
  const find = async () =>
    (await http.query<{ id: number }>(shape.entity, [eq('opportunityID', context.opportunityId), eq(shape.marker, context.order.number)], 1))[0]?.id;
  let id = await find();
  if (id === undefined) {
    const made = await http.create(shape.entity, kind === 'contract' ? contractOf(context) : projectOf(context), find);
    if ('error' in made) return made;
    id = made.id;
  }
  const refused = await writeLines(http, kind, id, context.order.lines);
  return refused === undefined ? { id } : { error: refused };
}

/** Adds the lines the record lacks (charges are told apart by name, and counted: two lines may share one). */
async function writeLines(http: AutotaskHttp, kind: DeliveryKind, parentId: number, lines: DeliveryOrder['lines']): Promise<string | undefined> {
  const shape = SHAPES[kind];
  const named = async (name?: string) =>
    http.query<{ id: number; name?: string }>(shape.charges, [eq(shape.parentField, parentId), ...(name === undefined ? [] : [eq('name', name)])]);
  const present = new Map<string, number>();
  for (const charge of await named()) present.set(charge.name ?? '', (present.get(charge.name ?? '') ?? 0) + 1);
  const unclaimed = new Map(present);
  for (const line of lines) {
    const name = fit(line.description, MAX.chargeName);
    const left = unclaimed.get(name) ?? 0;
    if (left > 0) {
      unclaimed.set(name, left - 1);
      continue;
    }
    const before = present.get(name) ?? 0;
    const made = await http.create(
      `${shape.path}/${parentId}/Charges`,
      {
        [shape.parentField]: parentId,
        name,
        description: fit(line.description, MAX.description),
        unitQuantity: line.quantity,
        unitPrice: line.unitPrice,
        unitCost: 0,
        datePurchased: dateTime(today()),
        chargeType: CHARGE_OPERATIONAL,
        isBillableToCompany: true,
      },
      // A charge of this name beyond those counted is the one whose answer was lost.
      async () => {
        const now = await named(name);
        return now.length > before ? now[now.length - 1].id : undefined;
      },
    );
    if ('error' in made) return `line "${name}": ${made.error}`;
    present.set(name, before + 1);
  }
  return undefined;
}

const recordName = (context: DeliveryContext) => fit(`${context.dealName} (${context.order.number})`, MAX.recordName);

function descriptionOf({ order }: DeliveryContext): string {
  const total = order.total.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const lines = order.lines.length === 1 ? '1 line' : `${order.lines.length} lines`;
  return fit(`Won with proposal ${order.number}, "${order.title}": ${lines}, ${total} ${order.currency} after discount and tax.`, MAX.description);
}

function contractOf(context: DeliveryContext): Record<string, unknown> {
  const start = today();
  return {
    companyID: context.companyId,
    opportunityID: context.opportunityId,
    contractName: recordName(context),
    contractNumber: context.order.number,
    contractType: CONTRACT_TIME_AND_MATERIALS,
    status: CONTRACT_ACTIVE,
    startDate: dateTime(start),
    endDate: dateTime(addDays(start, CONTRACT_DAYS)),
    timeReportingRequiresStartAndStopTimes: 1,
    estimatedRevenue: context.order.total,
    description: descriptionOf(context),
  };
}

function projectOf(context: DeliveryContext): Record<string, unknown> {
  const start = today();
  return {
    companyID: context.companyId,
    opportunityID: context.opportunityId,
    projectName: recordName(context),
    extProjectNumber: context.order.number,
    projectType: PROJECT_CLIENT,
    status: PROJECT_NEW,
    startDateTime: dateTime(start),
    endDateTime: dateTime(addDays(start, PROJECT_DAYS)),
    description: descriptionOf(context),
  };
}

import type { FakeAnswer } from './fake-provider';
import { FieldError, invalid, notFound, Reference, referenceId, required, tooLong } from './fake-connectwise-records';
import { ConnectWiseSite } from './fake-connectwise-site';

/**
 * The project and agreement endpoints of the fake ConnectWise PSA, with the required fields of
 * ConnectWise's published OpenAPI document:
 * - GET /service/boards (a project board is a board with projectFlag), GET /finance/agreements/types,
 *   GET /procurement/catalog (catalog items, by identifier or description).
 * - GET|POST /project/projects: name (≤100), board, company, billingMethod (ActualRates, FixedFee,
 *   NotToExceed, OverrideRate), estimatedStart and estimatedEnd required; opportunity optional.
 * - GET|POST /project/projects/{id}/phases: description (≤100) required; notes free text.
 * - GET|POST /finance/agreements: name (≤100), type, company and contact required.
 * - GET|POST /finance/agreements/{id}/additions: product (a catalog item) and billCustomer
 *   (Billable, DoNotBill, NoCharge) required.
 */

const BILLING_METHODS = ['ActualRates', 'FixedFee', 'NotToExceed', 'OverrideRate'];
const BILL_CUSTOMER = ['Billable', 'DoNotBill', 'NoCharge'];

type Input = Record<string, unknown>;

function reference(site: ConnectWiseSite, record: { id: number } | undefined): Reference | undefined {
  return record ? site.reference(record as Parameters<ConnectWiseSite['reference']>[0]) : undefined;
}

/** A required reference: its answer form, or an error pushed for the field. */
function need(errors: FieldError[], resource: string, field: string, value: unknown, found: (id: number) => { id: number } | undefined, site: ConnectWiseSite) {
  if (value === undefined || value === null) {
    errors.push(required(resource, field));
    return undefined;
  }
  const record = referenceId(value) === undefined ? undefined : found(referenceId(value)!);
  if (!record) errors.push({ code: 'InvalidField', message: `The ${field} was not found.`, resource, field });
  return reference(site, record);
}

function text(errors: FieldError[], resource: string, field: string, value: unknown, max: number, mandatory: boolean): string | null {
  const string = typeof value === 'string' ? value.trim() : '';
  if (!string) {
    if (mandatory) errors.push(required(resource, field));
    return null;
  }
  if (string.length > max) errors.push(tooLong(resource, field, max));
  return string;
}

export function deliveryRoute(site: ConnectWiseSite, method: string, path: string, query: URLSearchParams, body: unknown): FakeAnswer | undefined {
  // https://developer.connectwise.com/Products/Manage/REST (needs a developer account); each route by its tag there.
  if (method === 'GET') {
    const list = {
      '/service/boards': site.boards, // Boards
      '/finance/agreements/types': site.agreementTypes, // AgreementTypes
      '/procurement/catalog': site.catalog, // CatalogsItem
      '/project/projects': site.projects, // Projects
      '/finance/agreements': site.agreements, // Agreements
    }[path];
    if (list) return list.list(query);
  }
  const input = (body ?? {}) as Input;
  if (method === 'POST' && path === '/project/projects') return createProject(site, input); // Projects
  if (method === 'POST' && path === '/finance/agreements') return createAgreement(site, input); // Agreements
  // ProjectPhases
  const phases = /^\/project\/projects\/(\d+)\/phases$/.exec(path);
  if (phases) {
    const project = site.projects.get(Number(phases[1]));
    if (!project) return notFound(`Project with id ${phases[1]}`);
    if (method === 'GET')
      return site.phases.list(
        query,
        site.phases.all().filter((phase) => phase.projectId === project.id),
      );
    if (method !== 'POST') return undefined;
    const errors: FieldError[] = [];
    const description = text(errors, 'phase', 'description', input.description, 100, true);
    if (errors.length) return invalid('phase', errors);
    return {
      status: 201,
      body: site.phases.add({ projectId: project.id, description: description!, notes: typeof input.notes === 'string' ? input.notes : null }),
    };
  }
  // AgreementAdditions
  const additions = /^\/finance\/agreements\/(\d+)\/additions$/.exec(path);
  if (additions) {
    const agreement = site.agreements.get(Number(additions[1]));
    if (!agreement) return notFound(`Agreement with id ${additions[1]}`);
    if (method === 'GET')
      return site.additions.list(
        query,
        site.additions.all().filter((addition) => addition.agreementId === agreement.id),
      );
    if (method !== 'POST') return undefined;
    const errors: FieldError[] = [];
    const product = need(errors, 'addition', 'product', input.product, (id) => site.catalog.get(id), site);
    if (!BILL_CUSTOMER.includes(String(input.billCustomer))) errors.push(required('addition', 'billCustomer'));
    if (errors.length) return invalid('addition', errors);
    const addition = site.additions.add({
      agreementId: agreement.id,
      product: product!,
      description: typeof input.description === 'string' ? input.description : null,
      quantity: typeof input.quantity === 'number' ? input.quantity : 1,
      unitPrice: typeof input.unitPrice === 'number' ? input.unitPrice : 0,
      billCustomer: String(input.billCustomer),
      effectiveDate: typeof input.effectiveDate === 'string' ? input.effectiveDate : null,
    });
    return { status: 201, body: addition };
  }
  return undefined;
}

function createProject(site: ConnectWiseSite, input: Input): FakeAnswer {
  const errors: FieldError[] = [];
  const name = text(errors, 'project', 'name', input.name, 100, true);
  const board = need(errors, 'project', 'board', input.board, (id) => site.boards.all().find((one) => one.id === id && one.projectFlag), site);
  const company = need(errors, 'project', 'company', input.company, (id) => site.companies.get(id), site);
  if (!BILLING_METHODS.includes(String(input.billingMethod))) errors.push(required('project', 'billingMethod'));
  for (const field of ['estimatedStart', 'estimatedEnd']) {
    if (typeof input[field] !== 'string' || Number.isNaN(Date.parse(input[field] as string))) errors.push(required('project', field));
  }
  const contact = input.contact ? need(errors, 'project', 'contact', input.contact, (id) => site.contacts.get(id), site) : undefined;
  const opportunity = input.opportunity ? need(errors, 'project', 'opportunity', input.opportunity, (id) => site.opportunities.get(id), site) : undefined;
  if (errors.length) return invalid('project', errors);
  const project = site.projects.add({
    name: name!,
    company: company!,
    contact: contact ?? null,
    board: board!,
    billingMethod: String(input.billingMethod),
    estimatedStart: input.estimatedStart as string,
    estimatedEnd: input.estimatedEnd as string,
    opportunity: opportunity ?? null,
    description: typeof input.description === 'string' ? input.description : null,
    billingAmount: typeof input.billingAmount === 'number' ? input.billingAmount : null,
  });
  return { status: 201, body: project };
}

function createAgreement(site: ConnectWiseSite, input: Input): FakeAnswer {
  const errors: FieldError[] = [];
  const name = text(errors, 'agreement', 'name', input.name, 100, true);
  const type = need(errors, 'agreement', 'type', input.type, (id) => site.agreementTypes.get(id), site);
  const company = need(errors, 'agreement', 'company', input.company, (id) => site.companies.get(id), site);
  const contact = need(errors, 'agreement', 'contact', input.contact, (id) => site.contacts.get(id), site);
  const opportunity = input.opportunity ? need(errors, 'agreement', 'opportunity', input.opportunity, (id) => site.opportunities.get(id), site) : undefined;
  if (errors.length) return invalid('agreement', errors);
  const agreement = site.agreements.add({
    name: name!,
    type: type!,
    company: company!,
    contact: contact!,
    opportunity: opportunity ?? null,
    startDate: typeof input.startDate === 'string' ? input.startDate : null,
    internalNotes: typeof input.internalNotes === 'string' ? input.internalNotes : null,
    agreementStatus: 'Active',
  });
  return { status: 201, body: agreement };
}

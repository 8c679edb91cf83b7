import type { FakeAnswer } from './fake-provider';
import { FieldError, invalid, notFound, patchOperations, Reference, referenceId, required, tooLong } from './fake-connectwise-records';
import { ConnectWiseSite, CwOpportunity } from './fake-connectwise-site';

/**
 * The company and sales endpoints of the fake ConnectWise PSA (paths below /v4_6_release/apis/3.0),
 * with the required fields and lengths of ConnectWise's published OpenAPI document:
 * - GET /sales/stages, /sales/opportunities/statuses, /system/members, /company/countries,
 *   /company/communicationTypes (setup tables, read by conditions).
 * - GET|POST /company/companies: identifier (≤30, unique) and name (≤50) required, and at least one
 *   address field (addressLine1/2, city, state, zip or country).
 * - GET|POST /company/contacts: the company must exist; communicationItems are e-mail or phone entries.
 * - GET|POST /sales/opportunities, GET|PATCH|DELETE /sales/opportunities/{id}: name (≤100),
 *   company, contact and primarySalesRep required; source ≤50. A status with closedFlag stamps
 *   closedDate. DELETE of one a project or agreement was made from is refused with 409, as a
 *   record in use is.
 * - GET|POST /sales/opportunities/{id}/forecast, PATCH /sales/opportunities/{id}/forecast/{itemId}:
 *   the opportunity's forecast (one Forecast with its forecastItems) and its items (status and
 *   forecastType required).
 */

const FORECAST_TYPES = ['Product', 'Service', 'Agreement', 'Others1', 'Others2', 'SalesOrder', 'Proposal'];

export function salesRoute(site: ConnectWiseSite, method: string, path: string, query: URLSearchParams, body: unknown): FakeAnswer | undefined {
  // https://developer.connectwise.com/Products/Manage/REST (needs a developer account); each route by its tag there.
  if (method === 'GET') {
    const setup = {
      '/sales/stages': site.stages, // OpportunityStages
      '/sales/opportunities/statuses': site.statuses, // OpportunityStatuses
      '/system/members': site.members, // Members
      '/company/countries': site.countries, // Countries
      '/company/communicationTypes': site.communicationTypes, // CommunicationTypes
      '/company/companies': site.companies, // Companies
      '/company/contacts': site.contacts, // Contacts
      '/sales/opportunities': site.opportunities, // Opportunities
    }[path];
    if (setup) return setup.list(query);
  }
  if (method === 'POST' && path === '/company/companies') return createCompany(site, body); // Companies
  if (method === 'POST' && path === '/company/contacts') return createContact(site, body); // Contacts
  if (method === 'POST' && path === '/sales/opportunities') return createOpportunity(site, body); // Opportunities
  const opportunity = /^\/sales\/opportunities\/(\d+)(\/forecast(?:\/(\d+))?)?$/.exec(path);
  if (!opportunity) return undefined;
  const record = site.opportunities.get(Number(opportunity[1]));
  if (!record) return notFound(`Opportunity with id ${opportunity[1]}`);
  // OpportunityForecasts (/forecast), OpportunityForecastItems (/forecast/{id})
  if (opportunity[2]) return forecastRoute(site, record, method, opportunity[3] ? Number(opportunity[3]) : undefined, body);
  // Opportunities
  if (method === 'GET') return { status: 200, body: record };
  if (method === 'PATCH') return patchOpportunity(site, record, body);
  if (method === 'DELETE') {
    const inUse = [...site.projects.all(), ...site.agreements.all()].some((made) => made.opportunity?.id === record.id);
    if (inUse) return { status: 409, body: { code: 'Conflict', message: 'The opportunity is in use by a project or agreement and cannot be deleted.' } };
    site.opportunities.delete(record.id);
    site.forecastItems.all().forEach((item) => item.opportunity.id === record.id && site.forecastItems.delete(item.id));
    return { status: 204 };
  }
  return undefined;
}

function createCompany(site: ConnectWiseSite, body: unknown): FakeAnswer {
  const input = (body ?? {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  const identifier = typeof input.identifier === 'string' ? input.identifier.trim() : '';
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!identifier) errors.push(required('company', 'identifier'));
  else if (identifier.length > 30) errors.push(tooLong('company', 'identifier', 30));
  else if (site.companies.all().some((company) => company.identifier.toLowerCase() === identifier.toLowerCase())) {
    errors.push({ code: 'InvalidField', message: `The identifier ${identifier} is already in use.`, resource: 'company', field: 'identifier' });
  }
  if (!name) errors.push(required('company', 'name'));
  else if (name.length > 50) errors.push(tooLong('company', 'name', 50));
  if (typeof input.website === 'string' && input.website.length > 255) errors.push(tooLong('company', 'website', 255));
  const country = referenceId(input.country) === undefined ? undefined : site.countries.get(referenceId(input.country)!);
  if (input.country && !country) errors.push({ code: 'InvalidField', message: 'The country was not found.', resource: 'company', field: 'country' });
  const address = ['addressLine1', 'addressLine2', 'city', 'state', 'zip'].some((field) => typeof input[field] === 'string' && input[field] !== '');
  if (!address && !country) {
    errors.push({
      code: 'NullValue',
      message: 'At least one address field is required -- addressLine1, addressLine2, city, state, zip and/or country.',
      resource: 'company',
      field: 'addressLine1',
    });
  }
  if (errors.length) return invalid('company', errors);
  const company = site.companies.add({
    identifier,
    name,
    website: typeof input.website === 'string' ? input.website : null,
    country: country ? site.reference(country) : null,
    deletedFlag: false,
  });
  return { status: 201, body: company };
}

function createContact(site: ConnectWiseSite, body: unknown): FakeAnswer {
  const input = (body ?? {}) as Record<string, unknown>;
  const company = referenceId(input.company) === undefined ? undefined : site.companies.get(referenceId(input.company)!);
  if (input.company && !company)
    return invalid('contact', [{ code: 'InvalidField', message: 'The company was not found.', resource: 'contact', field: 'company' }]);
  const items = Array.isArray(input.communicationItems) ? (input.communicationItems as Array<Record<string, unknown>>) : [];
  const communicationItems = [];
  for (const item of items) {
    const type = referenceId(item.type) === undefined ? undefined : site.communicationTypes.get(referenceId(item.type)!);
    if (!type || typeof item.value !== 'string') {
      return invalid('contact', [
        { code: 'InvalidField', message: 'A communication item needs a known type and a value.', resource: 'contact', field: 'communicationItems' },
      ]);
    }
    communicationItems.push({
      id: communicationItems.length + 1,
      type: site.reference(type),
      value: item.value,
      defaultFlag: item.defaultFlag === true,
      communicationType: type.emailFlag ? 'Email' : 'Phone',
    });
  }
  const contact = site.contacts.add({
    firstName: typeof input.firstName === 'string' ? input.firstName : undefined,
    lastName: typeof input.lastName === 'string' ? input.lastName : undefined,
    company: company ? site.reference(company) : undefined,
    communicationItems,
  });
  return { status: 201, body: contact };
}

/** A reference in a body resolved against a collection: its answer form, or the field's error. */
function resolve<T extends { id: number }>(
  site: ConnectWiseSite,
  get: (id: number) => T | undefined,
  value: unknown,
  resource: string,
  field: string,
): Reference | FieldError | undefined {
  if (value === undefined || value === null) return undefined;
  const record = referenceId(value) === undefined ? undefined : get(referenceId(value)!);
  return record
    ? site.reference(record as unknown as Parameters<ConnectWiseSite['reference']>[0])
    : { code: 'InvalidField', message: `The ${field} was not found.`, resource, field };
}

const isError = (value: unknown): value is FieldError => typeof (value as FieldError | undefined)?.code === 'string';

function opportunityReferences(site: ConnectWiseSite, input: Record<string, unknown>) {
  return {
    company: resolve(site, (id) => site.companies.get(id), input.company, 'opportunity', 'company'),
    contact: resolve(site, (id) => site.contacts.get(id), input.contact, 'opportunity', 'contact'),
    primarySalesRep: resolve(site, (id) => site.members.get(id), input.primarySalesRep, 'opportunity', 'primarySalesRep'),
    stage: resolve(site, (id) => site.stages.get(id), input.stage, 'opportunity', 'stage'),
    status: resolve(site, (id) => site.statuses.get(id), input.status, 'opportunity', 'status'),
  };
}

function createOpportunity(site: ConnectWiseSite, body: unknown): FakeAnswer {
  const input = (body ?? {}) as Record<string, unknown>;
  const references = opportunityReferences(site, input);
  const errors: FieldError[] = Object.values(references).filter(isError);
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!name) errors.push(required('opportunity', 'name'));
  else if (name.length > 100) errors.push(tooLong('opportunity', 'name', 100));
  for (const field of ['company', 'contact', 'primarySalesRep'] as const) if (!references[field]) errors.push(required('opportunity', field));
  if (typeof input.source === 'string' && input.source.length > 50) errors.push(tooLong('opportunity', 'source', 50));
  if (errors.length) return invalid('opportunity', errors);
  const status = (references.status as Reference | undefined) ?? site.reference(site.statuses.all().find((candidate) => candidate.defaultFlag)!);
  const opportunity = site.opportunities.add({
    name,
    company: references.company as Reference,
    contact: references.contact as Reference,
    primarySalesRep: references.primarySalesRep as Reference,
    stage: (references.stage as Reference | undefined) ?? null,
    status,
    expectedCloseDate: typeof input.expectedCloseDate === 'string' ? input.expectedCloseDate : null,
    closedDate: null,
    source: typeof input.source === 'string' ? input.source : null,
    notes: typeof input.notes === 'string' ? input.notes : null,
  });
  stampClosed(site, opportunity);
  return { status: 201, body: opportunity };
}

function patchOpportunity(site: ConnectWiseSite, record: CwOpportunity, body: unknown): FakeAnswer {
  const operations = patchOperations(body);
  if (!operations) return { status: 400, body: { code: 'InvalidObject', message: 'The patch operations are not valid.' } };
  const changes: Record<string, unknown> = {};
  for (const { path, value } of operations) changes[path[0]] = path.length === 2 && path[1] === 'id' ? { id: value } : value;
  const references = opportunityReferences(site, changes);
  const errors: FieldError[] = Object.values(references).filter(isError);
  if ('name' in changes && (typeof changes.name !== 'string' || !changes.name.trim())) errors.push(required('opportunity', 'name'));
  if (typeof changes.name === 'string' && changes.name.length > 100) errors.push(tooLong('opportunity', 'name', 100));
  if (errors.length) return invalid('opportunity', errors);
  for (const [field, value] of Object.entries(changes)) {
    const reference = references[field as keyof typeof references];
    (record as Record<string, unknown>)[field] = reference ?? value;
  }
  stampClosed(site, record);
  site.opportunities.touch(record);
  return { status: 200, body: record };
}

/** A status with closedFlag closes the opportunity (closedDate); an open one reopens it. */
function stampClosed(site: ConnectWiseSite, opportunity: CwOpportunity): void {
  const closed = site.statuses.get(opportunity.status.id)?.closedFlag === true;
  if (closed && !opportunity.closedDate) opportunity.closedDate = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  if (!closed) opportunity.closedDate = null;
}

function forecastRoute(site: ConnectWiseSite, opportunity: CwOpportunity, method: string, itemId: number | undefined, body: unknown): FakeAnswer | undefined {
  const items = () => site.forecastItems.all().filter((item) => item.opportunity.id === opportunity.id);
  if (method === 'GET' && itemId === undefined) return { status: 200, body: { id: opportunity.id, forecastItems: items() } };
  const input = (body ?? {}) as Record<string, unknown>;
  if (method === 'POST' && itemId === undefined) {
    const status = resolve(site, (id) => site.statuses.get(id), input.status, 'forecastItem', 'status');
    const errors: FieldError[] = isError(status) ? [status] : status ? [] : [required('forecastItem', 'status')];
    if (!FORECAST_TYPES.includes(String(input.forecastType))) errors.push(required('forecastItem', 'forecastType'));
    if (typeof input.forecastDescription === 'string' && input.forecastDescription.length > 50) errors.push(tooLong('forecastItem', 'forecastDescription', 50));
    if (errors.length) return invalid('forecastItem', errors);
    const item = site.forecastItems.add({
      opportunity: site.reference(opportunity),
      forecastType: String(input.forecastType),
      forecastDescription: typeof input.forecastDescription === 'string' ? input.forecastDescription : null,
      revenue: typeof input.revenue === 'number' ? input.revenue : 0,
      cost: typeof input.cost === 'number' ? input.cost : 0,
      status: status as Reference,
      includeFlag: input.includeFlag !== false,
    });
    return { status: 201, body: item };
  }
  const item = itemId === undefined ? undefined : site.forecastItems.get(itemId);
  if (!item || item.opportunity.id !== opportunity.id) return notFound(`Forecast item with id ${itemId}`);
  if (method === 'GET') return { status: 200, body: item };
  if (method !== 'PATCH') return undefined;
  const operations = patchOperations(body);
  if (!operations) return { status: 400, body: { code: 'InvalidObject', message: 'The patch operations are not valid.' } };
  for (const { path, value } of operations) {
    if (path[0] === 'status') {
      const status = resolve(site, (id) => site.statuses.get(id), path[1] === 'id' ? { id: value } : value, 'forecastItem', 'status');
      if (!status || isError(status)) return invalid('forecastItem', [isError(status) ? status : required('forecastItem', 'status')]);
      item.status = status;
    } else (item as Record<string, unknown>)[path[0]] = value;
  }
  site.forecastItems.touch(item);
  return { status: 200, body: item };
}

import type { CrmDealFields, CrmLeadFields, OutboundDeal, OutboundLead, RemoteDeal, RemoteRecord } from './crm-client';

/**
 * Our leads and deals as Salesforce Lead and Opportunity records, both ways, and the SOQL that
 * reads what changed. Field names are the standard fields of the Object Reference for Salesforce
 * ("Lead", "Opportunity"); our id travels in the External ID field every upsert matches on (and
 * an update by Salesforce Id writes it into a record a person made there).
 */

export const EXTERNAL_ID_FIELD = 'Sales_Pipeline_Id__c';
export type SalesforceObject = 'Lead' | 'Opportunity';

/** A record as the REST API answers it in a query ("Execute a SOQL Query": records[] with attributes {type, url}). */
export type SalesforceRecord = Record<string, unknown> & { Id: string; SystemModstamp: string };

/** The fields a changes query selects, in order (everything the read-back mapping uses). */
export const LEAD_QUERY_FIELDS = [
  'Id',
  'FirstName',
  'LastName',
  'Email',
  'Company',
  'Industry',
  'NumberOfEmployees',
  'Website',
  'Country',
  'LeadSource',
  EXTERNAL_ID_FIELD,
  'SystemModstamp',
];
export const DEAL_QUERY_FIELDS = ['Id', 'Name', 'Amount', 'StageName', 'CloseDate', EXTERNAL_ID_FIELD, 'SystemModstamp'];

/** Lead.FirstName is 40 characters, Lead.LastName 80 (Object Reference, "Lead"). */
const FIRST_NAME_MAX = 40;
const LAST_NAME_MAX = 80;
/** Opportunity.CloseDate is required; a deal without an expected close date gets this many days from today. */
export const DEFAULT_CLOSE_DAYS = 90;

const localPart = (email: string): string => email.split('@')[0] || email;

/**
 * Lead.LastName is required, and we hold one free-text contact name: its last word is the
 * LastName and the words before it the FirstName ("Ada King Lovelace" → "Ada King" /
 * "Lovelace"). With no name at all, the e-mail's local part stands in as LastName
 * ("ada.lovelace@example.com" → "ada.lovelace"), and reading back undoes that (see leadFields).
 */
export function splitContactName(contactName: string | null, email: string): { FirstName: string | null; LastName: string } {
  const words = (contactName ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { FirstName: null, LastName: localPart(email).slice(0, LAST_NAME_MAX) };
  const last = words.pop() as string;
  return { FirstName: words.length ? words.join(' ').slice(0, FIRST_NAME_MAX) : null, LastName: last.slice(0, LAST_NAME_MAX) };
}

/**
 * One Lead for an sObject Collections upsert ("Upsert Records Using sObject Collections": each
 * record carries attributes {type}, no Id, the external id field instead); an update by Id adds
 * the id to the same record ("Update Records Using sObject Collections"). A null clears the field
 * in Salesforce, as our side is empty. Industry and LeadSource are picklists: an org that
 * restricts them refuses values outside its list, and that refusal comes back as the record's error.
 */
export function leadRecord(lead: OutboundLead): Record<string, unknown> {
  const fields = lead.fields;
  return {
    attributes: { type: 'Lead' },
    [EXTERNAL_ID_FIELD]: lead.id,
    Email: fields.contactEmail,
    ...splitContactName(fields.contactName, fields.contactEmail),
    Company: fields.company,
    Industry: fields.industry,
    NumberOfEmployees: fields.employees,
    Website: fields.website,
    Country: fields.country,
    LeadSource: fields.source,
  };
}

function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * One Opportunity. CloseDate is required by Salesforce: a deal without an expected close date gets
 * today + DEFAULT_CLOSE_DAYS when it is first pushed, and on later pushes (its Opportunity known)
 * the field is left out so the date a Salesforce user set is kept. CurrencyIsoCode exists only in
 * multi-currency orgs (sending it elsewhere fails with INVALID_FIELD), so the amount goes in the
 * org's currency as it is; `owner` is left out (OwnerId wants a Salesforce user id we do not hold).
 * Leads are not associated with Opportunities in Salesforce before conversion, so `lead` is unused.
 */
export function dealRecord(deal: OutboundDeal, today: Date = new Date()): Record<string, unknown> {
  const fields = deal.fields;
  const record: Record<string, unknown> = {
    attributes: { type: 'Opportunity' },
    [EXTERNAL_ID_FIELD]: deal.id,
    Name: fields.name,
    Amount: fields.amount,
    StageName: fields.stage,
  };
  if (fields.closeDate !== null) record.CloseDate = fields.closeDate;
  else if (!deal.external.Opportunity) record.CloseDate = isoDate(new Date(today.getTime() + DEFAULT_CLOSE_DAYS * 86_400_000));
  return record;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const number = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** Salesforce's dateTime ("2026-11-24T06:30:00.000+0000", no colon in the offset) as a Date. */
export function parseSalesforceDateTime(value: string): Date {
  return new Date(value.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
}

/**
 * A Lead read back. A record without Email or Company lacks a field we require and leaves it out.
 * A LastName that is only the e-mail's local part with no FirstName is what we wrote for a lead
 * without a name, so it reads back as no name rather than a name made up from the address.
 */
export function leadFields(record: SalesforceRecord): Partial<CrmLeadFields> {
  const fields: Partial<CrmLeadFields> = {};
  const email = text(record.Email);
  if (email !== null) fields.contactEmail = email;
  const company = text(record.Company);
  if (company !== null) fields.company = company;
  const first = text(record.FirstName);
  const last = text(record.LastName);
  const madeUp = first === null && last !== null && email !== null && last === localPart(email).slice(0, LAST_NAME_MAX);
  fields.contactName = madeUp ? null : [first, last].filter((part) => part !== null).join(' ') || null;
  fields.industry = text(record.Industry);
  fields.employees = number(record.NumberOfEmployees);
  fields.website = text(record.Website);
  fields.country = text(record.Country);
  fields.source = text(record.LeadSource);
  return fields;
}

/** An Opportunity read back (currency and owner are not synced, see dealRecord). */
export function dealFields(record: SalesforceRecord): Partial<CrmDealFields> {
  const fields: Partial<CrmDealFields> = {};
  const name = text(record.Name);
  if (name !== null) fields.name = name;
  const amount = number(record.Amount);
  if (amount !== null) fields.amount = amount;
  const stage = text(record.StageName);
  if (stage !== null) fields.stage = stage;
  fields.closeDate = text(record.CloseDate);
  return fields;
}

export function remoteLead(record: SalesforceRecord): RemoteRecord<CrmLeadFields> {
  return {
    external: { Lead: record.Id },
    ourId: text(record[EXTERNAL_ID_FIELD]),
    modifiedAt: parseSalesforceDateTime(record.SystemModstamp),
    fields: leadFields(record),
  };
}

export function remoteDeal(record: SalesforceRecord): RemoteDeal {
  return {
    external: { Opportunity: record.Id },
    ourId: text(record[EXTERNAL_ID_FIELD]),
    modifiedAt: parseSalesforceDateTime(record.SystemModstamp),
    fields: dealFields(record),
  };
}

/**
 * Where a changes query resumes: the last SystemModstamp read, and the last Id at that time when
 * the page was full ("<ISO time>|<Id>"). Without an Id the next query asks for SystemModstamp >=
 * the time, so a record saved later within that same second is not missed (SystemModstamp has
 * whole seconds); with one it asks for what comes after (time, Id), so a page filled by a single
 * timestamp still moves on.
 */
export interface ChangeCursor {
  at: Date;
  afterId: string | null;
}

export function encodeCursor(cursor: ChangeCursor): string {
  return cursor.afterId === null ? cursor.at.toISOString() : `${cursor.at.toISOString()}|${cursor.afterId}`;
}

export function decodeCursor(value: string): ChangeCursor {
  const [time, afterId] = value.split('|');
  const at = new Date(time);
  if (Number.isNaN(at.getTime())) throw new Error(`not a Salesforce change cursor: ${value.slice(0, 60)}`);
  return { at, afterId: afterId && /^[a-zA-Z0-9]{15,18}$/.test(afterId) ? afterId : null };
}

/** A dateTime literal as SOQL takes it: unquoted, UTC with Z ("Date Formats and Date Literals in WHERE", SOQL and SOSL Reference). */
export function soqlDateTime(at: Date): string {
  const iso = at.toISOString();
  return at.getUTCMilliseconds() === 0 ? iso.replace('.000Z', 'Z') : iso;
}

/** The changes query: oldest change first, Id breaking ties, one page of `limit`. */
export function changesQuery(object: SalesforceObject, cursor: ChangeCursor | null, limit: number): string {
  const fields = (object === 'Lead' ? LEAD_QUERY_FIELDS : DEAL_QUERY_FIELDS).join(', ');
  let where = '';
  if (cursor !== null) {
    const at = soqlDateTime(cursor.at);
    where =
      cursor.afterId === null ? ` WHERE SystemModstamp >= ${at}` : ` WHERE (SystemModstamp > ${at} OR (SystemModstamp = ${at} AND Id > '${cursor.afterId}'))`;
  }
  return `SELECT ${fields} FROM ${object}${where} ORDER BY SystemModstamp ASC, Id ASC LIMIT ${limit}`;
}

import type { CrmDealFields, CrmLeadFields } from './crm-client';

/**
 * Our fields as HubSpot properties and back. HubSpot takes every property value as a string and
 * clears a property given "" (so a null of ours is sent as ""); what it answers is strings too.
 *
 * A lead is two HubSpot records: a contact (the person) and a company, shared by every lead of
 * one company name. Left out on purpose:
 * - the company's `industry`: an enumeration of HubSpot's own values (ACCOUNTING, COMPUTER_SOFTWARE,
 *   …) that free text of ours would fail validation against; the contact's `industry` is a plain
 *   text property, so the industry travels there;
 * - the contact's `numemployees`: an enumeration of ranges (1-5, 5-25, …); employees go on the
 *   company's `numberofemployees`, a number;
 * - `source`: HubSpot's source properties (hs_analytics_source, …) are its own and read-only;
 * - `lifecyclestage` / `hs_lead_status`: HubSpot moves lifecycle stages forward only and accounts
 *   customise lead statuses, so writing them would fail or undo someone's work;
 * - a deal's `owner`: HubSpot's hubspot_owner_id is the id of one of its users, which we do not hold.
 */

/** Our id on every record we push: a unique-value property on contacts, companies and deals. */
export const ID_PROPERTY = 'sales_pipeline_id';

/** The contact property that is its last-modified time (contacts predate `hs_lastmodifieddate`, which the other objects use). */
export const MODIFIED_PROPERTY = { contacts: 'lastmodifieddate', companies: 'hs_lastmodifieddate', deals: 'hs_lastmodifieddate' } as const;

export type HubSpotProperties = Record<string, string>;

const text = (value: string | null | undefined): string => value ?? '';

/** "Ada Lovelace" → Ada / Lovelace; one word is a first name. */
export function splitName(name: string | null): { firstname: string; lastname: string } {
  const words = (name ?? '').trim().split(/\s+/).filter(Boolean);
  return { firstname: words[0] ?? '', lastname: words.slice(1).join(' ') };
}

/** The host of a website, without `www.`: HubSpot's company `domain` (and what it deduplicates companies by in its own UI). */
export function domainOf(website: string | null): string {
  if (!website) return '';
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(website) ? website : `https://${website}`);
    return url.hostname.replace(/^www\./i, '').toLowerCase();
  } catch {
    return '';
  }
}

/** The `sales_pipeline_id` of a lead's company: one per company name, so the leads of one company share one record. */
export function companyKeyOf(fields: CrmLeadFields): string {
  return `company:${fields.company.trim().replace(/\s+/g, ' ').toLowerCase()}`;
}

export function contactProperties(leadId: string, fields: CrmLeadFields): HubSpotProperties {
  return {
    [ID_PROPERTY]: leadId,
    email: fields.contactEmail,
    ...splitName(fields.contactName),
    company: fields.company,
    website: text(fields.website),
    country: text(fields.country),
    industry: text(fields.industry),
  };
}

export function companyProperties(fields: CrmLeadFields): HubSpotProperties {
  return {
    [ID_PROPERTY]: companyKeyOf(fields),
    name: fields.company,
    domain: domainOf(fields.website),
    website: text(fields.website),
    country: text(fields.country),
    numberofemployees: fields.employees === null ? '' : String(fields.employees),
  };
}

export function dealProperties(dealId: string, fields: CrmDealFields): HubSpotProperties {
  return {
    [ID_PROPERTY]: dealId,
    dealname: fields.name,
    amount: String(fields.amount),
    deal_currency_code: fields.currency,
    dealstage: fields.stage,
    pipeline: 'default',
    // HubSpot date-time properties take midnight UTC for a date.
    closedate: fields.closeDate === null ? '' : `${fields.closeDate}T00:00:00.000Z`,
  };
}

/** What a changes query asks for: the properties mapped back, our id, and the modified time. */
export const CONTACT_READ_PROPERTIES = [ID_PROPERTY, 'email', 'firstname', 'lastname', 'company', 'website', 'country', 'industry', MODIFIED_PROPERTY.contacts];
export const DEAL_READ_PROPERTIES = [ID_PROPERTY, 'dealname', 'amount', 'deal_currency_code', 'dealstage', 'closedate', MODIFIED_PROPERTY.deals];

type Answered = Record<string, string | null | undefined>;
const present = (value: string | null | undefined): value is string => typeof value === 'string' && value !== '';

/** A contact's properties as lead fields: only those it has (employees live on the company and are not read back). */
export function leadFieldsOf(properties: Answered): Partial<CrmLeadFields> {
  const fields: Partial<CrmLeadFields> = {};
  if (present(properties.email)) fields.contactEmail = properties.email;
  if (present(properties.company)) fields.company = properties.company;
  if (properties.firstname !== undefined || properties.lastname !== undefined) {
    const name = [properties.firstname, properties.lastname].filter(present).join(' ');
    fields.contactName = name === '' ? null : name;
  }
  for (const key of ['website', 'country', 'industry'] as const) {
    if (properties[key] !== undefined) fields[key] = present(properties[key]) ? properties[key] : null;
  }
  return fields;
}

/** YYYY-MM-DD of a HubSpot date-time: ISO text, or epoch milliseconds as older answers give it. */
function dateOf(value: string): string {
  return /^\d+$/.test(value) ? new Date(Number(value)).toISOString().slice(0, 10) : value.slice(0, 10);
}

/** A deal's properties as deal fields: only those it has. */
export function dealFieldsOf(properties: Answered): Partial<CrmDealFields> {
  const fields: Partial<CrmDealFields> = {};
  if (present(properties.dealname)) fields.name = properties.dealname;
  if (present(properties.amount) && Number.isFinite(Number(properties.amount))) fields.amount = Number(properties.amount);
  if (present(properties.deal_currency_code)) fields.currency = properties.deal_currency_code;
  if (present(properties.dealstage)) fields.stage = properties.dealstage;
  if (properties.closedate !== undefined) fields.closeDate = present(properties.closedate) ? dateOf(properties.closedate) : null;
  return fields;
}

import { isDeepStrictEqual } from 'node:util';
import type { Deal } from '../../deals/deal.entity';
import type { DealCreateInput, DealUpdateInput } from '../../deals/deal.inputs';
import type { Lead } from '../../leads/lead.entity';
import type { LeadCreateInput, LeadUpdateInput } from '../../leads/lead.inputs';
import type { CrmDealFields, CrmLeadFields, SyncProvider } from '../providers/crm-client';
import { crmStage, stageFromCrm, StageMap } from './stage-map';

/** A lead as the CRM should hold it. */
export function leadFields(lead: Lead): CrmLeadFields {
  return {
    company: lead.company,
    contactEmail: lead.contactEmail,
    contactName: lead.contactName ?? null,
    industry: lead.industry ?? null,
    employees: lead.employees ?? null,
    website: lead.website ?? null,
    country: lead.country ?? null,
    source: lead.source ?? null,
  };
}

/** A deal as the CRM should hold it: its stage through the integration's stage map. */
export function dealFields(deal: Deal, stageMap: StageMap): CrmDealFields {
  return {
    name: deal.name,
    amount: deal.value,
    currency: deal.currency,
    stage: crmStage(stageMap, deal.stage),
    closeDate: deal.expectedCloseDate ?? null,
    owner: deal.owner ?? null,
  };
}

/** The fields a CRM record has that differ from what both sides last agreed on (none: nothing new, or our own write read back). */
export function changedFields<Fields extends object>(remote: Partial<Fields>, agreed: Record<string, unknown>): Partial<Fields> {
  const changed: Partial<Fields> = {};
  for (const name of Object.keys(remote) as Array<keyof Fields & string>) {
    const value = remote[name];
    if (value !== undefined && !isDeepStrictEqual(value, agreed[name])) changed[name] = value;
  }
  return changed;
}

/** Whether our object holds values other than the ones last agreed on (changed here since). */
export function differsFrom(local: object, agreed: Record<string, unknown>): boolean {
  return Object.entries(local).some(([name, value]) => !isDeepStrictEqual(value, agreed[name]));
}

/** A CRM's lead fields as an update of ours (what validInput then checks like a client's). */
export function leadUpdate(fields: Partial<CrmLeadFields>): Partial<LeadUpdateInput> {
  const update: Partial<LeadUpdateInput> = {};
  if (fields.company !== undefined) update.company = fields.company;
  if (fields.contactEmail !== undefined) update.contactEmail = fields.contactEmail.toLowerCase();
  for (const name of ['contactName', 'industry', 'website', 'country', 'source'] as const) {
    if (fields[name] !== undefined) update[name] = fields[name];
  }
  if (fields.employees !== undefined) update.employees = fields.employees;
  return update;
}

/** A record made in the CRM as a new lead of ours; the required fields it lacks are left out (and refused by validation, by name). */
export function leadCreate(fields: Partial<CrmLeadFields>): Partial<LeadCreateInput> {
  return { ...leadUpdate(fields), source: fields.source ?? 'crm' } as Partial<LeadCreateInput>;
}

/** Why a CRM stage cannot come back here, or null. */
export function unmappedStage(fields: Partial<CrmDealFields>, stageMap: StageMap, provider: SyncProvider): string | null {
  if (fields.stage === undefined || stageFromCrm(stageMap, provider, fields.stage)) return null;
  return `the CRM stage '${fields.stage}' is not in the integration's stage_map; map it (POST /v1/integrations/{id} with settings.stage_map) or move the deal to a mapped stage`;
}

/** A CRM's deal fields as an update of ours. */
export function dealUpdate(fields: Partial<CrmDealFields>, stageMap: StageMap, provider: SyncProvider): Partial<DealUpdateInput> {
  const update: Partial<DealUpdateInput> = {};
  if (fields.name !== undefined) update.name = fields.name;
  if (fields.amount !== undefined) update.value = fields.amount;
  if (fields.currency !== undefined) update.currency = fields.currency;
  if (fields.stage !== undefined) update.stage = stageFromCrm(stageMap, provider, fields.stage) ?? undefined;
  if (fields.closeDate !== undefined) update.expectedCloseDate = fields.closeDate;
  if (fields.owner !== undefined) update.owner = fields.owner;
  return update;
}

export function dealCreate(fields: Partial<CrmDealFields>, stageMap: StageMap, provider: SyncProvider): Partial<DealCreateInput> {
  return dealUpdate(fields, stageMap, provider) as Partial<DealCreateInput>;
}

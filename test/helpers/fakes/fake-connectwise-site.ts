import { Collection, CwRecord, Reference } from './fake-connectwise-records';

/**
 * What one ConnectWise PSA site holds, for the fake's routes to read and write and for tests to
 * look at. The setup tables start as a set-up site's would: opportunity statuses (Open as the
 * default, Won and Lost closing an opportunity the PSA's way, No Decision, Inactive), the sales
 * stages the client's default stage map names plus one it does not (an administrator's own),
 * the e-mail communication type, a project board beside a service board, agreement types, a few
 * countries (the United States the default) and one member. Tests add members, catalog items and
 * companies of their own.
 */

export interface CwCompany extends CwRecord {
  identifier: string;
  name: string;
  website?: string | null;
  country?: Reference | null;
  deletedFlag: boolean;
}
export interface CwContact extends CwRecord {
  firstName?: string;
  lastName?: string;
  company?: Reference;
  communicationItems: Array<{ id: number; type: Reference; value: string; defaultFlag: boolean; communicationType: string }>;
}
export interface CwOpportunity extends CwRecord {
  name: string;
  company: Reference;
  contact: Reference;
  primarySalesRep: Reference;
  stage?: Reference | null;
  status: Reference;
  expectedCloseDate?: string | null;
  closedDate?: string | null;
  source?: string | null;
  notes?: string | null;
}
export interface CwForecastItem extends CwRecord {
  opportunity: Reference;
  forecastType: string;
  forecastDescription?: string | null;
  revenue: number;
  cost: number;
  status: Reference;
  includeFlag: boolean;
}
export interface CwProject extends CwRecord {
  name: string;
  company: Reference;
  contact?: Reference | null;
  board: Reference;
  billingMethod: string;
  estimatedStart: string;
  estimatedEnd: string;
  opportunity?: Reference | null;
  description?: string | null;
  billingAmount?: number | null;
}
export interface CwPhase extends CwRecord {
  projectId: number;
  description: string;
  notes?: string | null;
}
export interface CwAgreement extends CwRecord {
  name: string;
  type: Reference;
  company: Reference;
  contact: Reference;
  opportunity?: Reference | null;
  startDate?: string | null;
  internalNotes?: string | null;
  agreementStatus: string;
}
export interface CwAddition extends CwRecord {
  agreementId: number;
  product: Reference;
  description?: string | null;
  quantity: number;
  unitPrice: number;
  billCustomer: string;
  effectiveDate?: string | null;
}

export interface CwStatus extends CwRecord {
  name: string;
  wonFlag: boolean;
  lostFlag: boolean;
  closedFlag: boolean;
  inactiveFlag: boolean;
  defaultFlag: boolean;
}

export class ConnectWiseSite {
  readonly companies = new Collection<CwCompany>(250);
  readonly contacts = new Collection<CwContact>(1000);
  readonly opportunities = new Collection<CwOpportunity>(7000);
  readonly forecastItems = new Collection<CwForecastItem>(30000);
  readonly projects = new Collection<CwProject>(400);
  readonly phases = new Collection<CwPhase>(900);
  readonly agreements = new Collection<CwAgreement>(60);
  readonly additions = new Collection<CwAddition>(3000);
  readonly stages = new Collection<CwRecord & { name: string; sequenceNumber: number }>();
  readonly statuses = new Collection<CwStatus>();
  readonly members = new Collection<CwRecord & { identifier: string; firstName: string; lastName: string; primaryEmail: string; inactiveFlag: boolean }>(140);
  readonly countries = new Collection<CwRecord & { name: string; countryCode: string; defaultFlag: boolean }>();
  readonly communicationTypes = new Collection<CwRecord & { description: string; emailFlag: boolean; phoneFlag: boolean; defaultFlag: boolean }>();
  readonly boards = new Collection<CwRecord & { name: string; projectFlag: boolean; inactiveFlag: boolean }>();
  readonly agreementTypes = new Collection<CwRecord & { name: string; defaultFlag: boolean; inactiveFlag: boolean }>();
  readonly catalog = new Collection<CwRecord & { identifier: string; description: string; inactiveFlag: boolean }>(500);

  constructor() {
    const status = (name: string, flags: Partial<CwStatus>) =>
      this.statuses.add({ name, wonFlag: false, lostFlag: false, closedFlag: false, inactiveFlag: false, defaultFlag: false, ...flags });
    status('Open', { defaultFlag: true });
    status('Won', { wonFlag: true, closedFlag: true });
    status('Lost', { lostFlag: true, closedFlag: true });
    status('No Decision', { closedFlag: true });
    status('Inactive', { inactiveFlag: true, closedFlag: true });
    ['Prospect', 'Qualified Lead', 'Solution Identified', 'Proposal Presented', 'Negotiation'].forEach((name, index) =>
      this.stages.add({ name, sequenceNumber: index + 1 }),
    );
    this.communicationTypes.add({ description: 'Email', emailFlag: true, phoneFlag: false, defaultFlag: true });
    this.communicationTypes.add({ description: 'Direct', emailFlag: false, phoneFlag: true, defaultFlag: true });
    this.boards.add({ name: 'Help Desk', projectFlag: false, inactiveFlag: false });
    this.boards.add({ name: 'Professional Services', projectFlag: true, inactiveFlag: false });
    this.agreementTypes.add({ name: 'Block Time', defaultFlag: false, inactiveFlag: false });
    this.agreementTypes.add({ name: 'Managed Services', defaultFlag: true, inactiveFlag: false });
    for (const [countryCode, name] of [
      ['US', 'United States'],
      ['GB', 'United Kingdom'],
      ['DE', 'Germany'],
      ['FR', 'France'],
      ['AU', 'Australia'],
    ]) {
      this.countries.add({ name, countryCode, defaultFlag: countryCode === 'US' });
    }
    this.members.add({ identifier: 'admin1', firstName: 'Site', lastName: 'Admin', primaryEmail: 'admin@msp.example', inactiveFlag: false });
  }

  /** The reference a site answers for a record: its id and name (or identifier). */
  reference(record: CwRecord & { name?: unknown; identifier?: unknown; description?: unknown }): Reference {
    const name = typeof record.name === 'string' ? record.name : typeof record.description === 'string' ? record.description : undefined;
    return { id: record.id, ...(typeof record.identifier === 'string' ? { identifier: record.identifier } : {}), ...(name ? { name } : {}) };
  }
}

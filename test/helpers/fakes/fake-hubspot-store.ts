/**
 * The records of the fake HubSpot (fake-hubspot.ts): contacts, companies and deals with their
 * properties and property definitions, v4 associations, and the CRM search of
 * HubSpot's CRM Objects v3 document (PublicObjectSearchRequest: filterGroups of filters ORed,
 * filters ANDed; one sort, a property name; limit ≤ 200; `after` offsets up to 10,000).
 */

export type HubSpotObjectType = 'contacts' | 'companies' | 'deals';
export const OBJECT_TYPES: HubSpotObjectType[] = ['contacts', 'companies', 'deals'];

export interface FakeHubSpotObject {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
  archivedAt?: string;
}

export interface PropertyDefinition {
  name: string;
  label: string;
  type: string;
  fieldType: string;
  groupName: string;
  description: string;
  hasUniqueValue: boolean;
  hubspotDefined: boolean;
  formField: boolean;
  hidden: boolean;
  options: unknown[];
  displayOrder: number;
  calculated: boolean;
  externalOptions: boolean;
  createdAt?: string;
  updatedAt?: string;
  modificationMetadata: { archivable: boolean; readOnlyDefinition: boolean; readOnlyValue: boolean };
}

/** The default pipeline's deal stages (HubSpot's sales pipeline as a new account has it). */
export const DEFAULT_DEAL_STAGES = [
  'appointmentscheduled',
  'qualifiedtobuy',
  'presentationscheduled',
  'decisionmakerboughtin',
  'contractsent',
  'closedwon',
  'closedlost',
];

/** The modified-time property HubSpot keeps per object (contacts: `lastmodifieddate`; the fake keeps `hs_lastmodifieddate` on them too). */
const READ_ONLY = ['hs_object_id', 'createdate', 'lastmodifieddate', 'hs_lastmodifieddate'];
const DATES = new Set(['createdate', 'lastmodifieddate', 'hs_lastmodifieddate', 'closedate']);
const NUMBERS = new Set(['hs_object_id', 'amount', 'numberofemployees', 'annualrevenue']);
const DEFAULT_PROPERTIES: Record<HubSpotObjectType, string[]> = {
  contacts: [
    'email',
    'firstname',
    'lastname',
    'company',
    'website',
    'country',
    'city',
    'phone',
    'jobtitle',
    'industry',
    'lifecyclestage',
    'hs_lead_status',
    'numemployees',
  ],
  companies: ['name', 'domain', 'website', 'country', 'city', 'phone', 'industry', 'numberofemployees', 'annualrevenue', 'description'],
  deals: ['dealname', 'amount', 'deal_currency_code', 'dealstage', 'pipeline', 'closedate', 'hubspot_owner_id', 'description'],
};
/** What a search answers without a `properties` list (HubSpot's search guide). */
export const SEARCH_DEFAULTS: Record<HubSpotObjectType, string[]> = {
  contacts: ['firstname', 'lastname', 'email', 'lastmodifieddate', 'hs_object_id', 'createdate'],
  companies: ['name', 'domain', 'createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  deals: ['dealname', 'amount', 'closedate', 'pipeline', 'dealstage', 'createdate', 'hs_lastmodifieddate', 'hs_object_id'],
};
/** HUBSPOT_DEFINED default association type ids (v4 associations guide). */
export const DEFAULT_ASSOCIATION_TYPES: Record<string, number> = {
  'contacts>companies': 279,
  'companies>contacts': 280,
  'deals>contacts': 3,
  'contacts>deals': 4,
  'deals>companies': 341,
  'companies>deals': 342,
};

export const isObjectType = (value: string): value is HubSpotObjectType => (OBJECT_TYPES as string[]).includes(value);

function definition(name: string, groupName: string, extra: Partial<PropertyDefinition> = {}): PropertyDefinition {
  const date = DATES.has(name);
  const number = NUMBERS.has(name);
  return {
    name,
    label: name,
    type: date ? 'datetime' : number ? 'number' : 'string',
    fieldType: date ? 'date' : number ? 'number' : 'text',
    groupName,
    description: '',
    hasUniqueValue: false,
    hubspotDefined: true,
    formField: false,
    hidden: false,
    options: [],
    displayOrder: -1,
    calculated: false,
    externalOptions: false,
    modificationMetadata: { archivable: false, readOnlyDefinition: true, readOnlyValue: READ_ONLY.includes(name) },
    ...extra,
  };
}

/** Why a filter, a sort or a write was refused: answered as a HubSpot VALIDATION_ERROR. */
export class FakeValidationError extends Error {}

/** HubSpot's message for a write naming a property the account does not have (VALIDATION_ERROR, error PROPERTY_DOESNT_EXIST). */
export function propertyDoesNotExist(name: string): string {
  const says = `Property ${JSON.stringify(name)} does not exist`;
  return `Property values were not valid: ${JSON.stringify([{ isValid: false, message: says, error: 'PROPERTY_DOESNT_EXIST', name, localizedErrorMessage: says }])}`;
}

export interface SearchFilter {
  propertyName?: string;
  operator?: string;
  value?: string;
  values?: string[];
  highValue?: string;
}

export class FakeHubSpotStore {
  private readonly records: Record<HubSpotObjectType, Map<string, FakeHubSpotObject>> = { contacts: new Map(), companies: new Map(), deals: new Map() };
  readonly definitions: Record<HubSpotObjectType, Map<string, PropertyDefinition>>;
  private readonly links = new Map<string, Set<string>>();
  /**
   * Records by type, property and value (lower case): unique values are checked and upserts matched
   * against it, so a push of thousands of records (the benchmark's sync row) is not spent scanning
   * every record for each input.
   */
  private readonly byValue = new Map<string, Set<FakeHubSpotObject>>();
  private nextId = 1001;
  private lastStamp = 0;
  private frozenAt: number | null = null;
  dealStages = new Set(DEFAULT_DEAL_STAGES);

  constructor() {
    const groups = { contacts: 'contactinformation', companies: 'companyinformation', deals: 'dealinformation' } as const;
    this.definitions = { contacts: new Map(), companies: new Map(), deals: new Map() };
    for (const type of OBJECT_TYPES) {
      for (const name of [...DEFAULT_PROPERTIES[type], ...READ_ONLY]) this.definitions[type].set(name, definition(name, groups[type]));
    }
  }

  /** Every write's time: strictly increasing, even within one millisecond, unless the clock is frozen (a bulk import). */
  stamp(): number {
    this.lastStamp = this.frozenAt ?? Math.max(Date.now(), this.lastStamp + 1);
    return this.lastStamp;
  }

  freeze(at: Date | null): void {
    this.frozenAt = at === null ? null : at.getTime();
    if (at !== null) this.lastStamp = Math.max(this.lastStamp, at.getTime());
  }

  all(type: HubSpotObjectType): FakeHubSpotObject[] {
    return [...this.records[type].values()];
  }

  live(type: HubSpotObjectType): FakeHubSpotObject[] {
    return this.all(type).filter((object) => !object.archived);
  }

  get(type: HubSpotObjectType, id: string): FakeHubSpotObject | undefined {
    return this.records[type].get(id);
  }

  /** The live record whose property has the value (case-insensitive, as HubSpot matches emails), else an archived one. */
  find(type: HubSpotObjectType, property: string, value: string): FakeHubSpotObject | undefined {
    const matches = this.all(type).filter((object) => object.properties[property]?.toLowerCase() === value.toLowerCase());
    return matches.find((object) => !object.archived) ?? matches.at(-1);
  }

  /**
   * Why these values may not be written to the record (undefined: they may): unknown or read-only
   * properties, an invalid email, number or date, a deal stage the pipeline lacks, or a value
   * another live record holds in a unique-value property (or, for contacts, its email).
   */
  invalid(type: HubSpotObjectType, properties: Record<string, unknown>, self?: FakeHubSpotObject): string | undefined {
    for (const [name, raw] of Object.entries(properties)) {
      const property = this.definitions[type].get(name);
      if (!property) return propertyDoesNotExist(name);
      if (property.modificationMetadata.readOnlyValue) return `"${name}" is a read only property; its value cannot be set.`;
      if (raw !== null && typeof raw !== 'string') return `Property "${name}" must be a string`;
      const value = raw ?? '';
      if (value === '') continue;
      if (name === 'email' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value))
        return `Property values were not valid: Email address ${value} is invalid (INVALID_EMAIL)`;
      if (property.type === 'number' && !Number.isFinite(Number(value)))
        return `Property values were not valid: ${value} was not a valid number (INVALID_INTEGER)`;
      if (property.type === 'datetime' && !Number.isFinite(/^\d+$/.test(value) ? Number(value) : Date.parse(value))) {
        return `Property values were not valid: ${value} was not a valid date (INVALID_DATE)`;
      }
      if (name === 'dealstage' && !this.dealStages.has(value))
        return `Property values were not valid: ${value} was not one of the allowed options (INVALID_OPTION)`;
      if (property.hasUniqueValue || (type === 'contacts' && name === 'email')) {
        const holder = this.holder(type, name, value, self);
        if (holder)
          return type === 'contacts' && name === 'email'
            ? `Contact already exists. Existing ID: ${holder.id}`
            : `${holder.id} already has that value for ${name}=${value}`;
      }
    }
    return undefined;
  }

  create(type: HubSpotObjectType, properties: Record<string, string | null>): FakeHubSpotObject {
    const id = String(this.nextId++);
    const time = new Date(this.stamp()).toISOString();
    const object: FakeHubSpotObject = { id, properties: {}, createdAt: time, updatedAt: time, archived: false };
    this.records[type].set(id, object);
    this.set(type, object, 'hs_object_id', id);
    this.set(type, object, 'createdate', time);
    this.write(object, properties, time);
    return object;
  }

  update(object: FakeHubSpotObject, properties: Record<string, string | null>): FakeHubSpotObject {
    this.write(object, properties, new Date(this.stamp()).toISOString());
    return object;
  }

  /** Someone makes a property in HubSpot (Settings › Properties), a text one unless told otherwise. */
  defineProperty(type: HubSpotObjectType, name: string, extra: Partial<PropertyDefinition> = {}): void {
    const groups = { contacts: 'contactinformation', companies: 'companyinformation', deals: 'dealinformation' } as const;
    this.definitions[type].set(name, definition(name, groups[type], { hubspotDefined: false, ...extra }));
  }

  /** Someone deletes a property in HubSpot: its definition and every record's value of it go. */
  dropProperty(type: HubSpotObjectType, name: string): void {
    if (!this.definitions[type].delete(name)) throw new Error(`no ${type} property ${name}`);
    for (const object of this.records[type].values()) {
      this.set(type, object, name, null);
      delete object.properties[name];
    }
  }

  archive(object: FakeHubSpotObject): void {
    if (object.archived) return;
    const time = new Date(this.stamp()).toISOString();
    object.archived = true;
    object.archivedAt = time;
    object.updatedAt = time;
  }

  /** "" clears a property, as HubSpot does. */
  private write(object: FakeHubSpotObject, properties: Record<string, string | null>, time: string): void {
    const type = OBJECT_TYPES.find((one) => this.records[one].get(object.id) === object)!;
    for (const [name, value] of Object.entries(properties)) this.set(type, object, name, value === '' ? null : value);
    object.updatedAt = time;
    this.set(type, object, 'hs_lastmodifieddate', time);
    this.set(type, object, 'lastmodifieddate', time);
  }

  /** The first live record (in creation order) whose property has the value, case-insensitively, other than `except`. */
  holder(type: HubSpotObjectType, name: string, value: string, except?: FakeHubSpotObject): FakeHubSpotObject | undefined {
    let first: FakeHubSpotObject | undefined;
    for (const object of this.byValue.get(valueKey(type, name, value)) ?? []) {
      // Ids grow with creation; a record may have taken the value after a newer one did.
      if (!object.archived && object !== except && (!first || Number(object.id) < Number(first.id))) first = object;
    }
    return first;
  }

  /** Sets one property, keeping byValue in step. */
  private set(type: HubSpotObjectType, object: FakeHubSpotObject, name: string, value: string | null): void {
    const old = object.properties[name];
    if (old !== undefined && old !== null) this.byValue.get(valueKey(type, name, old))?.delete(object);
    object.properties[name] = value;
    if (value === null) return;
    const key = valueKey(type, name, value);
    const holders = this.byValue.get(key) ?? new Set();
    this.byValue.set(key, holders.add(object));
  }

  associate(fromType: HubSpotObjectType, fromId: string, toType: HubSpotObjectType, toId: string): void {
    const add = (key: string, id: string) => this.links.set(key, (this.links.get(key) ?? new Set()).add(id));
    add(`${fromType}:${fromId}>${toType}`, toId);
    add(`${toType}:${toId}>${fromType}`, fromId);
  }

  associations(fromType: HubSpotObjectType, fromId: string, toType: HubSpotObjectType): string[] {
    return [...(this.links.get(`${fromType}:${fromId}>${toType}`) ?? [])];
  }

  /**
   * Live records matching any filter group (all filters of one group), sorted by the first sort,
   * then by id. A sort is a property name, ascending, or `-name`, descending: the document types
   * `sorts` as strings, and HubSpot's Node client README gives them that meaning.
   */
  search(type: HubSpotObjectType, filterGroups: Array<{ filters?: SearchFilter[] }>, sorts: string[]): FakeHubSpotObject[] {
    const matching = this.live(type).filter(
      (object) => filterGroups.length === 0 || filterGroups.some((group) => (group.filters ?? []).every((filter) => this.matches(type, object, filter))),
    );
    const sort = sorts[0] ?? '';
    const propertyName = sort.replace(/^-/, '');
    if (propertyName !== '' && !this.definitions[type].has(propertyName))
      throw new FakeValidationError(`There was a problem with the request. Property "${propertyName}" does not exist`);
    const sign = sort.startsWith('-') ? -1 : 1;
    return matching.sort((a, b) => {
      if (propertyName) {
        const order = compare(propertyName, a.properties[propertyName] ?? null, b.properties[propertyName] ?? null);
        if (order !== 0) return order * sign;
      }
      return Number(a.id) - Number(b.id);
    });
  }

  private matches(type: HubSpotObjectType, object: FakeHubSpotObject, filter: SearchFilter): boolean {
    const name = filter.propertyName ?? '';
    if (!this.definitions[type].has(name)) throw new FakeValidationError(`There was a problem with the request. Property "${name}" does not exist`);
    const actual = object.properties[name] ?? null;
    const against = (value: string | undefined) => {
      if (value === undefined) throw new FakeValidationError(`Filter on ${name} needs a value`);
      return actual === null ? null : compare(name, actual, value);
    };
    switch (filter.operator) {
      case 'EQ':
        return against(filter.value) === 0;
      case 'NEQ':
        return against(filter.value) !== 0;
      case 'GT':
        return (against(filter.value) ?? -1) > 0;
      case 'GTE':
        return (against(filter.value) ?? -1) >= 0;
      case 'LT':
        return (against(filter.value) ?? 1) < 0;
      case 'LTE':
        return (against(filter.value) ?? 1) <= 0;
      case 'BETWEEN':
        return (against(filter.value) ?? -1) >= 0 && (against(filter.highValue) ?? 1) <= 0;
      case 'IN':
        return (filter.values ?? []).some((value) => against(value) === 0);
      case 'NOT_IN':
        return !(filter.values ?? []).some((value) => against(value) === 0);
      case 'HAS_PROPERTY':
        return actual !== null;
      case 'NOT_HAS_PROPERTY':
        return actual === null;
      default:
        throw new FakeValidationError(`Unsupported filter operator: ${String(filter.operator)}`);
    }
  }
}

/** Dates as instants (ISO or epoch ms), numbers as numbers, text case-insensitively; empty values first. */
function compare(name: string, a: string | null, b: string | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  if (DATES.has(name)) return instant(a) - instant(b);
  if (NUMBERS.has(name)) return Number(a) - Number(b);
  return a.toLowerCase().localeCompare(b.toLowerCase());
}

const valueKey = (type: HubSpotObjectType, name: string, value: string) => `${type}\n${name}\n${String(value).toLowerCase()}`;

const instant = (value: string): number => (/^\d+$/.test(value) ? Number(value) : Date.parse(value));

/**
 * The records of the loopback Autotask (fake-autotask.ts) and the REST API's query language over
 * them, as Autotask's "Making basic query calls to the REST API" describes it: a `filter` array of
 * expressions `{op, field, value}` that must all hold, the grouping operators `and` / `or` with
 * `items`, and the comparison, string and list operators; strings compare without regard to case,
 * as Autotask's do. Creates and updates are checked as Autotask checks them: the fields an entity
 * has (its entityInformation/fields), the ones it requires, picklist values and references, each
 * refusal worded in Autotask's {errors: [..]} body.
 */

export type AutotaskRecord = Record<string, unknown> & { id: number };

export type AutotaskEntity = 'Companies' | 'Opportunities' | 'Contracts' | 'ContractCharges' | 'Projects' | 'ProjectCharges' | 'Resources' | 'Countries';

/** A refusal of a create, update or query, in Autotask's words. */
export class FakeAutotaskRefusal extends Error {
  constructor(
    readonly errors: string[],
    readonly status = 500,
  ) {
    super(errors.join('; '));
  }
}

interface EntityRules {
  /** The entity's fields (the documents' field lists, as entityInformation/fields names them). */
  fields: string[];
  required: string[];
  /** Fields that reference another entity's id. */
  references?: Record<string, AutotaskEntity>;
  /** Picklist fields and their values. */
  picklists?: Record<string, Array<number | string>>;
}

const CHARGE_FIELDS = [
  'billableAmount',
  'billingCodeID',
  'chargeType',
  'contractServiceBundleID',
  'contractServiceID',
  'createDate',
  'creatorResourceID',
  'datePurchased',
  'description',
  'extendedCost',
  'internalCurrencyBillableAmount',
  'internalCurrencyUnitPrice',
  'internalPurchaseOrderNumber',
  'isBillableToCompany',
  'isBilled',
  'name',
  'notes',
  'organizationalLevelAssociationID',
  'productID',
  'purchaseOrderNumber',
  'status',
  'statusLastModifiedBy',
  'statusLastModifiedDate',
  'unitCost',
  'unitPrice',
  'unitQuantity',
];

/** The system picklists: Opportunity status, Company type, Contract type and status, Project type and status, charge type. */
export const OPPORTUNITY_STATUSES = [
  { value: 0, label: 'Not Ready To Buy' },
  { value: 1, label: 'Active' },
  { value: 2, label: 'Lost' },
  { value: 3, label: 'Closed' },
  { value: 4, label: 'Implemented' },
];

const RULES: Record<AutotaskEntity, EntityRules> = {
  Companies: {
    fields: [
      'additionalAddressInformation',
      'address1',
      'address2',
      'alternatePhone1',
      'alternatePhone2',
      'city',
      'classification',
      'companyName',
      'companyNumber',
      'companyType',
      'countryID',
      'createDate',
      'fax',
      'isActive',
      'marketSegmentID',
      'ownerResourceID',
      'parentCompanyID',
      'phone',
      'postalCode',
      'state',
      'territoryID',
      'webAddress',
    ],
    required: ['companyName', 'companyType', 'ownerResourceID', 'phone'],
    references: { ownerResourceID: 'Resources', countryID: 'Countries', parentCompanyID: 'Companies' },
    picklists: { companyType: [1, 2, 3, 4, 6, 7, 8] },
  },
  Opportunities: {
    fields: [
      'amount',
      'barriers',
      'closedDate',
      'companyID',
      'contactID',
      'cost',
      'createDate',
      'description',
      'helpNeeded',
      'lossReason',
      'lossReasonDetail',
      'market',
      'nextStep',
      'opportunityCategoryID',
      'ownerResourceID',
      'probability',
      'projectedCloseDate',
      'promotionName',
      'stage',
      'startDate',
      'status',
      'title',
      'totalAmountMonths',
      'useQuoteTotals',
      'winReason',
      'winReasonDetail',
    ],
    required: [
      'amount',
      'companyID',
      'cost',
      'ownerResourceID',
      'probability',
      'projectedCloseDate',
      'stage',
      'startDate',
      'status',
      'title',
      'useQuoteTotals',
    ],
    references: { companyID: 'Companies', ownerResourceID: 'Resources' },
    picklists: { status: OPPORTUNITY_STATUSES.map((status) => status.value) },
  },
  Contracts: {
    fields: [
      'billingPreference',
      'companyID',
      'contactID',
      'contractCategory',
      'contractName',
      'contractNumber',
      'contractPeriodType',
      'contractType',
      'description',
      'endDate',
      'estimatedCost',
      'estimatedHours',
      'estimatedRevenue',
      'isDefaultContract',
      'opportunityID',
      'purchaseOrderNumber',
      'serviceLevelAgreementID',
      'setupFee',
      'startDate',
      'status',
      'timeReportingRequiresStartAndStopTimes',
    ],
    required: ['companyID', 'contractName', 'contractType', 'endDate', 'startDate', 'status', 'timeReportingRequiresStartAndStopTimes'],
    references: { companyID: 'Companies', opportunityID: 'Opportunities' },
    // 1 Time and Materials, 3 Fixed Price, 4 Block Hours, 6 Retainer, 7 Recurring Service, 8 Per Ticket; status 0 Inactive, 1 Active.
    picklists: { contractType: [1, 3, 4, 6, 7, 8], status: [0, 1] },
  },
  ContractCharges: {
    fields: ['contractID', ...CHARGE_FIELDS],
    required: ['chargeType', 'contractID', 'datePurchased', 'name', 'unitQuantity'],
    references: { contractID: 'Contracts' },
    // 1 Operational, 2 Capitalized.
    picklists: { chargeType: [1, 2] },
  },
  Projects: {
    fields: [
      'companyID',
      'contractID',
      'department',
      'description',
      'endDateTime',
      'estimatedSalesCost',
      'estimatedTime',
      'extProjectNumber',
      'opportunityID',
      'projectLeadResourceID',
      'projectName',
      'projectNumber',
      'projectType',
      'purchaseOrderNumber',
      'startDateTime',
      'status',
      'statusDetail',
    ],
    required: ['companyID', 'endDateTime', 'projectName', 'projectType', 'startDateTime', 'status'],
    references: { companyID: 'Companies', opportunityID: 'Opportunities', projectLeadResourceID: 'Resources' },
    // Type 5 Client and 4 Internal among the system types; status 1 New, 2 Inactive, 5 Complete among the statuses.
    picklists: { projectType: [2, 3, 4, 5, 8], status: [1, 2, 5] },
  },
  ProjectCharges: {
    fields: ['projectID', 'estimatedCost', ...CHARGE_FIELDS],
    required: ['chargeType', 'datePurchased', 'name', 'projectID', 'unitQuantity'],
    references: { projectID: 'Projects' },
    picklists: { chargeType: [1, 2] },
  },
  Resources: { fields: ['email', 'firstName', 'isActive', 'lastName', 'userName', 'resourceType'], required: [] },
  Countries: { fields: ['countryCode', 'displayName', 'isActive', 'isDefaultCountry', 'name'], required: [] },
};

/** A filter expression as the REST API takes it. */
interface Expression {
  op?: unknown;
  field?: unknown;
  value?: unknown;
  udf?: unknown;
  items?: unknown;
}

const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);

export class FakeAutotaskStore {
  private readonly records = new Map<AutotaskEntity, AutotaskRecord[]>();
  private nextId = 29_682_000;
  /** The Opportunity Stage picklist: each database's own list (Admin › Sales & Opportunities › Opportunity Stages). */
  stages: Array<{ value: number; label: string; isDefaultValue: boolean; isActive: boolean; sortOrder: number }> = [
    { value: 1, label: 'Initial Contact', isDefaultValue: true, isActive: true, sortOrder: 1 },
    { value: 2, label: 'Needs Assessment', isDefaultValue: false, isActive: true, sortOrder: 2 },
    { value: 3, label: 'Proposal Sent', isDefaultValue: false, isActive: true, sortOrder: 3 },
    { value: 4, label: 'Negotiation', isDefaultValue: false, isActive: true, sortOrder: 4 },
    { value: 5, label: 'Retired Stage', isDefaultValue: false, isActive: false, sortOrder: 5 },
  ];

  constructor() {
    const countries: Array<[string, string]> = [
      ['US', 'United States'],
      ['GB', 'United Kingdom'],
      ['DE', 'Germany'],
      ['FR', 'France'],
      ['NL', 'Netherlands'],
      ['CA', 'Canada'],
      ['AU', 'Australia'],
    ];
    for (const [countryCode, name] of countries) {
      this.insert('Countries', { countryCode, name, displayName: name, isActive: true, isDefaultCountry: countryCode === 'US' });
    }
  }

  all(entity: AutotaskEntity): AutotaskRecord[] {
    return this.records.get(entity) ?? [];
  }

  find(entity: AutotaskEntity, id: number): AutotaskRecord | undefined {
    return this.all(entity).find((record) => record.id === id);
  }

  /** A record as someone made it in Autotask (a company a test matches): no checks. */
  insert(entity: AutotaskEntity, fields: Record<string, unknown>): AutotaskRecord {
    const record: AutotaskRecord = { ...fields, id: this.nextId++ };
    this.records.set(entity, [...this.all(entity), record]);
    return record;
  }

  /** A record someone deleted in Autotask. */
  remove(entity: AutotaskEntity, id: number): void {
    this.records.set(
      entity,
      this.all(entity).filter((record) => record.id !== id),
    );
  }

  /** POST: the new record's id, or a refusal naming every field that is wrong. */
  create(entity: AutotaskEntity, body: Record<string, unknown>): AutotaskRecord {
    const fields = { ...body };
    delete fields.id;
    this.check(entity, fields, true);
    const today = new Date().toISOString();
    return this.insert(entity, { ...fields, ...(RULES[entity].fields.includes('createDate') ? { createDate: today } : {}) });
  }

  /** PATCH: only the fields sent change; an id no record has is a 404. */
  update(entity: AutotaskEntity, body: Record<string, unknown>): AutotaskRecord {
    const record = typeof body.id === 'number' ? this.find(entity, body.id) : undefined;
    if (!record) throw new FakeAutotaskRefusal([`${entity} with id ${String(body.id)} does not exist.`], 404);
    const fields = { ...body };
    delete fields.id;
    this.check(entity, fields, false);
    Object.assign(record, fields);
    return record;
  }

  /** The records a search's filter selects, in id order, at most `max` of them (Autotask's page is 500). */
  query(entity: AutotaskEntity, search: Record<string, unknown>, max = 500): AutotaskRecord[] {
    const filter = search.filter ?? search.Filter;
    if (!Array.isArray(filter) || filter.length === 0) throw new FakeAutotaskRefusal(['A query requires at least one filter expression.']);
    const matches = this.all(entity).filter((record) => filter.every((expression: Expression) => this.holds(entity, record, expression)));
    return matches.slice(0, max);
  }

  /** What entityInformation/fields answers for an entity: every field, with the picklists' values. */
  fieldsOf(entity: AutotaskEntity): Array<Record<string, unknown>> {
    const rules = RULES[entity];
    return ['id', ...rules.fields].map((name) => {
      const picklistValues = this.picklistOf(entity, name);
      return {
        name,
        dataType: 'string',
        length: 0,
        isRequired: rules.required.includes(name),
        isReadOnly: name === 'id',
        isQueryable: true,
        isReference: Boolean(rules.references?.[name]),
        referenceEntityType: rules.references?.[name] ?? '',
        isPickList: picklistValues !== undefined,
        picklistValues: picklistValues ?? null,
        picklistParentValueField: '',
        isSupportedWebhookField: false,
      };
    });
  }

  private picklistOf(entity: AutotaskEntity, field: string): Array<Record<string, unknown>> | undefined {
    const entry = (value: number, label: string, sortOrder: number, isActive = true, isDefaultValue = false, isSystem = true) => ({
      value: String(value),
      label,
      isDefaultValue,
      sortOrder,
      parentValue: '',
      isActive,
      isSystem,
    });
    if (entity === 'Opportunities' && field === 'stage') {
      return this.stages.map((stage) => entry(stage.value, stage.label, stage.sortOrder, stage.isActive, stage.isDefaultValue, false));
    }
    if (entity === 'Opportunities' && field === 'status') return OPPORTUNITY_STATUSES.map((status, i) => entry(status.value, status.label, i + 1));
    return undefined;
  }

  private check(entity: AutotaskEntity, fields: Record<string, unknown>, creating: boolean): void {
    const rules = RULES[entity];
    const errors: string[] = [];
    for (const name of Object.keys(fields)) {
      if (!rules.fields.includes(name)) errors.push(`Unable to find ${name} in the ${entity} entity.`);
    }
    for (const name of rules.required) {
      const value = fields[name];
      const missing = value === undefined || value === null || value === '';
      if ((creating && missing) || (!creating && name in fields && missing)) errors.push(`Value for required field ${name} is missing.`);
    }
    for (const [name, values] of Object.entries(rules.picklists ?? {})) {
      if (fields[name] !== undefined && fields[name] !== null && !values.includes(fields[name] as number)) {
        errors.push(`Value ${String(fields[name])} is not a valid value for ${name}.`);
      }
    }
    if (entity === 'Opportunities' && fields.stage !== undefined && !this.stages.some((stage) => stage.value === fields.stage && stage.isActive)) {
      errors.push(`Value ${String(fields.stage)} is not a valid value for stage.`);
    }
    for (const [name, target] of Object.entries(rules.references ?? {})) {
      const value = fields[name];
      if (value !== undefined && value !== null && (typeof value !== 'number' || !this.find(target, value))) {
        errors.push(`Reference value on field: ${name} of type: ${target} does not exist or is invalid.`);
      }
    }
    if (errors.length) throw new FakeAutotaskRefusal(errors);
  }

  private holds(entity: AutotaskEntity, record: AutotaskRecord, expression: Expression): boolean {
    const op = typeof expression.op === 'string' ? expression.op.toLowerCase() : '';
    if (op === 'and' || op === 'or') {
      if (!Array.isArray(expression.items) || expression.items.length === 0) throw new FakeAutotaskRefusal([`The ${op} operator requires items.`]);
      const items = expression.items as Expression[];
      return op === 'and' ? items.every((item) => this.holds(entity, record, item)) : items.some((item) => this.holds(entity, record, item));
    }
    if (expression.udf) throw new FakeAutotaskRefusal([`${entity} has no user-defined field ${String(expression.field)}.`]);
    const field = typeof expression.field === 'string' ? expression.field : '';
    const name = ['id', ...RULES[entity].fields].find((known) => known.toLowerCase() === field.toLowerCase());
    if (!name) throw new FakeAutotaskRefusal([`Unable to find ${field} in the ${entity} entity.`]);
    const actual = lower(record[name]);
    const wanted = lower(expression.value);
    const text = (value: unknown) => (value === undefined || value === null ? '' : String(value));
    switch (op) {
      case 'eq':
        return actual === wanted;
      case 'noteq':
        return actual !== wanted;
      case 'gt':
        return (actual as number) > (wanted as number);
      case 'gte':
        return (actual as number) >= (wanted as number);
      case 'lt':
        return (actual as number) < (wanted as number);
      case 'lte':
        return (actual as number) <= (wanted as number);
      case 'beginswith':
        return text(actual).startsWith(text(wanted));
      case 'endswith':
        return text(actual).endsWith(text(wanted));
      case 'contains':
        return text(actual).includes(text(wanted));
      case 'exist':
        return actual !== undefined && actual !== null && actual !== '';
      case 'notexist':
        return actual === undefined || actual === null || actual === '';
      case 'in':
        return Array.isArray(expression.value) && expression.value.map(lower).includes(actual);
      case 'notin':
        return Array.isArray(expression.value) && !expression.value.map(lower).includes(actual);
      default:
        throw new FakeAutotaskRefusal([`${String(expression.op)} is not a valid operator.`]);
    }
  }
}

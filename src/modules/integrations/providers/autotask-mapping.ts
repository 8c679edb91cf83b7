import { defaultStageMap, type StageMap } from '../sync/stage-map';
import type { AutotaskFilter } from './autotask-http';

/** Our stages onto Autotask's opportunity statuses (stage-map.ts says why these). */
export const DEFAULT_Autotask_STAGE_MAP: StageMap = defaultStageMap('autotask');

/** Opportunity status (system picklist). */
export const OPPORTUNITY_STATUS = { active: 1, lost: 2, closed: 3, implemented: 4 } as const;
/** Company type (system picklist: 1 Customer, 2 Lead, 3 Prospect, …): a lead's company is a prospect until the MSP says otherwise. */
export const COMPANY_TYPE_PROSPECT = 3;
/**
 * Autotask requires a phone number on every company (Companies.phone is required) and a lead
 * carries none, so a company made from a lead says so rather than holding a made-up number.
 */
export const PHONE_NOT_GIVEN = 'Not given';
/** A new open opportunity's probability: Autotask requires one and a deal of ours has none. Won is 100, lost 0. */
export const OPEN_PROBABILITY = 50;

/** Field lengths Autotask allows: a longer value is refused, so it is cut here. */
export const MAX = { companyName: 100, webAddress: 255, title: 128, recordName: 100, chargeName: 100, description: 2000 } as const;

/** A value cut to Autotask's length for its field. */
export const fit = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A date (YYYY-MM-DD) as Autotask's datetime fields take it. */
export const dateTime = (date: string): string => `${date}T00:00:00Z`;

export const today = (): string => new Date().toISOString().slice(0, 10);

export function addDays(date: string, days: number): string {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() + days);
  return day.toISOString().slice(0, 10);
}

/** A filter expression: the field equals the value (the REST API ANDs a filter's top-level expressions). */
export const eq = (field: string, value: unknown): AutotaskFilter => ({ op: 'eq', field, value });

interface PicklistValue {
  value?: unknown;
  label?: unknown;
  isActive?: unknown;
  isDefaultValue?: unknown;
  sortOrder?: unknown;
}

export interface FieldInformation {
  name?: unknown;
  picklistValues?: PicklistValue[] | null;
}

/** What an opportunity's status and stage become for a stage map's value. */
export interface OpportunityTarget {
  status: number;
  /** Set when the value names a stage; a status leaves the stage as it is. */
  stage?: number;
}

const label = (text: unknown) => (typeof text === 'string' ? text.trim().toLowerCase() : '');

/**
 * The Opportunities entity's status and stage picklists (GET Opportunities/entityInformation/fields),
 * read once per client: a stage map's value is a status label, else an active stage's label.
 */
export class OpportunityPicklists {
  private constructor(
    private readonly statuses: Map<string, number>,
    private readonly stages: Map<string, number>,
    /** The stage a new opportunity gets when its value names a status: the list's default, else its first active stage. */
    readonly defaultStage: number | undefined,
  ) {}

  static of(fields: FieldInformation[]): OpportunityPicklists {
    const valuesOf = (name: string) =>
      (fields.find((field) => field.name === name)?.picklistValues ?? [])
        .filter((value) => value.isActive !== false)
        .map((value) => ({ ...value, id: Number(value.value) }))
        .filter((value) => Number.isInteger(value.id))
        .sort((a, b) => Number(a.sortOrder ?? 0) - Number(b.sortOrder ?? 0));
    const statuses = new Map(valuesOf('status').map((value) => [label(value.label), value.id]));
    const stages = valuesOf('stage');
    const fallback = stages.find((stage) => stage.isDefaultValue === true) ?? stages[0];
    return new OpportunityPicklists(statuses, new Map(stages.map((stage) => [label(stage.label), stage.id])), fallback?.id);
  }

  target(value: string): OpportunityTarget | undefined {
    const status = this.statuses.get(label(value));
    if (status !== undefined) return { status };
    const stage = this.stages.get(label(value));
    return stage === undefined ? undefined : { status: OPPORTUNITY_STATUS.active, stage };
  }
}

/** The probability a status implies: won 100, lost 0; none for an open one (left as the MSP has it). */
export function probabilityOf(status: number): number | undefined {
  if (status === OPPORTUNITY_STATUS.closed || status === OPPORTUNITY_STATUS.implemented) return 100;
  return status === OPPORTUNITY_STATUS.lost ? 0 : undefined;
}

import { IsIn, IsOptional, Length, Matches, ValidateNested } from 'class-validator';
import { Field, InputType, ObjectType } from 'type-graphql';
import { snakeToCamel } from '../../../common/case';
import { NOT_BLANK, rules } from '../../../common/validation';
import { DealStage } from '../../deals/deal-stage';
import type { SyncProvider } from '../providers/crm-client';
import { DELIVERY_RECORDS } from './delivery-records';

const STAGE_VALUE = () =>
  rules(Length(1, 100, { message: '$property must be 1 to 100 characters' }), Matches(NOT_BLANK, { message: '$property must not be blank' }));

const describe = (stage: DealStage) => `The CRM's or PSA's stage value for our ${stage}.`;

/**
 * Our six stages onto the provider's values (HubSpot: a deal stage's internal id; Salesforce: a
 * StageName; a PSA: the opportunity stage or status name its client documents).
 */
@ObjectType({ simpleResolvers: true, description: "Our deal stages onto the CRM's or PSA's: every stage mapped." })
@InputType('StageMapInput', { description: "Our deal stages onto the CRM's or PSA's; every stage must be mapped." })
export class StageMap {
  @Field({ description: describe(DealStage.prospecting) })
  @STAGE_VALUE()
  prospecting!: string;

  @Field({ description: describe(DealStage.qualification) })
  @STAGE_VALUE()
  qualification!: string;

  @Field({ description: describe(DealStage.proposal) })
  @STAGE_VALUE()
  proposal!: string;

  @Field({ description: describe(DealStage.negotiation) })
  @STAGE_VALUE()
  negotiation!: string;

  @Field({ description: describe(DealStage.closed_won) })
  @STAGE_VALUE()
  closedWon!: string;

  @Field({ description: describe(DealStage.closed_lost) })
  @STAGE_VALUE()
  closedLost!: string;
}

const ALL_DELIVERY_RECORDS = [...new Set(Object.values(DELIVERY_RECORDS).flat())];

/** What an integration may be told besides its credentials. */
@ObjectType({ simpleResolvers: true, description: 'How the integration syncs.' })
@InputType('IntegrationSettingsInput', { description: 'How the integration syncs.' })
export class IntegrationSettings {
  @Field(() => StageMap, {
    nullable: true,
    description:
      "CRMs: our deal stages onto the CRM's. Defaults to HubSpot's default sales pipeline or Salesforce's standard StageName values; null sets the default again.",
  })
  @IsOptional()
  @ValidateNested()
  stageMap?: StageMap | null;

  @Field(() => String, {
    nullable: true,
    description:
      "PSAs: the record a won deal's latest proposal becomes: connectwise `project` (default) or `agreement`; autotask `contract` (default) or `project`; halopsa `contract` (default) or `ticket`. null sets the default again.",
  })
  @IsOptional()
  @IsIn(ALL_DELIVERY_RECORDS, { message: `$property must be one of ${ALL_DELIVERY_RECORDS.join(', ')}` })
  deliveryRecord?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      "ConnectWise: the member (identifier or e-mail) made an opportunity's primary sales rep when the deal's owner is not an active member of the site (ConnectWise requires one).",
  })
  @IsOptional()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  salesRep?: string | null;

  @Field(() => String, {
    nullable: true,
    // A key of the row's own settings JSON, read with it: free, so a full page of 100 integrations keeps within the cost limit.
    complexity: 0,
    description:
      'Model providers: the model each request names. openai defaults to `gpt-4o-mini`; azure_openai to the deployment (Azure answers with the model deployed there); openai_compatible has no default and needs one (e.g. `llama3.1:8b`). null sets the default again.',
  })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  @Matches(/^[\x21-\x7e]+$/, { message: '$property must be printable ASCII characters without spaces' })
  model?: string | null;
}

/**
 * HubSpot's default sales pipeline ("default"): its stages' internal ids. HubSpot has no stage
 * between "decision maker bought in" and "contract sent" that means negotiation better than the
 * contract; the one left over comes back as negotiation (INBOUND_EXTRAS).
 */
const HUBSPOT: StageMap = {
  prospecting: 'appointmentscheduled',
  qualification: 'qualifiedtobuy',
  proposal: 'presentationscheduled',
  negotiation: 'contractsent',
  closedWon: 'closedwon',
  closedLost: 'closedlost',
};

/** Salesforce's standard Opportunity StageName picklist. */
const SALESFORCE: StageMap = {
  prospecting: 'Prospecting',
  qualification: 'Qualification',
  proposal: 'Proposal/Price Quote',
  negotiation: 'Negotiation/Review',
  closedWon: 'Closed Won',
  closedLost: 'Closed Lost',
};

/**
 * ConnectWise: closed deals go to the Won and Lost opportunity statuses a site is installed with
 * (a status with the won or lost flag is how ConnectWise closes an opportunity). Open deals go to
 * sales stages, which a site's administrator sets up (Setup Tables › Opportunity Stage;
 * ConnectWise's documentation gives Qualified Lead and Proposal Presented as examples), so the
 * defaults are names a site is likely to have or to add; a deal whose stage the site lacks is
 * refused with what to add or to map. The client looks each value up by name on open() (statuses
 * first, then stages; any case).
 */
const CONNECTWISE: StageMap = {
  prospecting: 'Prospect',
  qualification: 'Qualified Lead',
  proposal: 'Proposal Presented',
  negotiation: 'Negotiation',
  closedWon: 'Won',
  closedLost: 'Lost',
};

/**
 * Autotask: our stages onto its Opportunity Status picklist. The status list is a system list, the
 * same in every Autotask database (0 Not Ready To Buy, 1 Active, 2 Lost, 3 Closed, 4 Implemented),
 * and it is what closes an opportunity as won (Closed) or lost (Lost); the Opportunity Stage list
 * is each database's own (Admin › Features & Settings › Sales & Opportunities › Opportunity
 * Stages), with no names the documentation promises. So every open stage of ours is Active by
 * default; a stage map may name the database's own stages instead ("Proposal Sent"), which the
 * client sets with status Active.
 */
const AUTOTASK: StageMap = {
  prospecting: 'Active',
  qualification: 'Active',
  proposal: 'Active',
  negotiation: 'Active',
  closedWon: 'Closed',
  closedLost: 'Lost',
};

/**
 * HaloPSA: our stages onto status names, as `fields.stage` carries them; the client looks the
 * status up by name (GET /api/Status, once per run) and sends its id. HaloPSA's out-of-the-box
 * statuses hold no stage of a sale between New and a close, so the open stages past prospecting
 * share In Progress; won and lost close the opportunity with HaloPSA's Won and Lost statuses. A
 * tenant whose opportunity workflow has statuses of its own maps onto them in the integration's
 * stage map; a name the instance lacks fails that deal, saying which, and the run goes on.
 */
const HALOPSA: StageMap = {
  prospecting: 'New',
  qualification: 'In Progress',
  proposal: 'In Progress',
  negotiation: 'In Progress',
  closedWon: 'Won',
  closedLost: 'Lost',
};

/** The provider's default stages that no stage of ours maps onto, and which of ours they come back as (CRMs: PSAs are push only). */
const INBOUND_EXTRAS: Partial<Record<SyncProvider, Record<string, DealStage>>> = {
  hubspot: { decisionmakerboughtin: DealStage.negotiation },
  salesforce: {
    'Needs Analysis': DealStage.qualification,
    'Value Proposition': DealStage.qualification,
    'Id. Decision Makers': DealStage.qualification,
    'Perception Analysis': DealStage.proposal,
  },
};

/** The map's value for one of our stages (the map's fields are our stages in GraphQL's camelCase). */
export const crmStage = (map: StageMap, stage: DealStage): string => map[snakeToCamel(stage) as keyof StageMap];

const DEFAULTS: Record<SyncProvider, StageMap> = {
  hubspot: HUBSPOT,
  salesforce: SALESFORCE,
  connectwise: CONNECTWISE,
  autotask: AUTOTASK,
  halopsa: HALOPSA,
};

export function defaultStageMap(provider: SyncProvider): StageMap {
  return { ...DEFAULTS[provider] };
}

/**
 * Our stage for the CRM's value: the stage map read backwards (when two of ours share a value, the
 * earlier stage), then the provider's other default stages; null when the value means nothing here.
 */
export function stageFromCrm(map: StageMap, provider: SyncProvider, value: string): DealStage | null {
  for (const stage of Object.values(DealStage)) if (crmStage(map, stage) === value) return stage;
  return INBOUND_EXTRAS[provider]?.[value] ?? null;
}

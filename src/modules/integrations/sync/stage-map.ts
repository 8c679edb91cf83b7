import { IsOptional, Length, Matches, ValidateNested } from 'class-validator';
import { Field, InputType, ObjectType } from 'type-graphql';
import { snakeToCamel } from '../../../common/case';
import { NOT_BLANK, rules } from '../../../common/validation';
import { DealStage } from '../../deals/deal-stage';

const STAGE_VALUE = () =>
  rules(Length(1, 100, { message: '$property must be 1 to 100 characters' }), Matches(NOT_BLANK, { message: '$property must not be blank' }));

const describe = (stage: DealStage) => `The CRM's stage value for our ${stage}.`;

/** Our six stages onto the CRM's values (HubSpot: a deal stage's internal id; Salesforce: a StageName). */
@ObjectType({ simpleResolvers: true, description: "Our deal stages onto the CRM's: every stage mapped." })
@InputType('StageMapInput', { description: "Our deal stages onto the CRM's; every stage must be mapped." })
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

/** The provider's default stages that no stage of ours maps onto, and which of ours they come back as. */
const INBOUND_EXTRAS: Record<'hubspot' | 'salesforce', Record<string, DealStage>> = {
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

export function defaultStageMap(provider: 'hubspot' | 'salesforce'): StageMap {
  return { ...(provider === 'hubspot' ? HUBSPOT : SALESFORCE) };
}

/**
 * Our stage for the CRM's value: the stage map read backwards (when two of ours share a value, the
 * earlier stage), then the provider's other default stages; null when the value means nothing here.
 */
export function stageFromCrm(map: StageMap, provider: 'hubspot' | 'salesforce', value: string): DealStage | null {
  for (const stage of Object.values(DealStage)) if (crmStage(map, stage) === value) return stage;
  return INBOUND_EXTRAS[provider][value] ?? null;
}

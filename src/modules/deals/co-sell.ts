import { DealStage, isClosed, stageRank } from './deal-stage';

/** At least this value, in hundredths (1,000.00 in the deal's currency). */
export const CO_SELL_MIN_VALUE_MINOR = 100_000;

export interface CoSellFacts {
  stage: DealStage;
  valueMinor: number;
  lead: { company?: string | null; contactEmail?: string | null } | null;
  m365Connected: boolean;
}

export interface CoSellProblem {
  rule: 'stage' | 'value' | 'lead' | 'm365_integration';
  message: string;
}

/**
 * The eligibility rules of CONTRACT §6, all checked so a client learns every reason at once: an
 * open stage at or past qualification, a value of at least 1,000, a linked lead with company and
 * contact email, and a connected Microsoft 365 integration in the same mode.
 */
export function coSellProblems(facts: CoSellFacts): CoSellProblem[] {
  const problems: CoSellProblem[] = [];
  if (isClosed(facts.stage) || stageRank(facts.stage) < stageRank(DealStage.qualification)) {
    problems.push({ rule: 'stage', message: `the deal must be in qualification, proposal or negotiation, not ${facts.stage}` });
  }
  if (facts.valueMinor < CO_SELL_MIN_VALUE_MINOR) {
    problems.push({ rule: 'value', message: 'the deal value must be at least 1,000 in its currency' });
  }
  if (!facts.lead) {
    problems.push({ rule: 'lead', message: 'the deal must be linked to a lead' });
  } else if (!facts.lead.company?.trim() || !facts.lead.contactEmail?.trim()) {
    problems.push({ rule: 'lead', message: 'the linked lead must have a company and a contact email' });
  }
  if (!facts.m365Connected) {
    problems.push({ rule: 'm365_integration', message: 'a Microsoft 365 integration must be connected in this mode' });
  }
  return problems;
}

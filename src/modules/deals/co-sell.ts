import { DealStage, isClosed, stageRank } from './deal-stage';

/** At least this value, in hundredths (1,000.00 in the deal's currency). */
export const CO_SELL_MIN_VALUE_MINOR = 100_000;

export interface CoSellLead {
  company?: string | null;
  contactEmail?: string | null;
  contactName?: string | null;
  country?: string | null;
}

export interface CoSellFacts {
  stage: DealStage;
  valueMinor: number;
  lead: CoSellLead | null;
  /**
   * Live registrations become Partner Center referrals, so live mode asks for what a referral
   * needs too; test mode has no partner program behind it and keeps the four rules of CONTRACT §6.
   */
  livemode?: boolean;
  /** Test mode: a connected microsoft365 integration. */
  m365Connected: boolean;
  /** Live mode: a connected partner_center integration, which the referral goes through. */
  partnerCenterConnected?: boolean;
  expectedCloseDate?: string | null;
}

export type CoSellRule = 'stage' | 'value' | 'lead' | 'm365_integration' | 'partner_center_integration' | 'expected_close_date' | 'contact_name' | 'country';

export interface CoSellProblem {
  rule: CoSellRule;
  message: string;
}

/**
 * The contact's first and last name as Partner Center's customer team member takes them: the last
 * word is the last name, the words before it the first name ("Ada King Lovelace" → "Ada King" /
 * "Lovelace"); a name of one word has no last name to give (null).
 */
export function contactNameParts(contactName: string | null | undefined): { firstName: string; lastName: string } | null {
  const words = (contactName ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length < 2) return null;
  const lastName = words.pop()!;
  return { firstName: words.join(' '), lastName };
}

const REGIONS = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
/** Codes ICU names that are no country: the unknown region, the EU, the eurozone, the UN, outlying Oceania. */
const NOT_COUNTRIES = new Set(['ZZ', 'EU', 'EZ', 'UN', 'QO']);

/**
 * The lead's country as Partner Center's customer address takes it: an ISO 3166-1 alpha-2 code
 * (`US`, `de` → `DE`; `UK`, reserved for the United Kingdom, → `GB`), or null when the lead's
 * country is missing or not such a code.
 */
export function countryCode(country: string | null | undefined): string | null {
  const code = (country ?? '').trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code) || NOT_COUNTRIES.has(code)) return null;
  if (code === 'UK') return 'GB';
  return REGIONS.of(code) ? code : null;
}

/**
 * The eligibility rules (CONTRACT §6), all checked so a client learns every reason at once. In live mode the
 * registration becomes a Partner Center referral, so the integration must be partner_center (also of type m365)
 * and what a referral requires (closing date, contact's first and last name, ISO country) is a reason too.
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
  if (!facts.livemode) {
    if (!facts.m365Connected) {
      problems.push({ rule: 'm365_integration', message: 'a Microsoft 365 integration must be connected in this mode' });
    }
    return problems;
  }
  if (!facts.partnerCenterConnected) {
    problems.push({
      rule: 'partner_center_integration',
      message: 'a Partner Center integration (provider partner_center) must be connected in live mode: live registrations become Partner Center referrals',
    });
  }
  if (!facts.expectedCloseDate) {
    problems.push({ rule: 'expected_close_date', message: 'the deal must have an expected close date: Partner Center requires the closing date' });
  }
  if (facts.lead && !contactNameParts(facts.lead.contactName)) {
    problems.push({
      rule: 'contact_name',
      message: "the linked lead must have a contact name with a first and a last name: Partner Center requires both for the customer's contact",
    });
  }
  if (facts.lead && !countryCode(facts.lead.country)) {
    problems.push({
      rule: 'country',
      message: "the linked lead's country must be a two-letter ISO 3166 code such as US or DE: Partner Center requires the customer's country",
    });
  }
  return problems;
}

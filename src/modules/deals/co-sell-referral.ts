import type { PartnerCenterReferral } from '../integrations/providers/partner-center-client';
import { contactNameParts, countryCode } from './co-sell';
import { CoSellStatus } from './deal.entity';

/**
 * A deal as a Partner Center referral, and a referral's status as a co-sell status: the mapping
 * between our registration and Microsoft's referral ("Create a referral"; "Referral resources").
 */

export interface ReferralSource {
  registrationId: string;
  deal: { id: string; name: string; valueMinor: number; currency: string; expectedCloseDate?: string | null };
  lead: { company: string; contactEmail: string; contactName?: string | null; country?: string | null };
}

/**
 * The body of POST /v1.0/engagements/referrals for a co-sell deal; externalReferenceId is our registration id, by
 * which a retry finds a referral an attempt created before it crashed. Every consent flag is true: registering is
 * the partner's statement that the customer agreed to be contacted and to share the details with Microsoft's
 * sellers (the API spells one flag `consentToToShareInfoWithOthers`). Throws when the lead has lost a field
 * eligibility requires; the caller ends the registration with the reason.
 */
export function referralBody(source: ReferralSource): object {
  const { deal, lead } = source;
  const name = contactNameParts(lead.contactName);
  const country = countryCode(lead.country);
  if (!name)
    throw new Error("the linked lead no longer has a contact name with a first and a last name, which Partner Center requires for the customer's contact");
  if (!country) throw new Error("the linked lead's country is no longer a two-letter ISO 3166 code, which Partner Center requires");
  if (!deal.expectedCloseDate) throw new Error('the deal no longer has an expected close date, which Partner Center requires');
  return {
    name: deal.name,
    externalReferenceId: source.registrationId,
    type: 'Shared',
    status: 'New',
    substatus: 'Pending',
    customerProfile: {
      name: lead.company,
      address: { country },
      team: [{ firstName: name.firstName, lastName: name.lastName, email: lead.contactEmail }],
    },
    consent: { consentToToShareInfoWithOthers: true, consentToContact: true, consentToShareReferralWithMicrosoftSellers: true },
    details: {
      dealValue: deal.valueMinor / 100,
      currency: deal.currency,
      closingDateTime: `${deal.expectedCloseDate}T00:00:00Z`,
      notes: `Co-sell registration ${source.registrationId} of deal ${deal.id}.`,
    },
  };
}

/**
 * A referral's status and substatus as a co-sell status, or null for a pair this mapping does not
 * know (the registration then stays as it is). Partner Center's pairs: New with Pending or
 * Received, Active with Accepted, Closed with Won, Lost, Declined or Expired. `Engaged` (how
 * Microsoft's side of a co-sell engagement words an accepted one) counts as accepted too.
 */
export function coSellStatusOf(referral: Pick<PartnerCenterReferral, 'status' | 'substatus'>): CoSellStatus | null {
  const status = referral.status.toLowerCase();
  const substatus = referral.substatus.toLowerCase();
  if (status === 'active' || status === 'engaged' || (status === 'new' && substatus === 'engaged')) return CoSellStatus.accepted;
  if (status === 'new') return CoSellStatus.submitted;
  if (status !== 'closed') return null;
  switch (substatus) {
    case 'won':
      return CoSellStatus.won;
    case 'lost':
    case 'declined':
      return CoSellStatus.rejected;
    case 'expired':
      return CoSellStatus.expired;
    default:
      return null;
  }
}

/** Statuses after which a referral no longer moves: its registration is no longer followed. */
export const FINAL_CO_SELL_STATUSES: readonly CoSellStatus[] = [CoSellStatus.rejected, CoSellStatus.expired, CoSellStatus.won];

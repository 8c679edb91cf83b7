import type { LeadFeatures } from './lead-scorer';
import type { LabelledLead } from './learned-model';
import { seededRandom } from '../../common/random';

const INDUSTRIES = ['Software', 'Healthcare', 'Manufacturing', 'Retail', 'Financial services', 'Education', 'Non-profit', 'Logistics'];
const SOURCES = ['referral', 'inbound', 'outbound', 'event', 'partner', 'purchased_list'];
const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'NL', 'JP'];

/**
 * Leads whose outcome follows a hidden rule the prior does not know: this account wins with
 * healthcare and manufacturing companies of 51 to 1,000 people that came through events or
 * partners, in Germany more than elsewhere, and rarely with software companies (the prior's
 * favourite). 10 % of outcomes are flipped as noise.
 */
export function syntheticLeads(count: number, seed = 42): LabelledLead[] {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
  return Array.from({ length: count }, (_, i) => {
    const industry = pick(INDUSTRIES);
    const employees = Math.floor(5 + next() * 3000);
    const source = pick(SOURCES);
    const country = pick(COUNTRIES);
    const lead: LeadFeatures = {
      company: `Company ${i}`,
      contactEmail: next() < 0.2 ? `buyer${i}@gmail.com` : `buyer${i}@company${i}.example`,
      contactName: next() < 0.7 ? `Buyer ${i}` : null,
      industry,
      employees,
      website: next() < 0.5 ? `https://company${i}.example` : null,
      country,
      source,
    };
    let odds = -1.5;
    if (industry === 'Healthcare' || industry === 'Manufacturing') odds += 2;
    if (industry === 'Software') odds -= 1.5;
    if (employees >= 51 && employees <= 1000) odds += 1.2;
    if (source === 'event' || source === 'partner') odds += 1;
    if (country === 'DE') odds += 0.8;
    let won = next() < 1 / (1 + Math.exp(-odds));
    if (next() < 0.1) won = !won;
    return { id: `lead_synthetic_${seed}_${i}`, lead, won };
  });
}

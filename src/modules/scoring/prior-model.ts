import { PERSONAL_MAIL_DOMAINS } from '../../common/personal-mail-domains';
import { bySize, labelFor, LeadFeatures, LeadScorer, LeadScoreResult, ScoreSignal } from './lead-scorer';

/**
 * The documented prior: points a B2B sales team would give a lead before any of its own deals have
 * closed. Every table below is in docs/API.md, "The lead score". The ranges are chosen so that
 * base + every possible combination stays within 0–100 (4 to 96), so no clamping hides a signal
 * and the signals always sum exactly to `score - base`.
 */
export const PRIOR_BASE_SCORE = 40;

interface IndustryFit {
  match: RegExp;
  label: string;
  impact: number;
}

const INDUSTRIES: IndustryFit[] = [
  { match: /software|saas|technology|\btech\b|^it\b|information technology|cloud|cyber/, label: 'technology', impact: 15 },
  { match: /financ|bank|insurance|fintech/, label: 'financial services', impact: 10 },
  { match: /health|medical|pharma|biotech/, label: 'healthcare', impact: 8 },
  { match: /professional services|consult|legal|accounting|managed services|msp/, label: 'professional services', impact: 6 },
  { match: /manufactur|industrial|logistics|automotive/, label: 'manufacturing', impact: 5 },
  { match: /retail|e-?commerce|consumer/, label: 'retail', impact: 0 },
  { match: /education|school|university/, label: 'education', impact: -4 },
  { match: /government|public sector/, label: 'government', impact: -4 },
  { match: /non-?profit|charity|ngo/, label: 'non-profit', impact: -8 },
];

interface SizeBand {
  min: number;
  label: string;
  impact: number;
}

const SIZE_BANDS: SizeBand[] = [
  { min: 5001, label: '5001+', impact: 8 },
  { min: 1001, label: '1001-5000', impact: 12 },
  { min: 201, label: '201-1000', impact: 15 },
  { min: 51, label: '51-200', impact: 10 },
  { min: 11, label: '11-50', impact: 0 },
  { min: 0, label: '1-10', impact: -8 },
];

const SOURCES: Record<string, number> = {
  referral: 10,
  partner: 8,
  inbound: 5,
  website: 5,
  event: 3,
  webinar: 3,
  outbound: 0,
  cold_outreach: 0,
  purchased_list: -8,
};

/** The personal mail domains a contact's address is read against (one list with the CRM company matching). */
export const FREE_EMAIL_DOMAINS = PERSONAL_MAIL_DOMAINS;

function signal(name: string, value: string, impact: number, description: string): ScoreSignal {
  return { name, value, impact, description };
}

export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

function websiteHost(website: string): string | undefined {
  try {
    const url = new URL(/^https?:\/\//i.test(website) ? website : `https://${website}`);
    return url.hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return undefined;
  }
}

function industrySignal(industry: string | null | undefined): ScoreSignal {
  if (!industry?.trim()) return signal('industry', 'unknown', -3, 'No industry given, so fit cannot be judged (-3).');
  const normalized = industry.trim().toLowerCase();
  const fit = INDUSTRIES.find((candidate) => candidate.match.test(normalized));
  if (!fit) return signal('industry', normalized, 0, `${industry} is a neutral industry for fit (0).`);
  const verb = fit.impact > 0 ? 'a strong-fit' : fit.impact < 0 ? 'a weak-fit' : 'a neutral';
  return signal('industry', fit.label, fit.impact, `${capitalize(fit.label)} is ${verb} industry (${signed(fit.impact)}).`);
}

function sizeSignal(employees: number | null | undefined): ScoreSignal {
  if (employees === null || employees === undefined) {
    return signal('company_size', 'unknown', -5, 'Company size unknown (-5).');
  }
  const band = SIZE_BANDS.find((candidate) => employees >= candidate.min) ?? SIZE_BANDS[SIZE_BANDS.length - 1];
  const judgement = band.impact > 0 ? 'in the sweet spot for deal size' : band.impact < 0 ? 'small, so deals tend to be small' : 'mid-sized';
  return signal('company_size', band.label, band.impact, `${band.label} employees: ${judgement} (${signed(band.impact)}).`);
}

function emailSignal(email: string): ScoreSignal {
  const domain = emailDomain(email);
  if (FREE_EMAIL_DOMAINS.has(domain)) {
    return signal('email_domain', 'free_webmail', -12, `Contact uses a personal address (${domain}), not a company one (-12).`);
  }
  return signal('email_domain', 'business', 5, `Contact uses a company email domain (${domain}) (+5).`);
}

function websiteSignal(website: string | null | undefined, email: string): ScoreSignal | undefined {
  if (!website?.trim()) return undefined;
  const host = websiteHost(website);
  const domain = emailDomain(email);
  if (host && (host === domain || host.endsWith(`.${domain}`) || domain.endsWith(`.${host}`))) {
    return signal('website', 'matches_email', 8, "Website matches the contact's email domain: a verified company (+8).");
  }
  return signal('website', 'present', 4, 'Company website given (+4).');
}

function sourceSignal(source: string | null | undefined): ScoreSignal | undefined {
  if (!source?.trim()) return undefined;
  const key = source
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  const impact = SOURCES[key];
  if (impact === undefined) return signal('source', key, 0, `Source "${source}" has no known effect (0).`);
  const word = impact > 0 ? 'converts well' : impact < 0 ? 'converts poorly' : 'is neutral';
  return signal('source', key, impact, `Leads from ${key.replace(/_/g, ' ')} ${word} (${signed(impact)}).`);
}

function contactSignal(contactName: string | null | undefined): ScoreSignal | undefined {
  if (!contactName?.trim()) return undefined;
  return signal('contact_name', 'present', 3, 'A named contact person is known (+3).');
}

/**
 * The categories both models read a lead by (the learned model learns one weight per category):
 * industry group, size band, email domain type, website, source, contact, country.
 */
export function leadCategories(lead: LeadFeatures): Record<string, string> {
  const industry = lead.industry?.trim().toLowerCase();
  const employees = lead.employees;
  return {
    industry: !industry ? 'unknown' : (INDUSTRIES.find((fit) => fit.match.test(industry))?.label ?? 'other'),
    company_size:
      employees === null || employees === undefined ? 'unknown' : (SIZE_BANDS.find((band) => employees >= band.min) ?? SIZE_BANDS[SIZE_BANDS.length - 1]).label,
    email_domain: FREE_EMAIL_DOMAINS.has(emailDomain(lead.contactEmail)) ? 'free_webmail' : 'business',
    website: websiteSignal(lead.website, lead.contactEmail)?.value ?? 'none',
    source: lead.source?.trim()
      ? lead.source
          .trim()
          .toLowerCase()
          .replace(/[\s-]+/g, '_')
      : 'unknown',
    contact_name: lead.contactName?.trim() ? 'present' : 'none',
    country: lead.country?.trim() ? lead.country.trim().toUpperCase() : 'unknown',
  };
}

export class PriorLeadScorer implements LeadScorer {
  readonly version = 'prior-v1';

  score(lead: LeadFeatures): LeadScoreResult {
    const signals = [
      industrySignal(lead.industry),
      sizeSignal(lead.employees),
      emailSignal(lead.contactEmail),
      websiteSignal(lead.website, lead.contactEmail),
      sourceSignal(lead.source),
      contactSignal(lead.contactName),
    ].filter((s): s is ScoreSignal => s !== undefined);
    signals.sort(bySize);
    const score = PRIOR_BASE_SCORE + signals.reduce((sum, s) => sum + s.impact, 0);
    return { score, label: labelFor(score), baseScore: PRIOR_BASE_SCORE, modelVersion: this.version, signals };
  }
}

function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

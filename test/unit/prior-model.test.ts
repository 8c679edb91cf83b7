import { labelFor, LeadFeatures } from '../../src/modules/scoring/lead-scorer';
import { emailDomain, FREE_EMAIL_DOMAINS, PRIOR_BASE_SCORE, PriorLeadScorer } from '../../src/modules/scoring/prior-model';

const scorer = new PriorLeadScorer();

const lead = (overrides: Partial<LeadFeatures> = {}): LeadFeatures => ({
  company: 'Acme',
  contactEmail: 'jane@acme.test',
  ...overrides,
});

const signalNamed = (features: LeadFeatures, name: string) => scorer.score(features).signals.find((s) => s.name === name);

const INDUSTRIES = [
  undefined,
  null,
  '',
  '   ',
  'Software',
  'SaaS',
  'IT services',
  'Banking',
  'Insurance',
  'Healthcare',
  'Biotech',
  'Consulting',
  'Manufacturing',
  'Retail',
  'E-commerce',
  'Education',
  'Government',
  'Non-profit',
  'Basket weaving',
];
const EMPLOYEES = [undefined, null, 0, 1, 10, 11, 50, 51, 200, 201, 1000, 1001, 5000, 5001, 10_000_000];
const EMAILS = ['jane@acme.test', 'jane@gmail.com', 'JANE@Hotmail.COM', 'j@sales.acme.test'];
const WEBSITES = [undefined, null, 'https://www.acme.test/about', 'https://other.example', 'http://', '::not a url::'];
const SOURCES = [undefined, null, 'referral', 'Partner', 'inbound', 'outbound', 'cold outreach', 'purchased-list', 'carrier pigeon'];
const CONTACTS = [undefined, null, '', 'Jane Doe'];

function* combinations(): Generator<LeadFeatures> {
  for (const industry of INDUSTRIES)
    for (const employees of EMPLOYEES)
      for (const contactEmail of EMAILS)
        for (const website of WEBSITES)
          for (const source of SOURCES)
            for (const contactName of CONTACTS) yield { company: 'Acme', contactEmail, industry, employees, website, source, contactName };
}

describe('prior lead-scoring model', () => {
  it('keeps every score an integer within 0–100, with signals that sum exactly to score - base and the right label', () => {
    let count = 0;
    let min = Infinity;
    let max = -Infinity;
    const problems: string[] = [];
    const boundaryLabels = new Map<number, string>();
    for (const features of combinations()) {
      const result = scorer.score(features);
      count += 1;
      const sum = result.signals.reduce((total, s) => total + s.impact, 0);
      const wrong = [
        !Number.isInteger(result.score) && 'score is not an integer',
        (result.score < 0 || result.score > 100) && `score ${result.score} is outside 0-100`,
        result.baseScore !== PRIOR_BASE_SCORE && `base ${result.baseScore}`,
        sum !== result.score - result.baseScore && `signals sum to ${sum}, score - base is ${result.score - result.baseScore}`,
        result.label !== labelFor(result.score) && `label ${result.label} for ${result.score}`,
        result.modelVersion !== 'prior-v1' && `model ${result.modelVersion}`,
        result.signals.some((s) => !Number.isInteger(s.impact) || typeof s.value !== 'string' || !s.description) && 'malformed signal',
      ].filter(Boolean);
      if (wrong.length && problems.length < 5) problems.push(`${JSON.stringify(features)}: ${wrong.join('; ')}`);
      if ([39, 40, 69, 70].includes(result.score)) boundaryLabels.set(result.score, result.label);
      min = Math.min(min, result.score);
      max = Math.max(max, result.score);
    }
    expect(problems).toEqual([]);
    // Real model outputs land on both sides of each threshold and are labelled by it.
    expect(Object.fromEntries(boundaryLabels)).toEqual({ 39: 'cold', 40: 'warm', 69: 'warm', 70: 'hot' });
    expect(count).toBeGreaterThan(50_000);
    // The documented extremes (4 to 96) are reached, so no clamping can be hiding a signal.
    expect(min).toBe(4);
    expect(max).toBe(96);
  });

  it('scores the best and the worst possible lead at the documented extremes', () => {
    const best = scorer.score({
      company: 'Acme',
      contactEmail: 'cto@acme.test',
      contactName: 'Ada',
      industry: 'Software',
      employees: 500,
      website: 'https://acme.test',
      source: 'referral',
    });
    expect(best.score).toBe(96);
    expect(best.label).toBe('hot');
    const worst = scorer.score({ company: 'X', contactEmail: 'x@gmail.com', industry: 'Charity', employees: 3, source: 'purchased list' });
    expect(worst.score).toBe(4);
    expect(worst.label).toBe('cold');
  });

  it('labels by the contract thresholds: cold < 40 ≤ warm ≤ 69 < 70 ≤ hot', () => {
    expect(labelFor(0)).toBe('cold');
    expect(labelFor(39)).toBe('cold');
    expect(labelFor(40)).toBe('warm');
    expect(labelFor(69)).toBe('warm');
    expect(labelFor(70)).toBe('hot');
    expect(labelFor(100)).toBe('hot');
  });

  it('is deterministic: the same lead always gets the same score, signals and order', () => {
    const features = lead({ industry: 'Healthcare', employees: 120, source: 'event', website: 'acme.test', contactName: 'Jo' });
    const first = scorer.score(features);
    for (let i = 0; i < 20; i++) expect(scorer.score({ ...features })).toEqual(first);
    expect(new PriorLeadScorer().score(features)).toEqual(first);
  });

  it('orders signals by the size of their effect, largest first', () => {
    const { signals } = scorer.score(lead({ industry: 'Software', employees: 3, source: 'event', contactName: 'Jo' }));
    const sizes = signals.map((s) => Math.abs(s.impact));
    expect([...sizes].sort((a, b) => b - a)).toEqual(sizes);
  });

  it('penalises a free-webmail contact address against a company one', () => {
    const company = scorer.score(lead({ contactEmail: 'jane@acme.test', industry: 'Retail', employees: 30 }));
    const webmail = scorer.score(lead({ contactEmail: 'jane@gmail.com', industry: 'Retail', employees: 30 }));
    expect(signalNamed(lead({ contactEmail: 'jane@gmail.com' }), 'email_domain')).toMatchObject({ value: 'free_webmail', impact: -12 });
    expect(signalNamed(lead({ contactEmail: 'jane@acme.test' }), 'email_domain')).toMatchObject({ value: 'business', impact: 5 });
    expect(company.score - webmail.score).toBe(17);
    for (const domain of FREE_EMAIL_DOMAINS) {
      expect(signalNamed(lead({ contactEmail: `someone@${domain.toUpperCase()}` }), 'email_domain')?.value).toBe('free_webmail');
    }
  });

  it('rewards a website that matches the email domain more than any website', () => {
    const email = 'jane@acme.test';
    for (const website of ['https://acme.test', 'http://www.acme.test/contact', 'acme.test', 'WWW.ACME.TEST', 'https://shop.acme.test']) {
      expect(signalNamed(lead({ contactEmail: email, website }), 'website')).toMatchObject({ value: 'matches_email', impact: 8 });
    }
    expect(signalNamed(lead({ contactEmail: 'jane@eu.acme.test', website: 'acme.test' }), 'website')?.value).toBe('matches_email');
    for (const website of ['https://notacme.test', 'https://acme.test.evil.example', 'other.example']) {
      expect(signalNamed(lead({ contactEmail: email, website }), 'website')).toMatchObject({ value: 'present', impact: 4 });
    }
    expect(signalNamed(lead({ website: undefined }), 'website')).toBeUndefined();
    expect(signalNamed(lead({ website: '   ' }), 'website')).toBeUndefined();
  });

  it('handles unknown and missing fields without failing', () => {
    expect(signalNamed(lead({ industry: 'Basket Weaving' }), 'industry')).toMatchObject({ value: 'basket weaving', impact: 0 });
    expect(signalNamed(lead({ industry: undefined }), 'industry')).toMatchObject({ value: 'unknown', impact: -3 });
    expect(signalNamed(lead({ employees: null }), 'company_size')).toMatchObject({ value: 'unknown', impact: -5 });
    expect(signalNamed(lead({ source: 'Carrier Pigeon' }), 'source')).toMatchObject({ value: 'carrier_pigeon', impact: 0 });
    expect(signalNamed(lead({ source: undefined }), 'source')).toBeUndefined();
    expect(signalNamed(lead({ contactName: '  ' }), 'contact_name')).toBeUndefined();
    const bare = scorer.score(lead());
    expect(bare.signals.map((s) => s.name).sort()).toEqual(['company_size', 'email_domain', 'industry']);
    expect(bare.score).toBe(PRIOR_BASE_SCORE - 3 - 5 + 5);
  });

  it('maps industries and company sizes to their documented bands', () => {
    const industry = (name: string) => signalNamed(lead({ industry: name }), 'industry');
    expect(industry('Software')).toMatchObject({ value: 'technology', impact: 15 });
    expect(industry('IT Services')).toMatchObject({ value: 'technology', impact: 15 });
    expect(industry('High Tech')).toMatchObject({ value: 'technology', impact: 15 });
    expect(industry('Tech')).toMatchObject({ value: 'technology', impact: 15 });
    expect(industry('Banking')).toMatchObject({ value: 'financial services', impact: 10 });
    expect(industry('Fintech')).toMatchObject({ value: 'financial services', impact: 10 });
    expect(industry('Biotech')).toMatchObject({ value: 'healthcare', impact: 8 });
    expect(industry('Consulting')).toMatchObject({ value: 'professional services', impact: 6 });
    expect(industry('Non-profit')).toMatchObject({ value: 'non-profit', impact: -8 });

    const size = (employees: number) => signalNamed(lead({ employees }), 'company_size');
    expect(size(0)).toMatchObject({ value: '1-10', impact: -8 });
    expect(size(10)).toMatchObject({ value: '1-10', impact: -8 });
    expect(size(11)).toMatchObject({ value: '11-50', impact: 0 });
    expect(size(51)).toMatchObject({ value: '51-200', impact: 10 });
    expect(size(201)).toMatchObject({ value: '201-1000', impact: 15 });
    expect(size(1001)).toMatchObject({ value: '1001-5000', impact: 12 });
    expect(size(5001)).toMatchObject({ value: '5001+', impact: 8 });
  });

  it('reads the domain after the last @', () => {
    expect(emailDomain('"a@b"@Example.COM')).toBe('example.com');
  });
});

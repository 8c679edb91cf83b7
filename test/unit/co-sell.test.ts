import { CO_SELL_MIN_VALUE_MINOR, CoSellFacts, coSellProblems, contactNameParts, countryCode } from '../../src/modules/deals/co-sell';
import { coSellStatusOf, referralBody } from '../../src/modules/deals/co-sell-referral';
import { CoSellStatus } from '../../src/modules/deals/deal.entity';
import { DealStage } from '../../src/modules/deals/deal-stage';

/**
 * Co-sell eligibility (CONTRACT §6) as a pure function: an open stage at or past qualification,
 * a value of at least 1,000.00, a linked lead with company and contact email, and a connected
 * Microsoft 365 integration. Every failed rule is reported, each once. In live mode the
 * registration becomes a Partner Center referral, so the integration is partner_center and what a
 * referral requires is judged too.
 */

const eligible: CoSellFacts = {
  stage: DealStage.qualification,
  valueMinor: 100_000,
  lead: { company: 'Contoso', contactEmail: 'buyer@contoso.test' },
  m365Connected: true,
};

const rulesOf = (facts: CoSellFacts) => coSellProblems(facts).map((p) => p.rule);

describe('co-sell eligibility', () => {
  it('the threshold is 1,000.00 in hundredths', () => {
    expect(CO_SELL_MIN_VALUE_MINOR).toBe(100_000);
  });

  it.each([DealStage.qualification, DealStage.proposal, DealStage.negotiation])('an eligible deal in %s has no problems', (stage) => {
    expect(coSellProblems({ ...eligible, stage })).toEqual([]);
  });

  it('refuses a deal before qualification (prospecting), for the stage alone', () => {
    const problems = coSellProblems({ ...eligible, stage: DealStage.prospecting });
    expect(problems).toHaveLength(1);
    expect(problems[0].rule).toBe('stage');
    expect(problems[0].message).toMatch(/prospecting/);
  });

  it.each([DealStage.closed_won, DealStage.closed_lost])('refuses a %s deal, for the stage alone', (stage) => {
    const problems = coSellProblems({ ...eligible, stage });
    expect(problems).toHaveLength(1);
    expect(problems[0].rule).toBe('stage');
    expect(problems[0].message).toContain(stage);
  });

  it('refuses 999.99 and accepts exactly 1,000.00 and more', () => {
    const below = coSellProblems({ ...eligible, valueMinor: 99_999 });
    expect(below).toHaveLength(1);
    expect(below[0].rule).toBe('value');
    expect(below[0].message.length).toBeGreaterThan(0);
    expect(rulesOf({ ...eligible, valueMinor: 0 })).toEqual(['value']);
    expect(coSellProblems({ ...eligible, valueMinor: 100_000 })).toEqual([]);
    expect(coSellProblems({ ...eligible, valueMinor: 100_001 })).toEqual([]);
  });

  it('refuses a deal with no lead', () => {
    const problems = coSellProblems({ ...eligible, lead: null });
    expect(problems).toHaveLength(1);
    expect(problems[0].rule).toBe('lead');
    expect(problems[0].message).toMatch(/lead/);
  });

  it.each([
    ['no company', { company: null, contactEmail: 'a@b.test' }],
    ['an undefined company', { contactEmail: 'a@b.test' }],
    ['a blank company', { company: '   ', contactEmail: 'a@b.test' }],
    ['no contact email', { company: 'Contoso', contactEmail: null }],
    ['an empty contact email', { company: 'Contoso', contactEmail: '' }],
    ['neither', { company: null, contactEmail: null }],
  ])('refuses a linked lead with %s, once', (_label, lead) => {
    const problems = coSellProblems({ ...eligible, lead });
    expect(problems).toHaveLength(1);
    expect(problems[0].rule).toBe('lead');
    expect(problems[0].message).toMatch(/company/);
    expect(problems[0].message).toMatch(/email/);
  });

  it('refuses a deal without a connected Microsoft 365 integration', () => {
    const problems = coSellProblems({ ...eligible, m365Connected: false });
    expect(problems).toHaveLength(1);
    expect(problems[0].rule).toBe('m365_integration');
    expect(problems[0].message).toMatch(/Microsoft 365/);
  });

  it('reports all four reasons at once when every rule fails, in rule order', () => {
    const problems = coSellProblems({ stage: DealStage.prospecting, valueMinor: 99_999, lead: null, m365Connected: false });
    expect(problems.map((p) => p.rule)).toEqual(['stage', 'value', 'lead', 'm365_integration']);
    for (const problem of problems) {
      expect(Object.keys(problem).sort()).toEqual(['message', 'rule']);
      expect(problem.message.length).toBeGreaterThan(0);
    }
    expect(new Set(problems.map((p) => p.message)).size).toBe(4);
    // A closed stage with a half-filled lead fails the same four rules.
    expect(rulesOf({ stage: DealStage.closed_lost, valueMinor: 0, lead: { company: 'X', contactEmail: null }, m365Connected: false })).toEqual([
      'stage',
      'value',
      'lead',
      'm365_integration',
    ]);
  });
});

describe('co-sell eligibility in live mode (Partner Center)', () => {
  const live: CoSellFacts = {
    stage: DealStage.negotiation,
    valueMinor: 250_000,
    lead: { company: 'Contoso', contactEmail: 'buyer@contoso.test', contactName: 'Ada Lovelace', country: 'gb' },
    livemode: true,
    m365Connected: false,
    partnerCenterConnected: true,
    expectedCloseDate: '2099-06-30',
  };

  it('an eligible live deal has no problems, and needs no microsoft365 integration', () => {
    expect(coSellProblems(live)).toEqual([]);
  });

  it('names every field Partner Center requires that the deal lacks, and the integration, at once', () => {
    const problems = coSellProblems({
      ...live,
      partnerCenterConnected: false,
      expectedCloseDate: null,
      lead: { company: 'Contoso', contactEmail: 'buyer@contoso.test', contactName: 'Cher', country: 'Atlantis' },
    });
    expect(problems.map((p) => p.rule)).toEqual(['partner_center_integration', 'expected_close_date', 'contact_name', 'country']);
    expect(new Set(problems.map((p) => p.message)).size).toBe(4);
    for (const problem of problems) expect(problem.message).toMatch(/Partner Center/);
  });

  it('keeps the test-mode rules before the live ones, and judges the lead only when one is linked', () => {
    expect(coSellProblems({ ...live, stage: DealStage.prospecting, valueMinor: 0, lead: null, partnerCenterConnected: false }).map((p) => p.rule)).toEqual([
      'stage',
      'value',
      'lead',
      'partner_center_integration',
    ]);
    // A test-mode deal is never asked for what a referral needs.
    expect(coSellProblems({ ...eligible, expectedCloseDate: null, lead: { company: 'Contoso', contactEmail: 'a@b.test' } })).toEqual([]);
  });

  it.each([
    ['Ada Lovelace', { firstName: 'Ada', lastName: 'Lovelace' }],
    ['  Ada   King  Lovelace ', { firstName: 'Ada King', lastName: 'Lovelace' }],
    ['Cher', null],
    ['   ', null],
    [null, null],
  ])('splits the contact name %p into first and last name', (name, parts) => {
    expect(contactNameParts(name)).toEqual(parts);
  });

  it.each([
    ['US', 'US'],
    [' de ', 'DE'],
    ['uk', 'GB'],
    ['United States', null],
    ['QQ', null],
    ['ZZ', null],
    ['EU', null],
    ['', null],
    [null, null],
  ])('takes the country %p as the ISO code %p', (country, code) => {
    expect(countryCode(country)).toBe(code);
  });
});

describe('a referral and its status (Partner Center)', () => {
  it.each([
    ['New', 'Pending', CoSellStatus.submitted],
    ['New', 'Received', CoSellStatus.submitted],
    ['Active', 'Accepted', CoSellStatus.accepted],
    ['Active', 'Engaged', CoSellStatus.accepted],
    ['Closed', 'Won', CoSellStatus.won],
    ['Closed', 'Lost', CoSellStatus.rejected],
    ['Closed', 'Declined', CoSellStatus.rejected],
    ['Closed', 'Expired', CoSellStatus.expired],
    ['Closed', 'None', null],
    ['Archived', 'Pending', null],
  ])('maps %s/%s onto %p', (status, substatus, mapped) => {
    expect(coSellStatusOf({ status, substatus })).toBe(mapped);
  });

  it('makes a Shared referral with the customer, the consent, the deal details and our registration id', () => {
    const body = referralBody({
      registrationId: 'cosell_01J0000000000000000000000',
      deal: { id: 'deal_1', name: 'Contoso rollout', valueMinor: 1_250_050, currency: 'EUR', expectedCloseDate: '2099-06-30' },
      lead: { company: 'Contoso', contactEmail: 'ada@contoso.test', contactName: 'Ada King Lovelace', country: 'de' },
    });
    expect(body).toEqual({
      name: 'Contoso rollout',
      externalReferenceId: 'cosell_01J0000000000000000000000',
      type: 'Shared',
      status: 'New',
      substatus: 'Pending',
      customerProfile: { name: 'Contoso', address: { country: 'DE' }, team: [{ firstName: 'Ada King', lastName: 'Lovelace', email: 'ada@contoso.test' }] },
      consent: { consentToToShareInfoWithOthers: true, consentToContact: true, consentToShareReferralWithMicrosoftSellers: true },
      details: { dealValue: 12500.5, currency: 'EUR', closingDateTime: '2099-06-30T00:00:00Z', notes: expect.stringContaining('deal_1') },
    });
  });

  it('refuses to make a referral the lead no longer has the fields for', () => {
    const source = {
      registrationId: 'cosell_x',
      deal: { id: 'deal_1', name: 'D', valueMinor: 100_000, currency: 'USD', expectedCloseDate: '2099-06-30' },
      lead: { company: 'Contoso', contactEmail: 'ada@contoso.test', contactName: 'Ada Lovelace', country: 'US' },
    };
    expect(() => referralBody({ ...source, lead: { ...source.lead, contactName: 'Ada' } })).toThrow(/contact name/);
    expect(() => referralBody({ ...source, lead: { ...source.lead, country: null } })).toThrow(/country/);
    expect(() => referralBody({ ...source, deal: { ...source.deal, expectedCloseDate: null } })).toThrow(/close date/);
  });
});

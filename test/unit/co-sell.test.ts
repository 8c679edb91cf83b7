import { CO_SELL_MIN_VALUE_MINOR, CoSellFacts, coSellProblems } from '../../src/modules/deals/co-sell';
import { DealStage } from '../../src/modules/deals/deal-stage';

/**
 * Co-sell eligibility (CONTRACT §6) as a pure function: an open stage at or past qualification,
 * a value of at least 1,000.00, a linked lead with company and contact email, and a connected
 * Microsoft 365 integration. Every failed rule is reported, each once.
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

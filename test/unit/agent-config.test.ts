import { AgentType, checkAgentConfig } from '../../src/modules/agents/agent-config';

/**
 * checkAgentConfig (CONTRACT §8): every agent type has a typed config with documented defaults;
 * the check fills in what was left out and reports every problem (unknown settings, wrong kinds,
 * out-of-range values, rules across settings) by the setting's name. The defaults are written out
 * here as docs/API.md states them, not imported.
 */

const QUALIFIER_DEFAULTS = { qualify_at: 70, disqualify_below: 20, open_deal: false, deal_stage: 'qualification', deal_value: 0 };
const FOLLOW_UP_DEFAULTS = { idle_days: { prospecting: 14, qualification: 14, proposal: 7, negotiation: 7 }, deliver_to: 'none' };
const DRAFTER_DEFAULTS = { valid_days: 30, discount_percent: 0, tax_percent: 0, notes: null, cover_note: false, daily_token_budget: 50000, instructions: null };

const fields = (type: AgentType, raw: Record<string, unknown>) => checkAgentConfig(type, raw).problems.map((problem) => problem.field);

describe('checkAgentConfig', () => {
  it('fills in every default when nothing (null, undefined or {}) is given', () => {
    for (const raw of [undefined, null, {}]) {
      expect(checkAgentConfig(AgentType.lead_qualifier, raw)).toEqual({ config: QUALIFIER_DEFAULTS, problems: [] });
      expect(checkAgentConfig(AgentType.deal_follow_up, raw)).toEqual({ config: FOLLOW_UP_DEFAULTS, problems: [] });
      expect(checkAgentConfig(AgentType.proposal_drafter, raw)).toEqual({ config: DRAFTER_DEFAULTS, problems: [] });
    }
  });

  it('keeps the settings given and never changes the shared defaults', () => {
    const given = { qualify_at: 85, disqualify_below: 30, open_deal: true, deal_stage: 'prospecting', deal_value: 999.99 };
    expect(checkAgentConfig(AgentType.lead_qualifier, given)).toEqual({ config: given, problems: [] });
    const merged = checkAgentConfig(AgentType.deal_follow_up, { idle_days: { proposal: 2 } });
    expect(merged).toEqual({ config: { idle_days: { prospecting: 14, qualification: 14, proposal: 2, negotiation: 7 }, deliver_to: 'none' }, problems: [] });
    (merged.config as { idle_days: Record<string, number> }).idle_days.negotiation = 99;
    expect(checkAgentConfig(AgentType.deal_follow_up, {}).config).toEqual(FOLLOW_UP_DEFAULTS);
    expect(checkAgentConfig(AgentType.proposal_drafter, { notes: 'Thanks', discount_percent: 12.125, tax_percent: 100, valid_days: 365 })).toEqual({
      config: { ...DRAFTER_DEFAULTS, valid_days: 365, discount_percent: 12.125, tax_percent: 100, notes: 'Thanks' },
      problems: [],
    });
    expect(checkAgentConfig(AgentType.proposal_drafter, { notes: null }).problems).toEqual([]);
  });

  it('accepts the boundaries of every range', () => {
    for (const raw of [
      { qualify_at: 0, disqualify_below: 0 },
      { qualify_at: 100, disqualify_below: 100 },
      { qualify_at: 50, disqualify_below: 50 },
      { deal_value: 0 },
      { deal_value: 10_000_000_000_000 },
      { deal_value: 12.5 },
    ]) {
      expect(fields(AgentType.lead_qualifier, raw)).toEqual([]);
    }
    expect(fields(AgentType.deal_follow_up, { idle_days: { prospecting: 1, qualification: 365 } })).toEqual([]);
    expect(fields(AgentType.deal_follow_up, { idle_days: {} })).toEqual([]);
    expect(fields(AgentType.proposal_drafter, { valid_days: 1, discount_percent: 0, tax_percent: 0.001, notes: 'x'.repeat(5000) })).toEqual([]);
  });

  it.each([
    ['qualify_at', 101],
    ['qualify_at', -1],
    ['qualify_at', 7.5],
    ['qualify_at', '70'],
    ['qualify_at', null],
    ['qualify_at', true],
    ['disqualify_below', 101],
    ['disqualify_below', -0.5],
    ['open_deal', 'true'],
    ['open_deal', 1],
    ['deal_stage', 'proposal'],
    ['deal_stage', 'negotiation'],
    ['deal_stage', 'closed_won'],
    ['deal_stage', 'Prospecting'],
    ['deal_value', -0.01],
    ['deal_value', 1.005],
    ['deal_value', '100'],
    ['deal_value', 10_000_000_000_000.01],
  ])('lead_qualifier refuses %s = %p, naming it', (name, value) => {
    const { problems } = checkAgentConfig(AgentType.lead_qualifier, { [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0].field).toBe(name);
    expect(problems[0].message).toMatch(new RegExp(`^${name} `));
  });

  it('lead_qualifier refuses disqualify_below above qualify_at, also when one of them is the default', () => {
    expect(checkAgentConfig(AgentType.lead_qualifier, { qualify_at: 40, disqualify_below: 41 }).problems).toEqual([
      { field: 'disqualify_below', message: expect.stringMatching(/disqualify_below.*qualify_at/) },
    ]);
    expect(fields(AgentType.lead_qualifier, { qualify_at: 19 })).toEqual(['disqualify_below']);
    expect(fields(AgentType.lead_qualifier, { disqualify_below: 71 })).toEqual(['disqualify_below']);
    expect(fields(AgentType.lead_qualifier, { qualify_at: 20 })).toEqual([]);
  });

  it.each([
    [{ proposal: 0 }],
    [{ proposal: 366 }],
    [{ proposal: 1.5 }],
    [{ proposal: '7' }],
    [{ closed_won: 7 }],
    [{ closed_lost: 7 }],
    [{ Proposal: 7 }],
    [[7]],
    [7],
    [null],
    ['proposal'],
  ])('deal_follow_up refuses idle_days = %p', (idleDays) => {
    const { problems } = checkAgentConfig(AgentType.deal_follow_up, { idle_days: idleDays });
    expect(problems.map((problem) => problem.field)).toEqual(['idle_days']);
    expect(problems[0].message).toMatch(/^idle_days/);
  });

  it('deal_follow_up delivers to none, an Outlook draft or a To Do task, and refuses anything else by name', () => {
    for (const deliverTo of ['none', 'outlook_draft', 'todo_task']) {
      expect(checkAgentConfig(AgentType.deal_follow_up, { deliver_to: deliverTo })).toEqual({
        config: { ...FOLLOW_UP_DEFAULTS, deliver_to: deliverTo },
        problems: [],
      });
    }
    for (const bad of ['outlook', 'Outlook_Draft', '', null, true, ['todo_task']]) {
      const { problems } = checkAgentConfig(AgentType.deal_follow_up, { deliver_to: bad });
      expect(problems).toEqual([{ field: 'deliver_to', message: 'deliver_to must be one of none, outlook_draft, todo_task' }]);
    }
    expect(fields(AgentType.lead_qualifier, { deliver_to: 'todo_task' })).toEqual(['deliver_to']);
  });

  it.each([
    ['valid_days', 0],
    ['valid_days', 366],
    ['valid_days', 30.5],
    ['discount_percent', 100.001],
    ['discount_percent', -1],
    ['discount_percent', 1.0001],
    ['discount_percent', '10'],
    ['tax_percent', 101],
    ['tax_percent', null],
    ['notes', 'x'.repeat(5001)],
    ['notes', 42],
    ['notes', { text: 'hi' }],
  ])('proposal_drafter refuses %s = %p', (name, value) => {
    expect(fields(AgentType.proposal_drafter, { [name]: value })).toEqual([name]);
  });

  it('refuses settings of another type or unknown ones, naming each and listing the valid settings', () => {
    const { problems } = checkAgentConfig(AgentType.lead_qualifier, { idle_days: { proposal: 3 }, foo: 1, qualify_at: 80 });
    expect(problems.map((problem) => problem.field)).toEqual(['idle_days', 'foo']);
    for (const problem of problems) expect(problem.message).toContain('qualify_at, disqualify_below, open_deal, deal_stage, deal_value');
    expect(fields(AgentType.deal_follow_up, { qualify_at: 70 })).toEqual(['qualify_at']);
    expect(fields(AgentType.proposal_drafter, { validDays: 10 })).toEqual(['validDays']);
  });

  it('reports every problem at once and skips the cross-setting rule while single settings are wrong', () => {
    expect(fields(AgentType.lead_qualifier, { qualify_at: 200, open_deal: 'no', deal_stage: 'won', deal_value: -5 })).toEqual([
      'qualify_at',
      'open_deal',
      'deal_stage',
      'deal_value',
    ]);
    expect(fields(AgentType.lead_qualifier, { qualify_at: 10, open_deal: 'no' })).toEqual(['open_deal']);
  });
});

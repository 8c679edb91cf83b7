import { canMoveLead, LeadStatus } from '../../src/modules/leads/lead-status';

const { new: NEW, contacted, qualified, disqualified, converted } = LeadStatus;
const ALL = [NEW, contacted, qualified, disqualified, converted];

/** Every move a client may make (CONTRACT §5); staying in place is not a move and always allowed. */
const ALLOWED: Array<[LeadStatus, LeadStatus]> = [
  [NEW, contacted],
  [NEW, qualified],
  [NEW, disqualified],
  [contacted, qualified],
  [contacted, disqualified],
  [qualified, disqualified],
  [disqualified, qualified],
];

const allowed = (from: LeadStatus, to: LeadStatus) => from === to || ALLOWED.some(([f, t]) => f === from && t === to);

describe('lead status moves', () => {
  it('has exactly the five contract states', () => {
    expect(Object.values(LeadStatus).sort()).toEqual(['contacted', 'converted', 'disqualified', 'new', 'qualified']);
  });

  it.each(ALLOWED)('allows %s → %s', (from, to) => {
    expect(canMoveLead(from, to)).toBe(true);
  });

  const refused = ALL.flatMap((from) => ALL.map((to) => [from, to] as [LeadStatus, LeadStatus])).filter(([from, to]) => !allowed(from, to));

  it.each(refused)('refuses %s → %s', (from, to) => {
    expect(canMoveLead(from, to)).toBe(false);
  });

  it('refuses every move back to new and every move a client makes into or out of converted', () => {
    for (const from of ALL.filter((s) => s !== NEW)) expect(canMoveLead(from, NEW)).toBe(false);
    for (const from of ALL.filter((s) => s !== converted)) expect(canMoveLead(from, converted)).toBe(false);
    for (const to of ALL.filter((s) => s !== converted)) expect(canMoveLead(converted, to)).toBe(false);
    expect(canMoveLead(qualified, contacted)).toBe(false);
    expect(canMoveLead(disqualified, contacted)).toBe(false);
  });

  it('treats setting the current status again as no move', () => {
    for (const status of ALL) expect(canMoveLead(status, status)).toBe(true);
  });

  it('covers all 25 pairs', () => {
    expect(refused.length + ALLOWED.length + ALL.length).toBe(25);
  });
});

import { canMoveDeal, DealStage, isClosed, OPEN_STAGES, STAGE_PROBABILITY, stageRank } from '../../src/modules/deals/deal-stage';

/**
 * The deal stage machine (CONTRACT §6): open stages move anywhere (forward, back or to a close),
 * closed stages are final. Staying in the same stage is not a move and is always allowed.
 */

const { prospecting, qualification, proposal, negotiation, closed_won, closed_lost } = DealStage;
const ALL = [prospecting, qualification, proposal, negotiation, closed_won, closed_lost];
const OPEN = [prospecting, qualification, proposal, negotiation];
const CLOSED = [closed_won, closed_lost];

const pairs = (froms: DealStage[], tos: DealStage[]) => froms.flatMap((from) => tos.map((to) => [from, to] as [DealStage, DealStage]));

describe('deal stages', () => {
  it('has exactly the six contract stages', () => {
    expect(Object.values(DealStage)).toEqual(['prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost']);
    expect([...OPEN_STAGES]).toEqual(OPEN);
  });

  // Open → any other stage: 4 × 5 = 20 moves.
  const openMoves = pairs(OPEN, ALL).filter(([from, to]) => from !== to);
  it.each(openMoves)('allows %s → %s', (from, to) => {
    expect(canMoveDeal(from, to)).toBe(true);
  });

  // Closed → any other stage: 2 × 5 = 10 moves, all refused.
  const closedMoves = pairs(CLOSED, ALL).filter(([from, to]) => from !== to);
  it.each(closedMoves)('refuses %s → %s', (from, to) => {
    expect(canMoveDeal(from, to)).toBe(false);
  });

  it.each(ALL)('treats %s → itself as no move (allowed)', (stage) => {
    expect(canMoveDeal(stage, stage)).toBe(true);
  });

  it('covers all 36 pairs, with forward, backward and closing moves among the allowed ones', () => {
    expect(openMoves.length + closedMoves.length + ALL.length).toBe(36);
    expect(openMoves).toHaveLength(20);
    expect(closedMoves).toHaveLength(10);
    // forward, back, close from every open stage
    expect(canMoveDeal(prospecting, negotiation)).toBe(true);
    expect(canMoveDeal(negotiation, prospecting)).toBe(true);
    expect(canMoveDeal(prospecting, closed_lost)).toBe(true);
    expect(canMoveDeal(qualification, closed_won)).toBe(true);
    // the two closed stages never turn into each other
    expect(canMoveDeal(closed_won, closed_lost)).toBe(false);
    expect(canMoveDeal(closed_lost, closed_won)).toBe(false);
  });

  it('knows which stages are closed', () => {
    for (const stage of OPEN) expect(isClosed(stage)).toBe(false);
    for (const stage of CLOSED) expect(isClosed(stage)).toBe(true);
  });

  it('gives each stage its win probability', () => {
    expect(STAGE_PROBABILITY).toEqual({
      prospecting: 10,
      qualification: 25,
      proposal: 50,
      negotiation: 75,
      closed_won: 100,
      closed_lost: 0,
    });
    // Open stages get likelier along the pipeline.
    for (let i = 1; i < OPEN.length; i++) expect(STAGE_PROBABILITY[OPEN[i]]).toBeGreaterThan(STAGE_PROBABILITY[OPEN[i - 1]]);
  });

  it('ranks stages in pipeline order, both closed stages after negotiation', () => {
    expect(ALL.map(stageRank)).toEqual([0, 1, 2, 3, 4, 4]);
    expect(stageRank(closed_won)).toBe(stageRank(closed_lost));
    expect(stageRank(closed_won)).toBeGreaterThan(stageRank(negotiation));
    for (let i = 1; i < OPEN.length; i++) expect(stageRank(OPEN[i])).toBeGreaterThan(stageRank(OPEN[i - 1]));
  });
});

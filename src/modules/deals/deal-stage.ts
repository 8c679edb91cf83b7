import { registerEnumType } from 'type-graphql';

/** Pipeline stages in order (CONTRACT §6). */
export enum DealStage {
  prospecting = 'prospecting',
  qualification = 'qualification',
  proposal = 'proposal',
  negotiation = 'negotiation',
  closed_won = 'closed_won',
  closed_lost = 'closed_lost',
}

registerEnumType(DealStage, {
  name: 'DealStage',
  description: 'prospecting → qualification → proposal → negotiation → closed_won | closed_lost. Closed stages are final.',
});

export const OPEN_STAGES: readonly DealStage[] = [DealStage.prospecting, DealStage.qualification, DealStage.proposal, DealStage.negotiation];

/** Win probability per stage, in percent; a deal's `probability` always follows its stage. */
export const STAGE_PROBABILITY: Record<DealStage, number> = {
  prospecting: 10,
  qualification: 25,
  proposal: 50,
  negotiation: 75,
  closed_won: 100,
  closed_lost: 0,
};

export function isClosed(stage: DealStage): boolean {
  return stage === DealStage.closed_won || stage === DealStage.closed_lost;
}

/** Position in the pipeline (0 = prospecting); both closed stages come after negotiation. */
export function stageRank(stage: DealStage): number {
  return isClosed(stage) ? OPEN_STAGES.length : OPEN_STAGES.indexOf(stage);
}

/**
 * The one rule for stage moves: an open deal may move to any other stage, forward or back, or
 * close; a closed deal never moves again. Staying in the same stage is not a move.
 */
export function canMoveDeal(from: DealStage, to: DealStage): boolean {
  if (from === to) return true;
  return !isClosed(from);
}

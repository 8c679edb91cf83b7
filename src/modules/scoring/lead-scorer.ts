/** The lead fields a scoring model may look at. */
export interface LeadFeatures {
  company: string;
  contactEmail: string;
  contactName?: string | null;
  industry?: string | null;
  employees?: number | null;
  website?: string | null;
  country?: string | null;
  source?: string | null;
}

export interface ScoreSignal {
  /** Which feature: `industry`, `company_size`, `email_domain`, … */
  name: string;
  /** The value the model saw, as text (`software`, `51-200`, `free_webmail`). */
  value: string;
  /** Signed points this signal added to or removed from the base score. */
  impact: number;
  /** A sentence a sales rep understands. */
  description: string;
}

export type ScoreLabel = 'hot' | 'warm' | 'cold';

export interface LeadScoreResult {
  score: number;
  label: ScoreLabel;
  /** score = baseScore + the sum of every signal's impact. */
  baseScore: number;
  modelVersion: string;
  signals: ScoreSignal[];
}

/**
 * A scoring model. The prior model implements it today; a model learned from the account's own
 * won and lost deals implements the same interface later, so callers never change.
 */
export interface LeadScorer {
  readonly version: string;
  score(lead: LeadFeatures): LeadScoreResult;
}

/** CONTRACT §5: hot ≥ 70, warm 40–69, cold < 40. */
export function labelFor(score: number): ScoreLabel {
  if (score >= 70) return 'hot';
  if (score >= 40) return 'warm';
  return 'cold';
}

/** Orders signals by the size of their effect, largest first (ties by name, for stable output). */
export function bySize(a: ScoreSignal, b: ScoreSignal): number {
  return Math.abs(b.impact) - Math.abs(a.impact) || a.name.localeCompare(b.name);
}

import { bySize, labelFor, LeadFeatures, LeadScorer, LeadScoreResult, ScoreSignal } from './lead-scorer';
import { auc, Example, logit, LogisticModel, sigmoid, train } from './logistic-regression';
import { leadCategories } from './prior-model';

/** Enough closed deals to learn from: fewer, and the prior model scores (docs/API.md, "The lead score"). */
export const MIN_CLOSED_LEADS = 30;
/** Each outcome must appear this often, or there is nothing to tell apart. */
export const MIN_PER_OUTCOME = 5;
/** A newer model is trained once this many more leads have closed. */
export const RETRAIN_AFTER = 10;

export interface CategoryStats {
  won: number;
  lost: number;
}

/** What is stored per model version: the weights, what they were learned from, and how well they do. */
export interface LearnedModelParams {
  model: LogisticModel;
  /** The average of each feature's weight over the training leads: the "typical lead" the base score describes. */
  baselines: Record<string, number>;
  /** Won and lost counts per feature=value in the training leads, for the sentences. */
  stats: Record<string, CategoryStats>;
}

export interface CalibrationBucket {
  from: number;
  to: number;
  count: number;
  meanPredicted: number | null;
  observedWinRate: number | null;
}

export interface TrainingResult {
  params: LearnedModelParams;
  trainingSize: number;
  holdoutSize: number;
  won: number;
  lost: number;
  auc: number | null;
  priorAuc: number | null;
  calibration: CalibrationBucket[];
}

export interface LabelledLead {
  id: string;
  lead: LeadFeatures;
  won: boolean;
}

const FEATURES = ['industry', 'company_size', 'email_domain', 'website', 'source', 'contact_name', 'country'] as const;
/** How a sales rep would name the leads that share a feature value. */
function leadsWith(feature: string, value: string): string {
  const words = value.replace(/_/g, ' ');
  switch (feature) {
    case 'industry':
      return value === 'unknown' ? 'Leads with no industry given' : `Leads in ${words}`;
    case 'company_size':
      return value === 'unknown' ? 'Leads with no company size' : `Companies of ${words} people`;
    case 'email_domain':
      return value === 'free_webmail' ? 'Contacts with a personal email address' : 'Contacts with a company email address';
    case 'website':
      return value === 'none' ? 'Leads without a website' : value === 'matches_email' ? 'Leads whose website matches their email' : 'Leads with a website';
    case 'source':
      return value === 'unknown' ? 'Leads with no source' : `Leads from ${words}`;
    case 'contact_name':
      return value === 'present' ? 'Leads with a named contact' : 'Leads without a named contact';
    case 'country':
      return value === 'unknown' ? 'Leads with no country' : `Leads in ${value}`;
    default:
      return `Leads with ${feature} ${words}`;
  }
}

export function tokensOf(lead: LeadFeatures): string[] {
  const categories = leadCategories(lead);
  return FEATURES.map((feature) => `${feature}=${categories[feature]}`);
}

/** Held out for the quality figures: a fixed fifth of leads, chosen by id, so reruns agree. */
export function isHeldOut(id: string): boolean {
  let hash = 2166136261;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 16777619);
  return (hash >>> 0) % 5 === 0;
}

export function canLearn(won: number, lost: number): boolean {
  return won + lost >= MIN_CLOSED_LEADS && won >= MIN_PER_OUTCOME && lost >= MIN_PER_OUTCOME;
}

/**
 * Learns from the training four fifths, measures AUC and calibration on the held-out fifth (for
 * this model and, side by side, for the prior), and keeps the training counts for explanations.
 */
export function trainLeadModel(leads: readonly LabelledLead[], prior: LeadScorer): TrainingResult {
  const training = leads.filter((lead) => !isHeldOut(lead.id));
  const holdout = leads.filter((lead) => isHeldOut(lead.id));
  const examples: Example[] = training.map((lead) => ({ tokens: tokensOf(lead.lead), won: lead.won }));
  const model = train(examples);
  const stats: Record<string, CategoryStats> = {};
  const baselines: Record<string, number> = {};
  for (const example of examples) {
    for (const token of example.tokens) {
      const entry = (stats[token] ??= { won: 0, lost: 0 });
      if (example.won) entry.won += 1;
      else entry.lost += 1;
      const feature = token.slice(0, token.indexOf('='));
      baselines[feature] = (baselines[feature] ?? 0) + (model.weights[token] ?? 0) / examples.length;
    }
  }
  const params: LearnedModelParams = { model, baselines, stats };
  const scorer = new LearnedLeadScorer('evaluation', params);
  const predicted = holdout.map((lead) => ({ probability: sigmoid(logit(model, tokensOf(lead.lead))), score: scorer.score(lead.lead).score, won: lead.won }));
  return {
    params,
    trainingSize: training.length,
    holdoutSize: holdout.length,
    won: leads.filter((lead) => lead.won).length,
    lost: leads.filter((lead) => !lead.won).length,
    auc: auc(predicted.map(({ probability, won }) => ({ score: probability, won }))),
    priorAuc: auc(holdout.map((lead) => ({ score: prior.score(lead.lead).score, won: lead.won }))),
    calibration: calibration(predicted),
  };
}

function calibration(predicted: Array<{ probability: number; won: boolean }>): CalibrationBucket[] {
  return [0, 0.2, 0.4, 0.6, 0.8].map((from) => {
    const to = from + 0.2;
    const inside = predicted.filter((p) => p.probability >= from && (p.probability < to || (to >= 1 && p.probability <= 1)));
    return {
      from,
      to: Math.round(to * 10) / 10,
      count: inside.length,
      meanPredicted: inside.length ? inside.reduce((sum, p) => sum + p.probability, 0) / inside.length : null,
      observedWinRate: inside.length ? inside.filter((p) => p.won).length / inside.length : null,
    };
  });
}

/**
 * Scores with a learned model: score = 100 × the predicted chance to win. The base score is the
 * chance of a typical training lead; each feature's impact is its Shapley value (its average
 * effect over every order in which features could be added), so impacts have the sign of their
 * weight, do not depend on an arbitrary order, and sum to score − base exactly after rounding.
 */
export class LearnedLeadScorer implements LeadScorer {
  constructor(
    readonly version: string,
    private readonly params: LearnedModelParams,
  ) {}

  score(lead: LeadFeatures): LeadScoreResult {
    const { model, baselines } = this.params;
    const tokens = tokensOf(lead);
    const baseLogit = model.intercept + FEATURES.reduce((sum, feature) => sum + (baselines[feature] ?? 0), 0);
    const deltas = tokens.map((token, i) => (model.weights[token] ?? 0) - (baselines[FEATURES[i]] ?? 0));
    const points = (subset: number) => 100 * sigmoid(baseLogit + deltas.reduce((sum, d, i) => (subset & (1 << i) ? sum + d : sum), 0));
    const shapley = shapleyValues(deltas.length, points);
    const base = Math.round(points(0));
    const score = Math.min(100, Math.max(0, Math.round(points((1 << deltas.length) - 1))));
    const impacts = roundToTotal(shapley, score - base);
    const signals = tokens.map((token, i) => this.signal(token, impacts[i])).sort(bySize);
    return { score, label: labelFor(score), baseScore: base, modelVersion: this.version, signals };
  }

  private signal(token: string, impact: number): ScoreSignal {
    const [feature, value] = [token.slice(0, token.indexOf('=')), token.slice(token.indexOf('=') + 1)];
    const seen = this.params.stats[token];
    const points = impact > 0 ? `+${impact}` : String(impact);
    const what = leadsWith(feature, value);
    const description = seen
      ? `${what} won ${seen.won} of ${seen.won + seen.lost} of your closed deals (${points}).`
      : `${what} have not closed a deal with you yet, so this counts as average (${points}).`;
    return { name: feature, value, impact, description };
  }
}

/** Exact Shapley values of a set function over n players (n is 7 here: 2^7 subsets). */
function shapleyValues(n: number, value: (subset: number) => number): number[] {
  const factorial = (k: number): number => (k <= 1 ? 1 : k * factorial(k - 1));
  const result = new Array<number>(n).fill(0);
  for (let subset = 0; subset < 1 << n; subset++) {
    const size = popcount(subset);
    const weight = (factorial(size) * factorial(n - size - 1)) / factorial(n);
    for (let i = 0; i < n; i++) {
      if (subset & (1 << i)) continue;
      result[i] += weight * (value(subset | (1 << i)) - value(subset));
    }
  }
  return result;
}

function popcount(x: number): number {
  let count = 0;
  for (; x; x &= x - 1) count++;
  return count;
}

/** Integers that sum to `total`, each as close to its real value as possible (largest remainder). */
function roundToTotal(values: number[], total: number): number[] {
  const floors = values.map(Math.floor);
  let left = total - floors.reduce((sum, v) => sum + v, 0);
  const order = values.map((v, i) => ({ i, remainder: v - Math.floor(v) })).sort((a, b) => b.remainder - a.remainder || a.i - b.i);
  const result = [...floors];
  for (let k = 0; left > 0 && k < order.length; k++, left--) result[order[k].i] += 1;
  for (let k = order.length - 1; left < 0 && k >= 0; k--, left++) result[order[k].i] -= 1;
  return result;
}

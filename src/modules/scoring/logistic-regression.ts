/**
 * Logistic regression over one-hot categorical features, trained by full-batch gradient descent
 * with L2 regularisation from zero weights: no randomness, so the same examples always give the
 * same model. Each example is the set of its active feature tokens (`industry=healthcare`), so a
 * prediction is the intercept plus the weights of its tokens. Small by design (a few hundred to a
 * few thousand leads per account); the JS ML libraries on npm are unmaintained or far larger than
 * this problem.
 */
export interface Example {
  tokens: string[];
  won: boolean;
}

export interface LogisticModel {
  intercept: number;
  weights: Record<string, number>;
}

export interface TrainOptions {
  iterations?: number;
  learningRate?: number;
  /**
   * L2 penalty on the mean loss: keeps weights of rare categories near 0 instead of ±∞. Default
   * 2 / n, a prior worth two examples whatever the data size: small accounts are not overfitted,
   * large ones are not shrunk (so the predicted chances stay calibrated).
   */
  l2?: number;
}

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

export function logit(model: LogisticModel, tokens: readonly string[]): number {
  return tokens.reduce((sum, token) => sum + (model.weights[token] ?? 0), model.intercept);
}

export function train(examples: readonly Example[], options: TrainOptions = {}): LogisticModel {
  const iterations = options.iterations ?? 400;
  const rate = options.learningRate ?? 0.5;
  const l2 = options.l2 ?? 2 / Math.max(1, examples.length);
  const tokens = [...new Set(examples.flatMap((example) => example.tokens))].sort();
  const index = new Map(tokens.map((token, i) => [token, i]));
  const rows = examples.map((example) => example.tokens.map((token) => index.get(token)!));
  const weights = new Float64Array(tokens.length);
  let intercept = 0;
  const n = examples.length;
  for (let iteration = 0; iteration < iterations; iteration++) {
    const gradient = new Float64Array(tokens.length);
    let interceptGradient = 0;
    for (let i = 0; i < n; i++) {
      let z = intercept;
      for (const j of rows[i]) z += weights[j];
      const error = sigmoid(z) - (examples[i].won ? 1 : 0);
      interceptGradient += error;
      for (const j of rows[i]) gradient[j] += error;
    }
    intercept -= (rate * interceptGradient) / n;
    for (let j = 0; j < tokens.length; j++) weights[j] -= rate * (gradient[j] / n + l2 * weights[j]);
  }
  return { intercept, weights: Object.fromEntries(tokens.map((token, j) => [token, weights[j]])) };
}

/** Area under the ROC curve (the chance a random won lead outscores a random lost one); null without both classes. */
export function auc(scored: ReadonlyArray<{ score: number; won: boolean }>): number | null {
  const won = scored.filter((s) => s.won).map((s) => s.score);
  const lost = scored.filter((s) => !s.won).map((s) => s.score);
  if (!won.length || !lost.length) return null;
  let wins = 0;
  for (const w of won) for (const l of lost) wins += w > l ? 1 : w === l ? 0.5 : 0;
  return wins / (won.length * lost.length);
}

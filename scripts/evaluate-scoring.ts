/**
 * The lead-score evaluation: generates leads whose outcomes follow a hidden rule, trains the
 * learned model on four fifths and reports AUC on the held-out fifth for the prior and the learned
 * model side by side, with the learned model's calibration. Usage: npm run eval:scoring [-- count seed]
 */
import { trainLeadModel } from '../src/modules/scoring/learned-model';
import { PriorLeadScorer } from '../src/modules/scoring/prior-model';
import { syntheticLeads } from '../src/modules/scoring/synthetic-leads';

const count = Number(process.argv[2] ?? 2000);
const seed = Number(process.argv[3] ?? 42);
if (!Number.isInteger(count) || count < 50 || !Number.isInteger(seed)) {
  console.error('usage: npm run eval:scoring -- [lead count ≥ 50] [seed]');
  process.exit(2);
}
console.error(`generating ${count} leads (seed ${seed}) and training…`);
const started = Date.now();
const result = trainLeadModel(syntheticLeads(count, seed), new PriorLeadScorer());
const fmt = (value: number | null) => (value === null ? 'n/a' : value.toFixed(3));
console.log(`leads: ${count} (${result.won} won, ${result.lost} lost); trained on ${result.trainingSize}, held out ${result.holdoutSize}`);
console.log(
  `held-out AUC   prior: ${fmt(result.priorAuc)}   learned: ${fmt(result.auc)}   difference: ${fmt(result.auc !== null && result.priorAuc !== null ? result.auc - result.priorAuc : null)}`,
);
console.log('calibration of the learned model on held-out leads (predicted chance → observed win rate):');
for (const bucket of result.calibration) {
  console.log(
    `  ${bucket.from.toFixed(1)}–${bucket.to.toFixed(1)}: ${String(bucket.count).padStart(4)} leads, predicted ${fmt(bucket.meanPredicted)}, observed ${fmt(bucket.observedWinRate)}`,
  );
}
console.error(`done in ${Date.now() - started} ms`);

import { signed, type LeadScore } from './lead-queries';
import { humanize, when } from './ui';

/**
 * The score explained as the API explains it: score = base score + the signals' impacts. Signals
 * are listed from the one that added most to the one that took most away; the bar beside each
 * is decoration (the signed number says the same), drawn left of the axis for points taken away.
 */
export function LeadScoreCard({ score }: { score: LeadScore }) {
  const signals = [...score.signals].sort((a, b) => b.impact - a.impact);
  const largest = Math.max(1, ...signals.map((signal) => Math.abs(signal.impact)));
  const fromSignals = signals.reduce((sum, signal) => sum + signal.impact, 0);
  return (
    <section class="card lead-score" aria-labelledby="lead-score-title">
      <h2 id="lead-score-title">Score</h2>
      <p class="score-headline">
        <span class="score-number" data-score>
          {score.score}
        </span>
        <span class="muted"> / 100</span> <span class={`badge score-${score.scoreLabel}`}>{humanize(score.scoreLabel)}</span>
      </p>
      <p class="score-sum">
        Base score <strong data-base-score>{score.baseScore}</strong>, {signed(fromSignals)} from the signals below.
      </p>
      <dl class="facts compact score-facts">
        <dt>Model</dt>
        <dd data-model-version>{score.modelVersion}</dd>
        <dt>Scored</dt>
        <dd data-scored-at>{when(score.scoredAt)}</dd>
      </dl>
      <h3 id="signals-title">Signals</h3>
      {signals.length === 0 ? (
        <p class="muted">No signal changed the base score.</p>
      ) : (
        <ol class="signals" aria-labelledby="signals-title">
          {signals.map((signal) => {
            const direction = signal.impact > 0 ? 'up' : signal.impact < 0 ? 'down' : 'none';
            return (
              <li key={signal.name} class={`signal signal-${direction}`} data-signal={signal.name}>
                <div class="signal-head">
                  <span class="signal-name">{humanize(signal.name)}</span>
                  <span class="signal-value">{signal.value}</span>
                  <span class="signal-impact" data-impact={signal.impact}>
                    {signed(signal.impact)}
                    <span class="visually-hidden"> points</span>
                  </span>
                </div>
                <div class="signal-bar" aria-hidden="true">
                  <span class="signal-bar-half signal-bar-down">
                    {signal.impact < 0 && <span class="signal-bar-fill" style={{ width: `${(Math.abs(signal.impact) / largest) * 100}%` }} />}
                  </span>
                  <span class="signal-bar-half signal-bar-up">
                    {signal.impact > 0 && <span class="signal-bar-fill" style={{ width: `${(signal.impact / largest) * 100}%` }} />}
                  </span>
                </div>
                <p class="signal-description">{signal.description}</p>
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}

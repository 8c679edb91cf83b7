import type { StageChange } from './deal';
import { stageLabel } from './pipeline';
import { when } from './ui';

/** Every stage the deal went through, oldest first, as the API records them (Deal.history). */
export function DealHistory({ history }: { history: StageChange[] }) {
  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">Stage history</h2>
      <ol class="timeline" aria-label="Stage changes, oldest first">
        {history.map((change) => (
          <li key={change.id} data-change-id={change.id}>
            <span class="change">
              {change.fromStage ? (
                <>
                  {stageLabel(change.fromStage)} <span aria-hidden="true">→</span>
                  <span class="visually-hidden"> to </span> {stageLabel(change.toStage)}
                </>
              ) : (
                <>Created in {stageLabel(change.toStage)}</>
              )}
            </span>{' '}
            <time class="muted" dateTime={change.changedAt}>
              {when(change.changedAt)}
            </time>
          </li>
        ))}
      </ol>
    </section>
  );
}

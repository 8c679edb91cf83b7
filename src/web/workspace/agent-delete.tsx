import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { deleteAgent, type Agent } from './agents-api';
import { useFocusWhenShown } from './ui';

/**
 * Deleting an agent. The service deletes only a draft (a deployed or paused one may act or has a
 * history, so it is kept), so the button is offered on drafts alone; the others say why not. The
 * question is asked on the page with the focus on Cancel, the safe choice, as Disconnect does on
 * an integration. If the agent was deployed elsewhere meanwhile, the API's refusal is shown and
 * the page reads the agent again (onRefused).
 */
export function AgentDelete({ agent, onRefused }: { agent: Agent; onRefused(): Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const setFocus = useFocusWhenShown();

  const remove = async () => {
    setBusy(true);
    setProblem(null);
    try {
      await deleteAgent(agent.id);
      location.assign('/agents');
    } catch (error) {
      setProblem((error as Error).message);
      setConfirming(false);
      setBusy(false);
      if (error instanceof ApiProblem && error.code === 'resource_conflict') await onRefused();
      setFocus('agent-delete-error');
    }
  };

  return (
    <section class="card" aria-labelledby="agent-delete-title">
      <h2 id="agent-delete-title">Delete agent</h2>
      {problem && (
        <p class="error" id="agent-delete-error" role="alert" tabIndex={-1}>
          {problem}
        </p>
      )}
      {agent.status !== 'draft' ? (
        <p class="muted" id="agent-delete-note">
          Only a draft agent can be deleted: this one is {agent.status}, so it is kept with its versions and runs.
        </p>
      ) : confirming ? (
        <div class="confirm notice" role="group" aria-labelledby="agent-delete-question">
          <p id="agent-delete-question">Delete {agent.name}? The draft and its settings are removed for good; this cannot be undone.</p>
          <div class="actions-row">
            <button type="button" class="danger" id="agent-delete-confirm" onClick={() => void remove()} disabled={busy}>
              Yes, delete
            </button>
            <button
              type="button"
              class="secondary"
              id="agent-delete-cancel"
              onClick={() => {
                setConfirming(false);
                setFocus('agent-delete');
              }}
            >
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <>
          <p class="muted">A draft has never acted; deleting it removes it and its settings.</p>
          <div class="actions-row">
            <button
              type="button"
              class="secondary"
              id="agent-delete"
              onClick={() => {
                setConfirming(true);
                setProblem(null);
                setFocus('agent-delete-cancel');
              }}
            >
              Delete agent
            </button>
          </div>
        </>
      )}
    </section>
  );
}

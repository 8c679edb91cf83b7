import { useState } from 'preact/hooks';
import { simulateAgent, type Simulation } from './agents-api';
import { humanize } from './ui';

/**
 * A dry run: the window's recorded events replayed against the agent's working settings. The API
 * writes, sends and records nothing for it; the page shows what the agent would have done.
 */
export function AgentSimulate({ agentId }: { agentId: string }) {
  const [window, setWindow] = useState<'7d' | '30d'>('7d');
  const [result, setResult] = useState<Simulation | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      setResult(await simulateAgent(agentId, window));
    } catch (problem) {
      setResult(null);
      setError((problem as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const kinds = result ? Object.entries(result.actionsByKind) : [];
  return (
    <section class="card" aria-labelledby="agent-simulate-title">
      <h2 id="agent-simulate-title">Simulate</h2>
      <p class="muted">See what these settings would have done with the events of a past window. Nothing is written or sent.</p>
      <div class="filters">
        <label>
          Window
          <select value={window} onChange={(e) => setWindow(e.currentTarget.value as '7d' | '30d')}>
            <option value="7d">Last 7 days</option>
            <option value="30d">Last 30 days</option>
          </select>
        </label>
        <button type="button" class="secondary" onClick={() => void run()} disabled={busy}>
          {busy ? 'Simulating…' : 'Simulate'}
        </button>
      </div>
      <div role="status" aria-live="polite" id="agent-simulation">
        {error && <p class="error">{error}</p>}
        {result && (
          <>
            <p>
              Replaying {result.eventsReplayed} {result.eventsReplayed === 1 ? 'event' : 'events'}
              {result.truncated ? ' (the first 500 of more)' : ''}
              {result.scans ? ` and ${result.scans} scheduled ${result.scans === 1 ? 'scan' : 'scans'}` : ''} of the last {result.window === '7d' ? '7' : '30'}{' '}
              days, it would have taken <strong>{result.actionsTotal}</strong> {result.actionsTotal === 1 ? 'action' : 'actions'}
              {result.errors ? `, with ${result.errors} ${result.errors === 1 ? 'error' : 'errors'}` : ''}.
            </p>
            {kinds.length > 0 && (
              <ul class="simulated-kinds">
                {kinds.map(([kind, count]) => (
                  <li key={kind}>
                    {humanize(kind)}: {count}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </div>
    </section>
  );
}

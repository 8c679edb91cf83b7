import { useEffect, useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { AgentDelete } from './agent-delete';
import { AgentMetricsSection } from './agent-metrics';
import { AgentSettings } from './agent-settings';
import { AgentSimulate } from './agent-simulate';
import { AgentSuggestions } from './agent-suggestions';
import { agentRuns, deployAgent, loadAgent, pauseAgent, resumeAgent, TYPE_PURPOSE, type Agent, type AgentRun } from './agents-api';
import { Announcer, Empty, humanize, Status, Table, useFocusWhenShown, useLoad, useTitle, when } from './ui';
import './agents.css';

const WRITERS = ['follow_up_writer', 'lead_researcher'];

/**
 * /agents/:id: what the agent is and does (facts, settings to edit), its lifecycle (deploy, pause,
 * resume, delete while a draft), a dry run, its metrics, its recent runs and, for writers, the
 * suggestions waiting for a person. Every change is read back from the API before it is shown.
 */
export function AgentPage({ id }: { id: string }) {
  const [agent, setAgent] = useState<Agent | null>(null);
  const [problem, setProblem] = useState<{ message: string; missing: boolean } | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [actionError, setActionError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** Bumped after each change, so the metrics and runs are read again too. */
  const [revision, setRevision] = useState(0);
  const setFocus = useFocusWhenShown();

  const read = async () => {
    try {
      setAgent(await loadAgent(id));
      setProblem(null);
    } catch (error) {
      setProblem({ message: (error as Error).message, missing: error instanceof ApiProblem && error.code === 'resource_missing' });
    }
  };
  useEffect(() => void read(), [id]);
  useTitle(agent?.name ?? (problem?.missing ? 'Agent not found' : null));

  if (problem?.missing) {
    return (
      <Empty>
        <p role="alert">
          <strong>There is no agent {id} here.</strong> It may have been deleted, or it belongs to the other mode (test or live) or another account.
        </p>
        <p>
          <a href="/agents">See all agents</a>
        </p>
      </Empty>
    );
  }
  if (!agent) return <Status error={problem?.message ?? null} label="Loading the agent…" />;

  /** Runs a lifecycle change, then reads the agent again and says what happened. */
  const act = async (change: () => Promise<Agent>, said: (after: Agent) => string, focusOn: string) => {
    setBusy(true);
    setActionError(null);
    try {
      await change();
      const after = await loadAgent(id);
      setAgent(after);
      setRevision(revision + 1);
      setAnnouncement(said(after));
      setFocus(focusOn);
    } catch (error) {
      setActionError((error as Error).message);
      // A stale page shows the agent as it is now, beside the message saying so.
      if (error instanceof ApiProblem && error.code === 'stale_page') await read();
      setFocus('agent-action-error');
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="agent-page">
      <Announcer text={announcement} id="agent-announcer" />
      <p class="back">
        <a href="/agents">← All agents</a>
      </p>
      <section class="card" aria-labelledby="agent-facts-title">
        <h2 id="agent-facts-title">About this agent</h2>
        <p>
          A {humanize(agent.type).toLowerCase()}: it {TYPE_PURPOSE[agent.type]}.
        </p>
        <dl class="facts" id="agent-facts">
          <dt>Type</dt>
          <dd data-fact="type">{humanize(agent.type)}</dd>
          <dt>Status</dt>
          <dd data-fact="status">
            <span class={`badge status-${agent.status}`}>{humanize(agent.status)}</span>
          </dd>
          <dt>Version</dt>
          <dd data-fact="version">{agent.version === 0 ? 'Never deployed' : `v${agent.version}`}</dd>
          <dt>Deployed</dt>
          <dd data-fact="deployed">{when(agent.deployedAt)}</dd>
          <dt>Created</dt>
          <dd>{when(agent.createdAt)}</dd>
          <dt>ID</dt>
          <dd>
            <code>{agent.id}</code>
          </dd>
        </dl>
        <div class="actions-row lifecycle">
          <button
            type="button"
            id="agent-deploy"
            disabled={busy}
            onClick={() =>
              void act(
                () => deployAgent(agent),
                (after) => `Deployed ${after.name} as version ${after.version}.`,
                'agent-deploy',
              )
            }
          >
            {agent.version === 0 ? 'Deploy' : 'Deploy again'}
          </button>
          {agent.status === 'deployed' && (
            <button
              type="button"
              class="secondary"
              id="agent-pause"
              disabled={busy}
              onClick={() =>
                void act(
                  () => pauseAgent(agent.id),
                  (after) => `Paused ${after.name}: it acts on nothing until resumed.`,
                  'agent-resume',
                )
              }
            >
              Pause
            </button>
          )}
          {agent.status === 'paused' && (
            <button
              type="button"
              class="secondary"
              id="agent-resume"
              disabled={busy}
              onClick={() =>
                void act(
                  () => resumeAgent(agent.id),
                  (after) => `Resumed ${after.name} at version ${after.version}.`,
                  'agent-pause',
                )
              }
            >
              Resume
            </button>
          )}
        </div>
        <p class="muted hint">
          {agent.status === 'draft'
            ? 'A draft does nothing. Deploying freezes these settings as version 1 and the agent starts acting on new events.'
            : 'Deploying again freezes the settings below as a new version.'}
        </p>
        {actionError && (
          <p class="error" id="agent-action-error" role="alert" tabIndex={-1}>
            {actionError}
          </p>
        )}
      </section>
      <AgentSettings
        agent={agent}
        onSaved={async () => {
          const after = await loadAgent(id);
          setAgent(after);
          setAnnouncement(
            after.status === 'draft'
              ? `Saved the settings of ${after.name}; they take effect when it is deployed.`
              : `Saved the settings of ${after.name}; they take effect on the next deploy (it acts with version ${after.version} until then).`,
          );
        }}
      />
      <AgentSimulate agentId={agent.id} />
      <AgentMetricsSection agentId={agent.id} revision={revision} />
      <RecentRuns agentId={agent.id} revision={revision} />
      {WRITERS.includes(agent.type) && <AgentSuggestions agentId={agent.id} onDecided={() => setRevision(revision + 1)} />}
      <AgentDelete agent={agent} onRefused={read} />
    </div>
  );
}

function RecentRuns({ agentId, revision }: { agentId: string; revision: number }) {
  const runs = useLoad(() => agentRuns(agentId), [agentId, revision]);
  return (
    <section class="card" aria-labelledby="agent-runs-title">
      <h2 id="agent-runs-title">Recent runs</h2>
      {!runs.data ? (
        <Status error={runs.error} label="Loading runs…" />
      ) : runs.data.length === 0 ? (
        <p class="muted">No runs yet. A deployed agent runs when an event it reacts to happens (or on its schedule).</p>
      ) : (
        <Table<AgentRun>
          label="Recent runs"
          rows={runs.data}
          rowKey={(run) => run.id}
          columns={[
            { label: 'When', cell: (run) => when(run.createdAt) },
            { label: 'Trigger', cell: (run) => (run.trigger === 'event' ? (run.eventType ?? 'event') : 'Schedule') },
            { label: 'Outcome', cell: (run) => <span class={`badge outcome-${run.outcome}`}>{humanize(run.outcome)}</span> },
            { label: 'Actions', cell: (run) => (run.actions.length ? run.actions.map((action) => humanize(action.kind)).join(', ') : '—') },
            { label: 'Version', cell: (run) => `v${run.version}` },
            { label: 'Time', cell: (run) => `${run.durationMs} ms` },
            { label: 'Error', cell: (run) => run.error ?? '—' },
          ]}
        />
      )}
    </section>
  );
}

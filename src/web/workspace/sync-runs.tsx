import type { SyncRun } from './integrations-api';
import { humanize, Table, when } from './ui';

/**
 * An integration's sync runs, newest first: what each pushed, pulled and could not carry over.
 * A run's failures (the objects that failed one by one, with the provider's reason) fold open.
 */
export function SyncRuns({ runs }: { runs: SyncRun[] }) {
  return (
    <Table<SyncRun>
      label="Sync runs"
      rowKey={(run) => run.id}
      rows={runs}
      columns={[
        { label: 'Status', cell: (run) => <span class={`run-status run-${run.status}`}>{humanize(run.status)}</span> },
        { label: 'Trigger', cell: (run) => humanize(run.trigger) },
        { label: 'Pushed', cell: (run) => run.pushed },
        { label: 'Pulled', cell: (run) => run.pulled },
        { label: 'Failed', cell: (run) => <Failures run={run} /> },
        { label: 'To push', cell: (run) => run.toPush },
        { label: 'Started', cell: (run) => when(run.startedAt) },
        { label: 'Finished', cell: (run) => (run.status === 'running' ? 'Running…' : when(run.finishedAt)) },
        { label: 'Error', cell: (run) => (run.error ? <span class="wrap-anywhere">{run.error}</span> : '—') },
      ]}
    />
  );
}

function Failures({ run }: { run: SyncRun }) {
  if (run.failed === 0) return <>0</>;
  return (
    <details class="failures">
      <summary>
        {run.failed}
        <span class="visually-hidden"> failed {run.failed === 1 ? 'object' : 'objects'}</span>
      </summary>
      <ul class="wrap-anywhere">
        {run.failures.map((failure) => (
          <li key={failure.id}>
            <strong>
              {humanize(failure.direction)} {failure.objectType}
            </strong>{' '}
            {failure.objectId && <code>{failure.objectId}</code>}
            {failure.externalId && <span class="muted"> (provider record {failure.externalId})</span>}: {failure.message}
          </li>
        ))}
        {run.failed > run.failures.length && <li class="muted">…and {run.failed - run.failures.length} more.</li>}
      </ul>
    </details>
  );
}

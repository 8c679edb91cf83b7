import type { WebhookAttempt } from './developers';
import { Table, when, type Column } from './ui';

/**
 * Delivery attempts as a table (a subscription's, or an event's across subscriptions): the event,
 * what the endpoint answered and how fast, and the answer's first characters behind a disclosure.
 * `resend`, when given, adds a button per row that sends that event again.
 */
export function AttemptsTable<T extends WebhookAttempt>({
  label,
  attempts,
  resend,
  extra = [],
}: {
  label: string;
  attempts: T[];
  resend?: (attempt: T) => void;
  extra?: Column<T>[];
}) {
  const columns: Column<T>[] = [
    { label: 'Event', cell: (a) => <a href={`/developers/events/${encodeURIComponent(a.eventId)}`}>{a.eventId}</a> },
    ...extra,
    { label: 'Result', cell: (a) => <span class={`badge ${a.succeeded ? 'ok' : 'failed'}`}>{a.succeeded ? 'Succeeded' : 'Failed'}</span> },
    { label: 'Status code', cell: (a) => a.responseStatus ?? 'No answer' },
    { label: 'Attempt', cell: (a) => `#${a.attemptNumber}` },
    { label: 'Latency', cell: (a) => `${a.latencyMs} ms` },
    { label: 'Time', cell: (a) => when(a.createdAt) },
    {
      label: 'Response',
      cell: (a) => (
        <>
          {a.error && <span class="attempt-error">{a.error}</span>}
          {a.responseSnippet ? (
            <details>
              <summary>
                Response body
                <span class="visually-hidden">
                  {' '}
                  of attempt {a.attemptNumber} of {a.eventId}
                </span>
              </summary>
              <pre class="snippet">{a.responseSnippet}</pre>
            </details>
          ) : (
            !a.error && <span class="muted">Empty</span>
          )}
        </>
      ),
    },
  ];
  if (resend) {
    columns.push({
      label: 'Actions',
      hiddenLabel: true,
      cell: (a) => (
        <button type="button" class="secondary" onClick={() => resend(a)}>
          Resend<span class="visually-hidden"> {a.eventId}</span>
        </button>
      ),
    });
  }
  return <Table label={label} columns={columns} rows={attempts} rowKey={(a) => a.id} />;
}

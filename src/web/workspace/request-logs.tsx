import { useState } from 'preact/hooks';
import { listRequestLogs } from './developers';
import './developers.css';
import { Empty, livemode, Pager, Status, Table, useCursorPages, useLoad } from './ui';

/** To the second: requests a moment apart are told apart ("Nov 24, 2026, 17:40:05 UTC"). */
const moment = (iso: string): string =>
  `${new Date(iso).toLocaleString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })} UTC`;

/**
 * /developers/logs: the account's API requests in the session's mode, newest first, as the service
 * logged them (off the request path, so a request shows up a moment after its answer). "Errors
 * only" is the API's own filter (`errors: true`, status 400 and above).
 */
export function RequestLogs() {
  const [errorsOnly, setErrorsOnly] = useState(false);
  const pages = useCursorPages([errorsOnly]);
  const list = useLoad(() => listRequestLogs(errorsOnly, pages.cursor), [errorsOnly, pages.cursor]);

  return (
    <>
      <div class="filters">
        <label class="check inline" for="errors-only">
          <input id="errors-only" type="checkbox" checked={errorsOnly} onChange={(e) => setErrorsOnly(e.currentTarget.checked)} />
          Errors only (status 400 and above)
        </label>
        <button type="button" class="secondary" onClick={() => void list.reload()}>
          Refresh<span class="visually-hidden"> the request logs</span>
        </button>
      </div>
      {!list.data ? (
        <Status error={list.error} />
      ) : list.data.data.length === 0 && pages.page === 1 ? (
        <Empty>
          <p>
            <strong>{errorsOnly ? 'No failed requests in the last 7 days.' : 'No API requests yet.'}</strong>
          </p>
          <p>
            Calls to the API made with a {livemode() ? 'live' : 'test'} key (and this web app's own) appear here within seconds: method, route, status, request
            id and how long they took. They are kept 7 days.
          </p>
        </Empty>
      ) : (
        <>
          {list.error && <Status error={list.error} />}
          <Table
            label="Request logs"
            rowKey={(log) => log.id}
            rows={list.data.data}
            columns={[
              { label: 'Method', cell: (log) => <code>{log.method}</code> },
              {
                label: 'Route',
                cell: (log) => (
                  <code class="route">
                    {log.route}
                    {log.operationName ? ` (${log.operationName})` : ''}
                  </code>
                ),
              },
              { label: 'Status', cell: (log) => <span class={`badge ${log.status >= 400 ? 'failed' : 'ok'}`}>{log.status}</span> },
              { label: 'Request ID', cell: (log) => <code class="request-id">{log.requestId}</code> },
              { label: 'Key', cell: (log) => (log.keyPrefix ? <code>{log.keyPrefix}</code> : 'Web app') },
              { label: 'Latency', cell: (log) => `${Math.round(log.latencyMs)} ms` },
              { label: 'Time', cell: (log) => moment(log.createdAt) },
            ]}
          />
          <Pager label="Request log pages" page={pages.page} nextCursor={list.data.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
        </>
      )}
    </>
  );
}

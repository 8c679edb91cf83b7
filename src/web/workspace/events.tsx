import { useState } from 'preact/hooks';
import { eventTypes, listEvents } from './developers';
import './developers.css';
import { Empty, Pager, Status, Table, useCursorPages, useLoad, when } from './ui';

/**
 * /developers/events: the mode's events, newest first as the API lists them, filtered by type (the
 * API's own `type` filter) and paged by its cursors. Each links to its JSON.
 */
export function Events() {
  const [type, setType] = useState('');
  const pages = useCursorPages([type]);
  const list = useLoad(() => listEvents(type, pages.cursor), [type, pages.cursor]);

  return (
    <>
      <div class="filters">
        <label for="event-type">
          Type
          <select id="event-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            <option value="">All types</option>
            {eventTypes().map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
      </div>
      {!list.data ? (
        <Status error={list.error} />
      ) : list.data.data.length === 0 && pages.page === 1 ? (
        <Empty>
          <p>
            <strong>{type ? `No ${type} events yet.` : 'No events yet.'}</strong>
          </p>
          <p>
            Every change in this mode (a lead created, a deal moved or won, a proposal made) is recorded here as an event, the same one webhooks send, and kept
            30 days.
          </p>
        </Empty>
      ) : (
        <>
          {list.error && <Status error={list.error} />}
          <Table
            label="Events"
            rowKey={(event) => event.id}
            rows={list.data.data}
            columns={[
              {
                label: 'Event',
                cell: (event) => (
                  <a href={`/developers/events/${encodeURIComponent(event.id)}`} data-event-id={event.id}>
                    <code>{event.type}</code>
                  </a>
                ),
              },
              { label: 'Object', cell: (event) => <code class="object-id">{event.data.object?.id ?? '—'}</code> },
              { label: 'Time', cell: (event) => when(event.createdAt) },
            ]}
          />
          <Pager label="Event pages" page={pages.page} nextCursor={list.data.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
        </>
      )}
    </>
  );
}

import { AttemptsTable } from './attempts';
import { attemptsOfEvent, getEvent } from './developers';
import './developers.css';
import { Empty, Json, Status, useLoad, useTitle, when } from './ui';

/**
 * /developers/events/:id: the event as the API returns it (the JSON webhooks send carries the same
 * data), and every attempt to send it to this mode's endpoints.
 */
export function EventPage({ id }: { id: string }) {
  const loaded = useLoad(async () => {
    const event = await getEvent(id);
    return { event, attempts: await attemptsOfEvent(event) };
  }, [id]);
  useTitle(loaded.data ? loaded.data.event.type : null);
  if (!loaded.data) return <Status error={loaded.error} />;
  const { event, attempts } = loaded.data;
  return (
    <>
      <p>
        <a href="/developers/events">← All events</a>
      </p>
      <section class="card dev-card" aria-labelledby="event-facts">
        <h2 id="event-facts">Event</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>
            <code>{event.id}</code>
          </dd>
          <dt>Type</dt>
          <dd>
            <code>{event.type}</code>
          </dd>
          <dt>Object</dt>
          <dd>
            <code>{event.data.object?.id ?? '—'}</code>
          </dd>
          <dt>Time</dt>
          <dd>{when(event.createdAt)}</dd>
        </dl>
      </section>
      <h2>Event data</h2>
      <Json value={event} label={`JSON of event ${event.id}`} />
      <section aria-labelledby="event-deliveries" class="attempts">
        <h2 id="event-deliveries">Deliveries</h2>
        {attempts.length === 0 ? (
          <Empty>
            <p>No endpoint has been sent this event: none of this mode's webhook endpoints subscribes to {event.type}, or it was made before they were.</p>
          </Empty>
        ) : (
          <AttemptsTable
            label="Attempts to send this event"
            attempts={attempts}
            extra={[
              {
                label: 'Endpoint',
                cell: (a) => (
                  <a href={`/developers/webhooks/${encodeURIComponent(a.webhookId)}`} class="url">
                    {a.url}
                  </a>
                ),
              },
            ]}
          />
        )}
      </section>
    </>
  );
}

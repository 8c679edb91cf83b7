import { leadDeals, leadEvents } from './lead-queries';
import { day, humanize, money, Pager, Status, Table, useCursorPages, useLoad, when } from './ui';

/** What happened around a lead: the deals made from it and the events about it, each list paged by the API. */
export function LeadActivity({ leadId }: { leadId: string }) {
  return (
    <div class="lead-activity">
      <LeadDeals leadId={leadId} />
      <LeadEvents leadId={leadId} />
    </div>
  );
}

function LeadDeals({ leadId }: { leadId: string }) {
  const pages = useCursorPages();
  const deals = useLoad(() => leadDeals(leadId, pages.cursor), [leadId, pages.cursor]);
  return (
    <section class="card" aria-labelledby="lead-deals-title" data-section="deals">
      <h2 id="lead-deals-title">Deals</h2>
      {!deals.data ? (
        <Status error={deals.error && `Could not load the deals: ${deals.error}`} label="Loading deals…" />
      ) : deals.data.data.length === 0 ? (
        <p class="muted">
          No deals from this lead yet. A deal made with this lead’s id (<code>lead_id</code>) shows here; the <a href="/pipeline">board</a> lists every deal.
        </p>
      ) : (
        <>
          <Table
            label="Deals from this lead"
            rowKey={(deal) => deal.id}
            rows={deals.data.data}
            columns={[
              { label: 'Deal', cell: (deal) => <a href={`/deals/${deal.id}`}>{deal.name}</a> },
              { label: 'Stage', cell: (deal) => humanize(deal.stage) },
              { label: 'Value', cell: (deal) => money(deal.value, deal.currency) },
              { label: 'Expected close', cell: (deal) => day(deal.expectedCloseDate) },
            ]}
          />
          <Pager label="Pages of deals" page={pages.page} nextCursor={deals.data.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
        </>
      )}
    </section>
  );
}

function LeadEvents({ leadId }: { leadId: string }) {
  const pages = useCursorPages();
  const events = useLoad(() => leadEvents(leadId, pages.cursor), [leadId, pages.cursor]);
  return (
    <section class="card" aria-labelledby="lead-events-title" data-section="events">
      <h2 id="lead-events-title">Events</h2>
      {!events.data ? (
        <Status error={events.error && `Could not load the events: ${events.error}`} label="Loading events…" />
      ) : events.data.data.length === 0 ? (
        <p class="muted">No events about this lead yet.</p>
      ) : (
        <>
          <Table
            label="Events about this lead, newest first"
            rowKey={(event) => event.id}
            rows={events.data.data}
            columns={[
              { label: 'Event', cell: (event) => <a href={`/developers/events/${event.id}`}>{event.type}</a> },
              { label: 'Time', cell: (event) => when(event.createdAt) },
            ]}
          />
          <Pager label="Pages of events" page={pages.page} nextCursor={events.data.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
        </>
      )}
    </section>
  );
}

import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { DeletedNotice } from './delete-record';
import { LeadFilters } from './lead-filters';
import { LeadForm } from './lead-form';
import {
  filterOfParam,
  filtersFromSearch,
  listLeads,
  narrowed,
  NO_FILTERS,
  searchOf,
  type FilterKey,
  type Filters,
  type LeadPage,
  type LeadRow,
} from './lead-queries';
import { ownerName, useOwners, type Owners } from './owners';
import { Announcer, day, Empty, humanize, Pager, Status, Table, useCursorPages } from './ui';
import './leads.css';

/** What the list last heard from the API: a refusal (naming a filter or not), or whether any lead exists. */
interface Answer {
  problem: { field?: FilterKey; message: string } | null;
  anyLead: boolean | null;
}

/**
 * /leads: the account's leads with the API's own filters, sort and cursor paging. The filters live
 * in the query string (pushState on every change, popstate on Back), so a filtered list can be
 * bookmarked and reloaded; the API decides what a valid filter is and its refusal is shown on the
 * field it names.
 */
export function Leads() {
  const [filters, setFilters] = useState<Filters>(() => filtersFromSearch(location.search));
  const [answer, setAnswer] = useState<Answer>({ problem: null, anyLead: null });
  const [version, setVersion] = useState(0);
  const [created, setCreated] = useState<LeadRow | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [adding, setAdding] = useState(false);
  const owners = useOwners();

  useEffect(() => {
    const back = () => setFilters(filtersFromSearch(location.search));
    addEventListener('popstate', back);
    return () => removeEventListener('popstate', back);
  }, []);

  const apply = (next: Filters) => {
    const search = searchOf(next);
    if (search !== location.search) history.pushState(null, '', `${location.pathname}${search}`);
    setFilters(filtersFromSearch(search));
  };
  const clear = () => {
    apply({ ...NO_FILTERS, sort: filters.sort });
    setAnnouncement('Filters cleared.');
  };
  const onCreated = (lead: LeadRow) => {
    setAdding(false);
    setCreated(lead);
    setVersion(version + 1);
    setAnnouncement(`Added ${lead.company}.`);
  };

  const search = searchOf(filters);
  // An account without a single lead has nothing to filter: the page says how to add one instead
  // (and until the first answer the filters wait, rather than flash up over an empty account).
  const nothingToFilter = (answer.anyLead === null && !answer.problem) || (answer.anyLead === false && !narrowed(filters));
  return (
    <>
      <Announcer text={announcement} id="leads-announcer" />
      <DeletedNotice />
      {!nothingToFilter && <LeadFilters filters={filters} owners={owners.data?.owners} problem={answer.problem} onApply={apply} onClear={clear} />}
      {!nothingToFilter && answer.anyLead && (
        <div class="actions-row add-lead">
          <button type="button" class="secondary" aria-expanded={adding} aria-controls="add-lead-box" onClick={() => setAdding(!adding)}>
            {adding ? 'Close the new lead form' : 'Add a lead'}
          </button>
        </div>
      )}
      {!nothingToFilter && adding && (
        <div class="card lead-form-box" id="add-lead-box">
          <LeadForm onCreated={onCreated} />
        </div>
      )}
      <LeadResults
        key={`${search}#${version}`}
        filters={filters}
        focusId={created?.id ?? null}
        owners={owners.data?.owners}
        onAnswer={setAnswer}
        onClear={clear}
        onCreated={onCreated}
      />
    </>
  );
}

interface ResultsProps {
  filters: Filters;
  /** A lead just added: its link takes focus once the list shows it. */
  focusId: string | null;
  /** The members, for owners' names (undefined while loading, null when this role may not read them). */
  owners: Owners | null | undefined;
  onAnswer(answer: Answer): void;
  onClear(): void;
  onCreated(lead: LeadRow): void;
}

/** One filtered list with its own pages; drawn afresh (a new `key`) whenever the filters change. */
function LeadResults({ filters, focusId, owners, onAnswer, onClear, onCreated }: ResultsProps) {
  const pages = useCursorPages();
  const [page, setPage] = useState<LeadPage | null>(null);
  const [error, setError] = useState<{ message: string; onField: boolean } | null>(null);
  const latest = useRef(0);

  useEffect(() => {
    const request = ++latest.current;
    listLeads(filters, pages.cursor).then(
      (answer) => {
        if (request !== latest.current) return; // a later page was asked for meanwhile
        setPage(answer);
        setError(null);
        onAnswer({ problem: null, anyLead: answer.anyLead });
      },
      (problem: unknown) => {
        if (request !== latest.current) return;
        const field = problem instanceof ApiProblem ? filterOfParam(problem.param) : undefined;
        const message = (problem as Error).message;
        setPage(null);
        setError({ message, onField: Boolean(field) });
        onAnswer({ problem: { field, message }, anyLead: null });
      },
    );
  }, [pages.cursor]);

  useEffect(() => {
    if (focusId && page?.leads.some((lead) => lead.id === focusId)) document.getElementById(`lead-link-${focusId}`)?.focus();
  }, [page]);

  // A refused filter is marked on its field (LeadFilters); here the list only says why it is missing.
  if (error?.onField) return <p class="muted">Correct the marked filter to see leads.</p>;
  if (error) return <Status error={`Could not load the leads: ${error.message}`} />;
  if (!page) return <Status error={null} label="Loading leads…" />;
  if (page.leads.length === 0 && !page.anyLead) {
    return (
      <Empty>
        <p>
          <strong>No leads yet.</strong> A lead is a company you might sell to, with a contact; the service scores each one from 0 to 100.
        </p>
        <p>
          Add your first lead below, send one with <code>POST /v1/leads</code>, or <a href="/welcome">load demo data</a> (“Load demo data” on the welcome page)
          to look around with sample leads.
        </p>
        <LeadForm onCreated={onCreated} />
      </Empty>
    );
  }
  if (page.leads.length === 0 && pages.page === 1) {
    return (
      <Empty>
        <p>
          <strong>No leads match these filters.</strong> Loosen a filter, or clear them all to see every lead.
        </p>
        <button type="button" class="secondary" onClick={onClear}>
          Clear filters
        </button>
      </Empty>
    );
  }
  return (
    <section aria-labelledby="leads-list-title" class="lead-list">
      <h2 id="leads-list-title" class="visually-hidden">
        {narrowed(filters) ? 'Leads matching the filters' : 'All leads'}
      </h2>
      <Table
        label={`Leads, page ${pages.page}`}
        rowKey={(lead) => lead.id}
        rows={page.leads}
        columns={[
          {
            label: 'Company',
            cell: (lead) => (
              <a href={`/leads/${lead.id}`} id={`lead-link-${lead.id}`} class="lead-company">
                {lead.company}
              </a>
            ),
          },
          {
            label: 'Contact',
            cell: (lead) => (
              <span class="contact">
                {lead.contactName && <span>{lead.contactName}</span>}
                <span class="muted">{lead.contactEmail}</span>
              </span>
            ),
          },
          {
            label: 'Score',
            cell: (lead) => (
              <span class="score-cell">
                <strong>{lead.score}</strong> <span class={`badge score-${lead.scoreLabel}`}>{humanize(lead.scoreLabel)}</span>
              </span>
            ),
          },
          { label: 'Status', cell: (lead) => humanize(lead.status) },
          { label: 'Owner', cell: (lead) => ownerName(lead.ownerId, owners) },
          { label: 'Created', cell: (lead) => day(lead.createdAt) },
        ]}
      />
      <Pager label="Pages of leads" page={pages.page} nextCursor={page.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
    </section>
  );
}

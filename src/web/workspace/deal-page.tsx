import { useState } from 'preact/hooks';
import { DealCoSell } from './deal-co-sell';
import { DeleteRecord } from './delete-record';
import { DealForm } from './deal-form';
import { DealHistory } from './deal-history';
import { DealProposals } from './deal-proposals';
import { deleteDeal, loadDeal, type ExternalRecord, type LoadedDeal } from './deal';
import { CustomFields } from './custom-fields';
import { ownerName, useOwners, type Owners } from './owners';
import { isClosed, moveDeal, STAGES, stageLabel, updateDeal, type Stage } from './pipeline';
import { Announcer, day, Empty, livemode, money, Status, Table, useFocusWhenShown, useLoad, useTitle, when } from './ui';
import './deal-page.css';

/**
 * One deal (/deals/:id): its facts, edited in place and moved between stages as on the board, its
 * stage history, proposals (with their PDFs), co-sell registration and the records it became at
 * connected CRMs and PSAs, and Delete. Every change goes through /graphql and the deal is read again after it.
 */
export function DealPage({ id }: { id: string }) {
  const loaded = useLoad(() => loadDeal(id), [id]);
  const owners = useOwners();
  const [announcement, setAnnouncement] = useState('');
  const found = loaded.data;
  useTitle(found === 'missing' ? 'Deal not found' : found?.deal.name);

  if (!found) return <Status error={loaded.error} label="Loading the deal…" />;
  if (found === 'missing') return <NotFound id={id} />;

  const changed = async (message: string) => {
    await loaded.reload();
    setAnnouncement(message);
  };
  return (
    <div class="deal-page">
      <Announcer text={announcement} id="deal-announcer" />
      <p class="back">
        <a href="/pipeline">← Pipeline board</a>
      </p>
      {loaded.error && (
        <p class="error" role="alert">
          {loaded.error}
        </p>
      )}
      <DealFacts loaded={found} owners={owners.data?.owners} onChanged={changed} onProblem={setAnnouncement} />
      <CustomFields objectType="deal" recordId={found.deal.id} values={found.deal.fields} onSaved={loaded.reload} />
      <DealHistory history={found.deal.history} />
      <DealProposals deal={found.deal} onChanged={changed} />
      <DealCoSell deal={found.deal} eligibility={found.eligibility} onChanged={changed} />
      <LinkedRecords records={found.deal.externalIds} />
    </div>
  );
}

function NotFound({ id }: { id: string }) {
  return (
    <section class="card" aria-labelledby="not-found-title">
      <h2 id="not-found-title">No such deal</h2>
      <p>
        There is no deal <code>{id}</code> in this account’s {livemode() ? 'live' : 'test'} data. It may have been deleted, or belong to another account or
        mode.
      </p>
      <p>
        <a href="/pipeline">Go to the pipeline board</a> to find your deals.
      </p>
    </section>
  );
}

interface FactsProps {
  loaded: LoadedDeal;
  /** The members (undefined while loading, null when this role may not read them). */
  owners: Owners | null | undefined;
  onChanged(message: string): Promise<void>;
  onProblem(message: string): void;
}

/** The deal's facts, the Edit form in their place, and the stage change (a list and Move, as on the board's cards). */
function DealFacts({ loaded: { deal, company }, owners, onChanged, onProblem }: FactsProps) {
  const [editing, setEditing] = useState(false);
  const [target, setTarget] = useState<Stage | ''>('');
  const [moveError, setMoveError] = useState<string | null>(null);
  const setFocus = useFocusWhenShown();

  const move = async (event: Event) => {
    event.preventDefault();
    if (!target) return;
    try {
      await moveDeal(deal.id, target);
      setMoveError(null);
      setTarget('');
      await onChanged(`Moved ${deal.name} to ${stageLabel(target)}.`);
      setFocus(isClosed(target) ? 'deal-stage' : 'move-to');
    } catch (error) {
      setMoveError((error as Error).message);
      onProblem(`${deal.name} was not moved: ${(error as Error).message}`);
    }
  };

  return (
    <section class="card" aria-labelledby="facts-title">
      <div class="section-head">
        <h2 id="facts-title">Details</h2>
        {!editing && (
          <button type="button" class="secondary" id="edit-deal" onClick={() => setEditing(true)} aria-label={`Edit ${deal.name}`}>
            Edit
          </button>
        )}
      </div>
      {editing ? (
        <DealForm
          idPrefix="edit-deal"
          title={`Edit ${deal.name}`}
          deal={deal}
          owners={owners}
          submitLabel="Save"
          onCancel={() => {
            setEditing(false);
            setFocus('edit-deal');
          }}
          onSubmit={async (fields) => {
            await updateDeal(deal.id, fields);
            setEditing(false);
            await onChanged(`Saved ${fields.name}.`);
            setFocus('edit-deal');
          }}
        />
      ) : (
        <dl class="facts" id="deal-facts">
          <dt>Value</dt>
          <dd data-fact="value">{money(deal.value, deal.currency)}</dd>
          <dt>Currency</dt>
          <dd data-fact="currency">{deal.currency}</dd>
          <dt>Stage</dt>
          <dd data-fact="stage" id="deal-stage" tabIndex={-1}>
            {stageLabel(deal.stage)}
          </dd>
          <dt>Probability</dt>
          <dd data-fact="probability">{deal.probability}%</dd>
          <dt>Expected close</dt>
          <dd data-fact="expected-close">{day(deal.expectedCloseDate)}</dd>
          <dt>Owning member</dt>
          <dd data-fact="owner-member">{ownerName(deal.ownerId, owners)}</dd>
          <dt>Owner</dt>
          <dd data-fact="owner">{deal.owner ?? '—'}</dd>
          <dt>Lead</dt>
          <dd data-fact="lead">{deal.leadId ? <a href={`/leads/${deal.leadId}`}>{company ?? deal.leadId}</a> : '—'}</dd>
          <dt>Created</dt>
          <dd data-fact="created">{when(deal.createdAt)}</dd>
          <dt>Updated</dt>
          <dd data-fact="updated">{when(deal.updatedAt)}</dd>
        </dl>
      )}
      {isClosed(deal.stage) ? (
        <p class="muted">{stageLabel(deal.stage)} is a closed stage: it is final.</p>
      ) : (
        <form class="move-stage" onSubmit={move} aria-label="Change the stage">
          <label for="move-to">Move to stage</label>
          <div class="actions-row">
            <select
              id="move-to"
              value={target}
              onChange={(e) => setTarget((e.currentTarget as HTMLSelectElement).value as Stage | '')}
              aria-invalid={moveError ? 'true' : undefined}
              aria-describedby={moveError ? 'move-error' : undefined}
            >
              <option value="">Choose a stage…</option>
              {STAGES.filter((stage) => stage !== deal.stage).map((stage) => (
                <option value={stage} key={stage}>
                  {stageLabel(stage)}
                </option>
              ))}
            </select>
            <button type="submit" disabled={!target}>
              Move
            </button>
          </div>
          {moveError && (
            <p class="field-error" id="move-error" role="alert">
              {moveError}
            </p>
          )}
        </form>
      )}
      <DeleteRecord noun="deal" name={deal.name} listPath="/pipeline" remove={() => deleteDeal(deal.id)}>
        Delete {deal.name}? It goes for good with its stage history. A deal with a proposal is kept: proposals are issued documents.
      </DeleteRecord>
    </section>
  );
}

const RECORD_COLUMNS = [
  { label: 'Provider', cell: (row: ExternalRecord) => row.provider },
  { label: 'Record', cell: (row: ExternalRecord) => row.record },
  { label: 'ID at the provider', cell: (row: ExternalRecord) => <code>{row.id}</code> },
  { label: 'Integration', cell: (row: ExternalRecord) => <a href={`/integrations/${row.integrationId}`}>{row.integrationId}</a> },
];

/** The records the sync engine made or found for this deal at connected CRMs and PSAs. */
function LinkedRecords({ records }: { records: ExternalRecord[] }) {
  return (
    <section class="card" aria-labelledby="records-title">
      <h2 id="records-title">Linked CRM and PSA records</h2>
      {records.length === 0 ? (
        <Empty>
          <p>This deal is not linked to any CRM or PSA record yet.</p>
          <p>
            <a href="/integrations">Connect an integration</a> (HubSpot, Salesforce, ConnectWise, Autotask or HaloPSA): its sync links each deal to the record
            it becomes there, and lists it here.
          </p>
        </Empty>
      ) : (
        <Table label="Linked records" columns={RECORD_COLUMNS} rows={records} rowKey={(row) => `${row.integrationId}:${row.record}:${row.id}`} />
      )}
    </section>
  );
}

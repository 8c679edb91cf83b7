import { useEffect, useState } from 'preact/hooks';
import { DealCard } from './deal-card';
import { DealForm } from './deal-form';
import { DeletedNotice } from './delete-record';
import { useOwners } from './owners';
import { createDeal, isClosed, loadPipeline, money, moveDeal, STAGES, stageLabel, updateDeal, type Pipeline, type Stage } from './pipeline';

/** Where focus goes once the board has drawn again: a card (by deal id) or a column's toggle. */
type FocusTarget = { deal: string } | { toggle: Stage } | null;

/**
 * The pipeline board: a column per stage with its cards, and the API's own count, total and
 * weighted value per currency. Every change goes through /graphql, after which the board is read
 * again, so what it shows is what the API holds.
 */
export function Board() {
  const [pipeline, setPipeline] = useState<Pipeline | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [collapsed, setCollapsed] = useState<Set<Stage>>(new Set(['closed_won', 'closed_lost']));
  const [editing, setEditing] = useState<string | null>(null);
  const [adding, setAdding] = useState<Stage | null>(null);
  const [dragging, setDragging] = useState<string | null>(null);
  const [dropTarget, setDropTarget] = useState<Stage | null>(null);
  const [focus, setFocus] = useState<FocusTarget>(null);
  const owners = useOwners().data?.owners;

  const reload = async () => {
    try {
      setPipeline(await loadPipeline());
      setLoadError(null);
    } catch (error) {
      setLoadError(`Could not load the pipeline: ${(error as Error).message}`);
    }
  };
  useEffect(() => void reload(), []);
  useEffect(() => {
    if (!focus) return;
    const element = 'deal' in focus ? document.getElementById(`deal-${focus.deal}`) : document.getElementById(`toggle-${focus.toggle}`);
    element?.focus();
    setFocus(null);
  }, [pipeline, focus]);

  const move = async (id: string, stage: Stage) => {
    const deal = pipeline?.deals.find((d) => d.id === id);
    if (!deal || deal.stage === stage) return;
    try {
      await moveDeal(id, stage);
      await reload();
      setAnnouncement(`Moved ${deal.name} to ${stageLabel(stage)}.`);
      setFocus(collapsed.has(stage) ? { toggle: stage } : { deal: id });
    } catch (error) {
      setAnnouncement(`${deal.name} was not moved: ${(error as Error).message}`);
    }
  };

  if (!pipeline) {
    return (
      <p class="muted" role="status">
        {loadError ?? 'Loading the pipeline…'}
      </p>
    );
  }

  return (
    <>
      <p class="visually-hidden" role="status" aria-live="polite" id="board-announcer">
        {announcement}
      </p>
      <DeletedNotice />
      {loadError && (
        <p class="error" role="alert">
          {loadError}
        </p>
      )}
      <div class="board" role="region" aria-label="Pipeline board" tabIndex={0}>
        {STAGES.map((stage) => {
          const deals = pipeline.deals.filter((deal) => deal.stage === stage);
          const totals = pipeline.summary.filter((row) => row.stage === stage);
          const closed = isClosed(stage);
          const shut = collapsed.has(stage);
          const titleId = `column-${stage}-title`;
          return (
            <section
              key={stage}
              class={`column${dropTarget === stage ? ' drop-target' : ''}${shut ? ' collapsed' : ''}`}
              aria-labelledby={titleId}
              data-stage={stage}
              onDragOver={(event) => {
                if (!dragging) return;
                event.preventDefault();
                if (event.dataTransfer) event.dataTransfer.dropEffect = 'move';
                setDropTarget(stage);
              }}
              onDragLeave={() => setDropTarget((current) => (current === stage ? null : current))}
              onDrop={(event) => {
                event.preventDefault();
                const id = event.dataTransfer?.getData('text/plain') || dragging;
                setDropTarget(null);
                setDragging(null);
                if (id) void move(id, stage);
              }}
            >
              <h2 id={titleId}>
                {closed ? (
                  <button
                    type="button"
                    class="toggle"
                    id={`toggle-${stage}`}
                    aria-expanded={!shut}
                    aria-controls={`cards-${stage}`}
                    onClick={() => {
                      const next = new Set(collapsed);
                      if (shut) next.delete(stage);
                      else next.add(stage);
                      setCollapsed(next);
                    }}
                  >
                    <span class="chevron" aria-hidden="true">
                      {shut ? '▸' : '▾'}
                    </span>
                    {stageLabel(stage)}
                  </button>
                ) : (
                  stageLabel(stage)
                )}{' '}
                <span class="count">
                  ({deals.length} {deals.length === 1 ? 'deal' : 'deals'})
                </span>
              </h2>
              <dl class="totals" data-totals={stage}>
                {totals.length === 0 ? (
                  <>
                    <dt>Total</dt>
                    <dd>{money(0, 'USD')}</dd>
                  </>
                ) : (
                  totals.map((row) => (
                    <div key={row.currency} data-currency={row.currency}>
                      <dt>Total</dt>
                      <dd class="total">{money(row.totalValue, row.currency)}</dd>
                      <dt>Weighted</dt>
                      <dd class="weighted">{money(row.weightedValue, row.currency)}</dd>
                    </div>
                  ))
                )}
              </dl>
              <ul class="cards" id={`cards-${stage}`} hidden={shut}>
                {deals.map((deal) => (
                  <li key={deal.id}>
                    {editing === deal.id ? (
                      <DealForm
                        idPrefix={`edit-${deal.id}`}
                        title={`Edit ${deal.name}`}
                        deal={deal}
                        owners={owners}
                        submitLabel="Save"
                        onCancel={() => {
                          setEditing(null);
                          setFocus({ deal: deal.id });
                        }}
                        onSubmit={async (fields) => {
                          await updateDeal(deal.id, fields);
                          setEditing(null);
                          await reload();
                          setAnnouncement(`Saved ${fields.name}.`);
                          setFocus({ deal: deal.id });
                        }}
                      />
                    ) : (
                      <DealCard
                        deal={deal}
                        company={deal.leadId ? pipeline.companies[deal.leadId] : undefined}
                        owners={owners}
                        onEdit={() => setEditing(deal.id)}
                        onMove={(to) => void move(deal.id, to)}
                        onDragStart={() => setDragging(deal.id)}
                        onDragEnd={() => {
                          setDragging(null);
                          setDropTarget(null);
                        }}
                      />
                    )}
                  </li>
                ))}
              </ul>
              {!closed &&
                (adding === stage ? (
                  <DealForm
                    idPrefix={`new-${stage}`}
                    title={`New deal in ${stageLabel(stage)}`}
                    owners={owners}
                    submitLabel="Add deal"
                    onCancel={() => setAdding(null)}
                    onSubmit={async (fields) => {
                      const deal = await createDeal(stage, fields);
                      setAdding(null);
                      await reload();
                      setAnnouncement(`Added ${deal.name} to ${stageLabel(stage)}.`);
                      setFocus({ deal: deal.id });
                    }}
                  />
                ) : (
                  <button type="button" class="add secondary" onClick={() => setAdding(stage)}>
                    Add a deal<span class="visually-hidden"> to {stageLabel(stage)}</span>
                  </button>
                ))}
            </section>
          );
        })}
      </div>
    </>
  );
}

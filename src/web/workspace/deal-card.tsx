import { useState } from 'preact/hooks';
import { ownerName, type Owners } from './owners';
import { isClosed, money, STAGES, stageLabel, type Deal, type Stage } from './pipeline';

interface Props {
  deal: Deal;
  company?: string;
  /** The members, to name the owning member (undefined while loading, null when this role may not read them). */
  owners: Owners | null | undefined;
  onEdit(): void;
  onMove(stage: Stage): void;
  onDragStart(): void;
  onDragEnd(): void;
}

const date = (day: string) => new Date(`${day}T00:00:00Z`).toLocaleDateString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric' });

/** One deal. Open deals can be dragged to another column, or moved with the "Move to" list and its button. */
export function DealCard({ deal, company, owners, onEdit, onMove, onDragStart, onDragEnd }: Props) {
  const [target, setTarget] = useState<Stage | ''>('');
  const open = !isClosed(deal.stage);
  const titleId = `deal-${deal.id}-name`;
  return (
    <article
      class="deal"
      id={`deal-${deal.id}`}
      tabIndex={-1}
      aria-labelledby={titleId}
      draggable={open}
      data-deal-id={deal.id}
      onDragStart={(event) => {
        event.dataTransfer?.setData('text/plain', deal.id);
        if (event.dataTransfer) event.dataTransfer.effectAllowed = 'move';
        onDragStart();
      }}
      onDragEnd={onDragEnd}
    >
      <h3 id={titleId}>
        <a href={`/deals/${deal.id}`} draggable={false}>
          {deal.name}
        </a>
      </h3>
      <p class="deal-value">{money(deal.value, deal.currency)}</p>
      <dl>
        <dt>Company</dt>
        <dd>{company ?? '—'}</dd>
        <dt>Expected close</dt>
        <dd>{deal.expectedCloseDate ? date(deal.expectedCloseDate) : '—'}</dd>
        <dt>Owner</dt>
        {/* The owning member; a deal without one shows its older free-text owner. */}
        <dd data-owner-id={deal.ownerId ?? undefined}>{deal.ownerId ? ownerName(deal.ownerId, owners) : (deal.owner ?? '—')}</dd>
      </dl>
      <div class="deal-actions">
        <button type="button" class="secondary" onClick={onEdit} aria-label={`Edit ${deal.name}`}>
          Edit
        </button>
        {open && (
          <form
            class="move"
            onSubmit={(event) => {
              event.preventDefault();
              if (target) onMove(target);
            }}
          >
            <label class="visually-hidden" for={`move-${deal.id}`}>
              Move {deal.name} to
            </label>
            <select id={`move-${deal.id}`} value={target} onChange={(e) => setTarget((e.currentTarget as HTMLSelectElement).value as Stage | '')}>
              <option value="">Move to…</option>
              {STAGES.filter((stage) => stage !== deal.stage).map((stage) => (
                <option value={stage} key={stage}>
                  {stageLabel(stage)}
                </option>
              ))}
            </select>
            <button type="submit" disabled={!target} aria-label={`Move ${deal.name}`}>
              Move
            </button>
          </form>
        )}
      </div>
    </article>
  );
}

import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { createProposal, pdfHref, PROPOSALS_SHOWN, type DealDetail, type ProposalRow } from './deal';
import { day, Empty, humanize, money, Table, when } from './ui';

const COLUMNS = [
  { label: 'Number', cell: (row: ProposalRow) => row.number },
  { label: 'Title', cell: (row: ProposalRow) => row.title },
  { label: 'Status', cell: (row: ProposalRow) => humanize(row.status) },
  { label: 'Total', cell: (row: ProposalRow) => money(row.total, row.currency) },
  { label: 'Created', cell: (row: ProposalRow) => when(row.createdAt) },
  { label: 'Valid until', cell: (row: ProposalRow) => day(row.validUntil) },
  {
    label: 'PDF',
    cell: (row: ProposalRow) => (
      <a href={pdfHref(row.id)} download={`${row.number}.pdf`} class="pdf">
        Download<span class="visually-hidden"> {row.number} as a</span> PDF
      </a>
    ),
  },
];

interface Props {
  deal: DealDetail;
  onChanged(message: string): Promise<void>;
}

/** The deal's proposals, newest first, each with its PDF, and a form that generates another. */
export function DealProposals({ deal, onChanged }: Props) {
  const [creating, setCreating] = useState(false);
  const { data, hasMore } = deal.proposals;
  return (
    <section class="card" aria-labelledby="proposals-title">
      <div class="section-head">
        <h2 id="proposals-title" tabIndex={-1}>
          Proposals
        </h2>
        {!creating && (
          <button type="button" class="secondary" id="new-proposal" onClick={() => setCreating(true)}>
            Create proposal
          </button>
        )}
      </div>
      {creating && (
        <ProposalForm
          deal={deal}
          onCancel={() => {
            setCreating(false);
            requestAnimationFrame(() => document.getElementById('new-proposal')?.focus());
          }}
          onCreated={async (proposal) => {
            setCreating(false);
            await onChanged(`Created proposal ${proposal.number}.`);
            document.getElementById('proposals-title')?.focus();
          }}
        />
      )}
      {data.length === 0 ? (
        <Empty>
          <p>No proposals yet. A proposal is a numbered offer frozen from the deal as it is now, with a PDF to send to the customer.</p>
        </Empty>
      ) : (
        <Table label="Proposals" columns={COLUMNS} rows={data} rowKey={(row) => row.id} />
      )}
      {hasMore && <p class="muted">The newest {PROPOSALS_SHOWN} are shown; the API lists them all (GET /v1/proposals?deal_id=…).</p>}
    </section>
  );
}

interface Line {
  description: string;
  quantity: string;
  unitPrice: string;
}
type LineField = keyof Line;

/**
 * A proposal's title and lines (description, quantity, unit price). The API prices the lines and
 * decides what is valid; its error is shown next to the field it names (`lineItems.1.quantity`).
 */
function ProposalForm({ deal, onCancel, onCreated }: { deal: DealDetail; onCancel(): void; onCreated(proposal: ProposalRow): Promise<void> }) {
  const [title, setTitle] = useState('');
  const [lines, setLines] = useState<Line[]>([{ description: deal.name, quantity: '1', unitPrice: String(deal.value) }]);
  const [problem, setProblem] = useState<{ param?: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const setLine = (index: number, field: LineField, value: string) => setLines(lines.map((line, i) => (i === index ? { ...line, [field]: value } : line)));
  const submit = async (event: Event) => {
    event.preventDefault();
    for (const [index, line] of lines.entries()) {
      for (const field of ['quantity', 'unitPrice'] as const) {
        if (line[field].trim() === '' || Number.isNaN(Number(line[field]))) {
          return setProblem({ param: `lineItems.${index}.${field}`, message: 'Enter a number, such as 2 or 1250.50.' });
        }
      }
    }
    setBusy(true);
    try {
      const proposal = await createProposal({
        dealId: deal.id,
        ...(title.trim() ? { title } : {}),
        lineItems: lines.map((line) => ({ description: line.description, quantity: Number(line.quantity), unitPrice: Number(line.unitPrice) })),
      });
      await onCreated(proposal);
    } catch (error) {
      setProblem({ param: error instanceof ApiProblem ? error.param : undefined, message: (error as Error).message });
      setBusy(false);
    }
  };

  /** Where the API's error goes: the input it names, or (for a whole line or the lines) above the buttons. */
  const fieldIds = new Set(['title', ...lines.flatMap((_, i) => (['description', 'quantity', 'unitPrice'] as const).map((f) => `lineItems.${i}.${f}`))]);
  const onField = problem?.param && fieldIds.has(problem.param) ? problem.param : undefined;
  const inputProps = (param: string) => ({
    'aria-invalid': onField === param ? ('true' as const) : undefined,
    'aria-describedby': onField === param ? 'proposal-error' : undefined,
  });
  const error = (param: string) =>
    onField === param && (
      <p class="field-error" id="proposal-error" role="alert">
        {problem!.message}
      </p>
    );

  return (
    <form class="proposal-form" onSubmit={submit} aria-label="New proposal" noValidate>
      <label for="proposal-title">Title (optional)</label>
      <input
        id="proposal-title"
        value={title}
        placeholder={`Proposal: ${deal.name}`}
        onInput={(e) => setTitle((e.currentTarget as HTMLInputElement).value)}
        {...inputProps('title')}
      />
      {error('title')}
      {lines.map((line, index) => (
        <fieldset class="line" key={index}>
          <legend>Line {index + 1}</legend>
          <div class="line-fields">
            {(
              [
                ['description', 'Description', 'text'],
                ['quantity', 'Quantity', 'number'],
                ['unitPrice', `Unit price (${deal.currency})`, 'number'],
              ] as const
            ).map(([field, label, type]) => (
              <div class={`field ${field}`} key={field}>
                <label for={`line-${index}-${field}`}>{label}</label>
                <input
                  id={`line-${index}-${field}`}
                  type={type as 'text'}
                  step={type === 'number' ? 'any' : undefined}
                  value={line[field]}
                  onInput={(e) => setLine(index, field, (e.currentTarget as HTMLInputElement).value)}
                  {...inputProps(`lineItems.${index}.${field}`)}
                />
                {error(`lineItems.${index}.${field}`)}
              </div>
            ))}
          </div>
          {lines.length > 1 && (
            <button type="button" class="secondary" onClick={() => setLines(lines.filter((_, i) => i !== index))}>
              Remove line {index + 1}
            </button>
          )}
        </fieldset>
      ))}
      {problem && !onField && (
        <p class="field-error" id="proposal-error" role="alert">
          {problem.message}
        </p>
      )}
      <div class="actions-row">
        <button type="button" class="secondary" onClick={() => setLines([...lines, { description: '', quantity: '1', unitPrice: '' }])}>
          Add a line
        </button>
        <button type="submit" disabled={busy}>
          Create proposal
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { ownerOptions, type Owners } from './owners';
import type { Deal, DealFields } from './pipeline';

const FIELDS = [
  { key: 'name', label: 'Name', type: 'text' },
  { key: 'value', label: 'Value', type: 'number' },
  { key: 'expectedCloseDate', label: 'Expected close', type: 'date' },
  { key: 'owner', label: 'Owner', type: 'text' },
] as const;
type Key = (typeof FIELDS)[number]['key'] | 'ownerId';

interface Props {
  /** Prefix of the inputs' ids: unique on the page. */
  idPrefix: string;
  title: string;
  deal?: Deal;
  /** The members a deal may be given to: with them, an "Owning member" select that saves `ownerId`. */
  owners?: Owners | null;
  submitLabel: string;
  onSubmit(fields: DealFields): Promise<void>;
  onCancel(): void;
}

/**
 * Adds or edits a deal in place. The API decides what is valid; its error is shown next to the
 * field it names (aria-invalid, aria-describedby), or above the buttons when it names none.
 */
export function DealForm({ idPrefix, title, deal, owners, submitLabel, onSubmit, onCancel }: Props) {
  const [values, setValues] = useState<Record<Key, string>>({
    name: deal?.name ?? '',
    value: deal ? String(deal.value) : '',
    expectedCloseDate: deal?.expectedCloseDate ?? '',
    owner: deal?.owner ?? '',
    ownerId: deal?.ownerId ?? '',
  });
  const [problem, setProblem] = useState<{ field?: Key; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const value = values.value.trim() === '' ? NaN : Number(values.value);
    if (Number.isNaN(value)) return setProblem({ field: 'value', message: 'Enter the value as a number, such as 12500.' });
    setBusy(true);
    try {
      const fields: DealFields = { name: values.name, value, expectedCloseDate: values.expectedCloseDate || null, owner: values.owner.trim() || null };
      if (owners) fields.ownerId = values.ownerId || null;
      await onSubmit(fields);
    } catch (error) {
      const param = error instanceof ApiProblem ? error.param : undefined;
      const field = param === 'ownerId' && owners ? 'ownerId' : FIELDS.find((f) => f.key === param)?.key;
      setProblem({ field, message: error instanceof Error ? error.message : String(error) });
      setBusy(false);
    }
  };

  const errorId = `${idPrefix}-error`;
  return (
    <form class="deal-form" onSubmit={submit} aria-label={title} noValidate>
      {FIELDS.map(({ key, label, type }) => {
        const invalid = problem?.field === key;
        return (
          <div class="field" key={key}>
            <label for={`${idPrefix}-${key}`}>{label}</label>
            <input
              id={`${idPrefix}-${key}`}
              name={key}
              // Preact's types pair each input type with its own attributes; these three share the ones used here.
              type={type as 'text'}
              step={type === 'number' ? 'any' : undefined}
              required={key === 'name' || key === 'value'}
              value={values[key]}
              onInput={(e) => setValues({ ...values, [key]: (e.currentTarget as HTMLInputElement).value })}
              aria-invalid={invalid ? 'true' : undefined}
              aria-describedby={invalid ? errorId : undefined}
            />
            {invalid && (
              <p class="field-error" id={errorId} role="alert">
                {problem.message}
              </p>
            )}
          </div>
        );
      })}
      {owners && (
        <div class="field">
          <label for={`${idPrefix}-ownerId`}>Owning member</label>
          <select
            id={`${idPrefix}-ownerId`}
            name="ownerId"
            value={values.ownerId}
            onChange={(e) => setValues({ ...values, ownerId: (e.currentTarget as HTMLSelectElement).value })}
            aria-invalid={problem?.field === 'ownerId' ? 'true' : undefined}
            aria-describedby={problem?.field === 'ownerId' ? errorId : undefined}
          >
            {ownerOptions(owners, deal?.ownerId ?? null).map((option) => (
              <option value={option.value} key={option.value}>
                {option.label}
              </option>
            ))}
          </select>
          {problem?.field === 'ownerId' && (
            <p class="field-error" id={errorId} role="alert">
              {problem.message}
            </p>
          )}
        </div>
      )}
      {problem && !problem.field && (
        <p class="field-error" id={errorId} role="alert">
          {problem.message}
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

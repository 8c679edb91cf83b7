import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import type { Deal, DealFields } from './pipeline';

const FIELDS = [
  { key: 'name', label: 'Name', type: 'text' },
  { key: 'value', label: 'Value', type: 'number' },
  { key: 'expectedCloseDate', label: 'Expected close', type: 'date' },
  { key: 'owner', label: 'Owner', type: 'text' },
] as const;
type Key = (typeof FIELDS)[number]['key'];

interface Props {
  /** Prefix of the inputs' ids: unique on the page. */
  idPrefix: string;
  title: string;
  deal?: Deal;
  submitLabel: string;
  onSubmit(fields: DealFields): Promise<void>;
  onCancel(): void;
}

/**
 * Adds or edits a deal in place. The API decides what is valid; its error is shown next to the
 * field it names (aria-invalid, aria-describedby), or above the buttons when it names none.
 */
export function DealForm({ idPrefix, title, deal, submitLabel, onSubmit, onCancel }: Props) {
  const [values, setValues] = useState<Record<Key, string>>({
    name: deal?.name ?? '',
    value: deal ? String(deal.value) : '',
    expectedCloseDate: deal?.expectedCloseDate ?? '',
    owner: deal?.owner ?? '',
  });
  const [problem, setProblem] = useState<{ field?: Key; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const value = values.value.trim() === '' ? NaN : Number(values.value);
    if (Number.isNaN(value)) return setProblem({ field: 'value', message: 'Enter the value as a number, such as 12500.' });
    setBusy(true);
    try {
      await onSubmit({ name: values.name, value, expectedCloseDate: values.expectedCloseDate || null, owner: values.owner.trim() || null });
    } catch (error) {
      const param = error instanceof ApiProblem ? error.param : undefined;
      const field = FIELDS.find((f) => f.key === param)?.key;
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

import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { createLead, type LeadRow } from './lead-queries';

const FIELDS = [
  { key: 'company', label: 'Company', type: 'text', required: true },
  { key: 'contactEmail', label: 'Contact email', type: 'email', required: true },
  { key: 'contactName', label: 'Contact name', type: 'text', required: false },
  { key: 'industry', label: 'Industry', type: 'text', required: false },
  { key: 'employees', label: 'Employees', type: 'number', required: false },
] as const;
type Key = (typeof FIELDS)[number]['key'];

/**
 * Adds a lead: company and contact email (what the API requires) and the facts that weigh in its
 * score. The API decides what is valid; its error is shown next to the field it names.
 */
export function LeadForm({ onCreated }: { onCreated(lead: LeadRow): void }) {
  const [values, setValues] = useState<Record<Key, string>>({ company: '', contactEmail: '', contactName: '', industry: '', employees: '' });
  const [problem, setProblem] = useState<{ field?: Key; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const employees = values.employees.trim();
    if (employees !== '' && !/^\d+$/.test(employees))
      return setProblem({ field: 'employees', message: 'Enter the number of employees as a whole number, such as 120.' });
    setBusy(true);
    try {
      const lead = await createLead({
        company: values.company,
        contactEmail: values.contactEmail,
        contactName: values.contactName.trim() || null,
        industry: values.industry.trim() || null,
        employees: employees === '' ? null : Number(employees),
      });
      setProblem(null);
      onCreated(lead);
    } catch (error) {
      const param = error instanceof ApiProblem ? error.param : undefined;
      setProblem({ field: FIELDS.find((f) => f.key === param)?.key, message: (error as Error).message });
    } finally {
      setBusy(false);
    }
  };

  const errorId = 'new-lead-error';
  return (
    <form class="lead-form" onSubmit={submit} aria-labelledby="new-lead-title" noValidate>
      <h2 id="new-lead-title">Add a lead</h2>
      <div class="lead-form-fields">
        {FIELDS.map(({ key, label, type, required }) => {
          const invalid = problem?.field === key;
          return (
            <div class="field" key={key}>
              <label for={`new-lead-${key}`}>
                {label}
                {!required && <span class="optional"> (optional)</span>}
              </label>
              <input
                id={`new-lead-${key}`}
                name={key}
                // Preact's types pair each input type with its own attributes; these share the ones used here.
                type={type as 'text'}
                inputMode={type === 'number' ? 'numeric' : undefined}
                min={type === 'number' ? 0 : undefined}
                required={required}
                autoComplete="off"
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
      </div>
      {problem && !problem.field && (
        <p class="field-error" id={errorId} role="alert">
          {problem.message}
        </p>
      )}
      <div class="actions-row">
        <button type="submit" disabled={busy}>
          Add lead
        </button>
      </div>
    </form>
  );
}

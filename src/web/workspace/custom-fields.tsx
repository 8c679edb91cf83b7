import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import './fields.css';
import { listDefinitions, saveValues, type FieldDefinition, type FieldObject } from './custom-fields-api';
import { Announcer, Status, useFocusWhenShown, useLoad } from './ui';

/**
 * A lead's or deal's custom fields (issue 68) on its page: each defined field with the record's
 * value, and "Edit fields", a form with an input per type. The API checks the values; its refusal
 * names the field (`fields.<key>`), shown under that input, which it describes.
 */

type Values = Record<string, unknown>;
/** What the inputs hold: text as typed, ticks per option, "" for no value. */
type Inputs = Record<string, string | string[]>;

/** The record's own value of a key (never one every object inherits, such as constructor). */
const held = (values: Values, key: string): unknown => (Object.hasOwn(values, key) ? values[key] : undefined);

const optionLabel = (field: FieldDefinition, value: unknown) => field.options.find((option) => option.value === value)?.label ?? String(value);

/** A value as people read it. */
export function shownValue(field: FieldDefinition, value: unknown): string {
  if (value === undefined || value === null) return '—';
  switch (field.type) {
    case 'boolean':
      return value ? 'Yes' : 'No';
    case 'select':
      return optionLabel(field, value);
    case 'multi_select':
      return Array.isArray(value) && value.length ? value.map((item) => optionLabel(field, item)).join(', ') : '—';
    case 'number':
      return Number(value).toLocaleString('en-US');
    case 'money':
      return Number(value).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    case 'datetime':
      return `${new Date(String(value)).toLocaleString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })} UTC`;
    default:
      return String(value);
  }
}

function inputOf(field: FieldDefinition, value: unknown): string | string[] {
  if (field.type === 'multi_select') return Array.isArray(value) ? value.map(String) : [];
  if (value === undefined || value === null) return '';
  if (field.type === 'boolean') return value ? 'true' : 'false';
  if (field.type === 'datetime') return String(value).slice(0, 16); // datetime-local, read as UTC
  return String(value);
}

/** An input as the API takes it: numbers as numbers, "" as null (cleared), a datetime-local as UTC. */
function valueOf(field: FieldDefinition, input: string | string[]): unknown {
  if (Array.isArray(input)) return input;
  if (input.trim() === '') return null;
  switch (field.type) {
    case 'number':
    case 'money':
      return Number.isNaN(Number(input)) ? input : Number(input);
    case 'boolean':
      return input === 'true';
    case 'datetime':
      return `${input}:00Z`;
    default:
      return input;
  }
}

export function CustomFields({
  objectType,
  recordId,
  values,
  onSaved,
}: {
  objectType: FieldObject;
  recordId: string;
  values: Values;
  onSaved(): Promise<void>;
}) {
  const definitions = useLoad(() => listDefinitions(objectType), [objectType]);
  const [editing, setEditing] = useState(false);
  const [announcement, setAnnouncement] = useState('');
  const setFocus = useFocusWhenShown();
  const titleId = `${objectType}-fields-title`;

  if (!definitions.data) return <Status error={definitions.error} label="Loading the custom fields…" />;
  const fields = definitions.data;
  return (
    <section class="card custom-fields" aria-labelledby={titleId}>
      <h2 id={titleId}>Custom fields</h2>
      <Announcer text={announcement} id={`${objectType}-fields-announcer`} />
      {fields.length === 0 ? (
        <p class="muted">
          No custom fields for {objectType}s in this mode yet. Owners and admins define them in <a href="/settings/fields">Settings → Fields</a>.
        </p>
      ) : editing ? (
        <FieldsForm
          objectType={objectType}
          fields={fields}
          values={values}
          onCancel={() => {
            setEditing(false);
            setFocus(`${objectType}-fields-edit`);
          }}
          onSave={async (changed) => {
            await saveValues(objectType, recordId, changed);
            await onSaved();
            setEditing(false);
            setAnnouncement('Custom fields saved.');
            setFocus(`${objectType}-fields-edit`);
          }}
        />
      ) : (
        <>
          <dl class="facts compact">
            {fields.map((field) => (
              <Fragment key={field.key}>
                <dt>{field.label}</dt>
                <dd data-field={field.key}>{shownValue(field, held(values, field.key))}</dd>
              </Fragment>
            ))}
          </dl>
          <button
            type="button"
            class="secondary"
            id={`${objectType}-fields-edit`}
            onClick={() => {
              setEditing(true);
              setAnnouncement('');
              setFocus(`field-${fields[0].key}`);
            }}
          >
            Edit fields
          </button>
        </>
      )}
    </section>
  );
}

function FieldsForm({
  objectType,
  fields,
  values,
  onSave,
  onCancel,
}: {
  objectType: FieldObject;
  fields: FieldDefinition[];
  values: Values;
  onSave(changed: Values): Promise<void>;
  onCancel(): void;
}) {
  const [inputs, setInputs] = useState<Inputs>(() => Object.fromEntries(fields.map((field) => [field.key, inputOf(field, held(values, field.key))])));
  const [problem, setProblem] = useState<{ key?: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      // Only what changed is sent: a value the record holds and nobody touched stays as it is.
      const changed = Object.fromEntries(
        fields
          .filter((field) => JSON.stringify(inputs[field.key]) !== JSON.stringify(inputOf(field, held(values, field.key))))
          .map((field) => [field.key, valueOf(field, inputs[field.key])]),
      );
      await onSave(changed);
    } catch (error) {
      const key = error instanceof ApiProblem ? /^fields\.(\w+)$/.exec(error.param ?? '')?.[1] : undefined;
      setProblem({ key, message: (error as Error).message });
      requestAnimationFrame(() => document.getElementById(key ? `field-${key}` : `${objectType}-fields-error`)?.focus());
    } finally {
      setBusy(false);
    }
  };

  const set = (key: string, value: string | string[]) => setInputs({ ...inputs, [key]: value });
  return (
    <form class="custom-fields-form" onSubmit={submit} aria-label="Edit custom fields" noValidate>
      {fields.map((field) => {
        const id = `field-${field.key}`;
        const invalid = problem?.key === field.key;
        const aria = invalid ? { 'aria-invalid': 'true' as const, 'aria-describedby': `${id}-error` } : {};
        const error = invalid ? (
          <p class="field-error" id={`${id}-error`} role="alert">
            {problem!.message}
          </p>
        ) : null;
        const label = `${field.label}${field.required ? ' (required)' : ''}`;
        const value = inputs[field.key];
        if (field.type === 'multi_select') {
          return (
            <fieldset key={field.key} class="field option-ticks" id={id} tabIndex={-1} {...aria}>
              <legend>{label}</legend>
              {field.options
                .filter((option) => !option.archived || (value as string[]).includes(option.value))
                .map((option) => (
                  <label key={option.value} class="check inline">
                    <input
                      type="checkbox"
                      checked={(value as string[]).includes(option.value)}
                      onChange={(e) =>
                        set(
                          field.key,
                          e.currentTarget.checked ? [...(value as string[]), option.value] : (value as string[]).filter((item) => item !== option.value),
                        )
                      }
                    />
                    {option.label}
                  </label>
                ))}
              {error}
            </fieldset>
          );
        }
        return (
          <div class="field" key={field.key}>
            <label for={id}>{label}</label>
            {field.type === 'select' || field.type === 'boolean' ? (
              <select id={id} value={value as string} onChange={(e) => set(field.key, e.currentTarget.value)} {...aria}>
                <option value="">—</option>
                {field.type === 'boolean' ? (
                  <>
                    <option value="true">Yes</option>
                    <option value="false">No</option>
                  </>
                ) : (
                  field.options
                    .filter((option) => !option.archived || option.value === value)
                    .map((option) => (
                      <option key={option.value} value={option.value}>
                        {option.label}
                      </option>
                    ))
                )}
              </select>
            ) : field.type === 'long_text' ? (
              <textarea id={id} rows={3} value={value as string} onInput={(e) => set(field.key, e.currentTarget.value)} {...aria} />
            ) : (
              // Preact types each input type apart; the attributes used here are common to all of them.
              <input
                id={id}
                type={(INPUT_TYPES[field.type] ?? 'text') as 'text'}
                step="any"
                value={value as string}
                onInput={(e) => set(field.key, e.currentTarget.value)}
                {...aria}
              />
            )}
            {field.description && <p class="hint">{field.description}</p>}
            {error}
          </div>
        );
      })}
      {problem && !problem.key && (
        <p class="field-error" id={`${objectType}-fields-error`} role="alert" tabIndex={-1}>
          {problem.message}
        </p>
      )}
      <div class="actions-row">
        <button type="submit" disabled={busy}>
          Save fields
        </button>
        <button type="button" class="secondary" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

const INPUT_TYPES: Record<string, 'number' | 'date' | 'datetime-local' | 'url' | 'email' | 'tel' | 'text'> = {
  number: 'number',
  money: 'number',
  date: 'date',
  datetime: 'datetime-local',
  url: 'url',
  email: 'email',
  phone: 'tel',
};

import { useState } from 'preact/hooks';
import { AskFirst } from './ask-first';
import './fields.css';
import { defineField, deleteDefinition, FIELD_TYPES, listDefinitions, type FieldDefinition, type FieldObject } from './custom-fields-api';
import { Announcer, Empty, humanize, Status, Table, useFocusWhenShown, useLoad, workspaceRoot } from './ui';

/** "Contract end" → "contract_end": the key a label suggests (the person may change it). */
const keyOf = (label: string) =>
  label
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+|_+$/g, '')
    .slice(0, 40);

/**
 * /settings/fields: the mode's custom fields of leads and deals (issue 68), and for owners and
 * admins a form to define one (options of a select as a comma list) and Delete per field, after a
 * question (its values go with it). The API judges everything; its refusal is shown by the field it names.
 */
export function FieldsSettings() {
  const list = useLoad(() => listDefinitions(), []);
  const [announcement, setAnnouncement] = useState('');
  const { role = '' } = workspaceRoot().dataset;
  const canDefine = role === 'owner' || role === 'admin';

  const changed = async (message: string) => {
    await list.reload();
    setAnnouncement(message);
  };

  if (!list.data) return <Status error={list.error} />;
  return (
    <>
      <Announcer text={announcement} />
      {canDefine && <DefineForm onDefined={(field) => changed(`Defined ${field.label} on ${field.objectType}s.`)} />}
      <h2 id="fields-title">Fields</h2>
      {list.data.length === 0 ? (
        <Empty>
          <p>
            <strong>No custom fields yet.</strong>
          </p>
          <p>A field of your own (seats, contract end, tier…) shows on every lead or deal page, and the API takes and filters it as fields.</p>
        </Empty>
      ) : (
        <Table
          label="Custom fields"
          rowKey={(field) => field.id}
          rows={list.data}
          columns={[
            { label: 'Label', cell: (field) => field.label },
            { label: 'Object', cell: (field) => humanize(field.objectType) },
            { label: 'Key', cell: (field) => <code>{field.key}</code> },
            { label: 'Type', cell: (field) => humanize(field.type) },
            {
              label: 'Options',
              cell: (field) =>
                field.options.length ? field.options.map((option) => `${option.label}${option.archived ? ' (archived)' : ''}`).join(', ') : '—',
            },
            { label: 'Rules', cell: (field) => [field.required && 'Required', field.unique && 'Unique'].filter(Boolean).join(', ') || '—' },
            ...(canDefine
              ? [{ label: 'Actions', hiddenLabel: true, cell: (field: FieldDefinition) => <DeleteField field={field} onDeleted={changed} /> }]
              : []),
          ]}
        />
      )}
    </>
  );
}

function DeleteField({ field, onDeleted }: { field: FieldDefinition; onDeleted(message: string): Promise<void> }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <AskFirst
      base={`field-${field.id}-delete`}
      className="field-delete"
      label={
        <>
          Delete<span class="visually-hidden"> {field.label}</span>
        </>
      }
      yes="Yes, delete"
      question={`Delete ${field.label}? Its value goes from every ${field.objectType} in this mode, for good.`}
      problem={problem}
      problemClass="field-error"
      busy={busy}
      asking={asking}
      setAsking={(next) => {
        if (next) setProblem(null);
        setAsking(next);
      }}
      onYes={async () => {
        setBusy(true);
        try {
          await deleteDefinition(field.id);
          await onDeleted(`Deleted ${field.label}.`);
        } catch (error) {
          setProblem((error as Error).message);
          setAsking(false);
        } finally {
          setBusy(false);
        }
      }}
    />
  );
}

function DefineForm({ onDefined }: { onDefined(field: FieldDefinition): Promise<void> }) {
  const empty = { objectType: 'lead' as FieldObject, label: '', key: '', type: 'text', options: '', required: false };
  const [values, setValues] = useState(empty);
  const [keyTouched, setKeyTouched] = useState(false);
  const [problem, setProblem] = useState<{ param?: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const setFocus = useFocusWhenShown();
  const hasOptions = values.type === 'select' || values.type === 'multi_select';

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const options = hasOptions
        ? values.options
            .split(',')
            .map((label) => label.trim())
            .filter(Boolean)
            .map((label) => ({ value: keyOf(label) || 'option', label }))
        : undefined;
      const field = await defineField({
        objectType: values.objectType,
        label: values.label,
        key: values.key,
        type: values.type,
        required: values.required,
        options,
      });
      setProblem(null);
      setValues(empty);
      setKeyTouched(false);
      await onDefined(field);
      setFocus('define-label');
    } catch (error) {
      const param = (error as { param?: string }).param?.replace(/\..*$/, '');
      setProblem({ param, message: (error as Error).message });
      setFocus(param && ['label', 'key', 'options'].includes(param) ? `define-${param}` : 'define-error');
    } finally {
      setBusy(false);
    }
  };
  const aria = (name: string) => (problem?.param === name ? { 'aria-invalid': 'true' as const, 'aria-describedby': 'define-error' } : {});

  return (
    <form class="card define-field" onSubmit={submit} aria-labelledby="define-title" noValidate>
      <h2 id="define-title">Define a field</h2>
      <div class="invite-fields">
        <div class="field">
          <label for="define-object">On</label>
          <select id="define-object" value={values.objectType} onChange={(e) => setValues({ ...values, objectType: e.currentTarget.value as FieldObject })}>
            <option value="lead">Leads</option>
            <option value="deal">Deals</option>
          </select>
        </div>
        <div class="field">
          <label for="define-label">Label</label>
          <input
            id="define-label"
            value={values.label}
            onInput={(e) => {
              const label = e.currentTarget.value;
              setValues({ ...values, label, key: keyTouched ? values.key : keyOf(label) });
            }}
            {...aria('label')}
          />
        </div>
        <div class="field">
          <label for="define-key">Key</label>
          <input
            id="define-key"
            value={values.key}
            onInput={(e) => {
              setKeyTouched(true);
              setValues({ ...values, key: e.currentTarget.value });
            }}
            {...aria('key')}
          />
        </div>
        <div class="field">
          <label for="define-type">Type</label>
          <select id="define-type" value={values.type} onChange={(e) => setValues({ ...values, type: e.currentTarget.value })}>
            {FIELD_TYPES.map((type) => (
              <option key={type} value={type}>
                {humanize(type)}
              </option>
            ))}
          </select>
        </div>
      </div>
      {hasOptions && (
        <div class="field">
          <label for="define-options">Options (comma-separated)</label>
          <input id="define-options" value={values.options} onInput={(e) => setValues({ ...values, options: e.currentTarget.value })} {...aria('options')} />
        </div>
      )}
      <div class="field check">
        <input id="define-required" type="checkbox" checked={values.required} onChange={(e) => setValues({ ...values, required: e.currentTarget.checked })} />
        <label for="define-required">Required on new records</label>
      </div>
      {problem && (
        <p class="field-error" id="define-error" role="alert" tabIndex={-1}>
          {problem.message}
        </p>
      )}
      <div class="actions-row">
        <button type="submit" disabled={busy}>
          Define field
        </button>
      </div>
    </form>
  );
}

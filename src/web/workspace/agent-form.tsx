import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { AGENT_TYPES, createAgent, TYPE_PURPOSE, type Agent, type AgentType } from './agents-api';
import { CONFIG_FIELDS, configOf, initialValues, OPEN_STAGES, type Aria, type ConfigField, type FormValues, type RuleValues } from './agent-config-fields';
import { MemberSetting, MembersSetting, RulesSetting, type MemberChoices } from './agent-router-fields';
import { useOwners } from './owners';
import { humanize } from './ui';

/** Where the API's error belongs: `name`, `type`, a config setting (`config.qualify_at` → `qualify_at`), or the form as a whole. */
const fieldOf = (param: string | undefined): string | undefined => param?.replace(/^config\./, '').replace(/\..*$/, '');

/**
 * The API's error on an agent form (create or edit): shown under the field it names when the form
 * has that field, else for the form as a whole (`agent-form-error`), and focused so it is read out.
 */
export function useFieldProblem() {
  const [problem, setProblem] = useState<{ field?: string; message: string } | null>(null);

  const show = (error: unknown, fields: string[]) => {
    const field = fieldOf(error instanceof ApiProblem ? error.param : undefined);
    const known = field !== undefined && fields.includes(field);
    setProblem({ field: known ? field : undefined, message: (error as Error).message });
    // The field in error takes the focus, so the message under it is read out.
    requestAnimationFrame(() => document.getElementById(known ? `agent-${field}` : 'agent-form-error')?.focus());
  };
  const errorFor = (field: string) =>
    problem?.field === field ? (
      <p class="field-error" id={`agent-${field}-error`} role="alert">
        {problem.message}
      </p>
    ) : null;
  /** aria-invalid and aria-describedby of a field: its hint, if it has one, and its error, when it is in error. */
  const aria = (field: string, hasHint = false): Aria => {
    const invalid = problem?.field === field;
    const ids = [hasHint && `agent-${field}-hint`, invalid && `agent-${field}-error`].filter(Boolean).join(' ');
    return { ...(invalid ? { 'aria-invalid': 'true' } : {}), ...(ids ? { 'aria-describedby': ids } : {}) };
  };
  const formError =
    problem && !problem.field ? (
      <p class="field-error" id="agent-form-error" role="alert" tabIndex={-1}>
        {problem.message}
      </p>
    ) : null;
  return { setProblem, show, errorFor, aria, formError };
}

/**
 * Creates an agent (a draft until deployed): name, type and the type's common settings with their
 * defaults. The API decides what is valid; its error is shown next to the field it names.
 */
export function AgentForm({ onCreated }: { onCreated(agent: Agent): void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<AgentType>('lead_qualifier');
  const [values, setValues] = useState<FormValues>(() => initialValues('lead_qualifier'));
  const { setProblem, show, errorFor, aria, formError } = useFieldProblem();
  const [busy, setBusy] = useState(false);
  const owners = useOwners();

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const agent = await createAgent(name, type, configOf(type, values));
      setProblem(null);
      // Ready for the next one: the same type and its defaults, no name.
      setName('');
      setValues(initialValues(type));
      onCreated(agent);
    } catch (error) {
      show(error, ['name', 'type', ...CONFIG_FIELDS[type].map((field) => field.key)]);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="agent-form card" onSubmit={submit} aria-labelledby="create-agent-title" noValidate>
      <h2 id="create-agent-title">Create agent</h2>
      <p class="muted">A new agent is a draft: it does nothing until you deploy it from its page.</p>
      <div class="field">
        <label for="agent-name">Name</label>
        <input id="agent-name" name="name" value={name} required onInput={(e) => setName(e.currentTarget.value)} {...aria('name')} />
        {errorFor('name')}
      </div>
      <div class="field">
        <label for="agent-type">Type</label>
        <select
          id="agent-type"
          name="type"
          value={type}
          onChange={(e) => {
            const next = e.currentTarget.value as AgentType;
            setType(next);
            setValues(initialValues(next));
            setProblem(null);
          }}
          {...aria('type', true)}
        >
          {AGENT_TYPES.map((option) => (
            <option key={option} value={option}>
              {humanize(option)}
            </option>
          ))}
        </select>
        <p class="hint" id="agent-type-hint">
          It {TYPE_PURPOSE[type]}.
        </p>
        {errorFor('type')}
      </div>
      <fieldset class="settings">
        <legend>Settings of a {humanize(type).toLowerCase()}</legend>
        {CONFIG_FIELDS[type].map((field) => (
          <Setting
            key={`${type}-${field.key}`}
            field={field}
            value={values[field.key]}
            onChange={(value) => setValues({ ...values, [field.key]: value })}
            error={errorFor(field.key)}
            aria={aria(field.key, Boolean(field.hint))}
            owners={owners.data?.owners}
          />
        ))}
      </fieldset>
      {formError}
      <div class="actions">
        <button type="submit" disabled={busy}>
          Create agent
        </button>
      </div>
    </form>
  );
}

interface SettingProps {
  field: ConfigField;
  value: FormValues[string];
  onChange(value: FormValues[string]): void;
  error: preact.JSX.Element | null;
  aria: Aria;
  /** The members a lead_router's settings offer (undefined while loading, null when this role may not read them). */
  owners?: MemberChoices;
}

/** One setting's input(s), its hint and, when the API named it, its error. */
export function Setting({ field, value, onChange, error, aria, owners }: SettingProps) {
  const id = `agent-${field.key}`;
  const hint = field.hint ? (
    <p class="hint" id={`${id}-hint`}>
      {field.hint}
    </p>
  ) : null;
  switch (field.kind) {
    case 'routing_rules':
      return (
        <RulesSetting id={id} label={field.label} hint={hint} value={value as RuleValues[]} onChange={onChange} error={error} aria={aria} owners={owners} />
      );
    case 'members':
      return <MembersSetting id={id} label={field.label} hint={hint} value={value as string[]} onChange={onChange} error={error} aria={aria} owners={owners} />;
    case 'member':
      return (
        <MemberSetting
          id={id}
          label={field.label}
          hint={hint}
          value={value as string}
          onChange={onChange}
          error={error}
          aria={aria}
          owners={owners}
          none={field.none}
        />
      );
    case 'boolean':
    case 'auto_approve':
      return (
        <div class="field check">
          <input id={id} type="checkbox" checked={value as boolean} onChange={(e) => onChange(e.currentTarget.checked)} {...aria} />
          <label for={id}>{field.label}</label>
          {hint}
          {error}
        </div>
      );
    case 'select':
      return (
        <div class="field">
          <label for={id}>{field.label}</label>
          <select id={id} value={value as string} onChange={(e) => onChange(e.currentTarget.value)} {...aria}>
            {field.options.map((option) => (
              <option key={option} value={option}>
                {humanize(option)}
              </option>
            ))}
          </select>
          {hint}
          {error}
        </div>
      );
    case 'stage_days': {
      const days = value as Record<string, string>;
      return (
        <fieldset class="field stage-days" id={id} tabIndex={-1} {...aria}>
          <legend>{field.label}</legend>
          {OPEN_STAGES.map((stage) => (
            <label key={stage}>
              {humanize(stage)}
              <input type="number" inputMode="numeric" value={days[stage]} onInput={(e) => onChange({ ...days, [stage]: e.currentTarget.value })} />
            </label>
          ))}
          {error}
        </fieldset>
      );
    }
    case 'text':
      return (
        <div class="field">
          <label for={id}>{field.label}</label>
          <textarea id={id} rows={2} value={value as string} onInput={(e) => onChange(e.currentTarget.value)} {...aria} />
          {hint}
          {error}
        </div>
      );
    default:
      return (
        <div class="field">
          <label for={id}>{field.label}</label>
          <input id={id} type="number" step="any" value={value as string} onInput={(e) => onChange(e.currentTarget.value)} {...aria} />
          {hint}
          {error}
        </div>
      );
  }
}

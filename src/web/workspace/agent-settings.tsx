import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { Setting, useFieldProblem } from './agent-form';
import type { MemberChoices } from './agent-router-fields';
import { CONFIG_FIELDS, configOf, valuesOf, type FormValues } from './agent-config-fields';
import { updateAgent, type Agent } from './agents-api';
import { ownerName, type Owners, useOwners } from './owners';
import { humanize, useFocusWhenShown } from './ui';

/**
 * The agent's Settings card: what its working config holds and, on "Edit settings", the create
 * form's fields filled with it (the type is fixed: AgentUpdateInput takes a name and a config).
 * The API judges the change; its error is shown under the field it names. The page reads the
 * agent again after a save (onSaved) and says what happened.
 */
export function AgentSettings({ agent, onSaved }: { agent: Agent; onSaved(): Promise<void> }) {
  const [editing, setEditing] = useState(false);
  const setFocus = useFocusWhenShown();
  const owners = useOwners();

  return (
    <section class="card" aria-labelledby="agent-config-title">
      <h2 id="agent-config-title">Settings</h2>
      <p class="muted hint" id="agent-settings-note">
        {agent.status === 'draft'
          ? 'A draft does nothing: these settings take effect when you deploy it.'
          : `Changes take effect on the next deploy: until then the agent keeps acting with the settings of version ${agent.version}.`}
      </p>
      {editing ? (
        <AgentEditForm
          agent={agent}
          owners={owners.data?.owners}
          onSaved={async () => {
            await onSaved();
            setEditing(false);
            setFocus('agent-edit');
          }}
          onCancel={() => {
            setEditing(false);
            setFocus('agent-edit');
          }}
        />
      ) : (
        <>
          <dl class="facts config" id="agent-config">
            {Object.entries(agent.config).map(([key, value]) => (
              <Fragment key={key}>
                <dt>{humanize(key)}</dt>
                <dd data-setting={key}>{agent.type === 'lead_router' ? routerText(key, value, owners.data?.owners) : settingText(value)}</dd>
              </Fragment>
            ))}
          </dl>
          <div class="actions-row">
            <button
              type="button"
              class="secondary"
              id="agent-edit"
              onClick={() => {
                setEditing(true);
                setFocus('agent-name');
              }}
            >
              Edit settings
            </button>
          </div>
        </>
      )}
    </section>
  );
}

function AgentEditForm({ agent, owners, onSaved, onCancel }: { agent: Agent; owners: MemberChoices; onSaved(): Promise<void>; onCancel(): void }) {
  const [name, setName] = useState(agent.name);
  const [values, setValues] = useState<FormValues>(() => valuesOf(agent.type, agent.config));
  const { setProblem, show, errorFor, aria, formError } = useFieldProblem();
  const [busy, setBusy] = useState(false);
  const fields = CONFIG_FIELDS[agent.type];

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      // The config is replaced whole: keys the form does not offer (a proposal's notes) keep their value.
      await updateAgent(agent.id, { name, config: { ...agent.config, ...configOf(agent.type, values) } });
      setProblem(null);
      await onSaved();
    } catch (error) {
      show(error, ['name', ...fields.map((field) => field.key)]);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="agent-form agent-edit" onSubmit={submit} aria-label={`Edit the settings of ${agent.name}`} noValidate>
      <div class="field">
        <label for="agent-name">Name</label>
        <input id="agent-name" name="name" value={name} required onInput={(e) => setName(e.currentTarget.value)} {...aria('name')} />
        {errorFor('name')}
      </div>
      <fieldset class="settings">
        <legend>Settings of a {humanize(agent.type).toLowerCase()}</legend>
        {fields.map((field) => (
          <Setting
            key={field.key}
            field={field}
            value={values[field.key]}
            onChange={(value) => setValues({ ...values, [field.key]: value })}
            error={errorFor(field.key)}
            aria={aria(field.key, Boolean(field.hint))}
            owners={owners}
          />
        ))}
      </fieldset>
      {formError}
      <div class="actions-row">
        <button type="submit" disabled={busy}>
          Save settings
        </button>
        <button type="button" class="secondary" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** A setting for people: lists joined, stage days as "Proposal 7", nothing as "—". */
function settingText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (Array.isArray(value)) return value.length ? value.map(String).map(humanize).join(', ') : 'None';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'object') {
    return Object.entries(value)
      .map(([key, inner]) => `${humanize(key)} ${String(inner)}`)
      .join(', ');
  }
  return typeof value === 'string' ? humanize(value) : String(value);
}

/** A lead_router's setting for people: members by name, a rule as "Country IE, GB; employees 50–500 → Ada". */
function routerText(key: string, value: unknown, owners: Owners | null | undefined): string {
  const named = (id: unknown) => ownerName(String(id), owners);
  if (key === 'fallback_owner_id') return value ? named(value) : 'Nobody (no owner)';
  if (key === 'round_robin') return Array.isArray(value) && value.length ? value.map(named).join(', ') : 'Nobody';
  if (key !== 'rules' || !Array.isArray(value)) return settingText(value);
  if (value.length === 0) return 'None';
  return value
    .map((rule: Record<string, unknown>, index) => {
      const criteria = ['country', 'industry', 'source']
        .filter((name) => Array.isArray(rule[name]))
        .map((name) => `${humanize(name)} ${(rule[name] as string[]).join(', ')}`);
      if (rule.min_employees !== undefined || rule.max_employees !== undefined)
        criteria.push(`employees ${rule.min_employees ?? 0}–${rule.max_employees ?? '∞'}`);
      return `${index + 1}. ${criteria.length ? criteria.join('; ') : 'Every lead'} → ${named(rule.owner_id)}`;
    })
    .join(' ');
}

import { Fragment, type JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { applicableSettings, type Integration, type IntegrationUpdate, PROVIDER_NAMES, type StageMap, updateIntegration } from './integrations-api';
import { useFocusWhenShown } from './ui';

const STAGE_LABELS: Array<[keyof StageMap, string]> = [
  ['prospecting', 'Prospecting'],
  ['qualification', 'Qualification'],
  ['proposal', 'Proposal'],
  ['negotiation', 'Negotiation'],
  ['closedWon', 'Closed won'],
  ['closedLost', 'Closed lost'],
];

/** "closedWon" → "closed_won": GraphQL's validation names input paths in camelCase, the service in snake_case. */
const snake = (path: string) => path.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
/** The form's key (and input id suffix) of each field: the param the API names it by, in snake_case. */
const stageKey = (stage: keyof StageMap) => `settings.stage_map.${snake(stage)}`;
const inputId = (key: string) => `edit-${key.replace(/\./g, '-')}`;

interface Props {
  integration: Integration;
  /** Called with the integration the API returned; the page re-reads it and announces the change. */
  onSaved(integration: Integration): Promise<void>;
}

/**
 * The integration's settings, and Edit settings: a form with its name and exactly the settings the
 * provider takes (the stage map for CRMs and PSAs, a PSA's delivery record among its own kinds,
 * ConnectWise's fallback sales rep, a model provider's model). The API decides what is valid; its
 * refusal is shown on the field it names. Credentials are not editable here: updateIntegration
 * takes none, so new credentials mean disconnecting and connecting again.
 */
export function Settings({ integration, onSaved }: Props) {
  const [editing, setEditing] = useState(false);
  const setFocus = useFocusWhenShown();

  return (
    <section class="card" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      {editing ? (
        <SettingsForm
          integration={integration}
          onCancel={() => {
            setEditing(false);
            setFocus('edit-settings');
          }}
          onSaved={async (saved) => {
            await onSaved(saved);
            setEditing(false);
            setFocus('edit-settings');
          }}
        />
      ) : (
        <>
          <SettingsFacts integration={integration} />
          {integration.status !== 'disconnected' && (
            <div class="actions-row settings-actions">
              <button type="button" class="secondary" id="edit-settings" onClick={() => setEditing(true)}>
                Edit settings
              </button>
            </div>
          )}
        </>
      )}
    </section>
  );
}

function SettingsFacts({ integration }: { integration: Integration }) {
  const { stageMap, deliveryRecord, salesRep, model } = integration.settings;
  const provider = PROVIDER_NAMES[integration.provider];
  const none = !stageMap && !deliveryRecord && !salesRep && !model;
  return (
    <>
      {none && <p class="muted">{provider} has no settings besides its name.</p>}
      {model && (
        <dl class="facts">
          <dt>Model</dt>
          <dd>{model}</dd>
        </dl>
      )}
      {(deliveryRecord || salesRep) && (
        <dl class="facts">
          {deliveryRecord && (
            <>
              <dt>A won deal becomes a</dt>
              <dd>{deliveryRecord}</dd>
            </>
          )}
          {salesRep && (
            <>
              <dt>Fallback sales rep</dt>
              <dd>{salesRep}</dd>
            </>
          )}
        </dl>
      )}
      {stageMap && (
        <>
          <h3>Stage map</h3>
          <p class="muted">Our deal stages, and the {provider} stage each becomes.</p>
          <dl class="facts stage-map">
            {STAGE_LABELS.map(([key, label]) => (
              <Fragment key={key}>
                <dt>{label}</dt>
                <dd>
                  <code>{stageMap[key]}</code>
                </dd>
              </Fragment>
            ))}
          </dl>
        </>
      )}
    </>
  );
}

interface FormProps {
  integration: Integration;
  onSaved(integration: Integration): Promise<void>;
  onCancel(): void;
}

function SettingsForm({ integration, onSaved, onCancel }: FormProps) {
  const applies = applicableSettings(integration);
  const { settings } = integration;
  const provider = PROVIDER_NAMES[integration.provider];
  // Every field as text, keyed by the param the API names it by.
  const [values, setValues] = useState<Record<string, string>>(() => ({
    name: integration.name ?? '',
    ...Object.fromEntries(STAGE_LABELS.map(([stage]) => [stageKey(stage), settings.stageMap?.[stage] ?? ''])),
    'settings.delivery_record': settings.deliveryRecord ?? applies.deliveryRecords?.[0] ?? '',
    'settings.sales_rep': settings.salesRep ?? '',
    'settings.model': settings.model ?? '',
  }));
  const [problem, setProblem] = useState<{ key: string | null; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  // Opening the form puts the cursor in its first field; a refusal puts it on the field named.
  useEffect(() => document.getElementById(inputId('name'))?.focus(), []);
  useEffect(() => {
    if (problem) document.getElementById(problem.key ? inputId(problem.key) : 'settings-form-error')?.focus();
  }, [problem]);

  const input = (): IntegrationUpdate => {
    const changes: NonNullable<IntegrationUpdate['settings']> = {};
    if (applies.stageMap) changes.stageMap = Object.fromEntries(STAGE_LABELS.map(([stage]) => [stage, values[stageKey(stage)]])) as unknown as StageMap;
    if (applies.deliveryRecords) changes.deliveryRecord = values['settings.delivery_record'];
    // An emptied sales rep or model is null: no fallback rep, the provider's default model.
    if (applies.salesRep) changes.salesRep = values['settings.sales_rep'] || null;
    if (applies.model) changes.model = values['settings.model'] || null;
    return { name: values.name || null, ...(Object.keys(changes).length ? { settings: changes } : {}) };
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      await onSaved(await updateIntegration(integration.id, input()));
    } catch (error) {
      const param = error instanceof ApiProblem && error.param ? snake(error.param) : null;
      setProblem({ key: param && param in values ? param : null, message: (error as Error).message });
      setBusy(false);
    }
  };

  const field = (key: string, label: string, control: (props: Record<string, unknown>) => JSX.Element, hint?: string) => {
    const id = inputId(key);
    const message = problem?.key === key ? problem.message : null;
    const describedBy = [hint ? `${id}-hint` : null, message ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
    return (
      <div class="field" key={key}>
        <label for={id}>{label}</label>
        {hint && (
          <p class="hint muted" id={`${id}-hint`}>
            {hint}
          </p>
        )}
        {control({
          id,
          value: values[key],
          'aria-invalid': message ? 'true' : undefined,
          'aria-describedby': describedBy,
          onInput: (e: Event) => setValues({ ...values, [key]: (e.currentTarget as HTMLInputElement).value }),
        })}
        {message && (
          <p class="field-problem" id={`${id}-error`} role="alert">
            {message}
          </p>
        )}
      </div>
    );
  };
  const text = (props: Record<string, unknown>) => <input type="text" autocomplete="off" spellcheck={false} {...props} />;

  return (
    <form class="settings-form" onSubmit={submit} aria-label={`Edit the settings of ${provider}`} noValidate>
      {field('name', 'Name', text, 'A label for people, such as the tenant or instance. Empty clears it.')}
      {applies.model && field('settings.model', 'Model', text, "The model each request names. Empty takes the provider's default, where it has one.")}
      {applies.deliveryRecords &&
        field('settings.delivery_record', 'A won deal becomes a', (props) => (
          <select {...props}>
            {applies.deliveryRecords!.map((record, index) => (
              <option key={record} value={record}>
                {record}
                {index === 0 ? ' (default)' : ''}
              </option>
            ))}
          </select>
        ))}
      {applies.salesRep &&
        field(
          'settings.sales_rep',
          'Fallback sales rep',
          text,
          "The ConnectWise member (identifier or e-mail) made the primary sales rep when the deal's owner is not one.",
        )}
      {applies.stageMap && (
        <fieldset class="stage-map-fields">
          <legend>Stage map</legend>
          <p class="muted hint">The {provider} stage each of our deal stages becomes. Every stage must be mapped.</p>
          {STAGE_LABELS.map(([stage, label]) => field(stageKey(stage), label, text))}
        </fieldset>
      )}
      {problem && !problem.key && (
        <p class="error" id="settings-form-error" role="alert" tabIndex={-1}>
          {problem.message}
        </p>
      )}
      <p class="muted small">Credentials cannot be changed here: to use new ones, disconnect and connect {provider} again.</p>
      <div class="actions-row">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

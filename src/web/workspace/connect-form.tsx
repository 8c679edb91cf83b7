import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiProblem } from './api';
import {
  connectIntegration,
  credentialFields,
  FIELD_HINTS,
  fieldLabel,
  inputType,
  type Integration,
  IntegrationProvider,
  isSecret,
  PROVIDER_NAMES,
} from './integrations-api';

interface Props {
  provider: IntegrationProvider;
  /** Model providers take settings.model too. */
  takesModel: boolean;
  onConnected(integration: Integration): void;
  onCancel(): void;
}

/** Where an API problem belongs: a credential's input, the credentials as a whole, name, model, or the form. */
type Place = { field: string } | { credentials: true } | null;

function placeOf(param: string | undefined, fieldNames: string[]): Place {
  if (!param) return null;
  const credential = /^credentials\.(.+)$/.exec(param)?.[1];
  if (credential && fieldNames.includes(credential)) return { field: credential };
  if (param === 'credentials') return { credentials: true };
  if (param === 'name') return { field: 'name' };
  if (param.startsWith('settings')) return { field: 'model' };
  return null;
}

/**
 * Exactly the provider's credential fields (the service's own list), a name, and for a model
 * provider the model. The API verifies the credentials with the provider; its refusal is shown
 * next to the field it names, or over the credentials when it names them all. Secrets are cleared
 * after every submit, so none is ever put back into the page.
 */
export function ConnectForm({ provider, takesModel, onConnected, onCancel }: Props) {
  const fields = credentialFields(provider);
  const providerName = PROVIDER_NAMES[provider];
  const [values, setValues] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<{ place: Place; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const prefix = `connect-${provider}`;

  // Opening the form puts the cursor in its first field.
  useEffect(() => form.current?.querySelector<HTMLInputElement>('input')?.focus(), [provider]);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    const credentials = Object.fromEntries(fields.map((field) => [field.name, values[field.name] ?? '']));
    // The secrets leave the page with this request and are never put back.
    setValues(Object.fromEntries(Object.entries(values).filter(([name]) => !fields.some((f) => f.name === name && isSecret(f.kind)))));
    try {
      onConnected(await connectIntegration({ provider, name: values.name ?? '', credentials, model: values.model ?? '' }));
    } catch (error) {
      const place = placeOf(
        error instanceof ApiProblem ? error.param : undefined,
        fields.map((f) => f.name),
      );
      setProblem({ place, message: (error as Error).message });
      setBusy(false);
    }
  };
  // Once the problem is drawn, the field the API named (or the first credential) takes focus.
  useEffect(() => {
    if (!problem) return;
    const place = problem.place;
    document.getElementById(place && 'field' in place ? `${prefix}-${place.field}` : `${prefix}-${fields[0].name}`)?.focus();
  }, [problem]);

  const errorId = `${prefix}-error`;
  const fieldProblem = (name: string) => (problem?.place && 'field' in problem.place && problem.place.field === name ? problem.message : null);
  const allCredentials = Boolean(problem?.place && 'credentials' in problem.place);

  const input = (name: string, label: string, type: string, options: { hint?: string; required?: boolean; secret?: boolean }) => {
    const message = fieldProblem(name);
    const invalid = Boolean(message) || (allCredentials && fields.some((f) => f.name === name));
    const hintId = options.hint ? `${prefix}-${name}-hint` : undefined;
    const describedBy = [hintId, message ? `${prefix}-${name}-error` : invalid ? errorId : undefined].filter(Boolean).join(' ') || undefined;
    return (
      <div class="field" key={name}>
        <label for={`${prefix}-${name}`}>
          {label}
          {!options.required && <span class="muted"> (optional)</span>}
        </label>
        {options.hint && (
          <p class="hint muted" id={hintId}>
            {options.hint}
          </p>
        )}
        <input
          id={`${prefix}-${name}`}
          name={name}
          // Preact's types pair each input type with its own attributes; these share the ones used here.
          type={type as 'text'}
          required={options.required}
          autocomplete={options.secret ? 'new-password' : 'off'}
          spellcheck={false}
          autoCapitalize="off"
          value={values[name] ?? ''}
          onInput={(e) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value })}
          aria-invalid={invalid ? 'true' : undefined}
          aria-describedby={describedBy}
        />
        {message && (
          <p class="field-problem" id={`${prefix}-${name}-error`} role="alert">
            {message}
          </p>
        )}
      </div>
    );
  };

  return (
    <form class="connect-form" ref={form} onSubmit={submit} aria-label={`Connect ${providerName}`} noValidate>
      <fieldset aria-describedby={allCredentials ? errorId : undefined}>
        <legend>{providerName} credentials</legend>
        {allCredentials && (
          <p class="field-problem" id={errorId} role="alert">
            {problem!.message}
          </p>
        )}
        {fields.map((field) =>
          input(field.name, fieldLabel(field.name), inputType(field.kind), { hint: FIELD_HINTS[field.kind], required: true, secret: isSecret(field.kind) }),
        )}
      </fieldset>
      {takesModel &&
        input('model', 'Model', 'text', {
          hint:
            provider === IntegrationProvider.openai_compatible
              ? 'The model the server runs, such as llama3.1:8b'
              : "Leave empty for the provider's default (OpenAI: gpt-4o-mini; Azure: the deployment).",
          required: provider === IntegrationProvider.openai_compatible,
        })}
      {input('name', 'Name', 'text', { hint: 'A label for people, such as the tenant or instance.' })}
      {problem && !problem.place && (
        <p class="error" id={errorId} role="alert">
          {problem.message}
        </p>
      )}
      <p class="muted small">{providerName} is asked to accept these credentials before anything is stored; they are kept encrypted and never shown again.</p>
      <div class="actions-row">
        <button type="submit" disabled={busy}>
          {busy ? 'Verifying…' : `Verify and connect`}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

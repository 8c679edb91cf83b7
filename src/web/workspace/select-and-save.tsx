import { useState } from 'preact/hooks';
import { Announcer } from './ui';

export interface Choice {
  value: string;
  label: string;
  disabled?: boolean;
}

/**
 * One setting of a record changed with a select and its Save button (a lead's status, its owner):
 * the button waits for a change; the API's refusal is shown under the select and describes it;
 * what was saved is announced (`save` answers the words).
 */
export function SelectAndSave({
  id,
  formLabel,
  label,
  button,
  announcerId,
  current,
  choices,
  save,
}: {
  /** The select's id; its error is `${id}-error`. */
  id: string;
  formLabel: string;
  label: string;
  button: string;
  announcerId: string;
  current: string;
  choices: Choice[];
  save(value: string): Promise<string>;
}) {
  const [value, setValue] = useState(current);
  const [problem, setProblem] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const said = await save(value);
      setProblem(null);
      setAnnouncement(said);
    } catch (error) {
      setProblem((error as Error).message);
      setAnnouncement('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="status-form" onSubmit={submit} aria-label={formLabel}>
      <label for={id}>{label}</label>
      <div class="actions-row">
        <select
          id={id}
          value={value}
          onChange={(e) => setValue((e.currentTarget as HTMLSelectElement).value)}
          aria-invalid={problem ? 'true' : undefined}
          aria-describedby={problem ? `${id}-error` : undefined}
        >
          {choices.map((choice) => (
            <option value={choice.value} key={choice.value} disabled={choice.disabled}>
              {choice.label}
            </option>
          ))}
        </select>
        <button type="submit" disabled={busy || value === current}>
          {button}
        </button>
      </div>
      {problem && (
        <p class="field-error" id={`${id}-error`} role="alert">
          {problem}
        </p>
      )}
      <Announcer text={announcement} id={announcerId} />
    </form>
  );
}

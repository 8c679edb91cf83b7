import { useEffect, useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { ALL_EVENTS, eventTypes, type WebhookFields } from './developers';

type Field = 'url' | 'description' | 'events';

interface Props {
  /** Prefix of the inputs' ids: unique on the page. */
  idPrefix: string;
  title: string;
  initial?: WebhookFields;
  submitLabel: string;
  onSubmit(fields: WebhookFields): Promise<void>;
  onCancel?(): void;
}

/**
 * A subscription's URL, description and events, to create or edit one. The event checkboxes are
 * the types the API accepts (the page's `data-event-types`); "All events" sends `*`. The API
 * decides what is valid (the address guard refuses private and loopback URLs): its error is shown
 * next to the field it names, which gets focus.
 */
export function WebhookForm({ idPrefix, title, initial, submitLabel, onSubmit, onCancel }: Props) {
  const [url, setUrl] = useState(initial?.url ?? '');
  const [description, setDescription] = useState(initial?.description ?? '');
  const [events, setEvents] = useState<string[]>(initial?.events ?? []);
  const [problem, setProblem] = useState<{ field?: Field; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const all = events.includes(ALL_EVENTS);
  const types = eventTypes().filter((type) => type !== ALL_EVENTS);
  const id = (field: string) => `${idPrefix}-${field}`;
  const errorId = id('error');

  // The form opens at a button press: its first field takes focus, so typing goes on from there.
  useEffect(() => document.getElementById(id('url'))?.focus(), []);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await onSubmit({ url: url.trim(), description: description.trim() || null, events });
    } catch (error) {
      const param = error instanceof ApiProblem ? error.param?.split('.')[0] : undefined;
      const field = (['url', 'description', 'events'] as const).find((name) => name === param);
      setProblem({ field, message: error instanceof Error ? error.message : String(error) });
      setBusy(false);
      // The field the API named, or its first event box, takes focus so the message is read with it.
      requestAnimationFrame(() => document.getElementById(field === 'events' ? id('event-all') : field ? id(field) : errorId)?.focus());
    }
  };

  const toggle = (type: string, on: boolean) => setEvents(on ? [...events.filter((name) => name !== type), type] : events.filter((name) => name !== type));
  const fieldError = (field: Field) =>
    problem?.field === field && (
      <p class="field-error" id={errorId} role="alert">
        {problem.message}
      </p>
    );
  const invalid = (field: Field) => (problem?.field === field ? { 'aria-invalid': 'true' as const, 'aria-describedby': errorId } : {});

  return (
    <form class="webhook-form card" onSubmit={submit} aria-label={title} noValidate>
      <h2>{title}</h2>
      <label for={id('url')}>Endpoint URL</label>
      <input
        id={id('url')}
        name="url"
        type="url"
        inputMode="url"
        required
        placeholder="https://example.com/webhooks"
        value={url}
        onInput={(e) => setUrl(e.currentTarget.value)}
        {...invalid('url')}
      />
      {fieldError('url')}
      <label for={id('description')}>
        Description <span class="muted">(optional)</span>
      </label>
      <input
        id={id('description')}
        name="description"
        type="text"
        value={description}
        onInput={(e) => setDescription(e.currentTarget.value)}
        {...invalid('description')}
      />
      {fieldError('description')}
      <fieldset class={`event-choices${problem?.field === 'events' ? ' invalid' : ''}`} aria-describedby={problem?.field === 'events' ? errorId : undefined}>
        <legend>Events to send</legend>
        <label class="check all">
          <input
            id={id('event-all')}
            type="checkbox"
            name="events"
            value={ALL_EVENTS}
            checked={all}
            onChange={(e) => setEvents(e.currentTarget.checked ? [ALL_EVENTS] : [])}
          />
          All events, and those added later
        </label>
        <div class="event-types">
          {types.map((type) => (
            <label class="check" key={type}>
              <input
                type="checkbox"
                name="events"
                value={type}
                checked={all || events.includes(type)}
                disabled={all}
                onChange={(e) => toggle(type, e.currentTarget.checked)}
              />
              <code>{type}</code>
            </label>
          ))}
        </div>
      </fieldset>
      {fieldError('events')}
      {problem && !problem.field && (
        <p class="field-error" id={errorId} role="alert" tabIndex={-1}>
          {problem.message}
        </p>
      )}
      <div class="actions-row">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

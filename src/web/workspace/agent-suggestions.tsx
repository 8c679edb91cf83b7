import { useState } from 'preact/hooks';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { agentSuggestions, approveSuggestion, EDITABLE, leadCompanies, rejectSuggestion, type Suggestion, type SuggestionEdits } from './agents-api';
import { Announcer, humanize, Status, Table, useFocusWhenShown, useLoad, when } from './ui';

/** The companies of the leads the listed suggestions are for, by lead id. */
const Companies = createContext<Record<string, string>>({});

const KIND_NAMES: Record<Suggestion['kind'], string> = { follow_up_email: 'Follow-up e-mail', lead_brief: 'Lead brief' };

/**
 * A writer's suggestions: the pending ones first, each with what the agent wrote, what it is for
 * and when it expires, to approve (as written or edited) or reject; then the latest decided ones.
 * After a decision the list is read again, the result announced, and focus goes to the next
 * pending suggestion (or the section's heading when none is left).
 */
export function AgentSuggestions({ agentId, onDecided }: { agentId: string; onDecided(): void }) {
  const list = useLoad(async () => {
    const found = await agentSuggestions(agentId);
    const leads = [...found.pending, ...found.decided].map((s) => s.leadId).filter((lead): lead is string => Boolean(lead));
    return { ...found, companies: await leadCompanies(leads) };
  }, [agentId]);
  const [announcement, setAnnouncement] = useState('');
  const setFocus = useFocusWhenShown(Boolean(list.data));

  const decided = async (suggestion: Suggestion, result: string) => {
    const pending = list.data?.pending ?? [];
    const at = pending.findIndex((s) => s.id === suggestion.id);
    const next = pending[at + 1] ?? pending[at - 1];
    await list.reload();
    onDecided();
    setAnnouncement(result);
    setFocus(next ? `suggestion-${next.id}-title` : 'agent-suggestions-title');
  };

  return (
    <Companies.Provider value={list.data?.companies ?? {}}>
      <section class="card suggestions" aria-labelledby="agent-suggestions-title">
        <Announcer text={announcement} id="suggestions-announcer" />
        <h2 id="agent-suggestions-title" tabIndex={-1}>
          Suggestions
        </h2>
        {!list.data ? (
          <Status error={list.error} label="Loading suggestions…" />
        ) : (
          <>
            {list.data.pending.length === 0 ? (
              <p class="muted" id="no-pending">
                Nothing waits for you. When this agent writes something, it appears here to approve or reject.
              </p>
            ) : (
              <ul class="suggestion-list" aria-label="Pending suggestions">
                {list.data.pending.map((suggestion) => (
                  <li key={suggestion.id}>
                    <PendingSuggestion suggestion={suggestion} onDecided={(result) => decided(suggestion, result)} onStale={list.reload} />
                  </li>
                ))}
              </ul>
            )}
            {list.data.decided.length > 0 && (
              <>
                <h3>Decided lately</h3>
                <Table<Suggestion>
                  label="Decided suggestions"
                  rows={list.data.decided}
                  rowKey={(suggestion) => suggestion.id}
                  columns={[
                    { label: 'Kind', cell: (s) => KIND_NAMES[s.kind] },
                    { label: 'Status', cell: (s) => <span class={`badge suggestion-${s.status}`}>{humanize(s.status)}</span> },
                    { label: 'For', cell: (s) => <Subject suggestion={s} /> },
                    { label: 'Decided', cell: (s) => when(s.decidedAt ?? s.expiresAt) },
                  ]}
                />
              </>
            )}
          </>
        )}
      </section>
    </Companies.Provider>
  );
}

/** The lead and deal a suggestion is about, as links to their pages. */
function Subject({ suggestion }: { suggestion: Suggestion }) {
  const companies = useContext(Companies);
  if (!suggestion.leadId && !suggestion.dealId) return <>—</>;
  return (
    <span class="subject-links">
      {suggestion.leadId && <a href={`/leads/${suggestion.leadId}`}>Lead {companies[suggestion.leadId] ?? <code>{suggestion.leadId}</code>}</a>}
      {suggestion.dealId && (
        <a href={`/deals/${suggestion.dealId}`}>
          Deal <code>{suggestion.dealId}</code>
        </a>
      )}
    </span>
  );
}

function PendingSuggestion({ suggestion, onDecided, onStale }: { suggestion: Suggestion; onDecided(result: string): Promise<void>; onStale(): Promise<void> }) {
  const fields = EDITABLE[suggestion.kind];
  const [editing, setEditing] = useState(false);
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<{ field?: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const base = `suggestion-${suggestion.id}`;
  const name = KIND_NAMES[suggestion.kind];
  const shown = (key: string) => String(suggestion.content[key] ?? '');

  const decide = async (how: 'approve' | 'reject') => {
    setBusy(true);
    setProblem(null);
    try {
      if (how === 'reject') {
        await rejectSuggestion(suggestion.id);
        await onDecided(`Rejected the ${name.toLowerCase()}; nothing was done with it.`);
        return;
      }
      // Only what was changed is sent; the rest stays as the agent wrote it.
      const changed: SuggestionEdits = {};
      if (editing)
        for (const field of fields) if (edits[field.field] !== undefined && edits[field.field] !== shown(field.key)) changed[field.field] = edits[field.field];
      const approved = await approveSuggestion(suggestion.id, Object.keys(changed).length ? changed : null);
      await onDecided(`Approved the ${name.toLowerCase()}${Object.keys(changed).length ? ' with your edits' : ''}; it is now ${approved.status}.`);
    } catch (error) {
      const code = (error as { code?: string }).code;
      const param = (error as { param?: string }).param;
      setProblem({ field: fields.find((f) => f.field === param)?.field, message: (error as Error).message });
      setBusy(false);
      // Decided elsewhere or expired: the list is read again, so it shows what holds now.
      if (code === 'resource_conflict') await onStale();
    }
  };

  return (
    <article class="suggestion" id={base} data-suggestion-id={suggestion.id} aria-labelledby={`${base}-title`}>
      <h3 id={`${base}-title`} tabIndex={-1}>
        {name}
      </h3>
      {editing ? (
        <div class="edits">
          {fields.map((field) => {
            const invalid = problem?.field === field.field;
            const props = {
              id: `${base}-${field.field}`,
              value: edits[field.field] ?? shown(field.key),
              onInput: (e: Event) => setEdits({ ...edits, [field.field]: (e.currentTarget as HTMLInputElement).value }),
              'aria-invalid': invalid ? ('true' as const) : undefined,
              'aria-describedby': invalid ? `${base}-error` : undefined,
            };
            return (
              <div class="field" key={field.field}>
                <label for={props.id}>{field.label}</label>
                {field.long ? <textarea rows={6} {...props} /> : <input {...props} />}
              </div>
            );
          })}
        </div>
      ) : (
        <dl class="content">
          {fields.map((field) => (
            <div key={field.key}>
              <dt>{field.label}</dt>
              <dd class={`content-${field.key}`}>{shown(field.key)}</dd>
            </div>
          ))}
        </dl>
      )}
      <dl class="facts">
        <dt>For</dt>
        <dd>
          <Subject suggestion={suggestion} />
        </dd>
        <dt>Written by</dt>
        <dd>{suggestion.generatedBy === 'model' ? (suggestion.model ?? 'The model') : 'Built-in template'}</dd>
        <dt>Expires</dt>
        <dd>{when(suggestion.expiresAt)}</dd>
      </dl>
      {problem && (
        <p class="field-error" id={`${base}-error`} role="alert">
          {problem.message}
        </p>
      )}
      <div class="actions-row">
        <button type="button" id={`${base}-approve`} disabled={busy} onClick={() => void decide('approve')}>
          {editing ? 'Approve with edits' : 'Approve'}
          <span class="visually-hidden"> {name.toLowerCase()}</span>
        </button>
        <button
          type="button"
          class="secondary"
          id={`${base}-edit`}
          aria-expanded={editing}
          disabled={busy}
          onClick={() => {
            setEditing(!editing);
            setEdits({});
            setProblem(null);
            if (!editing) requestAnimationFrame(() => document.getElementById(`${base}-${fields[0].field}`)?.focus());
          }}
        >
          {editing ? 'Cancel edits' : 'Edit before approving'}
        </button>
        <button type="button" class="danger" id={`${base}-reject`} disabled={busy} onClick={() => void decide('reject')}>
          Reject<span class="visually-hidden"> {name.toLowerCase()}</span>
        </button>
      </div>
    </article>
  );
}

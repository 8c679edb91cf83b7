import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { changeRole, deactivateMember, type Member, roles } from './members-api';
import { AskFirst } from './ask-first';
import { humanize, useFocusWhenShown } from './ui';

/** What a change did, in words for the page's announcement. */
type Done = (message: string) => Promise<void>;

/**
 * A member's role, to change: a select and its button. The API's refusal (the last owner keeps the
 * role, only an owner makes owners) is shown under it, and describes the select.
 */
export function RoleControl({ member, onChanged }: { member: Member; onChanged: Done }) {
  const [role, setRole] = useState(member.role);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const base = `member-${member.id}-role`;

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const changed = await changeRole(member.id, role);
      setProblem(null);
      await onChanged(`${changed.name} is now ${article(changed.role)} ${changed.role}.`);
    } catch (error) {
      setProblem((error as Error).message);
      setRole(member.role);
      requestAnimationFrame(() => document.getElementById(base)?.focus());
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="member-role" onSubmit={submit}>
      <label for={base} class="visually-hidden">
        Role of {member.name}
      </label>
      <span class="role-choice">
        <select
          id={base}
          value={role}
          onChange={(e) => setRole(e.currentTarget.value)}
          aria-invalid={problem ? 'true' : undefined}
          aria-describedby={problem ? `${base}-error` : undefined}
        >
          {roles().map((choice) => (
            <option key={choice} value={choice}>
              {humanize(choice)}
            </option>
          ))}
        </select>
        <button type="submit" class="secondary" disabled={busy || role === member.role}>
          Change<span class="visually-hidden"> the role of {member.name}</span>
        </button>
      </span>
      {problem && (
        <p class="field-error" id={`${base}-error`} role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}

/**
 * Deactivate, after a question asked in the row with Cancel focused (the safe choice, as Delete does
 * on a record's page). The API's refusal (the last owner) is shown under the button. A member who
 * owns leads or deals is refused (resource_conflict, "… hand them to"): the row then asks which
 * active member (`candidates`) takes them and deactivates again with `transferTo`.
 */
export function DeactivateControl({ member, candidates, onChanged }: { member: Member; candidates: Member[]; onChanged: Done }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  /** The API's words when it asks for someone to hand the member's records to. */
  const [handOver, setHandOver] = useState<string | null>(null);
  const [transferTo, setTransferTo] = useState('');
  const setFocus = useFocusWhenShown();
  const base = `member-${member.id}-deactivate`;

  const confirm = async (to?: string) => {
    setBusy(true);
    try {
      const deactivated = await deactivateMember(member.id, to);
      const heir = candidates.find((candidate) => candidate.id === to);
      await onChanged(heir ? `${deactivated.name} was deactivated; ${heir.name} now owns their leads and deals.` : `${deactivated.name} was deactivated.`);
    } catch (error) {
      setConfirming(false);
      setBusy(false);
      if (!to && error instanceof ApiProblem && error.code === 'resource_conflict' && candidates.length > 0) {
        setProblem(null);
        setHandOver((error as Error).message);
        setFocus(`${base}-transfer`);
        return;
      }
      setProblem((error as Error).message);
      setFocus(handOver ? `${base}-transfer` : base);
    }
  };

  if (handOver) {
    return (
      <form
        class="member-deactivate confirm notice"
        aria-labelledby={`${base}-handover`}
        onSubmit={(event) => {
          event.preventDefault();
          if (transferTo) void confirm(transferTo);
        }}
      >
        <p id={`${base}-handover`}>{handOver}</p>
        <label for={`${base}-transfer`}>Hand {member.name}’s leads and deals to</label>
        <select
          id={`${base}-transfer`}
          value={transferTo}
          onChange={(e) => setTransferTo((e.currentTarget as HTMLSelectElement).value)}
          aria-invalid={problem ? 'true' : undefined}
          aria-describedby={problem ? `${base}-error` : undefined}
        >
          <option value="">Choose a member…</option>
          {candidates.map((candidate) => (
            <option value={candidate.id} key={candidate.id}>
              {candidate.name} ({candidate.email})
            </option>
          ))}
        </select>
        {problem && (
          <p class="field-error" id={`${base}-error`} role="alert">
            {problem}
          </p>
        )}
        <div class="actions-row">
          <button type="submit" class="danger" id={`${base}-transfer-confirm`} disabled={busy || !transferTo}>
            Hand over and deactivate
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setHandOver(null);
              setProblem(null);
              setFocus(base);
            }}
          >
            Cancel
          </button>
        </div>
      </form>
    );
  }

  return (
    <AskFirst
      base={base}
      className="member-deactivate"
      label={
        <>
          Deactivate<span class="visually-hidden"> {member.name}</span>
        </>
      }
      yes="Yes, deactivate"
      question={`Deactivate ${member.name}? They can no longer sign in to this account, and their sessions in it end at once. Inviting them again brings them back.`}
      problem={problem}
      problemClass="field-error"
      busy={busy}
      asking={confirming}
      setAsking={(asking) => {
        if (asking) setProblem(null);
        setConfirming(asking);
      }}
      onYes={() => void confirm()}
    />
  );
}

/** "a" or "an", for a role's name in a sentence. */
export const article = (word: string): string => (/^[aeiou]/i.test(word) ? 'an' : 'a');

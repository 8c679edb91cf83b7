import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { inviteMember, roles } from './members-api';
import { humanize } from './ui';

type Field = 'email' | 'name' | 'role';

/**
 * Invite a person: their address, a name if known, and a role. The API decides what is allowed
 * (an address, a free seat, an owner invited by an owner only): its message is shown next to the
 * field it names (the seats' 409 names the address), which takes the focus.
 */
export function InviteForm({ onInvited }: { onInvited(email: string): Promise<void> }) {
  const offered = roles();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState(offered.includes('member') ? 'member' : (offered[0] ?? ''));
  const [problem, setProblem] = useState<{ field?: Field; message: string } | null>(null);
  const [sent, setSent] = useState('');
  const [busy, setBusy] = useState(false);
  const errorId = 'invite-error';

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setSent('');
    try {
      const invited = await inviteMember({ email: email.trim(), name: name.trim() || undefined, role });
      setProblem(null);
      setEmail('');
      setName('');
      setSent(`Invitation sent to ${invited.email}. The link in it works for 7 days, once.`);
      await onInvited(invited.email);
    } catch (error) {
      const param = error instanceof ApiProblem ? error.param : undefined;
      const field = (['email', 'name', 'role'] as const).find((candidate) => candidate === param);
      setProblem({ field, message: (error as Error).message });
      requestAnimationFrame(() => document.getElementById(field ? `invite-${field}` : errorId)?.focus());
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (field: Field) =>
    problem?.field === field && (
      <p class="field-error" id={errorId} role="alert">
        {problem.message}
      </p>
    );
  const invalid = (field: Field) => (problem?.field === field ? { 'aria-invalid': 'true' as const, 'aria-describedby': errorId } : {});

  return (
    <form class="card invite-form" onSubmit={submit} aria-labelledby="invite-title" noValidate>
      <h2 id="invite-title">Invite a person</h2>
      <div class="invite-fields">
        <div>
          <label for="invite-email">E-mail</label>
          <input
            id="invite-email"
            name="email"
            type="email"
            autoComplete="off"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            {...invalid('email')}
          />
          {fieldError('email')}
        </div>
        <div>
          <label for="invite-name">
            Name <span class="muted">(optional)</span>
          </label>
          <input
            id="invite-name"
            name="name"
            type="text"
            autoComplete="off"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            {...invalid('name')}
          />
          {fieldError('name')}
        </div>
        <div>
          <label for="invite-role">Role</label>
          <select id="invite-role" name="role" value={role} onChange={(e) => setRole(e.currentTarget.value)} {...invalid('role')}>
            {offered.map((choice) => (
              <option key={choice} value={choice}>
                {humanize(choice)}
              </option>
            ))}
          </select>
          {fieldError('role')}
        </div>
      </div>
      {problem && !problem.field && (
        <p class="error" id={errorId} role="alert" tabIndex={-1}>
          {problem.message}
        </p>
      )}
      <p class="muted">They get an e-mail with a link to join; until they follow it, they are listed as invited and take a seat.</p>
      <div class="actions-row">
        <button type="submit" disabled={busy}>
          Send invitation
        </button>
      </div>
      <p class={sent ? 'success' : 'visually-hidden'} role="status" id="invite-sent">
        {sent}
      </p>
    </form>
  );
}

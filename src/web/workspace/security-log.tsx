import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import type { ListPage } from './developers';
import './developers.css';
import { article } from './member-actions';
import type { Member } from './members-api';
import { loadOwners } from './owners';
import { listSecurityEvents, securityEventTypes, type SecurityEntry } from './security-api';
import './security-log.css';
import { Empty, humanize, Pager, Status, Table, useCursorPages, useLoad, workspaceRoot } from './ui';

/** The log and the members its filter offers, or the API's refusal of a role that may not read it. */
type Loaded = { entries: ListPage<SecurityEntry>; members: Member[] } | { refused: true };

async function load(filter: { type: string; memberId: string }, cursor: string | null): Promise<Loaded> {
  try {
    const [entries, owners] = await Promise.all([listSecurityEvents(filter, cursor), loadOwners()]);
    return { entries, members: owners ? [...owners.byId.values()] : [] };
  } catch (error) {
    if (error instanceof ApiProblem && error.code === 'permission_denied') return { refused: true };
    throw error;
  }
}

/** To the second, as request logs show it: entries a moment apart are told apart. */
const moment = (iso: string): string =>
  `${new Date(iso).toLocaleString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })} UTC`;

/** A member by id as people know them ("Ada Lovelace"), or the id of one no longer listed. */
const named = (members: Member[], id: string | null | undefined): string => (id ? (members.find((member) => member.id === id)?.name ?? id) : '—');

/** Who did it: a member by name, else the kind of actor and its id ("API key key_…", "System cli"). */
function actorOf(entry: SecurityEntry, members: Member[]): string {
  if (entry.actor.type === 'member') return named(members, entry.actor.id);
  const kind = entry.actor.type === 'api_key' ? 'API key' : humanize(entry.actor.type);
  return entry.actor.id ? `${kind} ${entry.actor.id}` : kind;
}

const shownValue = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** The details as "member → admin" (a change's from and to), then the rest as "key id: key_…, name: CI". */
function detailsOf({ from, to, ...rest }: Record<string, unknown>): string {
  const parts = from !== undefined && to !== undefined ? [`${shownValue(from)} → ${shownValue(to)}`] : [];
  if (from !== undefined && to === undefined) rest.from = from;
  if (to !== undefined && from === undefined) rest.to = to;
  for (const [key, value] of Object.entries(rest)) parts.push(`${key.replace(/_/g, ' ')}: ${shownValue(value)}`);
  return parts.join(', ') || '—';
}

/**
 * /settings/security: the account's security log (sign-ins, members, keys, integrations, plan and
 * sign-in settings), newest first, filtered by the API's own `type` and `memberId` and paged by its
 * cursors. Owners and admins read it (security_events:read); another role is told what is missing,
 * as on the Members page. Both modes share it, and nothing on the page changes it.
 */
export function SecurityLog() {
  const [type, setType] = useState('');
  const [memberId, setMemberId] = useState('');
  const pages = useCursorPages([type, memberId]);
  const list = useLoad(() => load({ type, memberId }, pages.cursor), [type, memberId, pages.cursor]);
  const { role = '', accountName = '', readingRoles = '' } = workspaceRoot().dataset;
  const readers = readingRoles.split(' ').filter(Boolean);

  if (!list.data) return <Status error={list.error} />;
  if ('refused' in list.data) {
    return (
      <section class="card members-refused" id="security-refused">
        <p>
          The security log is for {readers.map((reader) => `${reader}s`).join(' and ')}; you are {article(role)} {role} of {accountName}. Ask{' '}
          {article(readers[0] ?? '')} {readers.join(' or ')}.
        </p>
      </section>
    );
  }
  const { entries, members } = list.data;
  const filtered = type !== '' || memberId !== '';

  return (
    <>
      <div class="filters security-filters">
        <label for="security-type">
          Type
          <select id="security-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            <option value="">All types</option>
            {securityEventTypes().map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label for="security-member">
          Member
          <select id="security-member" value={memberId} onChange={(e) => setMemberId(e.currentTarget.value)}>
            <option value="">Everyone</option>
            {members.map((member) => (
              <option key={member.id} value={member.id}>
                {member.name} ({member.email})
              </option>
            ))}
          </select>
        </label>
      </div>
      {list.error && <Status error={list.error} />}
      {entries.data.length === 0 && pages.page === 1 ? (
        <Empty>
          <p>
            <strong>{filtered ? 'Nothing in the log matches these filters.' : 'Nothing in the log yet.'}</strong>
          </p>
          <p>
            Sign-ins, invitations, role changes, API keys, integrations and plan changes are recorded here with who did them and from where, and kept 400 days.
          </p>
        </Empty>
      ) : (
        <>
          <Table
            label="Security log"
            rowKey={(entry) => entry.id}
            rows={entries.data}
            columns={[
              { label: 'Event', cell: (entry) => <code>{entry.type}</code> },
              { label: 'Member', cell: (entry) => named(members, entry.memberId) },
              { label: 'By', cell: (entry) => actorOf(entry, members) },
              { label: 'Details', cell: (entry) => <span class="security-details">{detailsOf(entry.details)}</span> },
              {
                label: 'From',
                cell: (entry) =>
                  entry.address ? (
                    <span class="security-from" title={entry.userAgent ?? undefined}>
                      <code>{entry.address}</code>
                    </span>
                  ) : (
                    '—'
                  ),
              },
              { label: 'Time', cell: (entry) => moment(entry.createdAt) },
            ]}
          />
          <Pager label="Security log pages" page={pages.page} nextCursor={entries.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
        </>
      )}
      <p class="muted">The log is the same in test and live mode, kept 400 days, and cannot be changed or deleted.</p>
    </>
  );
}

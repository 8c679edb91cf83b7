import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import type { ListPage } from './developers';
import { article, DeactivateControl, RoleControl } from './member-actions';
import { InviteForm } from './member-invite';
import { listMembers, managingRoles, type Member } from './members-api';
import './members.css';
import { Announcer, type Column, humanize, Pager, Status, Table, useCursorPages, useLoad, when, workspaceRoot } from './ui';

/** The list, or the API's refusal of a role that may not read members: the page explains it rather than failing. */
type Loaded = { members: ListPage<Member> } | { refused: true };

async function load(cursor: string | null): Promise<Loaded> {
  try {
    return { members: await listMembers(cursor) };
  } catch (error) {
    if (error instanceof ApiProblem && error.code === 'permission_denied') return { refused: true };
    throw error;
  }
}

/** "owner or admin": the roles that may manage members, as a sentence names them. */
const either = (names: string[]): string => names.join(' or ');

/**
 * /settings/members: the account's members (both modes share them) with their role, status and
 * when they were last seen; for owners and admins an invitation form, and per member a role to
 * change and Deactivate. Everything goes through /graphql with the session, so the API's own
 * checks decide: a role that may not read members is refused (`permission_denied`, members:read),
 * and the page says what is missing and who can help.
 */
export function Members() {
  const pages = useCursorPages();
  const list = useLoad(() => load(pages.cursor), [pages.cursor]);
  const [announcement, setAnnouncement] = useState('');
  const { role = '', accountName = '' } = workspaceRoot().dataset;
  const managing = managingRoles();
  const canManage = managing.includes(role);

  const changed = async (message: string) => {
    setAnnouncement(message);
    await list.reload();
  };

  if (!list.data) return <Status error={list.error} />;
  if ('refused' in list.data) {
    return (
      <section class="card members-refused" id="members-refused">
        <p>
          Managing members needs the {either(managing)} role; you are {article(role)} {role} of {accountName}. Ask {article(managing[0] ?? '')}{' '}
          {either(managing)}.
        </p>
      </section>
    );
  }

  /** Whom a deactivated member's leads and deals may go to. */
  const active = list.data.members.data.filter((member) => member.status === 'active');
  const columns: Column<Member>[] = [
    { label: 'Name', cell: (member) => member.name },
    { label: 'E-mail', cell: (member) => member.email },
    {
      label: 'Role',
      cell: (member) => (canManage && member.status !== 'deactivated' ? <RoleControl member={member} onChanged={changed} /> : humanize(member.role)),
    },
    { label: 'Status', cell: (member) => <span class={`badge member-${member.status}`}>{humanize(member.status)}</span> },
    { label: 'Last seen', cell: (member) => (member.lastSeenAt ? when(member.lastSeenAt) : 'Never') },
  ];
  if (canManage) {
    columns.push({
      label: 'Actions',
      hiddenLabel: true,
      cell: (member) =>
        member.status === 'deactivated' ? (
          ''
        ) : (
          <DeactivateControl member={member} candidates={active.filter((other) => other.id !== member.id)} onChanged={changed} />
        ),
    });
  }

  return (
    <>
      <Announcer text={announcement} />
      {canManage && <InviteForm onInvited={(email) => changed(`Invited ${email}.`)} />}
      {list.error && <Status error={list.error} />}
      <h2 id="members-title">People in {accountName}</h2>
      <p class="muted">
        Members are the same in test and live mode. Owners may do everything; admins everything but the plan and owners; members work with leads, deals,
        proposals and agents; viewers only read.
      </p>
      <Table label="Members" rowKey={(member) => member.id} rows={list.data.members.data} columns={columns} />
      <Pager label="Member pages" page={pages.page} nextCursor={list.data.members.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
    </>
  );
}

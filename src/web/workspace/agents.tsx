import { useState } from 'preact/hooks';
import { AgentForm } from './agent-form';
import { listAgents, TYPE_PURPOSE, AGENT_TYPES, type Agent } from './agents-api';
import { Announcer, Empty, humanize, Pager, Status, Table, useCursorPages, useLoad, when } from './ui';
import './agents.css';

/**
 * /agents: the account's agents (in the session's mode), newest first, each linking to its page,
 * and a form to create one. A new agent is a draft; its page deploys it.
 */
export function Agents() {
  const pages = useCursorPages();
  const list = useLoad(() => listAgents(pages.cursor), [pages.cursor]);
  const [announcement, setAnnouncement] = useState('');

  const created = async (agent: Agent) => {
    if (pages.page !== 1) pages.previous();
    await list.reload();
    setAnnouncement(`Created ${agent.name}, a draft ${humanize(agent.type).toLowerCase()}. Open it to deploy it.`);
    requestAnimationFrame(() => document.getElementById(`agent-link-${agent.id}`)?.focus());
  };

  return (
    <div class="agents-page">
      <Announcer text={announcement} id="agents-announcer" />
      <section aria-labelledby="agents-list-title">
        <h2 id="agents-list-title">Your agents</h2>
        {!list.data ? (
          <Status error={list.error} label="Loading agents…" />
        ) : list.data.data.length === 0 && pages.page === 1 ? (
          <Empty>
            <p>
              <strong>No agents yet.</strong> Agents work the pipeline for you as events happen: a lead qualifier {TYPE_PURPOSE.lead_qualifier}; a deal
              follow-up agent {TYPE_PURPOSE.deal_follow_up}; a proposal drafter {TYPE_PURPOSE.proposal_drafter}. Writers draft e-mails and lead briefs that wait
              for your approval.
            </p>
            <p>Create one below: give it a name, pick one of the {AGENT_TYPES.length} types and its settings, then deploy it from its page.</p>
          </Empty>
        ) : (
          <>
            <Table<Agent>
              label="Agents"
              rows={list.data.data}
              rowKey={(agent) => agent.id}
              columns={[
                {
                  label: 'Name',
                  cell: (agent) => (
                    <a href={`/agents/${agent.id}`} id={`agent-link-${agent.id}`}>
                      {agent.name}
                    </a>
                  ),
                },
                { label: 'Type', cell: (agent) => humanize(agent.type) },
                { label: 'Status', cell: (agent) => <span class={`badge status-${agent.status}`}>{humanize(agent.status)}</span> },
                { label: 'Version', cell: (agent) => (agent.version === 0 ? '—' : `v${agent.version}`) },
                { label: 'Deployed', cell: (agent) => when(agent.deployedAt) },
              ]}
            />
            <Pager label="Agents pages" page={pages.page} nextCursor={list.data.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
          </>
        )}
      </section>
      <AgentForm onCreated={(agent) => void created(agent)} />
    </div>
  );
}

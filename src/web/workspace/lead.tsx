import type { ComponentChildren } from 'preact';
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { CustomFields } from './custom-fields';
import { DeleteRecord } from './delete-record';
import { LeadActivity } from './lead-activity';
import { LeadScoreCard } from './lead-score';
import { deleteLead, loadLead, SETTABLE_STATUSES, updateLeadOwner, updateLeadStatus, type Lead } from './lead-queries';
import { ownerName, ownerOptions, useOwners, type Owners } from './owners';
import { SelectAndSave } from './select-and-save';
import { humanize, livemode, Status, useLoad, useTitle, when } from './ui';
import './leads.css';

/**
 * /leads/:id: the lead's facts, its score with the signals that explain it, its deals and its
 * events, its status to change, and Delete. A lead that is not this account's (or this mode's) is "not
 * found", as the API says.
 */
export function LeadPage({ id }: { id: string }) {
  const [missing, setMissing] = useState(false);
  const loaded = useLoad(async () => {
    try {
      return await loadLead(id);
    } catch (problem) {
      if (problem instanceof ApiProblem && problem.code === 'resource_missing') setMissing(true);
      throw problem;
    }
  }, [id]);
  const owners = useOwners();
  useTitle(missing ? 'Lead not found' : loaded.data?.lead.company);

  if (missing) {
    return (
      <div class="empty card lead-missing" role="alert">
        <p>
          <strong>There is no lead with the id {id}</strong> in your {livemode() ? 'live' : 'test'} data. It may have been deleted, or belong to the other mode
          or another account.
        </p>
        <p>
          <a href="/leads">Back to all leads</a>
        </p>
      </div>
    );
  }
  if (!loaded.data) return <Status error={loaded.error && `Could not load the lead: ${loaded.error}`} label="Loading the lead…" />;
  const { lead, score } = loaded.data;
  return (
    <>
      <p class="back-link">
        <a href="/leads">← All leads</a>
      </p>
      <div class="lead-grid">
        <LeadFacts lead={lead} owners={owners.data?.owners} onSaved={loaded.reload} />
        <LeadScoreCard score={score} />
      </div>
      <CustomFields objectType="lead" recordId={lead.id} values={lead.fields} onSaved={loaded.reload} />
      {/* A change adds an event: the lists are read again whenever the lead changes. */}
      <LeadActivity key={lead.updatedAt} leadId={lead.id} />
    </>
  );
}

/** `owners`: undefined while the members load, null when this role may not read them. */
function LeadFacts({ lead, owners, onSaved }: { lead: Lead; owners: Owners | null | undefined; onSaved(): Promise<void> }) {
  const facts: Array<[string, ComponentChildren]> = [
    ['Company', lead.company],
    ['Contact', lead.contactName ?? '—'],
    ['Email', <a href={`mailto:${lead.contactEmail}`}>{lead.contactEmail}</a>],
    ['Industry', lead.industry ?? '—'],
    ['Employees', lead.employees === null ? '—' : lead.employees.toLocaleString('en-US')],
    ['Website', lead.website ?? '—'],
    ['Country', lead.country ?? '—'],
    ['Source', lead.source ?? '—'],
    ['Status', humanize(lead.status)],
    ['Owner', ownerName(lead.ownerId, owners)],
    ['Created', when(lead.createdAt)],
    ['Updated', when(lead.updatedAt)],
    ['ID', <code>{lead.id}</code>],
  ];
  return (
    <section class="card lead-facts" aria-labelledby="lead-facts-title">
      <h2 id="lead-facts-title">Details</h2>
      <dl class="facts compact" data-facts>
        {facts.map(([label, value]) => (
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd data-fact={label}>{value}</dd>
          </Fragment>
        ))}
      </dl>
      <StatusForm lead={lead} onSaved={onSaved} />
      {owners && <OwnerForm lead={lead} owners={owners} onSaved={onSaved} />}
      <DeleteRecord noun="lead" name={lead.company} listPath="/leads" remove={() => deleteLead(lead.id)}>
        Delete {lead.company}? Its score and details go for good; its deals stay, no longer linked to a lead.
      </DeleteRecord>
    </section>
  );
}

/** The lead's status: the settable ones (converted only by converting, so shown but not chosen). */
function StatusForm({ lead, onSaved }: { lead: Lead; onSaved(): Promise<void> }) {
  const statuses = SETTABLE_STATUSES.includes(lead.status as (typeof SETTABLE_STATUSES)[number]) ? SETTABLE_STATUSES : [lead.status, ...SETTABLE_STATUSES];
  return (
    <SelectAndSave
      id="lead-status"
      formLabel="Lead status"
      label="Change status"
      button="Save status"
      announcerId="lead-announcer"
      current={lead.status}
      choices={statuses.map((value) => ({ value, label: humanize(value), disabled: value === 'converted' }))}
      save={async (status) => {
        const saved = await updateLeadStatus(lead.id, status);
        await onSaved();
        return `Status saved: ${humanize(saved.status)}.`;
      }}
    />
  );
}

/** Gives the lead to an active member, or to nobody; offered only to a role that may read members. */
function OwnerForm({ lead, owners, onSaved }: { lead: Lead; owners: Owners; onSaved(): Promise<void> }) {
  return (
    <SelectAndSave
      id="lead-owner"
      formLabel="Lead owner"
      label="Change owner"
      button="Save owner"
      announcerId="lead-owner-announcer"
      current={lead.ownerId ?? ''}
      choices={ownerOptions(owners, lead.ownerId)}
      save={async (ownerId) => {
        const saved = await updateLeadOwner(lead.id, ownerId || null);
        await onSaved();
        return `Owner saved: ${ownerName(saved.ownerId, owners)}.`;
      }}
    />
  );
}

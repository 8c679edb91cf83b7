import { useState } from 'preact/hooks';
import { createWebhook, listWebhooks, type Webhook } from './developers';
import './developers.css';
import { SecretOnce } from './secret-once';
import { Announcer, Empty, Pager, Status, Table, useCursorPages, useLoad, when } from './ui';
import { WebhookForm } from './webhook-form';

/** The events a subscription receives, as people read them. */
export const eventsText = (events: string[]): string => (events.includes('*') ? 'All events' : events.join(', '));

export function WebhookStatus({ webhook }: { webhook: Pick<Webhook, 'status' | 'disabledReason'> }) {
  return (
    <>
      <span class={`badge ${webhook.status === 'enabled' ? 'ok' : 'failed'}`}>{webhook.status === 'enabled' ? 'Enabled' : 'Disabled'}</span>
      {webhook.disabledReason && <span class="disabled-reason"> {webhook.disabledReason}</span>}
    </>
  );
}

/**
 * /developers/webhooks: the mode's subscriptions, and a form to add one. The new subscription's
 * signing secret is shown once, right after it is made (the API never shows it again).
 */
export function Webhooks() {
  const pages = useCursorPages();
  const list = useLoad(() => listWebhooks(pages.cursor), [pages.cursor]);
  const [adding, setAdding] = useState(false);
  const [created, setCreated] = useState<{ id: string; url: string; secret: string } | null>(null);
  const [announcement, setAnnouncement] = useState('');

  const addButton = (
    <button type="button" id="add-webhook" onClick={() => setAdding(true)}>
      Add an endpoint
    </button>
  );
  const done = () => {
    setCreated(null);
    requestAnimationFrame(() => document.querySelector<HTMLElement>(`a[data-webhook-id="${created?.id}"]`)?.focus());
  };

  return (
    <>
      <Announcer text={announcement} />
      {created && <SecretOnce secret={created.secret} heading="Endpoint added: its signing secret" onDone={done} />}
      {adding ? (
        <WebhookForm
          idPrefix="new-webhook"
          title="Add an endpoint"
          submitLabel="Add endpoint"
          onCancel={() => {
            setAdding(false);
            requestAnimationFrame(() => document.getElementById('add-webhook')?.focus());
          }}
          onSubmit={async (fields) => {
            const webhook = await createWebhook(fields);
            setAdding(false);
            setCreated({ id: webhook.id, url: webhook.url, secret: webhook.secret });
            setAnnouncement(`Added the endpoint ${webhook.url}.`);
            await list.reload();
          }}
        />
      ) : (
        <div class="actions-row page-actions">{addButton}</div>
      )}
      {!list.data ? (
        <Status error={list.error} />
      ) : list.data.data.length === 0 && pages.page === 1 ? (
        <Empty>
          <p>
            <strong>No webhook endpoints yet.</strong>
          </p>
          <p>
            A webhook sends your server an HTTPS POST the moment something happens in this mode (a lead created, a deal won), so you need not poll the API. Each
            request is signed with the endpoint's secret, retried when it fails, and listed with its answer on the endpoint's page.
          </p>
        </Empty>
      ) : (
        <>
          {list.error && <Status error={list.error} />}
          <Table
            label="Webhook endpoints"
            rowKey={(webhook) => webhook.id}
            rows={list.data.data}
            columns={[
              {
                label: 'URL',
                cell: (webhook) => (
                  <a href={`/developers/webhooks/${encodeURIComponent(webhook.id)}`} data-webhook-id={webhook.id} class="url">
                    {webhook.url}
                  </a>
                ),
              },
              { label: 'Description', cell: (webhook) => webhook.description ?? '—' },
              { label: 'Events', cell: (webhook) => <span class="events-list">{eventsText(webhook.events)}</span> },
              { label: 'Status', cell: (webhook) => <WebhookStatus webhook={webhook} /> },
              { label: 'Created', cell: (webhook) => when(webhook.createdAt) },
            ]}
          />
          <Pager label="Webhook pages" page={pages.page} nextCursor={list.data.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
        </>
      )}
    </>
  );
}

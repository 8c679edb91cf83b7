import { useEffect, useState } from 'preact/hooks';
import { AttemptsTable } from './attempts';
import { deleteWebhook, getWebhook, resendWebhookEvent, rollWebhookSecret, testWebhook, updateWebhook, type WebhookAttempt } from './developers';
import './developers.css';
import { SecretOnce } from './secret-once';
import { Announcer, Empty, Pager, Status, useCursorPages, useLoad, useTitle, when } from './ui';
import { WebhookForm } from './webhook-form';
import { eventsText, WebhookStatus } from './webhooks';

/** How long the page looks for the attempt of an event just sent (the dispatcher sends within a second or two). */
const WATCH_TRIES = 30;
const WATCH_INTERVAL_MS = 1000;

/**
 * /developers/webhooks/:id: one subscription's facts, its settings, its secret (rolled here and
 * shown once), a test event, and every attempt to send to it with a resend per event.
 */
export function WebhookPage({ id }: { id: string }) {
  const pages = useCursorPages();
  const loaded = useLoad(() => getWebhook(id, pages.cursor), [id, pages.cursor]);
  const webhook = loaded.data?.webhook;
  useTitle(webhook ? webhook.url : null);
  const [editing, setEditing] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  /** An event just sent or resent, and how many of its attempts were listed then: the page reads again until one more is. */
  const [watching, setWatching] = useState<{ eventId: string; seen: number; tries: number } | null>(null);

  const attemptsOf = (eventId: string, attempts: WebhookAttempt[] = loaded.data?.attempts.data ?? []) => attempts.filter((a) => a.eventId === eventId).length;

  useEffect(() => {
    if (!watching) return undefined;
    if (attemptsOf(watching.eventId) > watching.seen) {
      setAnnouncement(`The attempt to send ${watching.eventId} is listed.`);
      setWatching(null);
      return undefined;
    }
    if (watching.tries >= WATCH_TRIES) return void setWatching(null);
    const timer = setTimeout(() => {
      void loaded.reload().then(() => setWatching({ ...watching, tries: watching.tries + 1 }));
    }, WATCH_INTERVAL_MS);
    return () => clearTimeout(timer);
  }, [watching, loaded.data]);

  useEffect(() => {
    if (confirmDelete) document.getElementById('confirm-delete')?.focus();
  }, [confirmDelete]);

  const act = async (what: () => Promise<void>) => {
    setProblem(null);
    try {
      await what();
    } catch (error) {
      setProblem((error as Error).message);
      setAnnouncement('');
    }
  };

  if (!loaded.data || !webhook) return <Status error={loaded.error} />;
  const { attempts } = loaded.data;

  const sendTest = () =>
    act(async () => {
      const event = await testWebhook(id);
      setAnnouncement(`Sent a test event, ${event.id}. Its attempt appears below once it is made.`);
      if (pages.page > 1) pages.previous();
      setWatching({ eventId: event.id, seen: 0, tries: 0 });
      await loaded.reload();
    });
  const resend = (attempt: WebhookAttempt) =>
    act(async () => {
      const seen = attemptsOf(attempt.eventId);
      await resendWebhookEvent(id, attempt.eventId);
      setAnnouncement(`Sending ${attempt.eventId} again.`);
      setWatching({ eventId: attempt.eventId, seen, tries: 0 });
      await loaded.reload();
    });

  return (
    <>
      <Announcer text={announcement} />
      <p>
        <a href="/developers/webhooks">← All webhook endpoints</a>
      </p>
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      {secret && (
        <SecretOnce
          secret={secret}
          heading="New signing secret"
          onDone={() => {
            setSecret(null);
            requestAnimationFrame(() => document.getElementById('roll-secret')?.focus());
          }}
        />
      )}
      {editing ? (
        <WebhookForm
          idPrefix="edit-webhook"
          title="Edit endpoint"
          submitLabel="Save"
          initial={{ url: webhook.url, description: webhook.description, events: webhook.events }}
          onCancel={() => setEditing(false)}
          onSubmit={async (fields) => {
            await updateWebhook(id, fields);
            setEditing(false);
            await loaded.reload();
            setAnnouncement('Saved the endpoint.');
            requestAnimationFrame(() => document.getElementById('edit-webhook')?.focus());
          }}
        />
      ) : (
        <section class="card dev-card" aria-labelledby="facts-heading">
          <h2 id="facts-heading">Endpoint</h2>
          <dl class="facts">
            <dt>URL</dt>
            <dd class="url">{webhook.url}</dd>
            <dt>ID</dt>
            <dd>
              <code>{webhook.id}</code>
            </dd>
            <dt>Description</dt>
            <dd>{webhook.description ?? '—'}</dd>
            <dt>Events</dt>
            <dd class="events-list">{eventsText(webhook.events)}</dd>
            <dt>Status</dt>
            <dd>
              <WebhookStatus webhook={webhook} />
            </dd>
            <dt>Created</dt>
            <dd>{when(webhook.createdAt)}</dd>
          </dl>
          <div class="actions-row webhook-actions">
            <button type="button" id="send-test" onClick={sendTest} disabled={webhook.status !== 'enabled'}>
              Send test event
            </button>
            <button type="button" class="secondary" id="edit-webhook" onClick={() => setEditing(true)}>
              Edit
            </button>
            <button
              type="button"
              class="secondary"
              id="toggle-status"
              onClick={() =>
                act(async () => {
                  const status = webhook.status === 'enabled' ? 'disabled' : 'enabled';
                  await updateWebhook(id, { status });
                  await loaded.reload();
                  setAnnouncement(status === 'enabled' ? 'Enabled the endpoint.' : 'Disabled the endpoint: nothing is sent to it until it is enabled.');
                })
              }
            >
              {webhook.status === 'enabled' ? 'Disable' : 'Enable'}
            </button>
            <button
              type="button"
              class="secondary"
              id="roll-secret"
              onClick={() =>
                act(async () => {
                  setSecret(await rollWebhookSecret(id));
                  setAnnouncement('Rolled the signing secret; the old one keeps signing beside it for 24 hours.');
                })
              }
            >
              Roll secret
            </button>
            <button type="button" class="danger" id="delete-webhook" onClick={() => setConfirmDelete(true)} aria-expanded={confirmDelete}>
              Delete
            </button>
          </div>
          {webhook.status !== 'enabled' && <p class="muted">A disabled endpoint receives nothing, test events included: enable it first.</p>}
          {confirmDelete && (
            <div class="confirm notice" role="group" aria-labelledby="confirm-delete-text">
              <p id="confirm-delete-text">Delete this endpoint? Nothing more is sent to it, and its attempts are deleted with it.</p>
              <div class="actions-row">
                <button
                  type="button"
                  class="danger"
                  id="confirm-delete"
                  onClick={() =>
                    act(async () => {
                      await deleteWebhook(id);
                      window.location.assign('/developers/webhooks');
                    })
                  }
                >
                  Delete endpoint
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => {
                    setConfirmDelete(false);
                    requestAnimationFrame(() => document.getElementById('delete-webhook')?.focus());
                  }}
                >
                  Keep it
                </button>
              </div>
            </div>
          )}
        </section>
      )}
      <section aria-labelledby="attempts-heading" class="attempts">
        <div class="section-head">
          <h2 id="attempts-heading">Deliveries</h2>
          <button type="button" class="secondary" onClick={() => void loaded.reload()}>
            Refresh<span class="visually-hidden"> the deliveries</span>
          </button>
        </div>
        {attempts.data.length === 0 && pages.page === 1 ? (
          <Empty>
            <p>No attempts yet. Every request sent to this endpoint is listed here with its answer; send a test event to see one.</p>
          </Empty>
        ) : (
          <>
            <AttemptsTable label="Delivery attempts" attempts={attempts.data} resend={webhook.status === 'enabled' ? resend : undefined} />
            <Pager label="Delivery pages" page={pages.page} nextCursor={attempts.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
          </>
        )}
      </section>
    </>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { ApiProblem } from './api';
import { disconnectIntegration, integrationTitle, loadIntegration, PROVIDER_NAMES, syncIntegration, syncs, TYPE_NAMES } from './integrations-api';
import { Settings } from './integration-settings';
import { IntegrationStatus } from './integration-status';
import { SyncRuns } from './sync-runs';
import { Announcer, Empty, Pager, Status, useCursorPages, useFocusWhenShown, useLoad, useTitle, when } from './ui';
import './integrations.css';

/** How often the page reads the runs again while one is running. */
const RUNNING_POLL_MS = 1000;

/**
 * /integrations/:id: the connection (status, credentials hint, times), its last error, its
 * settings (with Edit settings, integration-settings.tsx) and its sync runs, with Sync now for providers the engine runs and Disconnect (which
 * destroys the credentials; the API keeps the integration as history, and its DELETE does the same,
 * so there is no separate Delete). Everything is read again from the API after a change, and
 * again every second while a run is running.
 */
export function Integration({ id }: { id: string }) {
  const pages = useCursorPages();
  const loaded = useLoad(async () => {
    try {
      return await loadIntegration(id, pages.cursor);
    } catch (error) {
      if (error instanceof ApiProblem && error.code === 'resource_missing') return 'missing' as const;
      throw error;
    }
  }, [id, pages.cursor]);
  const [announcement, setAnnouncement] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  /** The run Sync now started, whose end is announced. */
  const [watching, setWatching] = useState<string | null>(null);
  const setFocus = useFocusWhenShown();

  const data = loaded.data === 'missing' ? null : loaded.data;
  useTitle(data ? integrationTitle(data.integration) : loaded.data === 'missing' ? 'Integration not found' : null);

  const running = Boolean(data?.runs.data.some((run) => run.status === 'running'));
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(() => void loaded.reload(), RUNNING_POLL_MS);
    return () => clearTimeout(timer);
  }, [loaded.data]);

  useEffect(() => {
    const run = watching && data?.runs.data.find((one) => one.id === watching);
    if (!run || run.status === 'running') return;
    setWatching(null);
    setAnnouncement(`Sync ${run.status}: ${run.pushed} pushed, ${run.pulled} pulled, ${run.failed} failed.${run.error ? ` ${run.error}` : ''}`);
  }, [data, watching]);

  if (loaded.data === 'missing') {
    return (
      <Empty>
        <p role="alert">
          <strong>There is no integration {id} in this account and mode.</strong> It may belong to the other mode (test or live), or the link is wrong.
        </p>
        <p>
          <a href="/integrations">Back to the integrations</a>
        </p>
      </Empty>
    );
  }
  if (!data) return <Status error={loaded.error} label="Loading the integration…" />;
  const { integration, runs } = data;
  const providerName = PROVIDER_NAMES[integration.provider];
  const disconnected = integration.status === 'disconnected';

  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setProblem(null);
    try {
      await work();
    } catch (error) {
      setProblem((error as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const syncNow = () =>
    act(async () => {
      const run = await syncIntegration(integration.id);
      setWatching(run.id);
      if (pages.page !== 1) pages.previous();
      await loaded.reload();
      setAnnouncement(`Sync started for ${providerName}.`);
    });

  const disconnect = () =>
    act(async () => {
      await disconnectIntegration(integration.id);
      setConfirming(false);
      await loaded.reload();
      setAnnouncement(`Disconnected ${providerName}; its credentials were destroyed.`);
      setFocus('connection-title');
    });

  return (
    <>
      <Announcer text={announcement} id="integration-announcer" />
      <p>
        <a href="/integrations">← All integrations</a>
      </p>
      <section class="card" aria-labelledby="connection-title">
        <h2 id="connection-title" tabIndex={-1}>
          Connection
        </h2>
        <dl class="facts">
          <dt>Provider</dt>
          <dd>{providerName}</dd>
          <dt>Type</dt>
          <dd>{TYPE_NAMES[integration.type]}</dd>
          <dt>Status</dt>
          <dd id="integration-status">
            <IntegrationStatus status={integration.status} />
          </dd>
          <dt>Name</dt>
          <dd>{integration.name ?? '—'}</dd>
          <dt>Credentials</dt>
          <dd>{disconnected ? 'Destroyed when disconnected' : integration.credentialsHint ? `Ending in …${integration.credentialsHint}` : '—'}</dd>
          <dt>Connected</dt>
          <dd>{when(integration.connectedAt)}</dd>
          <dt>Last sync</dt>
          <dd>{integration.lastSyncedAt ? when(integration.lastSyncedAt) : 'Not yet'}</dd>
          {integration.disconnectedAt && (
            <>
              <dt>Disconnected</dt>
              <dd>{when(integration.disconnectedAt)}</dd>
            </>
          )}
        </dl>
        {problem && (
          <p class="error" role="alert">
            {problem}
          </p>
        )}
        {!disconnected && (
          <div class="actions-row connection-actions">
            {syncs(integration.provider) && (
              <button type="button" onClick={() => void syncNow()} disabled={busy} id="sync-now">
                Sync now
              </button>
            )}
            {!confirming && (
              <button
                type="button"
                class="secondary"
                id="disconnect"
                onClick={() => {
                  setConfirming(true);
                  setFocus('disconnect-cancel');
                }}
              >
                Disconnect
              </button>
            )}
          </div>
        )}
        {confirming && !disconnected && (
          <div class="confirm notice" role="group" aria-labelledby="disconnect-question">
            <p id="disconnect-question">
              Disconnect {providerName}? Its credentials are destroyed and syncing stops; the integration stays listed as history. Connecting again takes the
              credentials anew.
            </p>
            <div class="actions-row">
              <button type="button" class="danger" onClick={() => void disconnect()} disabled={busy}>
                Yes, disconnect
              </button>
              <button
                type="button"
                class="secondary"
                id="disconnect-cancel"
                onClick={() => {
                  setConfirming(false);
                  setFocus('disconnect');
                }}
              >
                Cancel
              </button>
            </div>
          </div>
        )}
      </section>

      {integration.lastError && (
        <section class="card last-error-card" aria-labelledby="last-error-title">
          <h2 id="last-error-title">Last error</h2>
          <p class="error wrap-anywhere" id="last-error">
            {integration.lastError}
          </p>
          <p class="muted">
            At {when(integration.lastErrorAt)}
            {integration.status === 'connected' ? '; calls have succeeded since.' : '.'}
          </p>
        </section>
      )}

      <Settings
        integration={integration}
        onSaved={async (saved) => {
          await loaded.reload();
          setAnnouncement(`Saved the settings of ${integrationTitle(saved)}.`);
        }}
      />

      <section class="card" aria-labelledby="runs-title">
        <h2 id="runs-title">Sync runs</h2>
        {runs.data.length === 0 && pages.page === 1 ? (
          <p class="muted">
            {syncs(integration.provider)
              ? 'No sync runs yet. A run starts when the integration is connected, when leads or deals change, on the schedule, and with Sync now.'
              : `${providerName} does not sync; it has no runs.`}
          </p>
        ) : (
          <>
            <SyncRuns runs={runs.data} />
            <Pager label="Sync run pages" page={pages.page} nextCursor={runs.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
          </>
        )}
      </section>
    </>
  );
}

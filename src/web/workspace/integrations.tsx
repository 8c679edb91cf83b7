import { useState } from 'preact/hooks';
import { ConnectForm } from './connect-form';
import {
  activeIntegrations,
  type Integration,
  IntegrationProvider,
  IntegrationType,
  listIntegrations,
  PROVIDER_GROUPS,
  PROVIDER_NAMES,
  TYPE_NAMES,
  TYPE_PURPOSES,
} from './integrations-api';
import { IntegrationStatus } from './integration-status';
import { Announcer, Empty, Pager, Status, Table, useCursorPages, useFocusWhenShown, useLoad, when } from './ui';
import './integrations.css';

/**
 * /integrations: the account's integrations in this mode (newest first, disconnected ones kept as
 * history), and a Connect per provider, grouped by type. A provider whose place is taken (an
 * integration connected or in error) links to it instead: the API holds one per provider.
 */
export function Integrations() {
  const pages = useCursorPages();
  const list = useLoad(() => listIntegrations(pages.cursor), [pages.cursor]);
  const active = useLoad(activeIntegrations, []);
  const [choosing, setChoosing] = useState<IntegrationProvider | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const setFocus = useFocusWhenShown();

  const connected = async (integration: Integration) => {
    setChoosing(null);
    await Promise.all([list.reload(), active.reload()]);
    const name = PROVIDER_NAMES[integration.provider];
    setAnnouncement(
      integration.type === IntegrationType.crm || integration.type === IntegrationType.psa
        ? `Connected ${name}; its first sync has started.`
        : `Connected ${name}.`,
    );
    setFocus(`integration-${integration.id}`);
  };

  const taken = new Map((active.data ?? []).map((integration) => [integration.provider, integration]));

  return (
    <>
      <Announcer text={announcement} id="integrations-announcer" />
      <section aria-labelledby="integrations-title">
        <h2 id="integrations-title">Your integrations</h2>
        {!list.data ? (
          <Status error={list.error} label="Loading the integrations…" />
        ) : list.data.data.length === 0 && pages.page === 1 ? (
          <Empty>
            <p>
              <strong>No integrations yet.</strong>
            </p>
            <p>
              Connecting a provider checks its credentials with the provider, then stores them encrypted (only their last 4 characters are ever shown). A CRM or
              PSA then receives your leads and deals, and a CRM's changes come back; Microsoft 365 delivers your agents' follow-ups; a model provider writes for
              your agents. Choose a provider below.
            </p>
          </Empty>
        ) : (
          <>
            {list.error && (
              <p class="error" role="alert">
                {list.error}
              </p>
            )}
            <Table<Integration>
              label="Integrations"
              rowKey={(integration) => integration.id}
              rows={list.data.data}
              columns={[
                {
                  label: 'Provider',
                  cell: (integration) => (
                    <a href={`/integrations/${integration.id}`} id={`integration-${integration.id}`}>
                      {PROVIDER_NAMES[integration.provider]}
                    </a>
                  ),
                },
                { label: 'Name', cell: (integration) => integration.name ?? '—' },
                { label: 'Type', cell: (integration) => TYPE_NAMES[integration.type] },
                { label: 'Status', cell: (integration) => <IntegrationStatus status={integration.status} /> },
                { label: 'Last sync', cell: (integration) => when(integration.lastSyncedAt) },
                {
                  label: 'Last error',
                  cell: (integration) =>
                    integration.lastError ? (
                      <span class="wrap-anywhere">
                        {integration.lastError} <span class="muted">({when(integration.lastErrorAt)})</span>
                      </span>
                    ) : (
                      '—'
                    ),
                },
              ]}
            />
            <Pager label="Integrations pages" page={pages.page} nextCursor={list.data.nextCursor} onNext={pages.next} onPrevious={pages.previous} />
          </>
        )}
      </section>

      <section class="connect" aria-labelledby="connect-title">
        <h2 id="connect-title">Connect a provider</h2>
        {active.error && (
          <p class="error" role="alert">
            {active.error}
          </p>
        )}
        <div class="provider-groups">
          {PROVIDER_GROUPS.map(({ type, providers }) => (
            <section class="card provider-group" key={type} aria-labelledby={`group-${type}`}>
              <h3 id={`group-${type}`}>{TYPE_NAMES[type]}</h3>
              <p class="muted">{TYPE_PURPOSES[type]}</p>
              <ul class="providers">
                {providers.map((provider) => {
                  const holder = taken.get(provider);
                  return (
                    <li key={provider}>
                      <span class="provider-name">{PROVIDER_NAMES[provider]}</span>
                      {holder ? (
                        <span class="holder">
                          <IntegrationStatus status={holder.status} />
                          <a href={`/integrations/${holder.id}`}>
                            Open<span class="visually-hidden"> {PROVIDER_NAMES[provider]}</span>
                          </a>
                        </span>
                      ) : (
                        <button
                          type="button"
                          class="secondary"
                          id={`choose-${provider}`}
                          aria-expanded={choosing === provider}
                          aria-controls={choosing === provider ? `connect-${provider}-form` : undefined}
                          onClick={() => setChoosing(choosing === provider ? null : provider)}
                        >
                          Connect<span class="visually-hidden"> {PROVIDER_NAMES[provider]}</span>
                        </button>
                      )}
                    </li>
                  );
                })}
              </ul>
              {choosing && providers.includes(choosing) && (
                <div id={`connect-${choosing}-form`}>
                  <ConnectForm
                    key={choosing}
                    provider={choosing}
                    takesModel={type === IntegrationType.llm}
                    onConnected={(integration) => void connected(integration)}
                    onCancel={() => {
                      setFocus(`choose-${choosing}`);
                      setChoosing(null);
                    }}
                  />
                </div>
              )}
            </section>
          ))}
        </div>
      </section>
    </>
  );
}

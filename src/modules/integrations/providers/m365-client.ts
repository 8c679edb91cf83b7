import type { Integration } from '../integration.entity';
import { CrmSetupIncomplete, CrmUnavailable, type CrmClientOptions, type ExternalIds } from './crm-client';
import type { ProviderSettings } from './provider-settings';
import { GraphItemRefused, GraphOutcomeUnknown, GraphSession } from './m365-graph';
import { graphReason } from './m365-verification';
import { jsonOf, ProviderResponse } from './provider-http';

/**
 * The string extended property every draft we write carries, holding the action's id
 * (`{agent run id}:{index}`), in a property set of our own ("Outlook extended properties overview":
 * `String {GUID} Name name`). It is how a draft written before a crash is found instead of written twice.
 */
export const ACTION_PROPERTY_ID = 'String {8d621c2e-fee3-4ced-97c4-0d08d5050ac4} Name SalesPipelineActionId';
/**
 * The open extension every To Do task we write carries, holding the action's id (`actionId`) and
 * the deal's address and name (`dealUrl`, `dealName`): created with the task ("Create open extension", todoTask:
 * Application Tasks.ReadWrite.All), read back expanded ("Get open extension"). Not a linkedResource:
 * Graph does not let an application create those ("Create linkedResource", Application: Not supported).
 */
export const TASK_EXTENSION_NAME = 'com.salespipelineapi.followUp';

const DEFAULT_MAX_WAIT_MS = 30_000;

/** A draft to write in the mailbox: never sent, the salesperson reviews and sends it. */
export interface OutboundDraft {
  /** Our action's id, kept on the draft (ACTION_PROPERTY_ID). */
  actionId: string;
  subject: string;
  html: string;
  to: Array<{ address: string; name: string | null }>;
}

/** A To Do task to add to the mailbox's default list, linked back to the deal. */
export interface OutboundTask {
  actionId: string;
  title: string;
  text: string;
  /** Where the deal is (also in `text`, which is what a person reads in To Do), and its name: kept in the task's extension. */
  webUrl: string;
  displayName: string;
}

export interface DeliveredItem {
  /** Graph's id of the message or task. */
  id: string;
  /** `{ message }` for a draft; `{ todoTask, todoTaskList }` for a task. */
  external: ExternalIds;
  /** It was there already (written by an attempt whose answer was lost, or before a crash): found, not written again. */
  found: boolean;
}

/** What the sync engine asks of a Microsoft 365 mailbox: agents' follow-ups, as drafts or tasks, each written once. */
export interface MailboxClient {
  /** The client-credentials grant (or its cached token). */
  open(): Promise<void>;
  /** Reads the mailbox's user: proves the credentials reach Graph and the mailbox exists. */
  probe(): Promise<void>;
  saveDraft(draft: OutboundDraft): Promise<DeliveredItem>;
  addTask(task: OutboundTask): Promise<DeliveredItem>;
}

export type MailboxClientFactory = (integration: Integration, credentials: Record<string, string>) => MailboxClient;

/** The Microsoft 365 clients of the sync engine: one per run, made from the integration's decrypted credentials. */
export function mailboxClientFactory(settings: ProviderSettings, options: CrmClientOptions = {}): MailboxClientFactory {
  return (_integration, credentials) => new GraphMailboxClient(credentials, settings, options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
}

/** An OData string literal: single quotes doubled. */
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;
/** Pages of one listing read before giving up on it (a loop of next links, or a list beyond any mailbox's). */
const MAX_PAGES = 1_000;

type Listed = { id?: unknown; [property: string]: unknown };

/**
 * A mailbox through Microsoft Graph, with the app-only token of the client-credentials grant (the
 * mailbox is the integration's `mailbox`, a user principal name). Each call is one Graph documents
 * for application permissions (docs/DESIGN.md, "Agents' follow-ups in Microsoft 365"):
 * - a draft is `POST /users/{mailbox}/messages` ("Create message": made in Drafts, never sent;
 *   Mail.ReadWrite), carrying the action's id in ACTION_PROPERTY_ID ("Create single-value extended
 *   property", in a new message); it is first looked for with
 *   `$filter=singleValueExtendedProperties/Any(ep: ep/id eq '…' and ep/value eq '…')` ("Get
 *   singleValueLegacyExtendedProperty": string properties by `eq` on value; Mail.Read);
 * - a task goes to the list whose wellknownListName is `defaultList` (`GET /users/{mailbox}/todo/lists`,
 *   "List todoTaskLists": Tasks.Read.All), `POST …/todo/lists/{id}/tasks` ("Create todoTask":
 *   Tasks.ReadWrite.All) with TASK_EXTENSION_NAME created in it; it is first looked for among
 *   the list's tasks, read with `$expand=extensions` ("List tasks", "Get open extension"), every
 *   page (`@odata.nextLink`): Graph documents no filter on a task's extensions or linked resources.
 * Looking before writing makes a write repeated after a lost answer, or a run repeated after a
 * crash between Graph's answer and our link, find the item rather than make a second one.
 */
class GraphMailboxClient implements MailboxClient {
  private readonly session: GraphSession;
  private readonly user: string;
  private readonly graphUrl: string;
  private defaultList?: string;

  constructor(credentials: Record<string, string>, settings: ProviderSettings, maxWaitMs: number) {
    this.session = new GraphSession(credentials, settings, { maxWaitMs });
    this.graphUrl = settings.microsoftGraphUrl;
    // A user principal name in Graph's path: percent-encoded (a guest's #EXT# included), its @ as written.
    this.user = `/v1.0/users/${encodeURIComponent(credentials.mailbox).replace(/%40/g, '@')}`;
  }

  async open(): Promise<void> {
    await this.session.token();
  }

  async probe(): Promise<void> {
    this.expect(await this.session.call({ method: 'GET', path: `${this.user}?$select=id` }), 'reading the mailbox');
  }

  saveDraft(draft: OutboundDraft): Promise<DeliveredItem> {
    const filter = `singleValueExtendedProperties/Any(ep: ep/id eq ${literal(ACTION_PROPERTY_ID)} and ep/value eq ${literal(draft.actionId)})`;
    return this.once(
      async () =>
        this.firstId(
          await this.session.call({ method: 'GET', path: `${this.user}/messages?$filter=${encodeURIComponent(filter)}&$select=id` }),
          'looking for the draft',
        ),
      async () =>
        this.idOf(
          await this.session.call({
            method: 'POST',
            path: `${this.user}/messages`,
            body: {
              subject: draft.subject,
              body: { contentType: 'html', content: draft.html },
              toRecipients: draft.to.map((recipient) => ({
                emailAddress: { address: recipient.address, ...(recipient.name ? { name: recipient.name } : {}) },
              })),
              singleValueExtendedProperties: [{ id: ACTION_PROPERTY_ID, value: draft.actionId }],
            },
          }),
          'writing the draft',
        ),
      (id) => ({ message: id }),
    );
  }

  async addTask(task: OutboundTask): Promise<DeliveredItem> {
    const list = await this.defaultTaskList();
    const tasks = `${this.user}/todo/lists/${encodeURIComponent(list)}/tasks`;
    return this.once(
      () => this.findTask(tasks, task.actionId),
      async () =>
        this.idOf(
          await this.session.call({
            method: 'POST',
            path: tasks,
            body: {
              title: task.title,
              body: { contentType: 'text', content: task.text },
              importance: 'normal',
              extensions: [
                {
                  '@odata.type': 'microsoft.graph.openTypeExtension',
                  extensionName: TASK_EXTENSION_NAME,
                  actionId: task.actionId,
                  dealUrl: task.webUrl,
                  dealName: task.displayName,
                },
              ],
            },
          }),
          'writing the task',
        ),
      (id) => ({ todoTask: id, todoTaskList: list }),
    );
  }

  /** The id of the list's task whose extension holds the action's id, or null. */
  private async findTask(tasks: string, actionId: string): Promise<string | null> {
    for await (const item of this.listing(`${tasks}?$expand=extensions`, 'looking for the task')) {
      const extensions = Array.isArray(item.extensions) ? (item.extensions as Listed[]) : [];
      const ours = extensions.some(
        (extension) =>
          (extension.extensionName === TASK_EXTENSION_NAME || (typeof extension.id === 'string' && extension.id.endsWith(`.${TASK_EXTENSION_NAME}`))) &&
          extension.actionId === actionId,
      );
      if (ours && typeof item.id === 'string') return item.id;
    }
    return null;
  }

  /**
   * Every item of a listing, page after page (Graph's paging: `@odata.nextLink`, a full URL on Graph's
   * host). A next link elsewhere is not followed: the token goes to Graph only.
   */
  private async *listing(path: string, doing: string): AsyncGenerator<Listed> {
    let next: string | undefined = path;
    for (let pages = 0; next !== undefined; pages++) {
      if (pages === MAX_PAGES) throw new CrmUnavailable(`Microsoft Graph's answer to ${doing} went on past ${MAX_PAGES} pages`);
      const page = jsonOf(this.expect(await this.session.call({ method: 'GET', path: next }), doing)) as
        { value?: unknown; '@odata.nextLink'?: unknown } | undefined;
      if (!Array.isArray(page?.value)) throw new CrmUnavailable(`Microsoft Graph's answer to ${doing} had no value list`);
      yield* page.value.filter((item): item is Listed => typeof item === 'object' && item !== null);
      const link = page['@odata.nextLink'];
      if (link === undefined || link === null) return;
      if (typeof link !== 'string' || !link.startsWith(`${this.graphUrl}/`))
        throw new CrmUnavailable(`Microsoft Graph's answer to ${doing} had a next link off its host`);
      next = link.slice(this.graphUrl.length);
    }
  }

  /**
   * Looks for the item, and writes it when it is not there; a write whose outcome is unknown is
   * looked for again before another, after the session's pause (its Retry-After, else Graph's
   * schedule), until the session says the pauses are spent.
   */
  private async once(find: () => Promise<string | null>, create: () => Promise<string>, external: (id: string) => ExternalIds): Promise<DeliveredItem> {
    for (let failures = 0; ; failures++) {
      const existing = await find();
      if (existing) return { id: existing, external: external(existing), found: true };
      try {
        const id = await create();
        return { id, external: external(id), found: false };
      } catch (error) {
        if (!(error instanceof GraphOutcomeUnknown)) throw error;
        if (!(await this.session.backOff(failures, error.retryAfterMs))) throw error;
      }
    }
  }

  /** The id of the mailbox's default To Do list ("Tasks"), read once per client. */
  private async defaultTaskList(): Promise<string> {
    if (this.defaultList) return this.defaultList;
    for await (const list of this.listing(`${this.user}/todo/lists`, 'reading the To Do lists')) {
      if (list.wellknownListName === 'defaultList' && typeof list.id === 'string') return (this.defaultList = list.id);
    }
    throw new CrmSetupIncomplete('the mailbox has no default To Do list (wellknownListName defaultList); open Microsoft To Do once for this mailbox');
  }

  private firstId(response: ProviderResponse, doing: string): string | null {
    const value = (jsonOf(this.expect(response, doing)) as { value?: Array<{ id?: unknown }> } | undefined)?.value;
    if (!Array.isArray(value)) throw new CrmUnavailable(`Microsoft Graph's answer to ${doing} had no value list`);
    const id = value.find((item) => typeof item.id === 'string')?.id;
    return typeof id === 'string' ? id : null;
  }

  private idOf(response: ProviderResponse, doing: string): string {
    const id = (jsonOf(this.expect(response, doing, true)) as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string' || id === '') throw new GraphOutcomeUnknown(`Microsoft Graph's answer to ${doing} had no id`);
    return id;
  }

  /**
   * A success, or why not: 404 (no such mailbox, or no mailbox for REST) stops deliveries until
   * someone fixes it, as a setup problem (the integration goes to error). A 400 refuses the item
   * when it answers a write of it (`ofItem`); answering a read or a lookup, it is no fault of one
   * item, and stops deliveries the same way, so nothing owed is given up for it.
   */
  private expect(response: ProviderResponse, doing: string, ofItem = false): ProviderResponse {
    if (response.status >= 200 && response.status < 300) return response;
    const reason = this.session.clean(graphReason(response));
    if (response.status === 404) throw new CrmSetupIncomplete(`Microsoft Graph found no mailbox to use ${doing} (${reason}); check the integration's mailbox`);
    if (response.status === 400 || response.status === 413 || response.status === 422) {
      if (ofItem) throw new GraphItemRefused(`Microsoft Graph refused ${doing}: ${reason}`, response.status);
      throw new CrmSetupIncomplete(`Microsoft Graph refused ${doing}: ${reason}`);
    }
    throw new CrmUnavailable(`Microsoft Graph answered ${response.status} to ${doing} (${reason})`);
  }
}

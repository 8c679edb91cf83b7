import { randomBytes, randomUUID } from 'node:crypto';
import type { FakeAnswer, SeenRequest } from './fake-provider';

/** A message in a mailbox, as Graph keeps it (the properties this fake is asked for). */
export interface FakeGraphMessage {
  id: string;
  createdDateTime: string;
  lastModifiedDateTime: string;
  subject: string;
  body: { contentType: string; content: string };
  toRecipients: Array<{ emailAddress: { address: string; name?: string } }>;
  isDraft: boolean;
  parentFolderId: string;
  /** Single-value extended properties set on it ({id, value}); Graph returns them only when expanded. */
  singleValueExtendedProperties: Array<{ id: string; value: string }>;
}

export interface FakeGraphLinkedResource {
  id: string;
  webUrl?: string;
  applicationName: string;
  displayName: string;
  externalId?: string;
}

/** A To Do task, as Graph keeps it. */
export interface FakeGraphTask {
  id: string;
  title: string;
  body: { contentType: string; content: string };
  importance: 'low' | 'normal' | 'high';
  status: string;
  isReminderOn: boolean;
  createdDateTime: string;
  lastModifiedDateTime: string;
  linkedResources: FakeGraphLinkedResource[];
}

export interface FakeGraphTaskList {
  id: string;
  displayName: string;
  isOwner: boolean;
  isShared: boolean;
  wellknownListName: 'defaultList' | 'flaggedEmails' | 'none';
  tasks: FakeGraphTask[];
}

/** Who a request acts for: the mailbox named in its path, reached with a token the fake issued. */
export interface MailboxAccess {
  /** The mailbox's key (tenant and user id): its items. */
  key: string;
}

/** Settles a request's token, permissions and mailbox: the access, or Graph's refusal. */
export type Authorize = (request: SeenRequest, user: string, permissions: readonly string[]) => MailboxAccess | FakeAnswer;

/** Application permissions that read or write messages ("Create message", "List messages": Permissions). */
const READ_MAIL = ['Mail.ReadBasic.All', 'Mail.ReadBasic', 'Mail.Read', 'Mail.ReadWrite'];
const WRITE_MAIL = ['Mail.ReadWrite'];
/** Application permissions of To Do ("List todoTaskLists", "Create todoTask": Permissions). */
const READ_TASKS = ['Tasks.Read.All', 'Tasks.ReadWrite.All'];
const WRITE_TASKS = ['Tasks.ReadWrite.All'];

const MESSAGES = /^\/v1\.0\/users\/([^/]+)\/messages$/;
const LISTS = /^\/v1\.0\/users\/([^/]+)\/todo\/lists$/;
const TASKS = /^\/v1\.0\/users\/([^/]+)\/todo\/lists\/([^/]+)\/tasks$/;
/** Graph's own form of a string extended property's id ("Outlook extended properties overview"): `String {GUID} Name name`. */
const PROPERTY_ID = /^String \{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\} Name \S+$/i;
/** The filters this fake understands: a string extended property by id and value; a linked resource by externalId. */
const PROPERTY_FILTER = /^singleValueExtendedProperties\/any\(\s*(\w+)\s*:\s*\1\/id eq '((?:[^']|'')*)' and \1\/value eq '((?:[^']|'')*)'\s*\)$/i;
const LINKED_FILTER = /^linkedResources\/any\(\s*(\w+)\s*:\s*\1\/externalId eq '((?:[^']|'')*)'\s*\)$/i;

const unquote = (literal: string) => literal.replace(/''/g, "'");
const now = () => new Date().toISOString().replace(/(\.\d{3})Z$/, '$10000Z');
/** Ids shaped like Exchange's (base64 of an entry id), unique per item. */
const itemId = (prefix: string) => `${prefix}${randomBytes(30).toString('base64')}`;

/**
 * The Outlook mail and To Do parts of Microsoft Graph that the service calls, per mailbox:
 * - POST /v1.0/users/{id | userPrincipalName}/messages ("Create message"): a draft in the mailbox's
 *   Drafts folder (never sent), 201 with the message; its singleValueExtendedProperties are kept.
 * - GET …/messages?$filter=singleValueExtendedProperties/Any(ep: ep/id eq '…' and ep/value eq '…')
 *   ("Get singleValueLegacyExtendedProperty"): the id's name is compared case-sensitively, the
 *   value case-insensitively, across every folder; `$select` picks properties.
 * - GET …/todo/lists ("List todoTaskLists"): the built-in Tasks list (wellknownListName
 *   `defaultList`) and Flagged Emails (`flaggedEmails`) of every mailbox.
 * - POST …/todo/lists/{id}/tasks ("Create todoTask"), with linkedResources, 201 with the task; GET
 *   …/tasks ("List tasks") with `$filter=linkedResources/any(r:r/externalId eq '…')`.
 * Refusals are Graph's: 403 ErrorAccessDenied without the application permission, 404
 * ResourceNotFound for a user without a mailbox here, 404 ErrorItemNotFound for an unknown list,
 * 400 ErrorInvalidUrlQueryFilter for a filter it cannot read, 400 for a body it cannot take.
 */
export class FakeGraphMailboxes {
  private readonly messages = new Map<string, FakeGraphMessage[]>();
  private readonly lists = new Map<string, FakeGraphTaskList[]>();
  /** Creates still to be carried out and then answered with a broken connection. */
  dropCreates = 0;

  constructor(private readonly authorize: Authorize) {}

  /** The answer to a mail or To Do request, or undefined for a path that is neither. */
  answer(request: SeenRequest, path: string, query: URLSearchParams): FakeAnswer | undefined {
    const messages = MESSAGES.exec(path);
    if (messages && request.method === 'POST') return this.withAccess(request, messages[1], WRITE_MAIL, (access) => this.createMessage(access, request));
    if (messages && request.method === 'GET') return this.withAccess(request, messages[1], READ_MAIL, (access) => this.listMessages(access, query));
    const lists = LISTS.exec(path);
    if (lists && request.method === 'GET') return this.withAccess(request, lists[1], READ_TASKS, (access) => this.listLists(access));
    const tasks = TASKS.exec(path);
    if (tasks && request.method === 'POST') {
      return this.withAccess(request, tasks[1], WRITE_TASKS, (access) => this.createTask(access, decodeURIComponent(tasks[2]), request));
    }
    if (tasks && request.method === 'GET') {
      return this.withAccess(request, tasks[1], READ_TASKS, (access) => this.listTasks(access, decodeURIComponent(tasks[2]), query));
    }
    return undefined;
  }

  /** The messages of a mailbox (by its key) in Drafts, oldest first. */
  drafts(key: string): FakeGraphMessage[] {
    return (this.messages.get(key) ?? []).filter((message) => message.isDraft).map((message) => structuredClone(message));
  }

  /** The tasks of a mailbox's default To Do list, oldest first. */
  tasks(key: string): FakeGraphTask[] {
    return structuredClone(this.listsOf(key).find((list) => list.wellknownListName === 'defaultList')!.tasks);
  }

  private withAccess(request: SeenRequest, user: string, permissions: readonly string[], then: (access: MailboxAccess) => FakeAnswer): FakeAnswer {
    const access = this.authorize(request, decodeURIComponent(user), permissions);
    return 'status' in access ? access : then(access);
  }

  private createMessage(access: MailboxAccess, request: SeenRequest): FakeAnswer {
    const body = parseBody(request);
    if (!body) return graphError(400, 'RequestBodyRead', 'Invalid JSON in the request body.');
    const properties = Array.isArray(body.singleValueExtendedProperties)
      ? (body.singleValueExtendedProperties as Array<{ id?: unknown; value?: unknown }>)
      : [];
    for (const property of properties) {
      if (typeof property.id !== 'string' || !PROPERTY_ID.test(property.id) || typeof property.value !== 'string') {
        return graphError(400, 'ErrorInvalidProperty', `The extended property '${String(property.id)}' is not valid.`);
      }
    }
    const recipients = Array.isArray(body.toRecipients) ? (body.toRecipients as FakeGraphMessage['toRecipients']) : [];
    if (recipients.some((recipient) => typeof recipient?.emailAddress?.address !== 'string')) {
      return graphError(400, 'ErrorInvalidRecipients', 'At least one recipient is not valid.');
    }
    const itemBody = body.body as { contentType?: unknown; content?: unknown } | undefined;
    const created = now();
    const message: FakeGraphMessage = {
      id: itemId('AAMkAGI2THVSAAA='),
      createdDateTime: created,
      lastModifiedDateTime: created,
      subject: typeof body.subject === 'string' ? body.subject : '',
      body: { contentType: String(itemBody?.contentType ?? 'text').toLowerCase() === 'html' ? 'html' : 'text', content: String(itemBody?.content ?? '') },
      toRecipients: recipients.map((recipient) => ({ emailAddress: { ...recipient.emailAddress } })),
      isDraft: true,
      parentFolderId: 'AQMkADrafts',
      singleValueExtendedProperties: properties.map((property) => ({ id: property.id as string, value: property.value as string })),
    };
    const mailbox = this.messages.get(access.key) ?? [];
    mailbox.push(message);
    this.messages.set(access.key, mailbox);
    const { singleValueExtendedProperties: _hidden, ...shown } = message;
    return this.created({ '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('…')/messages/$entity", ...shown });
  }

  private listMessages(access: MailboxAccess, query: URLSearchParams): FakeAnswer {
    const filter = query.get('$filter');
    let found = this.messages.get(access.key) ?? [];
    if (filter !== null) {
      const match = PROPERTY_FILTER.exec(filter.trim());
      if (!match) return graphError(400, 'ErrorInvalidUrlQueryFilter', 'The query filter contains one or more invalid nodes.');
      const [id, value] = [unquote(match[2]), unquote(match[3]).toLowerCase()];
      found = found.filter((message) => message.singleValueExtendedProperties.some((property) => property.id === id && property.value.toLowerCase() === value));
    }
    return { status: 200, body: { value: found.map((message) => selected(message, query)) } };
  }

  private listLists(access: MailboxAccess): FakeAnswer {
    const value = this.listsOf(access.key).map(({ tasks: _tasks, ...list }) => ({ '@odata.etag': `W/"${randomUUID()}"`, ...list }));
    return { status: 200, body: { '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('…')/todo/lists", value } };
  }

  private createTask(access: MailboxAccess, listId: string, request: SeenRequest): FakeAnswer {
    const list = this.listsOf(access.key).find((candidate) => candidate.id === listId);
    if (!list) return graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
    const body = parseBody(request);
    if (!body) return graphError(400, 'RequestBodyRead', 'Invalid JSON in the request body.');
    if (typeof body.title !== 'string') return graphError(400, 'invalidRequest', 'Invalid request: title is required.');
    const linked = Array.isArray(body.linkedResources) ? (body.linkedResources as Array<Partial<FakeGraphLinkedResource>>) : [];
    if (linked.some((resource) => typeof resource.applicationName !== 'string' || typeof resource.displayName !== 'string')) {
      return graphError(400, 'invalidRequest', 'Invalid request: a linked resource needs applicationName and displayName.');
    }
    const itemBody = body.body as { contentType?: unknown; content?: unknown } | undefined;
    const created = now();
    const task: FakeGraphTask = {
      id: itemId('AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0A'),
      title: body.title,
      body: { contentType: String(itemBody?.contentType ?? 'text').toLowerCase() === 'html' ? 'html' : 'text', content: String(itemBody?.content ?? '') },
      importance: body.importance === 'low' || body.importance === 'high' ? body.importance : 'normal',
      status: 'notStarted',
      isReminderOn: false,
      createdDateTime: created,
      lastModifiedDateTime: created,
      linkedResources: linked.map((resource) => ({
        id: randomUUID(),
        webUrl: resource.webUrl,
        applicationName: resource.applicationName!,
        displayName: resource.displayName!,
        externalId: resource.externalId,
      })),
    };
    list.tasks.push(task);
    return this.created({ '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('…')/todo/lists('…')/tasks/$entity", ...task });
  }

  private listTasks(access: MailboxAccess, listId: string, query: URLSearchParams): FakeAnswer {
    const list = this.listsOf(access.key).find((candidate) => candidate.id === listId);
    if (!list) return graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
    const filter = query.get('$filter');
    let found = list.tasks;
    if (filter !== null) {
      const match = LINKED_FILTER.exec(filter.trim());
      if (!match) return graphError(400, 'ErrorInvalidUrlQueryFilter', 'The query filter contains one or more invalid nodes.');
      const externalId = unquote(match[2]);
      found = found.filter((task) => task.linkedResources.some((resource) => resource.externalId === externalId));
    }
    return { status: 200, body: { value: found.map((task) => selected(task, query)) } };
  }

  /** 201, unless a broken connection was asked for: then the item exists and the caller hears nothing. */
  private created(body: Record<string, unknown>): FakeAnswer {
    if (this.dropCreates > 0) {
      this.dropCreates -= 1;
      return { status: 201, dropConnection: true };
    }
    return { status: 201, body };
  }

  private listsOf(key: string): FakeGraphTaskList[] {
    let lists = this.lists.get(key);
    if (!lists) {
      lists = [
        { id: itemId('AQMkADAwATM0MDAAMS1'), displayName: 'Tasks', isOwner: true, isShared: false, wellknownListName: 'defaultList', tasks: [] },
        { id: itemId('AQMkADAwATM0MDAAMS2'), displayName: 'Flagged Emails', isOwner: true, isShared: false, wellknownListName: 'flaggedEmails', tasks: [] },
      ];
      this.lists.set(key, lists);
    }
    return lists;
  }
}

function parseBody(request: SeenRequest): Record<string, unknown> | undefined {
  if (!/^application\/json/.test(request.headers['content-type'] ?? '')) return undefined;
  try {
    const parsed: unknown = JSON.parse(request.body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The item with only the properties `$select` names (and its id), or all of them; never the extended properties. */
function selected(item: object, query: URLSearchParams): Record<string, unknown> {
  const { singleValueExtendedProperties: _hidden, ...shown } = item as Record<string, unknown>;
  const select = query.get('$select');
  if (!select) return shown;
  return Object.fromEntries(['id', ...select.split(',')].map((name) => [name.trim(), shown[name.trim()] ?? null]));
}

/** Graph's error body ("Microsoft Graph error responses and resource types"). */
export function graphError(status: number, code: string, message: string): FakeAnswer {
  const requestId = randomUUID();
  return {
    status,
    body: {
      error: { code, message, innerError: { date: new Date().toISOString().replace(/\.\d+Z$/, ''), 'request-id': requestId, 'client-request-id': requestId } },
    },
  };
}

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

/** An open extension ("openTypeExtension resource type"): its name, Graph's id for it, and the app's own name-value pairs. */
export interface FakeGraphExtension {
  '@odata.type': '#microsoft.graph.openTypeExtension';
  id: string;
  extensionName: string;
  [property: string]: unknown;
}

/** A To Do task, as Graph keeps it; `linkedResources` and `extensions` are shown only when expanded. */
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
  extensions: FakeGraphExtension[];
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
  /** The application permissions (roles) of the request's token. */
  permissions: readonly string[];
}

/** Settles a request's token, permissions and mailbox: the access, or Graph's refusal. */
export type Authorize = (request: SeenRequest, user: string, permissions: readonly string[]) => MailboxAccess | FakeAnswer;

/** Application permissions that read or write messages ("Create message", "List messages": Permissions). */
const READ_MAIL = ['Mail.ReadBasic.All', 'Mail.ReadBasic', 'Mail.Read', 'Mail.ReadWrite'];
const WRITE_MAIL = ['Mail.ReadWrite'];
/** Application permissions of To Do ("List todoTaskLists", "List tasks", "Create todoTask": Permissions). */
const READ_TASKS = ['Tasks.Read.All', 'Tasks.ReadWrite.All'];
const WRITE_TASKS = ['Tasks.ReadWrite.All'];
/** Reading a task's open extensions takes Tasks.ReadWrite.All ("Get open extension", todoTask: Application). */
const READ_TASK_EXTENSIONS = ['Tasks.ReadWrite.All'];
/** Navigation properties, in an answer only when `$expand` names them. */
const MESSAGE_NAVIGATION = ['singleValueExtendedProperties'];
const TASK_NAVIGATION = ['linkedResources', 'extensions'];
/** Tasks in a page of "List tasks" unless `$top` says fewer; then `@odata.nextLink`. */
const TASK_PAGE_SIZE = 10;

const MESSAGES = /^\/v1\.0\/users\/([^/]+)\/messages$/;
const LISTS = /^\/v1\.0\/users\/([^/]+)\/todo\/lists$/;
const TASKS = /^\/v1\.0\/users\/([^/]+)\/todo\/lists\/([^/]+)\/tasks$/;
/** Graph's own form of a string extended property's id ("Outlook extended properties overview"): `String {GUID} Name name`. */
const PROPERTY_ID = /^String \{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\} Name \S+$/i;
/** The filter this fake understands on messages: a string extended property by id and value ("Get singleValueLegacyExtendedProperty"). */
const PROPERTY_FILTER = /^singleValueExtendedProperties\/any\(\s*(\w+)\s*:\s*\1\/id eq '((?:[^']|'')*)' and \1\/value eq '((?:[^']|'')*)'\s*\)$/i;
/** An open extension's type, as a body names it ("Create open extension": `@odata.type`). */
const OPEN_EXTENSION = /^#?microsoft\.graph\.openTypeExtension$/;

const unquote = (literal: string) => literal.replace(/''/g, "'");
const now = () => new Date().toISOString().replace(/(\.\d{3})Z$/, '$10000Z');
/** Ids shaped like Exchange's (base64 of an entry id), unique per item. */
const itemId = (prefix: string) => `${prefix}${randomBytes(30).toString('base64')}`;

/**
 * The Outlook mail and To Do parts of Microsoft Graph that the service calls, per mailbox, for the
 * app-only tokens of the client-credentials grant (every Graph token this fake issues is one):
 * - POST /v1.0/users/{id | userPrincipalName}/messages ("Create message"): a draft in the mailbox's
 *   Drafts folder (never sent), 201 with the message; its singleValueExtendedProperties are kept.
 * - GET …/messages?$filter=singleValueExtendedProperties/Any(ep: ep/id eq '…' and ep/value eq '…')
 *   ("Get singleValueLegacyExtendedProperty"): the id's name is compared case-sensitively, the
 *   value case-insensitively, across every folder; `$select` picks properties.
 * - GET …/todo/lists ("List todoTaskLists"): the built-in Tasks list (wellknownListName
 *   `defaultList`) and Flagged Emails (`flaggedEmails`) of every mailbox.
 * - POST …/todo/lists/{id}/tasks ("Create todoTask"), 201 with the task, with the open extensions
 *   of its body created in it ("Create open extension": in a new todoTask). Linked resources in
 *   the body are refused 403: "Create linkedResource" lists Application as not supported (what
 *   Graph answers is not documented; this fake answers ErrorAccessDenied).
 * - GET …/tasks ("List tasks"), TASK_PAGE_SIZE a page (`$top` fewer, `$skip` on, `@odata.nextLink`
 *   to the next), `$expand=extensions` ("Get open extension": Tasks.ReadWrite.All) or
 *   `linkedResources`; no `$filter` (Graph documents none that finds a task by what an app put in it).
 * Refusals are Graph's: 403 ErrorAccessDenied without the application permission, 404
 * ResourceNotFound for a user without a mailbox here, 404 ErrorItemNotFound for an unknown list,
 * 400 ErrorInvalidUrlQueryFilter for a filter it cannot read, 400 for a body it cannot take.
 * What Graph's metadata says of a request or an answer is checked before (fake-microsoft.ts).
 */
export class FakeGraphMailboxes {
  private readonly messages = new Map<string, FakeGraphMessage[]>();
  private readonly lists = new Map<string, FakeGraphTaskList[]>();
  /** Creates still to be carried out and then answered with a broken connection. */
  dropCreates = 0;

  /** `graphUrl` is where next links point (this fake's own address). */
  constructor(
    private readonly authorize: Authorize,
    private readonly graphUrl: () => string,
  ) {}

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
      return this.withAccess(request, tasks[1], READ_TASKS, (access) => this.listTasks(access, tasks[1], decodeURIComponent(tasks[2]), query));
    }
    return undefined;
  }

  /** The messages of a mailbox (by its key) in Drafts, oldest first. */
  drafts(key: string): FakeGraphMessage[] {
    return (this.messages.get(key) ?? []).filter((message) => message.isDraft).map((message) => structuredClone(message));
  }

  /** The tasks of a mailbox's default To Do list, oldest first. */
  tasks(key: string): FakeGraphTask[] {
    return structuredClone(this.defaultListOf(key).tasks);
  }

  /**
   * Someone (or another app, with its own open extensions) adds a task to the mailbox's default
   * list; Graph documents no order of "List tasks", and `first` lists it before the others.
   */
  addTask(
    key: string,
    title: string,
    options: { extensions?: Array<Record<string, unknown> & { extensionName: string }>; first?: boolean } = {},
  ): FakeGraphTask {
    const task = this.newTask({ title, body: { contentType: 'text', content: '' }, importance: 'normal' }, (options.extensions ?? []).map(openExtension));
    const tasks = this.defaultListOf(key).tasks;
    if (options.first) tasks.unshift(task);
    else tasks.push(task);
    return structuredClone(task);
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
    return { status: 200, body: { value: found.map((message) => shown(message, query, MESSAGE_NAVIGATION)) } };
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
    if (Array.isArray(body.linkedResources) && body.linkedResources.length > 0) {
      return graphError(403, 'ErrorAccessDenied', 'Access is denied. Creating a linkedResource is not supported with application permissions.');
    }
    const extensions = Array.isArray(body.extensions) ? (body.extensions as unknown[]) : [];
    const refused = extensions.map(extensionRefusal).find((reason) => reason !== undefined);
    if (refused) return graphError(400, 'invalidRequest', `Invalid request: ${refused}`);
    const task = this.newTask(body, (extensions as Array<Record<string, unknown> & { extensionName: string }>).map(openExtension));
    list.tasks.push(task);
    const { extensions: _extensions, linkedResources: _linked, ...shown } = task;
    return this.created({ '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('…')/todo/lists('…')/tasks/$entity", ...shown });
  }

  private newTask(body: Record<string, unknown>, extensions: FakeGraphExtension[]): FakeGraphTask {
    const itemBody = body.body as { contentType?: unknown; content?: unknown } | undefined;
    const created = now();
    return {
      id: itemId('AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0A'),
      title: String(body.title),
      body: { contentType: String(itemBody?.contentType ?? 'text').toLowerCase() === 'html' ? 'html' : 'text', content: String(itemBody?.content ?? '') },
      importance: body.importance === 'low' || body.importance === 'high' ? body.importance : 'normal',
      status: 'notStarted',
      isReminderOn: false,
      createdDateTime: created,
      lastModifiedDateTime: created,
      linkedResources: [],
      extensions,
    };
  }

  private listTasks(access: MailboxAccess, user: string, listId: string, query: URLSearchParams): FakeAnswer {
    const list = this.listsOf(access.key).find((candidate) => candidate.id === listId);
    if (!list) return graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
    if (query.has('$filter')) return graphError(400, 'ErrorInvalidUrlQueryFilter', 'Invalid filter clause: this fake plays no $filter on To Do tasks.');
    if (expanded(query).has('extensions') && !access.permissions.some((permission) => READ_TASK_EXTENSIONS.includes(permission))) {
      return graphError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
    }
    const skip = Number(query.get('$skip') ?? 0);
    const top = Math.min(Number(query.get('$top') ?? TASK_PAGE_SIZE), TASK_PAGE_SIZE);
    const page = list.tasks.slice(skip, skip + top);
    const body: Record<string, unknown> = {
      '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('…')/todo/lists('…')/tasks",
      value: page.map((task) => shown(task, query, TASK_NAVIGATION)),
    };
    if (skip + top < list.tasks.length) {
      const next = new URLSearchParams(query);
      next.set('$skip', String(skip + top));
      body['@odata.nextLink'] = `${this.graphUrl()}/v1.0/users/${user}/todo/lists/${encodeURIComponent(listId)}/tasks?${next.toString()}`;
    }
    return { status: 200, body };
  }

  /** 201, unless a broken connection was asked for: then the item exists and the caller hears nothing. */
  private created(body: Record<string, unknown>): FakeAnswer {
    if (this.dropCreates > 0) {
      this.dropCreates -= 1;
      return { status: 201, dropConnection: true };
    }
    return { status: 201, body };
  }

  private defaultListOf(key: string): FakeGraphTaskList {
    return this.listsOf(key).find((list) => list.wellknownListName === 'defaultList')!;
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

/** The navigation properties `$expand` names. */
function expanded(query: URLSearchParams): Set<string> {
  return new Set(
    (query.get('$expand') ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  );
}

/** The item as an answer shows it: its navigation properties only when expanded, and only the properties `$select` names (and its id) when it names any. */
function shown(item: object, query: URLSearchParams, navigation: readonly string[]): Record<string, unknown> {
  const expand = expanded(query);
  const visible = Object.entries(item as Record<string, unknown>).filter(([name]) => !navigation.includes(name) || expand.has(name) || expand.has('*'));
  const select = query.get('$select');
  if (!select) return Object.fromEntries(visible);
  const named = new Set(['id', ...select.split(',').map((name) => name.trim()), ...expand]);
  return Object.fromEntries(visible.filter(([name]) => named.has(name)));
}

/** Why an open extension in a body cannot be created (`@odata.type` openTypeExtension, an extensionName, primitive values or arrays of them), or undefined. */
function extensionRefusal(extension: unknown): string | undefined {
  if (typeof extension !== 'object' || extension === null || Array.isArray(extension)) return 'an extension must be an object';
  const fields = extension as Record<string, unknown>;
  if (typeof fields['@odata.type'] !== 'string' || !OPEN_EXTENSION.test(fields['@odata.type']))
    return 'an extension needs @odata.type microsoft.graph.openTypeExtension';
  if (typeof fields.extensionName !== 'string' || fields.extensionName === '') return 'an open extension needs an extensionName';
  const primitive = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);
  const bad = Object.entries(fields).find(([, value]) => !primitive(value) && !(Array.isArray(value) && value.every(primitive)));
  return bad ? `the extension's ${bad[0]} is neither a primitive nor an array of primitives` : undefined;
}

/** An open extension as Graph keeps it: its id is its fully qualified name. */
function openExtension(fields: Record<string, unknown> & { extensionName: string }): FakeGraphExtension {
  const { '@odata.type': _type, id: _id, ...data } = fields;
  return {
    '@odata.type': '#microsoft.graph.openTypeExtension',
    id: `microsoft.graph.openTypeExtension.${fields.extensionName}`,
    ...data,
    extensionName: fields.extensionName,
  };
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

import type { MikroORM } from '@mikro-orm/postgresql';
import { ERROR_CODES, GraphQLErrorCode, isErrorCode } from '../../src/common/api-error';
import { OPERATION_LIMITS, OperationLimits } from '../../src/limits/operation-limit';

/** Room for thousands of requests: these tests are about input, not limits. */
export const ROOMY_OPERATIONS = Object.fromEntries(Object.keys(OPERATION_LIMITS).map((name) => [name, { windowS: 60, max: 1_000_000 }])) as OperationLimits;

/** One request as it goes on the wire. */
export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface WireResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** Sends one request over real HTTP (loopback), never following redirects, with a deadline. */
export async function send(baseUrl: string, request: WireRequest): Promise<WireResponse> {
  const response = await fetch(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text);

/** The exchange in a few lines, for a failure report (long values clipped, the key hidden). */
export function describeExchange(request: WireRequest, response?: WireResponse): string {
  const headers = Object.entries(request.headers)
    .map(
      ([name, value]) =>
        `${name}: ${name === 'authorization' && /sk_(test|live)_[A-Za-z0-9]{32}$/.test(value) ? `${value.slice(0, 15)}…` : clip(JSON.stringify(value), 80)}`,
    )
    .join('; ');
  const body =
    request.body === undefined
      ? '(none)'
      : Buffer.isBuffer(request.body)
        ? `bytes ${clip(request.body.toString('hex'), 120)}`
        : clip(JSON.stringify(request.body), 1500);
  const lines = [`${request.method} ${clip(request.path, 300)}`, `  headers: ${headers || '(none)'}`, `  body: ${body}`];
  if (response) lines.push(`  -> ${response.status} ${response.headers.get('content-type') ?? ''} ${clip(response.text, 500)}`);
  return lines.join('\n');
}

const ERROR_TYPES = new Set(Object.values(ERROR_CODES).map((spec) => spec.type));
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** What is wrong with the X-Request-Id of an answer (CONTRACT §3), or undefined. */
export function requestIdProblem(request: WireRequest, response: WireResponse): string | undefined {
  const id = response.headers.get('x-request-id');
  if (!id) return 'no X-Request-Id header';
  // fetch sends header values without their leading and trailing whitespace, as HTTP reads them.
  const sent = request.headers['x-request-id']?.replace(/^[\t ]+|[\t ]+$/g, '');
  if (sent !== undefined && SANE_REQUEST_ID.test(sent)) return id === sent ? undefined : `X-Request-Id ${id} does not echo the sane ${sent}`;
  return /^req_[0-9A-Z]{26}$/.test(id) ? undefined : `X-Request-Id ${clip(id, 60)} is neither echoed nor generated (req_…)`;
}

/**
 * What is wrong with a REST error answer (CONTRACT §3), or undefined: a JSON body with one key,
 * `error`, whose code is one of the contract's with this very status, a type matching the code, a
 * message without a stack trace, and the request id of the X-Request-Id header.
 */
export function restErrorProblem(response: WireResponse): string | undefined {
  if (!/^application\/json\b/.test(response.headers.get('content-type') ?? '')) return `content-type ${response.headers.get('content-type')} is not JSON`;
  const body = response.json as { error?: Record<string, unknown> } | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the body is not a JSON object';
  if (Object.keys(body).join() !== 'error') return `the body has keys ${Object.keys(body).join(', ')}, not just error`;
  const error = body.error;
  if (!error || typeof error !== 'object') return 'error is not an object';
  const { type, code, message, param, request_id: requestId } = error;
  if (!isErrorCode(code)) return `error.code ${JSON.stringify(code)} is not a code of the contract`;
  if (ERROR_CODES[code].status !== response.status) return `error.code ${code} belongs with ${ERROR_CODES[code].status}, not ${response.status}`;
  if (typeof type !== 'string' || !ERROR_TYPES.has(type as never) || type !== ERROR_CODES[code].type)
    return `error.type ${JSON.stringify(type)} does not match ${code}`;
  if (typeof message !== 'string' || !message.trim()) return 'error.message is missing';
  if (/\n\s+at |node_modules|\bat [\w.]+ \(/.test(message)) return 'error.message shows a stack trace';
  if (param !== undefined && typeof param !== 'string') return 'error.param is not a string';
  if (requestId !== response.headers.get('x-request-id')) return `error.request_id ${JSON.stringify(requestId)} is not the X-Request-Id`;
  if (response.status === 429 && !response.headers.get('retry-after')) return '429 without Retry-After';
  return undefined;
}

const GRAPHQL_CODES = new Set<GraphQLErrorCode>(['BAD_USER_INPUT', 'UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'RATE_LIMITED']);

/**
 * What is wrong with a /graphql answer, or undefined: JSON, `errors` (when present, and always on a
 * 4xx) each with a message and extensions carrying a client error code (never
 * INTERNAL_SERVER_ERROR), the REST errorCode and its type.
 */
export function graphqlProblem(response: WireResponse): string | undefined {
  if (response.status < 400 && /^text\/html/.test(response.headers.get('content-type') ?? '')) return undefined; // the Sandbox landing page
  const body = response.json as { data?: unknown; errors?: unknown } | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the body is not a JSON object';
  if (body.errors === undefined) {
    if (response.status >= 400) return `${response.status} without errors`;
    return body.data && typeof body.data === 'object' ? undefined : 'neither data nor errors';
  }
  if (!Array.isArray(body.errors) || body.errors.length === 0) return 'errors is not a non-empty array';
  for (const error of body.errors as Array<{ message?: unknown; extensions?: Record<string, unknown> }>) {
    if (typeof error?.message !== 'string' || !error.message) return 'an error without a message';
    const extensions = error.extensions ?? {};
    if (!GRAPHQL_CODES.has(extensions.code as GraphQLErrorCode)) return `extensions.code ${JSON.stringify(extensions.code)} is not a client error code`;
    if (!isErrorCode(extensions.errorCode)) return `extensions.errorCode ${JSON.stringify(extensions.errorCode)} is not a code of the contract`;
    if (extensions.type !== ERROR_CODES[extensions.errorCode].type)
      return `extensions.type ${JSON.stringify(extensions.type)} does not match ${extensions.errorCode}`;
    if (ERROR_CODES[extensions.errorCode].graphql !== extensions.code)
      return `extensions.code ${String(extensions.code)} does not match ${extensions.errorCode}`;
    if ('http' in extensions || 'stacktrace' in extensions) return 'extensions leak internals (http, stacktrace)';
  }
  return undefined;
}

/**
 * Row counts and a hash of every row, per table, in one query: what "the database did not change"
 * means. Left out: accounts and keys (a request stamps last_used_at), web sessions, the request
 * logs (every request, rejected ones included, is logged: that is their point), and, for a request
 * that sent an Idempotency-Key, the key's own row (CONTRACT §12 keeps 4xx answers too).
 */
export class DatabaseSnapshots {
  static readonly NOT_ACCOUNT_DATA = new Set(['accounts', 'api_keys', 'web_sessions', 'request_logs', 'mikro_orm_migrations']);
  private readonly sql: string;

  constructor(private readonly orm: MikroORM) {
    const tables = [
      ...new Set(
        Object.values(orm.getMetadata().getAll())
          .filter((meta) => !meta.abstract && !meta.embeddable && meta.tableName)
          .map((meta) => meta.tableName),
      ),
    ]
      .filter((table) => !DatabaseSnapshots.NOT_ACCOUNT_DATA.has(table))
      .sort();
    this.sql = tables
      // A sum of 64-bit row hashes: as telling as an MD5 of the sorted rows here, without sorting them.
      .map((table) => `select '${table}' as t, count(*)::int as n, coalesce(sum(hashtextextended(r::text, 0)), 0)::text as h from "${table}" r`)
      .join(' union all ');
  }

  async take(): Promise<Map<string, string>> {
    const rows: Array<{ t: string; n: number; h: string }> = await this.orm.em.getConnection().execute(this.sql);
    return new Map(rows.map((row) => [row.t, `${row.n} rows, hash ${row.h}`]));
  }

  /** The tables whose rows differ, as `table: before -> after`. */
  static changes(before: Map<string, string>, after: Map<string, string>, ignore: ReadonlySet<string> = new Set()): string[] {
    return [...before.keys()]
      .filter((table) => !ignore.has(table) && before.get(table) !== after.get(table))
      .map((table) => `${table}: ${before.get(table)} -> ${after.get(table)}`);
  }
}

/** The camelCase field and argument names of the schema (`contactEmail`, `unitPrice`): GraphQL's names, not REST's. */
export function graphqlOnlyNames(schema: import('graphql').GraphQLSchema): Set<string> {
  const names = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !('getFields' in type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (/[A-Z]/.test(field.name)) names.add(field.name);
      for (const arg of 'args' in field ? field.args : []) if (/[A-Z]/.test(arg.name)) names.add(arg.name);
    }
  }
  return names;
}

/**
 * A REST error message that names a field by its GraphQL name (`unitPrice must be…`) where REST
 * calls it `unit_price`, unless the client itself sent that name (an unknown parameter is echoed).
 */
export function restNameProblem(request: WireRequest, response: WireResponse, graphqlNames: ReadonlySet<string>): string | undefined {
  const message = (response.json as { error?: { message?: unknown } } | undefined)?.error?.message;
  if (typeof message !== 'string') return undefined;
  const sent = `${request.path} ${typeof request.body === 'string' ? request.body : ''}`;
  const named = message.match(/\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b/g)?.find((word) => graphqlNames.has(word) && !sent.includes(word));
  return named ? `the REST message names ${named}, a GraphQL name` : undefined;
}

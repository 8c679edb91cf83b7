import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import type { SpecSources } from '../../../scripts/refresh-provider-specs';

/** One request a fake received, by the documented operation it was for (null: no vendored document describes it). */
export interface ConformanceCall {
  method: string;
  path: string;
  operation: string | null;
  status: number;
}

/** What a document refused: a request our client sent, or an answer the fake gave. */
export interface ConformanceViolation {
  side: 'request' | 'answer';
  method: string;
  path: string;
  operation: string | null;
  status?: number;
  errors: string[];
}

/** Per fake: every call and every violation, for a test to assert on and `npm run test:providers` to print. */
export interface ConformanceLog {
  calls: ConformanceCall[];
  violations: ConformanceViolation[];
}

export interface DocumentedOperation {
  /** Undefined while the documents are not on this machine: the operation is known by name only (SOURCES.json), and nothing is checked. */
  backend?: OpenAPIBackend;
  operation: Operation;
  /** `METHOD /path` as the document spells it. */
  name: string;
}

/** A request as a fake read it. */
export interface CheckedRequest {
  method: string;
  /** Path and query, as received. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, if any. */
  body?: unknown;
}

/**
 * A provider's OpenAPI documents as vendored under test/fixtures/provider-specs/<provider>/ (pinned
 * by SOURCES.json, written by scripts/refresh-provider-specs.ts), through openapi-backend: which
 * documented operation a request is for, and what of a request or an answer the document refuses
 * (Ajv against the operation's parameters, request body and response schemas). Loaded once per
 * provider and process: every fake of that provider shares the compiled validators.
 */
export class OpenApiConformance {
  private static readonly loaded = new Map<string, Promise<OpenApiConformance>>();

  private constructor(
    private readonly backends: OpenAPIBackend[],
    /** `METHOD /path` of every operation SOURCES.json lists, for matching while the documents are absent. */
    private readonly listed: readonly string[],
    /** Whether the documents themselves are here (scripts/refresh-provider-specs.ts writes them; they are not committed). */
    readonly checked: boolean,
  ) {}

  static load(provider: string): Promise<OpenApiConformance> {
    let loading = OpenApiConformance.loaded.get(provider);
    if (!loading) {
      loading = OpenApiConformance.init(provider);
      OpenApiConformance.loaded.set(provider, loading);
    }
    return loading;
  }

  private static async init(provider: string): Promise<OpenApiConformance> {
    const dir = path.join(specsDir(), provider);
    const sources = JSON.parse(readFileSync(path.join(dir, 'SOURCES.json'), 'utf8')) as SpecSources;
    const listed = sources.documents.flatMap((source) => source.operations);
    if (!documentsPresent(provider)) return new OpenApiConformance([], listed, false);
    const backends = sources.documents.map((source) => {
      const definition = asJsonErrors(JSON.parse(readFileSync(path.join(dir, source.file), 'utf8')) as Document);
      return new OpenAPIBackend({
        definition,
        strict: true,
        validate: true,
        // Every refusal, not the first: a violation's report says all that is wrong.
        ajvOpts: { allErrors: true },
        coerceTypes: true,
        // openapi-backend adds the OpenAPI number formats (int32, int64, …); ajv-formats the string ones (date-time, uuid, …).
        customizeAjv: (ajv) => {
          addFormats(ajv);
          return ajv;
        },
      });
    });
    await Promise.all(backends.map((backend) => backend.init()));
    return new OpenApiConformance(backends, listed, true);
  }

  /** The documented operation of a request, when one of the documents has it. */
  match(method: string, pathAndQuery: string): DocumentedOperation | undefined {
    const { pathname } = new URL(pathAndQuery, 'http://fake');
    if (!this.checked) return this.matchListed(method, pathname);
    for (const backend of this.backends) {
      const operation = backend.matchOperation({ method, path: pathname, headers: {} });
      if (operation) return { backend, operation, name: `${operation.method.toUpperCase()} ${operation.path}` };
    }
    return undefined;
  }

  /**
   * An operation SOURCES.json lists, matched by its path template; one leading segment may stand
   * before it, as the documents' servers put one (OpenAI's /v1, Azure's /openai, Graph's /v1.0).
   */
  private matchListed(method: string, pathname: string): DocumentedOperation | undefined {
    const name = this.listed.find((listed) => {
      const [listedMethod, template] = listed.split(' ');
      const segments = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
      return listedMethod === method.toUpperCase() && new RegExp(`^(?:/[^/]+)?${segments.join('[^/]+')}$`).test(pathname);
    });
    if (!name) return undefined;
    const [listedMethod, template] = name.split(' ');
    return { operation: { method: listedMethod.toLowerCase(), path: template } as Operation, name };
  }

  /** What the document refuses of the request (empty: nothing, or no document here to ask). */
  checkRequest(documented: DocumentedOperation, request: CheckedRequest): string[] {
    if (!documented.backend) return [];
    const url = new URL(request.path, 'http://fake');
    const query: Record<string, string | string[]> = {};
    for (const key of new Set(url.searchParams.keys())) {
      const values = url.searchParams.getAll(key);
      query[key] = values.length === 1 ? values[0] : values;
    }
    const headers = Object.fromEntries(Object.entries(request.headers).filter((entry): entry is [string, string | string[]] => entry[1] !== undefined));
    const result = documented.backend.validateRequest(
      { method: request.method, path: url.pathname, query, headers, body: request.body as Record<string, unknown> },
      documented.operation,
    );
    return messages(result.errors);
  }

  /** What the document refuses of an answer with this status and body (empty: nothing). */
  checkAnswer(documented: DocumentedOperation, status: number, body: unknown): string[] {
    if (!documented.backend) return [];
    const responses = (documented.operation.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>;
    const declared = responses[String(status)];
    // A status the document gives without a body (204 No content): there is nothing to check but that none came.
    if (declared && !declared.content?.['application/json']) return body === undefined ? [] : [`(root) ${status} has no body in the document`];
    return messages(documented.backend.validateResponse(body ?? null, documented.operation, status).errors);
  }
}

/**
 * HubSpot's documents give their error answers as `*∕*` content; openapi-backend validates JSON
 * answers only, and every HubSpot error is JSON, so the error schema is read as JSON's.
 */
function asJsonErrors(document: Document): Document {
  const responses = (document.components?.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>;
  for (const response of Object.values(responses)) {
    if (response.content?.['*/*'] && !response.content['application/json']) response.content['application/json'] = response.content['*/*'];
  }
  return document;
}

function messages(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((error) => {
    const where = error.instancePath === '' ? '(root)' : error.instancePath;
    const detail = error.keyword === 'additionalProperties' ? ` (${String((error.params as { additionalProperty?: string }).additionalProperty)})` : '';
    return `${where} ${error.message ?? error.keyword}${detail}`;
  });
}

/** test/fixtures/provider-specs, from the sources or from their build under dist/ (the benchmark's). */
function specsDir(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'test', 'fixtures', 'provider-specs');
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error('test/fixtures/provider-specs not found above the fakes');
  }
}

/**
 * Whether a provider's documents are on this machine. They are not committed (HubSpot's are not
 * licensed for reuse, and none is ours to redistribute): `scripts/refresh-provider-specs.ts` downloads
 * them by the pins in SOURCES.json. Without them the fakes match operations by SOURCES.json's list
 * and check nothing, and `npm run test:providers` says so.
 */
export function documentsPresent(provider: string): boolean {
  const dir = path.join(specsDir(), provider);
  const sources = JSON.parse(readFileSync(path.join(dir, 'SOURCES.json'), 'utf8')) as SpecSources;
  return sources.documents.every((source) => existsSync(path.join(dir, source.file)));
}

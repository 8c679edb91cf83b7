/**
 * Refreshes the providers' OpenAPI documents the loopback fakes validate against
 * (test/fixtures/provider-specs/<provider>/, test/helpers/fakes/openapi-conformance.ts).
 *
 * Each provider's SOURCES.json names, per document, the repository, the path and the commit it is
 * pinned to, the sha256 of the document as published there, and the operations we call. This
 * downloads each document at its pin from GitHub's raw file host, checks the hash, and writes the
 * excerpt the fakes read: the operations we call and the components they reference, without the
 * prose (descriptions, examples, tags, scopes, vendor notes other than rate-limit exemptions), so
 * that what is committed is the interface and no more (HubSpot's collection says its documents are
 * not licensed for reuse; the excerpt keeps the structure our requests and answers are checked
 * against). The excerpt is formatted as Prettier formats JSON, so `npm run lint` passes over it.
 *
 * A maintainer's tool: it needs the network, which CI lacks, and no test runs it.
 *
 *   node scripts/build.js && node dist/scripts/refresh-provider-specs.js [provider …]
 *     [--pin <commit>]       move every pin of the named providers to this commit (hashes recorded anew)
 *     [--source-dir <dir>]   read <dir>/<path> instead of downloading (a checkout of the pinned commit)
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { parse as parseYaml } from 'yaml';
import { csdlToOpenApi } from './graph-csdl-openapi';

export interface SpecSource {
  /** The excerpt's file name beside SOURCES.json. */
  file: string;
  repo: string;
  path: string;
  commit: string;
  /** sha256 (hex) of the document at `commit`, as published. */
  sha256: string;
  /** `METHOD /path`, as the document spells the path. */
  operations: string[];
  /** Where the document is wrong: the excerpt gets `value` at `pointer` (JSON Pointer), and `why` says what shows it. */
  errata?: Array<{ pointer: string; value: Json; why: string }>;
}

export interface SpecSources {
  provider: string;
  about: string;
  documents: SpecSource[];
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Keys whose value maps names (of paths, statuses, media types, components, schema properties) to objects: their own keys are names, never prose. */
const NAME_MAPS = new Set(['paths', 'responses', 'content', 'headers', 'schemas', 'parameters', 'requestBodies', 'properties', 'patternProperties', 'links']);
const PROSE = new Set(['description', 'summary', 'example', 'examples', 'externalDocs', 'tags', 'security']);
const KEPT_VENDOR_KEYS = new Set(['x-hubspot-rate-limit-exemptions']);
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

const root = path.resolve(__dirname, '../..');
const specsDir = path.join(root, 'test', 'fixtures', 'provider-specs');

/** The operations named, the components they reach, and no prose. */
export function excerpt(document: JsonObject, operations: string[]): JsonObject {
  const paths: JsonObject = {};
  const allPaths = document.paths as JsonObject;
  for (const named of operations) {
    const [method, route] = named.split(' ');
    const item = allPaths[route] as JsonObject | undefined;
    const operation = item?.[method.toLowerCase()];
    if (!item || !operation || !METHODS.has(method.toLowerCase())) throw new Error(`the document has no ${named}`);
    const kept = (paths[route] ??= item.parameters ? { parameters: item.parameters } : {}) as JsonObject;
    kept[method.toLowerCase()] = operation;
  }
  const components: Record<string, JsonObject> = {};
  const pending: string[] = [];
  const reach = (node: Json) => {
    if (Array.isArray(node)) node.forEach(reach);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') pending.push(value);
        else reach(value);
      }
    }
  };
  // Only what the excerpt keeps: Azure's x-ms-examples refer to example files beside the document.
  reach(stripProse(paths));
  const all = (document.components ?? {}) as Record<string, JsonObject>;
  for (let ref = pending.pop(); ref !== undefined; ref = pending.pop()) {
    const match = /^#\/components\/([^/]+)\/([^/]+)$/.exec(ref);
    if (!match) throw new Error(`a reference the excerpt cannot follow: ${ref}`);
    const [, kind, name] = match;
    if (components[kind]?.[name] !== undefined) continue;
    const target = all[kind]?.[name];
    if (target === undefined) throw new Error(`${ref} is not in the document`);
    (components[kind] ??= {})[name] = target;
    reach(stripProse(target));
  }
  const info = document.info as JsonObject;
  const result = stripProse({
    openapi: document.openapi,
    info: { title: info.title, version: info.version },
    paths,
    components: sortKeys(components),
  }) as JsonObject;
  // A Response Object must have a description (OpenAPI 3.0), and a Reference Object nothing beside its $ref.
  const describe = (response: Json) => {
    const object = response as JsonObject;
    if (object.$ref === undefined) object.description ??= '';
  };
  for (const item of Object.values(result.paths as JsonObject)) {
    for (const operation of Object.values(item as JsonObject)) Object.values(((operation as JsonObject).responses ?? {}) as JsonObject).forEach(describe);
  }
  Object.values(((result.components as JsonObject).responses ?? {}) as JsonObject).forEach(describe);
  return result;
}

/** Replaces what is at a JSON Pointer (RFC 6901), which must be there. */
function correct(document: JsonObject, pointer: string, value: Json): void {
  const keys = pointer
    .split('/')
    .slice(1)
    .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = keys.pop();
  const parent = keys.reduce<Json | undefined>((node, key) => (node && typeof node === 'object' ? (node as JsonObject)[key] : undefined), document);
  if (last === undefined || !parent || typeof parent !== 'object' || !(last in parent)) throw new Error(`the excerpt has nothing at ${pointer}`);
  (parent as JsonObject)[last] = value;
}

function stripProse(node: Json, names = false): Json {
  if (Array.isArray(node)) return node.map((item) => stripProse(item));
  if (!node || typeof node !== 'object') return node;
  const kept: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (!names && (PROSE.has(key) || (key.startsWith('x-') && !KEPT_VENDOR_KEYS.has(key)))) continue;
    // OpenAPI 3.0.3: nullable takes effect only beside a type; Ajv refuses it anywhere else (OpenAI's and Azure's documents have it beside oneOf and $ref).
    if (!names && key === 'nullable' && !('type' in node)) continue;
    // An enum is a set: OpenAI's model list names one model twice, which OpenAPI's own schema (uniqueItems) refuses.
    if (!names && key === 'enum' && Array.isArray(value)) kept[key] = [...new Set(value)];
    else kept[key] = stripProse(value, !names && NAME_MAPS.has(key));
  }
  return kept;
}

function sortKeys<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => a.localeCompare(b))) as T;
}

async function documentText(source: SpecSource, commit: string, sourceDir: string | undefined): Promise<string> {
  if (sourceDir) return readFileSync(path.join(sourceDir, source.path), 'utf8');
  const url = `https://raw.githubusercontent.com/${source.repo}/${commit}/${source.path.split('/').map(encodeURIComponent).join('/')}`;
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  // As published, byte for byte: text() would drop a byte-order mark (Graph's metadata starts with one) and the hash with it.
  return Buffer.from(await response.arrayBuffer()).toString('utf8');
}

async function refresh(provider: string, pin: string | undefined, sourceDir: string | undefined): Promise<void> {
  const dir = path.join(specsDir, provider);
  const sourcesFile = path.join(dir, 'SOURCES.json');
  const sources = JSON.parse(readFileSync(sourcesFile, 'utf8')) as SpecSources;
  const prettier = { ...(await resolveConfig(sourcesFile)), parser: 'json' };
  for (const source of sources.documents) {
    const commit = pin ?? source.commit;
    const text = await documentText(source, commit, sourceDir);
    const sha256 = createHash('sha256').update(text).digest('hex');
    if (!pin && sha256 !== source.sha256)
      throw new Error(`${source.path} at ${commit} is not the document pinned (sha256 ${sha256}, recorded ${source.sha256})`);
    Object.assign(source, { commit, sha256 });
    // OpenAI publishes its document as YAML.
    // Microsoft Graph publishes its metadata as CSDL (XML): rendered as OpenAPI for the operations we call (graph-csdl-openapi.ts).
    const document = (
      /\.xml$/.test(source.path) ? csdlToOpenApi(text, source.operations) : /\.ya?ml$/.test(source.path) ? parseYaml(text) : JSON.parse(text)
    ) as JsonObject;
    const written = excerpt(document, source.operations);
    for (const erratum of source.errata ?? []) correct(written, erratum.pointer, erratum.value);
    writeFileSync(path.join(dir, source.file), await format(JSON.stringify(written), prettier));
    console.log(`${provider}/${source.file}: ${source.operations.length} operations from ${source.repo}@${commit.slice(0, 12)}:${source.path}`);
  }
  writeFileSync(sourcesFile, await format(JSON.stringify(sources), prettier));
}

async function main(args: string[]): Promise<void> {
  const option = (name: string) => {
    const at = args.indexOf(name);
    if (at < 0) return undefined;
    const [, value] = args.splice(at, 2);
    if (!value) throw new Error(`${name} needs a value`);
    return value;
  };
  const pin = option('--pin');
  const sourceDir = option('--source-dir');
  const providers = args.length > 0 ? args : readdirSync(specsDir).filter((name) => existsSync(path.join(specsDir, name, 'SOURCES.json')));
  for (const provider of providers) await refresh(provider, pin, sourceDir);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}

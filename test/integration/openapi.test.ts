import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createSchema } from '../../src/app/schema';
import { buildOpenApi } from '../../src/rest/openapi';
import { EVENTS, ROUTES } from '../../src/app/modules';
import { startTestApp, TestApp } from '../helpers/app';

/**
 * GET /v1/openapi.json (public), the Swagger UI at /docs (served from swagger-ui-dist, no CDN), and
 * a client generated from the served document by third-party tools (openapi-typescript for the
 * types, openapi-fetch at run time), type-checked by tsc and run against the service: it creates
 * a lead and reads it back.
 */

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const TOOLS = path.resolve(__dirname, '../helpers/openapi-tools.mjs');

/**
 * The generated client's program. Typed by the generated `paths`, so tsc rejects it when the
 * document lacks a route, a parameter or a field it uses.
 */
const CLIENT = `import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

const [baseUrl, key] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });

const created = await client.POST('/v1/leads', {
  body: { company: 'Acme Robotics', contact_email: 'ada@acme-robotics.test', employees: 120, metadata: { plan: 'pro' } },
  params: { header: { 'Idempotency-Key': 'openapi-client-lead-1' } },
});
if (!created.data) throw new Error('create failed: ' + JSON.stringify(created.error));
const id: string = created.data.id;
const fetched = await client.GET('/v1/leads/{id}', { params: { path: { id } } });
const email: string | undefined = fetched.data?.contact_email;
const label: 'hot' | 'warm' | 'cold' | undefined = fetched.data?.score_label;
const listed = await client.GET('/v1/leads', { params: { query: { limit: 5, status: 'new', min_employees: 100 } } });
const missing = await client.GET('/v1/leads/{id}', { params: { path: { id: 'lead_00000000000000000000000000' } } });
const code: string | undefined = missing.error?.error.code;

// tsc must reject camelCase names, which the REST API refuses, and a body without a required field.
// @ts-expect-error contactEmail is not a body field
export const camelCase: components['schemas']['LeadCreateInput'] = { company: 'X', contact_email: 'x@x.test', contactEmail: 'x' };
// @ts-expect-error contact_email is required
export const incomplete: components['schemas']['LeadCreateInput'] = { company: 'X' };

console.log(JSON.stringify({
  created: { status: created.response.status, body: created.data, rateLimit: created.response.headers.get('x-ratelimit-limit') },
  fetched: { status: fetched.response.status, body: fetched.data, email, label },
  listed: { status: listed.response.status, ids: listed.data?.data.map((lead) => lead.id) },
  missing: { status: missing.response.status, code },
}));
`;

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

describe('GET /v1/openapi.json', () => {
  it('serves the document of the route table without an API key', async () => {
    const res = await app.request('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const expected = buildOpenApi(await createSchema(), ROUTES, { version: app.config.version, serverUrl: app.config.publicUrl, events: EVENTS });
    expect(res.body).toEqual(expected);
    expect(res.body.servers).toEqual([{ url: app.config.publicUrl }]);
  });

  it('leaves every other /v1 route behind the key', async () => {
    const res = await app.request('GET', '/v1/leads');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('api_key_missing');
  });
});

describe('GET /docs', () => {
  it('answers Swagger UI pointing at /v1/openapi.json, with a Content-Security-Policy', async () => {
    const res = await app.request('GET', '/docs', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('/v1/openapi.json');
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    const scripts = [...res.text.matchAll(/<(?:script src|link rel="stylesheet" href)="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual([
      '/docs/assets/swagger-ui.css',
      '/docs/assets/swagger-ui-bundle.js',
      '/docs/assets/swagger-ui-standalone-preset.js',
      '/docs/init.js',
    ]);
    for (const asset of scripts) {
      const file = await app.request('GET', asset);
      expect([asset, file.status]).toEqual([asset, 200]);
      expect(file.headers.get('content-type')).toMatch(asset.endsWith('.css') ? /^text\/css/ : /javascript/);
    }
    expect((await app.request('GET', '/docs/init.js')).text).toContain('SwaggerUIBundle');
  });

  it('serves only the Swagger UI files it needs', async () => {
    expect((await app.request('GET', '/docs/assets/index.html')).status).toBe(404);
    expect((await app.request('GET', '/docs/assets/..%2Fpackage.json')).status).toBe(404);
  });
});

describe('a client generated from the document', () => {
  const dir = path.join(ROOT, 'node_modules', '.cache', `openapi-client-${process.pid}`);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('validates, type-checks, and creates and reads back a lead against the running service', async () => {
    mkdirSync(dir, { recursive: true });
    const spec = await app.request('GET', '/v1/openapi.json');
    writeFileSync(path.join(dir, 'openapi.json'), spec.text);
    const validation = JSON.parse((await run(process.execPath, [TOOLS, 'validate', path.join(dir, 'openapi.json')])).stdout);
    expect(validation).toEqual({ valid: true, version: '3.1' });

    await run(process.execPath, [TOOLS, 'generate', path.join(dir, 'openapi.json'), path.join(dir, 'api.ts')]);
    writeFileSync(path.join(dir, 'client.mts'), CLIENT);
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = ['--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', '--types', 'node'];
    await run(process.execPath, [tsc, ...flags, '--outDir', path.join(dir, 'out'), path.join(dir, 'client.mts')], { cwd: ROOT }).catch(
      (error: { stdout?: string }) => {
        throw new Error(`the generated client does not type-check:\n${error.stdout}`);
      },
    );

    const { testKey } = await app.createAccount();
    const { stdout } = await run(process.execPath, [path.join(dir, 'out', 'client.mjs'), app.baseUrl, testKey]);
    const result = JSON.parse(stdout);
    expect(result.created).toMatchObject({
      status: 201,
      body: { object: 'lead', company: 'Acme Robotics', contact_email: 'ada@acme-robotics.test', employees: 120, metadata: { plan: 'pro' } },
    });
    expect(Number(result.created.rateLimit)).toBeGreaterThan(0);
    expect(result.fetched).toEqual({ status: 200, body: result.created.body, email: 'ada@acme-robotics.test', label: result.created.body.score_label });
    expect(result.listed).toEqual({ status: 200, ids: [result.created.body.id] });
    expect(result.missing).toEqual({ status: 404, code: 'resource_missing' });
  });
});

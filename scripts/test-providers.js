#!/usr/bin/env node
/**
 * `npm run test:providers`: every provider client's flow (connect, first sync, push, pull with
 * paging, 401, 429 with Retry-After, 5xx) against the loopback fakes, then per provider the
 * endpoints called and what its published document refused (test/helpers/fakes/openapi-conformance.ts).
 * Each fake writes what it answered to PROVIDER_CONFORMANCE_DIR when it closes (fake-provider.ts).
 * Fails when a test fails, when a document refused anything, or when a provider's documents are not
 * on this machine (they are downloaded by scripts/refresh-provider-specs.ts, never committed).
 */
const { spawnSync } = require('node:child_process');
const { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const SUITES = [
  'hubspot-client',
  'salesforce-client',
  'autotask-client',
  'connectwise-client',
  'halopsa-client',
  'crm-sync',
  'psa-sync',
  'psa-verify',
  'integration-verify',
  'm365-verify',
  'm365-actions',
  'partner-center',
  'llm-integration',
  'agent-writers',
].map((name) => `test/integration/${name}.test.ts`);

/** The fakes that check a published document, by the provider folder of test/fixtures/provider-specs. */
const DOCUMENTED = { FakeHubSpot: 'hubspot', FakeChatCompletions: 'openai', FakeMicrosoft: 'microsoft-graph' };

/** A path with its ids as `{id}`, for fakes no document describes (numbers, GUIDs, Salesforce ids and the like). */
const shapeOf = (route) =>
  route
    .split('/')
    .map((segment) => (/^\d+$/.test(segment) || /^[0-9a-f-]{16,}$/i.test(segment) || (/\d/.test(segment) && segment.length >= 10) ? '{id}' : segment))
    .join('/');

function documentsPresent(provider) {
  const dir = path.join(root, 'test', 'fixtures', 'provider-specs', provider);
  const sources = JSON.parse(readFileSync(path.join(dir, 'SOURCES.json'), 'utf8'));
  return sources.documents.every((source) => existsSync(path.join(dir, source.file)));
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'provider-contract-'));
const jest = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), ...SUITES, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PROVIDER_CONFORMANCE_DIR: dir },
});

const byFake = new Map();
for (const file of readdirSync(dir)) {
  const report = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  const entry = byFake.get(report.fake) ?? { endpoints: new Map(), violations: [] };
  byFake.set(report.fake, entry);
  const calls = report.conformance
    ? report.conformance.calls.map((call) => ({ endpoint: call.operation ?? `${call.method} ${call.path} (no document describes it)`, status: call.status }))
    : report.answered.map((answer) => ({ endpoint: `${answer.method} ${shapeOf(answer.path)}`, status: answer.status }));
  for (const call of calls) {
    const seen = entry.endpoints.get(call.endpoint) ?? { count: 0, statuses: new Set() };
    seen.count += 1;
    seen.statuses.add(call.status);
    entry.endpoints.set(call.endpoint, seen);
  }
  entry.violations.push(...(report.conformance?.violations ?? []));
}
rmSync(dir, { recursive: true, force: true });

let violations = 0;
const missing = [];
for (const [fake, entry] of [...byFake].sort(([a], [b]) => a.localeCompare(b))) {
  const provider = DOCUMENTED[fake];
  const checked = provider ? documentsPresent(provider) : false;
  if (provider && !checked) missing.push(provider);
  const against = provider
    ? checked
      ? `checked against test/fixtures/provider-specs/${provider}`
      : `NOT checked: ${provider}'s documents are not on this machine`
    : 'no published machine-readable document (docs/PROVIDERS.md)';
  console.log(`\n${fake.replace(/^Fake/, '')}: ${entry.endpoints.size} endpoints, ${entry.violations.length} violations (${against})`);
  for (const [endpoint, seen] of [...entry.endpoints].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${endpoint}  ×${seen.count}  [${[...seen.statuses].sort().join(', ')}]`);
  }
  for (const violation of entry.violations.slice(0, 10)) {
    console.log(`  VIOLATION (${violation.side}) ${violation.method} ${violation.path}: ${violation.errors.join('; ')}`);
  }
  violations += entry.violations.length;
}

console.log(`\nproviders: ${byFake.size} fakes, ${violations} violations${missing.length ? `; documents missing for ${missing.join(', ')}` : ''}`);
if (missing.length) {
  console.log('download them with: node scripts/build.js && node dist/scripts/refresh-provider-specs.js (needs the network)');
}
process.exit(jest.status !== 0 ? (jest.status ?? 1) : violations > 0 || missing.length ? 1 : 0);

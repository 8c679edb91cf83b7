import { build, ROOT, staleReason } from '../../scripts/build';
import { buildWeb } from '../../scripts/build-web';

export { ROOT };

/**
 * The tests run the service and CLI as processes, and the benchmark (test/benchmark), so they
 * compile with tsconfig.bench.json: tsconfig.build.json plus test/benchmark.
 */
const PROJECT = 'tsconfig.bench.json';

/** True when dist/ is older than the sources the tests run as processes (scripts/build.js decides). */
export function distIsStale(): boolean {
  return staleReason(PROJECT) !== undefined;
}

/**
 * Compiles dist/ when it is stale. Called once from the global setup, so workers never compile at
 * the same time.
 */
export function ensureBuilt(): void {
  build(PROJECT, { quiet: true });
  buildWeb();
}

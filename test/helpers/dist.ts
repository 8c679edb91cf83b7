import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

/** The compiled folders: the service and CLI (src), and the benchmark (test/benchmark), which tests run as processes. */
const COMPILED = ['src', 'test/benchmark'];

/** True when some src/**\/*.ts (or benchmark file) has no compiled file in dist/ or is newer than it. */
export function distIsStale(dirs = COMPILED.map((dir) => path.join(ROOT, dir))): boolean {
  return dirs.some((dir) => staleIn(dir));
}

function staleIn(dir: string): boolean {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (staleIn(full)) return true;
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.test.ts')) {
      const compiled = path.join(ROOT, 'dist', path.relative(ROOT, full)).replace(/\.ts$/, '.js');
      if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(full).mtimeMs) return true;
    }
  }
  return false;
}

/**
 * Compiles dist/ when it is older than src/: tests that run the real service or CLI as a child
 * process need it. Called once from the global setup, so workers never compile at the same time.
 */
export function ensureBuilt(): void {
  if (!distIsStale()) return;
  process.stderr.write('[test] compiling dist/ for the tests that run the service and CLI as processes\n');
  // tsconfig.bench.json is tsconfig.build.json plus test/benchmark.
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.bench.json'], { cwd: ROOT, stdio: 'pipe' });
}

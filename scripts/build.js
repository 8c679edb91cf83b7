#!/usr/bin/env node
// Compiles the TypeScript into dist/ with tsc. `npm run build` always compiles (`--always`);
// `npm start`, `npm run cli` and the other scripts that run dist/ compile only when dist/ is stale,
// because tsc takes 30 to 50 s on a small machine and most calls follow no change at all. The test
// setup uses the same check (test/helpers/dist.ts). Node built-ins only: it runs before dist/ exists.
//
//   node scripts/build.js [--always] [--project tsconfig.bench.json]
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const DEFAULT_PROJECT = 'tsconfig.build.json';
/**
 * Written when tsc finishes without errors, dated when that build began: tsc emits even when it
 * reports errors, so fresh outputs alone would let a failed build pass for a good one, and a source
 * saved while tsc ran is newer than the mark, so the next call compiles again.
 */
/**
 * A finished build of a project leaves its mark, one per project: the bench's project compiles
 * test/benchmark too, which a build of the service's alone, done later, must not pass for.
 */
const markOf = (project) => path.join('dist', `.build-finished.${path.basename(project, '.json')}`);

/** The folders a tsconfig compiles (its own `include`, or the one it extends). */
function includedDirs(root, project) {
  const config = JSON.parse(readFileSync(path.join(root, project), 'utf8'));
  if (config.include) return config.include;
  if (config.extends) return includedDirs(root, config.extends);
  return [];
}

/** The tsconfig files a project reads, and the lockfile (a new TypeScript or @types may change the outcome). */
function settingsFiles(root, project) {
  const files = ['package-lock.json', project];
  for (let config = project; ;) {
    const extended = JSON.parse(readFileSync(path.join(root, config), 'utf8')).extends;
    const parent = extended && path.normalize(extended);
    if (!parent || files.includes(parent)) return files;
    files.push(parent);
    config = parent;
  }
}

/**
 * Outputs in dist/ whose source is gone (a file removed or moved into a folder): left there, a
 * stale `dist/src/x.js` would shadow a new `dist/src/x/index.js` for `require('./x')`.
 */
function orphanedOutputs(project = DEFAULT_PROJECT, root = ROOT) {
  const orphans = [];
  const walk = (sourceDir, outDir) => {
    if (!existsSync(outDir)) return;
    for (const entry of readdirSync(outDir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        walk(path.join(sourceDir, entry.name), path.join(outDir, entry.name));
        continue;
      }
      const stem = entry.name.replace(/(\.d\.ts|\.js\.map|\.js)$/, '');
      if (stem === entry.name) continue;
      const source = path.join(sourceDir, stem);
      if (!existsSync(`${source}.ts`) && !existsSync(`${source}.js`)) orphans.push(path.relative(root, path.join(outDir, entry.name)));
    }
  };
  for (const dir of includedDirs(root, project)) walk(path.join(root, dir), path.join(root, 'dist', dir));
  return orphans;
}

/** Why `root`/dist must be compiled again for `project`, or undefined when it is up to date. */
function staleReason(project = DEFAULT_PROJECT, root = ROOT) {
  const mark = path.join(root, markOf(project));
  if (!existsSync(mark)) return `no finished build of ${project} in dist/`;
  const [orphan] = orphanedOutputs(project, root);
  if (orphan) return `${orphan} has no source any more`;
  const built = statSync(mark).mtimeMs;
  for (const file of settingsFiles(root, project)) {
    const full = path.join(root, file);
    if (existsSync(full) && statSync(full).mtimeMs > built) return `${file} changed`;
  }
  for (const dir of includedDirs(root, project)) {
    const reason = staleIn(root, path.join(root, dir), built);
    if (reason) return reason;
  }
  return undefined;
}

function staleIn(root, dir, built) {
  if (!existsSync(dir)) return undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      // A folder with a tsconfig of its own is another project (the web workspace, bundled by build-web.js).
      if (existsSync(path.join(full, 'tsconfig.json'))) continue;
      const reason = staleIn(root, full, built);
      if (reason) return reason;
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.test.ts')) {
      const relative = path.relative(root, full);
      if (statSync(full).mtimeMs > built) return `${relative} changed`;
      if (!existsSync(path.join(root, 'dist', relative.replace(/\.ts$/, '.js')))) return `${relative} is not compiled yet`;
    }
  }
  return undefined;
}

/**
 * Compiles `project` (always, or only when stale), saying so on stderr. Returns whether it compiled.
 * tsc's own output is inherited, or captured (`quiet`) and carried by the error when it fails.
 */
function build(project = DEFAULT_PROJECT, { always = false, quiet = false, root = ROOT } = {}) {
  const reason = always ? 'asked to' : staleReason(project, root);
  if (!reason) return false;
  process.stderr.write(`[build] compiling TypeScript (${project}; ${reason})…\n`);
  const began = new Date();
  const mark = path.join(root, markOf(project));
  rmSync(mark, { force: true });
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc', { paths: [ROOT] }), '-p', project], {
    cwd: root,
    stdio: quiet ? 'pipe' : 'inherit',
  });
  for (const orphan of orphanedOutputs(project, root)) rmSync(path.join(root, orphan), { force: true });
  writeFileSync(mark, `${project}\n`);
  utimesSync(mark, began, began);
  process.stderr.write(`[build] compiled in ${Math.round((Date.now() - began.getTime()) / 1000)} s\n`);
  return true;
}

module.exports = { ROOT, staleReason, orphanedOutputs, build };

if (require.main === module) {
  const args = process.argv.slice(2);
  const projectAt = args.indexOf('--project');
  try {
    build(projectAt >= 0 ? args[projectAt + 1] : DEFAULT_PROJECT, { always: args.includes('--always') });
    require('./build-web').buildWeb({ always: args.includes('--always') }); // the web workspace's bundle (Preact, esbuild)
  } catch {
    process.exit(1); // tsc or esbuild has printed its errors
  }
}

#!/usr/bin/env node
// Bundles the web workspace (src/web/workspace, Preact in TSX) into dist/web/ with esbuild: one
// script and one stylesheet whose names carry a hash of their content, so the server can let
// browsers keep them for a year and a new build is never mixed with an old cached file. The names
// are written to dist/web/manifest.json, which the server reads. Like scripts/build.js it bundles
// only when a source (or the lockfile) is newer than the last finished bundle; esbuild takes well
// under a second, but most calls follow no change at all. Called by scripts/build.js (so `npm start`
// and the other scripts run it) and by the tests' global setup (test/helpers/dist.ts).
//
//   node scripts/build-web.js [--always]
'use strict';
const { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const SOURCE = path.join('src', 'web', 'workspace');
const ENTRY = path.join(SOURCE, 'main.tsx');
const OUT = path.join('dist', 'web');
const MANIFEST = path.join(OUT, 'manifest.json');

/** The newest modification time under `dir`, in ms. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

/** Why the bundle must be made again, or undefined when it is up to date (or there is nothing to bundle). */
function webStaleReason(root = ROOT) {
  if (!existsSync(path.join(root, ENTRY))) return undefined;
  const manifest = path.join(root, MANIFEST);
  if (!existsSync(manifest)) return 'no finished bundle in dist/web/';
  const built = statSync(manifest).mtimeMs;
  if (newest(path.join(root, SOURCE)) > built) return `${SOURCE} changed`;
  // Files the bundle takes from outside the workspace folder (the integrations' providers and
  // credential fields, shared with the service), as the last build listed them.
  const { inputs = [] } = JSON.parse(readFileSync(manifest, 'utf8'));
  for (const input of inputs) {
    const file = path.join(root, input);
    if (!existsSync(file) || statSync(file).mtimeMs > built) return `${input} changed`;
  }
  const lock = path.join(root, 'package-lock.json');
  if (existsSync(lock) && statSync(lock).mtimeMs > built) return 'package-lock.json changed';
  return undefined;
}

/** Bundles (always, or only when stale); returns whether it did. esbuild's errors are thrown. */
function buildWeb({ always = false, root = ROOT } = {}) {
  if (!existsSync(path.join(root, ENTRY))) return false;
  const reason = always ? 'asked to' : webStaleReason(root);
  if (!reason) return false;
  const began = new Date();
  const out = path.join(root, OUT);
  // Old hashed files go: the manifest names the only ones served.
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const esbuild = require(require.resolve('esbuild', { paths: [ROOT] }));
  const result = esbuild.buildSync({
    absWorkingDir: root,
    entryPoints: { workspace: ENTRY },
    bundle: true,
    minify: true,
    sourcemap: 'linked',
    format: 'iife',
    target: ['es2020'],
    outdir: OUT,
    entryNames: '[name]-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    logLevel: 'error',
    legalComments: 'none',
  });
  const files = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const inputs = Object.keys(result.metafile.inputs).filter((file) => !file.startsWith(SOURCE) && !file.split(/[\\/]/).includes('node_modules'));
  const manifest = { script: files.find((f) => f.endsWith('.js')), style: files.find((f) => f.endsWith('.css')), inputs };
  // Written last, dated when bundling began: a source saved meanwhile makes the next call bundle again.
  writeFileSync(path.join(root, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  utimesSync(path.join(root, MANIFEST), began, began);
  process.stderr.write(`[build] bundled the web workspace (${reason}) in ${Date.now() - began.getTime()} ms\n`);
  return true;
}

module.exports = { buildWeb, webStaleReason, MANIFEST };

if (require.main === module) {
  try {
    buildWeb({ always: process.argv.includes('--always') });
  } catch {
    process.exit(1); // esbuild has printed its errors
  }
}

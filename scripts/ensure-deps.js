#!/usr/bin/env node
// Installs dependencies when node_modules is missing or older than package-lock.json, so that
// `npm start` and `npm test` are each a single command on a fresh clone. Uses only Node built-ins
// because it runs before anything is installed. `npm ci` installs exactly what package-lock.json
// says (or fails when it is out of step with package.json), so every clone gets the same tree.
'use strict';
const { createHash } = require('node:crypto');
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { execSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const lock = path.join(root, 'package-lock.json');
const stamp = path.join(root, 'node_modules', '.deps-stamp');
const wanted = createHash('sha256')
  .update(readFileSync(lock))
  .update(readFileSync(path.join(root, 'package.json')))
  .digest('hex');

if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) process.exit(0);

console.error('[setup] installing dependencies (npm ci); this happens once per lockfile change…');
execSync('npm ci --no-audit --no-fund', { cwd: root, stdio: 'inherit' });
writeFileSync(stamp, wanted);
console.error('[setup] dependencies installed');

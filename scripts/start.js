#!/usr/bin/env node
// `npm start`: installs dependencies when the lockfile changed, compiles when sources changed, then
// runs the service (dist/src/main.js), each step as a child process of this one.
//
// Why a launcher run with `exec` (package.json): npm passes SIGTERM and SIGINT on to the shell it
// runs a script in, but that shell (dash on Debian) does not pass them on to its child and exits,
// leaving the service and its embedded PostgreSQL running as orphans. `exec` replaces the shell
// with this process, which hands each signal to the step under way and then exits as that step did:
// after the service's ordered shutdown (HTTP, workers, pool, embedded PostgreSQL), with its code.
// Node cannot exec itself into the service, and a parent that forwards also covers the install and
// build steps, so a signal during a first start's install or build stops it too; and when npm is
// ended by a signal it does not pass on, this process sees it was re-parented and stops the service.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
/** The steps, in order; the last is the service. */
const STEPS = [['scripts/ensure-deps.js'], ['scripts/build.js'], ['dist/src/main.js']];

let child;
let childGroup = false;
let received;

/** Passes `signal` to the step under way, and remembers it so that no further step starts. */
function stop(signal) {
  received = signal;
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  try {
    // npm ci and tsc run synchronously under their step, so the whole step's group is signalled;
    // the service alone, so that it stops its embedded PostgreSQL itself, last.
    process.kill(childGroup ? -child.pid : child.pid, signal);
  } catch {
    // already gone; its exit is on its way
  }
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => stop(signal));

// npm passes on only SIGTERM and SIGINT; anything else that ends it (SIGHUP to npm alone, SIGKILL)
// leaves this process re-parented, which is then the sign to stop the service as SIGTERM would.
const parent = process.ppid;
const orphaned = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(orphaned);
  stop('SIGTERM');
}, 500);
orphaned.unref();

/**
 * Runs one step with this process's terminal and environment; resolves with how it ended. The
 * install and build steps get a process group of their own (see stop()); the service
 * stays in ours, so that whoever watches npm's group sees it and its PostgreSQL.
 */
function run(args, ownGroup) {
  return new Promise((resolve) => {
    childGroup = ownGroup;
    child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit', detached: ownGroup });
    child.on('error', (error) => resolve({ code: 1, signal: null, error }));
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** Ends as a step did: its exit code, or killed by its signal (so npm reports it the same way). */
function endAs({ code, signal }) {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
}

async function main() {
  for (const [index, step] of STEPS.entries()) {
    const service = index === STEPS.length - 1;
    const outcome = await run(step, !service);
    if (outcome.error) console.error(`[start] could not run node ${step.join(' ')}: ${outcome.error.message}`);
    if (outcome.code !== 0 || outcome.signal || service) return endAs(outcome);
    // Stopped between two steps, or during one that finished anyway: do not start the next.
    if (received) return endAs({ code: null, signal: received });
  }
}

void main();

import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { AllocProfileAnswer, AllocProfileRequest } from './alloc-profile';
import type { LoopDelay, LoopDelayRequest } from './loop-delay';

export const ROOT = path.resolve(__dirname, '../../..');
/** Loaded into every server started here (see loop-delay.ts). */
const LOOP_DELAY_PRELOAD = path.join(__dirname, 'loop-delay.js');
/** Loaded, as `node -r`, into the servers whose allocations `--alloc-profile` measures (alloc-profile.ts). */
export const ALLOC_PROFILE_PRELOAD = path.join(__dirname, 'alloc-profile.js');

export interface Server {
  name: string;
  url: string;
  process: ChildProcess;
  /** Resident memory now and at its peak (VmRSS, VmHWM from /proc), in MiB. */
  memory(): { rssMiB: number; peakMiB: number };
  /**
   * CPU time the process has used so far (user + system, from /proc), in µs; undefined where
   * /proc is not readable. The bench divides a run's share by its 2xx answers (load.ts, drive).
   */
  cpuMicros(): number | undefined;
  /** start: the event-loop delay sampled afresh from now on; stop: its figures since start, and no more sampling. */
  loopDelay(action: 'start' | 'stop'): Promise<LoopDelay>;
  /**
   * Starts or stops (writing it to `file`) an allocation profile; resolves with the bytes it holds.
   * Only servers started with the alloc-profile preload answer (`npm run bench -- --alloc-profile`).
   */
  allocProfile(action: 'start' | 'stop', file?: string): Promise<number>;
  /** Stops every thread of the process where it is (SIGSTOP), until resume (SIGCONT): see runs.ts, alone. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Clock ticks per second, the unit of /proc/<pid>/stat's CPU times (100 on Linux unless configured otherwise). */
let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** A process' name and utime + stime (fields 14 and 15, counted after the parenthesised name) from its /proc/<pid>/stat, in µs. */
function parseStat(stat: string): { name: string; micros: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), micros: ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks() };
}

/** utime + stime of a process, in µs; undefined once it has gone. */
function readCpuMicros(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).micros;
  } catch {
    return undefined;
  }
}

/**
 * CPU time the whole machine has used so far (every process and the kernel: user, nice, system,
 * irq, softirq and steal of /proc/stat's first line; guest time is already in user), in µs;
 * undefined where /proc is not readable. What a request costs everything it touches (PostgreSQL,
 * Redis, the load generator), not only the server.
 */
export function machineCpuMicros(): number | undefined {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    const busy = [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + Number(ticks[i] ?? 0), 0);
    return (busy * 1e6) / clockTicks();
  } catch {
    return undefined;
  }
}

/** Where the machine's CPU time went between two readings (cpuReading), in µs. */
export interface CpuShares {
  machine: number;
  /** Every process named postgres: the bench's embedded server (postmaster, backends, WAL writer, autovacuum). */
  postgres: number;
  /** Every process named redis-server. */
  redis: number;
  /** This process: the load generator (autocannon runs in it). */
  load: number;
}

/** The CPU times read at one moment: the machine's, this process', and each PostgreSQL and Redis process' by pid. */
export interface CpuReading {
  machine: number;
  load: number;
  processes: Map<number, { name: string; micros: number }>;
}

const WATCHED = new Set(['postgres', 'redis-server']);

/** A CpuReading from /proc; undefined where /proc is not readable. */
export function cpuReading(): CpuReading | undefined {
  const machine = machineCpuMicros();
  if (machine === undefined) return undefined;
  const processes = new Map<number, { name: string; micros: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited since the listing
    }
    const parsed = parseStat(stat);
    if (WATCHED.has(parsed.name)) processes.set(Number(entry), parsed);
  }
  const own = process.cpuUsage();
  return { machine, load: own.user + own.system, processes };
}

/**
 * The CPU time spent between two readings. Per process, not as two sums: a PostgreSQL backend
 * that exits in between (a pool closing an idle connection) would take its whole lifetime's time
 * out of the later sum. A process that started in between counts from zero; one that exited
 * counts nothing (what it spent in the window is lost, little for an idle connection closing).
 */
export function cpuSpent(before: CpuReading, after: CpuReading): CpuShares {
  const spent: CpuShares = { machine: after.machine - before.machine, postgres: 0, redis: 0, load: after.load - before.load };
  for (const [pid, now] of after.processes) {
    const then = before.processes.get(pid);
    const delta = now.micros - (then?.name === now.name ? then.micros : 0);
    if (now.name === 'postgres') spent.postgres += delta;
    else spent.redis += delta;
  }
  return spent;
}

function readMemory(pid: number | undefined): { rssMiB: number; peakMiB: number } {
  if (!pid) return { rssMiB: 0, peakMiB: 0 };
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
  } catch {
    return { rssMiB: 0, peakMiB: 0 };
  }
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url} exited with ${child.exitCode} before it was ready:\n${output()}`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} was not ready within 60 s:\n${output()}`);
}

/** Sends `message` over the IPC channel and resolves with the first answer of the same type (the preloads answer). */
function ask<T, M extends { type: string } = { type: string }>(child: ChildProcess, message: M, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      clearTimeout(timer);
    };
    const onMessage = (answer: { type?: string }) => {
      if (answer?.type !== message.type) return;
      done();
      resolve(answer as T);
    };
    const onExit = () => {
      done();
      reject(new Error(`the server exited before it told its ${what}`));
    };
    // A guard, not a wait: the answer comes within a loop turn (or a profile's writing) unless the preload is missing.
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the server did not tell its ${what} within 30 s`));
    }, 30_000);
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send(message);
  });
}

/**
 * Starts `node <script>` with `env` on a free loopback port and waits for GET /readyz. The
 * event-loop delay preload comes first, over an IPC channel the server's own code never uses.
 */
export async function startServer(name: string, script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-r', LOOP_DELAY_PRELOAD, ...nodeArgs, path.join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  let stopping = false;
  // A server that dies in the middle of a run says why: the bench's next request only sees "fetch failed".
  child.once('exit', (code, signal) => {
    if (!stopping) process.stderr.write(`[bench] ${name} (${url}) exited with ${signal ?? code}; its last output:\n${output}\n`);
  });
  await waitReady(url, child, () => output);
  return {
    name,
    url,
    process: child,
    memory: () => readMemory(child.pid),
    cpuMicros: () => readCpuMicros(child.pid),
    loopDelay: (action) =>
      ask<LoopDelay, LoopDelayRequest>(child, { type: 'loop-delay', action }, 'event-loop delay').then(({ p99Ms, maxMs, meanMs }) => ({
        p99Ms,
        maxMs,
        meanMs,
      })),
    allocProfile: (action, file) =>
      ask<AllocProfileAnswer, AllocProfileRequest>(child, { type: 'alloc-profile', action, file }, 'allocation profile').then(({ bytes }) => bytes),
    pause() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGSTOP');
    },
    resume() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGCONT');
    },
    async stop() {
      stopping = true;
      if (child.exitCode !== null) return;
      // A paused server would not act on SIGTERM until resumed.
      child.kill('SIGCONT');
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A one-off request of the bench (its seed, a copy's first write), sent again once when the
 * connection it went out on was closed under it: Node's fetch reuses a kept-alive connection, and
 * a server that closes an idle one as the request leaves answers `fetch failed` (twice in CI, after
 * the seed's minute of SQL). A POST carries an Idempotency-Key, so a repeat never writes twice.
 */
export async function benchFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.method === 'POST' && !headers.has('idempotency-key')) headers.set('idempotency-key', `bench-${randomUUID()}`);
  try {
    return await fetch(url, { ...init, headers });
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (!(error instanceof TypeError) || !['UND_ERR_SOCKET', 'ECONNRESET', 'UND_ERR_CLOSED'].includes(code ?? '')) throw error;
    return fetch(url, { ...init, headers });
  }
}

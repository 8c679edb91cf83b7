import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT } from '../helpers/dist';
import { eventually } from '../helpers/receiver';
import { freePort, temporaryDataDir } from '../helpers/service-process';

/** Whether any process of the group `groupId` remains (signal 0 only checks). */
function groupAlive(groupId: number): boolean {
  try {
    process.kill(-groupId, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * The README's first command as a newcomer runs it: `npm start` with no DATABASE_URL, on the
 * embedded PostgreSQL, then stopped by SIGTERM to the npm process alone (what `kill <pid>` or a
 * process supervisor does). npm hands the signal to the shell it runs the script in, so the
 * service only stops in order, PostgreSQL last, if the start script passes it on.
 */
describe('npm start, stopped through npm', () => {
  const dataDir = temporaryDataDir('npm-start');
  let npm: ChildProcess | undefined;
  let output = '';

  afterAll(() => {
    if (npm?.pid && groupAlive(npm.pid)) process.kill(-npm.pid, 'SIGKILL');
    dataDir.remove();
  });

  it('says what start-up is doing, then SIGTERM to npm stops the service and PostgreSQL and leaves no process', async () => {
    chmodSync(dataDir.dir, 0o755); // PostgreSQL runs as its own user when the tests run as root
    const port = await freePort();
    // A group of npm's own, so that the test can see whether any process of `npm start` remains.
    npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATA_DIR: dataDir.dir, PORT: String(port), LOG_LEVEL: 'info' },
    });
    const exited = new Promise<number | null>((resolve) => npm!.on('exit', (code) => resolve(code)));
    npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const groupId = npm.pid!;

    await eventually(
      async () => {
        if (npm!.exitCode !== null) throw new Error(`npm start exited during start-up:\n${output.slice(-2000)}`);
        const response = await fetch(`http://127.0.0.1:${port}/readyz`);
        if (!response.ok) throw new Error(`/readyz answered ${response.status}`);
      },
      150_000,
      250,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n--- output\n${output.slice(-2000)}`);
    });

    // A first start on an empty data folder says what its silent minute is spent on, in order.
    const steps = ['initialising the embedded PostgreSQL', 'starting the embedded PostgreSQL', 'embedded PostgreSQL listening', 'applying'];
    const at = steps.map((step) => output.indexOf(`[start] ${step}`));
    expect(at.every((index) => index >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(output).toMatch(/\[start\] applying \d+ database migrations/);

    const postmasterPid = path.join(dataDir.dir, 'pg', 'postmaster.pid');
    const databasePort = Number(readFileSync(postmasterPid, 'utf8').split('\n')[3]);
    expect(await listening(databasePort)).toBe(true);

    process.kill(groupId, 'SIGTERM');

    await eventually(
      async () => {
        if (groupAlive(groupId)) throw new Error('a process of npm start is still running');
        if (await listening(databasePort)) throw new Error(`the embedded PostgreSQL still listens on ${databasePort}`);
      },
      30_000,
      100,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n--- output\n${output.slice(-2000)}`);
    });
    expect(await exited).toBe(0);
    expect(output).toMatch(/"msg":"shutting down: no new connections/);
    expect(output).toMatch(/"msg":"stopped"/);
    expect(existsSync(postmasterPid)).toBe(false);
  });
});

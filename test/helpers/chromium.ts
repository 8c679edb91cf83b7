import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

/** Where Debian's Chromium package puts its launcher. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Installing Chromium on a fresh machine downloads a few hundred megabytes: give it time. */
export const CHROMIUM_INSTALL_TIMEOUT_MS = 15 * 60_000;

/** Flags for headless Chromium in containers and CI (no sandbox namespaces, no GPU). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The path of a Chromium that playwright-core can drive: Debian's package, installed with apt-get
 * when it is missing (as `.ci/run` must do on a fresh machine). Call it from a `beforeAll` with a
 * timeout of at least CHROMIUM_INSTALL_TIMEOUT_MS.
 */
export function chromiumPath(): string {
  if (executable(CHROMIUM_PATH)) return CHROMIUM_PATH;
  const sudo = typeof process.getuid === 'function' && process.getuid() !== 0 ? ['sudo', '-n'] : [];
  const command = `${sudo.join(' ')} apt-get update && ${sudo.join(' ')} apt-get install -y --no-install-recommends chromium`.trim();
  console.log(
    `[chromium] ${CHROMIUM_PATH} is missing; installing Debian's chromium package: DEBIAN_FRONTEND=noninteractive ${command} (this can take several minutes)`,
  );
  const started = Date.now();
  try {
    execFileSync('sh', ['-c', command], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: CHROMIUM_INSTALL_TIMEOUT_MS - 30_000,
    });
  } catch (error) {
    throw new Error(`[chromium] could not install chromium with "${command}": ${(error as Error).message}`);
  }
  if (!executable(CHROMIUM_PATH)) throw new Error(`[chromium] apt-get finished but ${CHROMIUM_PATH} is still missing`);
  console.log(`[chromium] installed ${CHROMIUM_PATH} in ${Math.round((Date.now() - started) / 1000)} s`);
  return CHROMIUM_PATH;
}

import { CONDITION_TIMEOUT_MS } from './timeouts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it stops throwing (returns its value) or the time is up (throws its last error). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = CONDITION_TIMEOUT_MS, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await pause(intervalMs);
    }
  }
}

/** Polls `probe` until it answers something truthy (returned), or fails naming `what` when the time is up. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = CONDITION_TIMEOUT_MS,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(intervalMs);
  }
}

/**
 * Waits until each worker has ended two full passes counted from this call. The second began after
 * the call (a worker's passes never overlap), so it has prepared and claimed whatever was there to
 * find by then: a test can then assert what the worker did not do, instead of sleeping.
 */
export async function passesOf(...workers: Array<{ readonly passes: number }>): Promise<void> {
  const from = workers.map((worker) => worker.passes);
  await waitFor('two full passes of each worker', () => workers.every((worker, i) => worker.passes >= from[i] + 2));
}

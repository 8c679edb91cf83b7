/**
 * Preloaded into the service and the baseline by `npm run bench -- --alloc-profile` (processes.ts):
 * V8's sampling heap profiler, counting objects the garbage collector has since freed too, so a
 * profile holds every byte a run allocated (sampled every 4 KiB on average), not only what survived.
 * Bytes allocated per request hardly move with the machine's load: the same build gave 112,606 and
 * 112,464 bytes per single read in two runs (docs/benchmark.md, eleventh pass), where its CPU time per
 * read moved by 10 % and more. The bench starts a profile before a run and stops it after, over the
 * IPC channel (as loop-delay.ts answers), and divides the bytes by the run's 2xx answers.
 * alloc-summary.ts says where they were allocated.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { isMainThread } from 'node:worker_threads';

export interface AllocProfileRequest {
  type: 'alloc-profile';
  /** `start` a profile; `stop` it and write it to `file`. */
  action: 'start' | 'stop';
  file?: string;
}

export interface AllocProfileAnswer {
  type: 'alloc-profile';
  /** The bytes the stopped profile holds (0 on start). */
  bytes: number;
}

/** What HeapProfiler.stopSampling hands back (the .heapprofile format Chrome DevTools opens). */
export interface HeapProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapProfileNode[];
}

/** The bytes a profile's tree holds. */
export function allocatedBytes(node: HeapProfileNode): number {
  return node.children.reduce((sum, child) => sum + allocatedBytes(child), node.selfSize);
}

const SAMPLING_INTERVAL_BYTES = 4_096;

if (isMainThread && process.send) {
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result as T))));
  const answer = (bytes: number) => process.send!({ type: 'alloc-profile', bytes } satisfies AllocProfileAnswer);
  process.on('message', (message: Partial<AllocProfileRequest>) => {
    if (message?.type !== 'alloc-profile') return;
    const done =
      message.action === 'start'
        ? post('HeapProfiler.enable')
            .then(() =>
              post('HeapProfiler.startSampling', {
                samplingInterval: SAMPLING_INTERVAL_BYTES,
                includeObjectsCollectedByMajorGC: true,
                includeObjectsCollectedByMinorGC: true,
              }),
            )
            .then(() => answer(0))
        : post<{ profile: { head: HeapProfileNode } }>('HeapProfiler.stopSampling').then(({ profile }) => {
            if (message.file) writeFileSync(message.file, JSON.stringify(profile));
            answer(allocatedBytes(profile.head));
          });
    done.catch((error: unknown) => console.error(`alloc-profile: ${error instanceof Error ? error.message : String(error)}`));
  });
  // The channel must not keep a server alive that is shutting down.
  process.channel?.unref();
}

/**
 * Preloaded with `node -r` into every server the benchmark starts (processes.ts), so the service's
 * event-loop delay is measured without a line of product code, and the baseline's the same way.
 * While a run is measured it samples the main thread's loop every 10 ms (perf_hooks.monitorEventLoopDelay):
 * the bench's { type: 'loop-delay', action: 'start' } message on the IPC channel starts afresh, and
 * { action: 'stop' } answers the figures since and stops sampling. Between runs nothing samples: a
 * sampler left on wakes every idle server a hundred times a second, and the run's sixteen servers
 * then kept the machine busy while others were measured (docs/benchmark.md, twenty-eighth pass).
 * Worker threads (PDF renders) load preloads too; their loops are not the one requests wait on.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

/** Milliseconds by which the loop was late, beyond the sampling interval. */
export interface LoopDelay {
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

export interface LoopDelayRequest {
  type: 'loop-delay';
  /** start: sample from now on, afresh; stop: answer the figures since start, and stop sampling. */
  action: 'start' | 'stop';
}

const RESOLUTION_MS = 10;

if (isMainThread && process.send) {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  // The histogram holds whole intervals between samples (10 ms when idle); the delay is what exceeds it.
  const late = (ns: number) => (histogram.count ? Math.max(0, ns / 1e6 - RESOLUTION_MS) : 0);
  process.on('message', (message: Partial<LoopDelayRequest>) => {
    if (message?.type !== 'loop-delay') return;
    if (message.action === 'start') {
      histogram.reset();
      histogram.enable();
    } else {
      histogram.disable();
    }
    const delay: LoopDelay = { p99Ms: late(histogram.percentile(99)), maxMs: late(histogram.max), meanMs: late(histogram.mean) };
    process.send!({ type: 'loop-delay', ...delay });
  });
  // The channel must not keep a server alive that is shutting down.
  process.channel?.unref();
}

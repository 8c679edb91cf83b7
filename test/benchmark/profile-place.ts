/**
 * What the profile summaries share (profile-summary.ts, alloc-summary.ts).
 *
 * Where a profile's frame comes from: a
 * package name (`@scope/name` or `name`), `app:<file>` for our own compiled code, `node` for Node's
 * own modules, and '' for V8's frames, which have no address.
 */
export function placeOf(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.includes('/dist/')) return `app:${url.slice(url.indexOf('/dist/') + 6)}`;
  if (url.startsWith('node:')) return 'node';
  return url;
}

/** A gap between two samples longer than this many sampling intervals is time the process did not run. */
const GAP_INTERVALS = 10;

/**
 * The time each sample of a CPU profile stands for, in µs: its distance to the next sample, as
 * Chrome DevTools counts it, except across a gap. A server the bench pauses (SIGSTOP while another
 * is measured, runs.ts `alone`) stops its sampler too, and the first sample after the pause comes
 * seconds after the one before it: counted as it was, those seconds went to whichever function
 * the last sample before the pause caught (docs/benchmark.md, thirtieth pass). A distance over
 * GAP_INTERVALS times the sampling interval (the median distance) counts as one interval, and the
 * time left out is returned with the samples' times.
 */
export function sampleTimes(timeDeltas: readonly number[]): { us: number[]; gapsUs: number; intervalUs: number } {
  const sorted = timeDeltas.slice(1).sort((a, b) => a - b);
  const intervalUs = sorted.length ? sorted[Math.floor(sorted.length / 2)] : 0;
  let gapsUs = 0;
  const us = timeDeltas.map((_, i) => {
    const next = timeDeltas[i + 1] ?? 0;
    if (intervalUs > 0 && next > GAP_INTERVALS * intervalUs) {
      gapsUs += next - intervalUs;
      return intervalUs;
    }
    return next;
  });
  return { us, gapsUs, intervalUs };
}

/**
 * Where the time went in a `node --cpu-prof` profile (from `npm run bench -- --profile`): self and
 * total time per function and per package, as text. The .cpuprofile itself opens as a flame
 * graph in Chrome DevTools (Performance → Load profile) or https://www.speedscope.app.
 *
 *   node dist/test/benchmark/profile-summary.js .data/bench/profiles/CPU.….cpuprofile [--top 30] [--focus name]
 */
import { readFileSync } from 'node:fs';
import { placeOf, sampleTimes } from './profile-place';
import { parseCommandLine } from './runs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const USAGE = `usage: node dist/test/benchmark/profile-summary.js <file.cpuprofile> [--top N] [--focus functionName]

  <file.cpuprofile>  a profile from npm run bench -- --profile (in .data/bench/profiles)
  --top N            rows per table (default 30)
  --focus NAME       also the nearest callers (outside Node's own modules) of the functions named NAME
  --help             this text
`;
const { values, positionals } = parseCommandLine(USAGE, {
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, focus: { type: 'string' }, help: { type: 'boolean', default: false } },
});
if (!positionals[0]) {
  process.stderr.write(`profile-summary: name a .cpuprofile file\n\n${USAGE}`);
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0], 'utf8')) as Profile;
const top = Number(values.top);

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const place = (node: ProfileNode) => placeOf(node.callFrame.url) || `(${node.callFrame.functionName || 'program'})`;

const label = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'} ${place(node).replace(/^app:/, '')}:${node.callFrame.lineNumber + 1}`;

// Time per sample, in microseconds: the delta to the next sample, the pauses left out (sampleTimes).
const times = sampleTimes(profile.timeDeltas);
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + times.us[i]));
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
const idle = profile.nodes.filter((n) => ['(idle)', '(program)', '(garbage collector)'].includes(n.callFrame.functionName));

const selfBy = new Map<string, number>();
const totalBy = new Map<string, number>();
const packageSelf = new Map<string, number>();
const packageTotal = new Map<string, number>();
const focus = values.focus;
const focusCallers = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id)!;
  selfBy.set(label(node), (selfBy.get(label(node)) ?? 0) + us);
  packageSelf.set(place(node), (packageSelf.get(place(node)) ?? 0) + us);
  // Inclusive time: each frame on the stack once, however often it recurses.
  const seen = new Set<string>();
  const seenPackages = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at)!;
    const name = label(frame);
    if (!seen.has(name)) totalBy.set(name, (totalBy.get(name) ?? 0) + us);
    seen.add(name);
    const pkg = place(frame);
    if (!seenPackages.has(pkg)) packageTotal.set(pkg, (packageTotal.get(pkg) ?? 0) + us);
    seenPackages.add(pkg);
    if (focus && frame.callFrame.functionName === focus) {
      // The nearest caller outside Node's own modules: which library or app code asked for it.
      let caller = parent.get(at);
      while (caller !== undefined && ['node', '(runMicrotasks)'].includes(place(byId.get(caller)!))) caller = parent.get(caller);
      const name = caller !== undefined ? label(byId.get(caller)!) : '(root)';
      focusCallers.set(name, (focusCallers.get(name) ?? 0) + us);
    }
  }
}

const pct = (us: number) => `${((us / totalUs) * 100).toFixed(1).padStart(5)} %`;
const show = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)}  ${name}`);
};
const idleUs = idle.reduce((sum, node) => sum + (selfUs.get(node.id) ?? 0), 0);
console.log(
  `${(totalUs / 1e6).toFixed(1)} s sampled, ${pct(idleUs)} idle/program/GC` +
    (times.gapsUs ? `; ${(times.gapsUs / 1e6).toFixed(1)} s when the process did not run (paused) left out` : ''),
);
show('Self time by package', packageSelf);
show('Total time by package (inclusive)', packageTotal);
show('Self time by function', selfBy);
show('Total time by function (inclusive)', totalBy);
if (focus) show(`Callers of ${focus}`, focusCallers);

/**
 * Where the bytes went in an allocation profile from `npm run bench -- --alloc-profile`
 * (alloc-profile.ts): bytes allocated by package and by function, and, for what V8 and Node
 * allocate themselves (promises, maps, buffers, headers), the nearest caller in a package or in
 * the app. With `--requests N` (the answers the bench logged with the file), per request. The
 * .heapprofile itself opens in Chrome DevTools (Memory → Load).
 *
 *   node dist/test/benchmark/alloc-summary.js .data/bench/profiles/ALLOC.read.service.heapprofile [--requests N] [--top 30]
 */
import { readFileSync } from 'node:fs';
import { allocatedBytes, HeapProfileNode } from './alloc-profile';
import { placeOf } from './profile-place';
import { parseCommandLine } from './runs';

const USAGE = `usage: node dist/test/benchmark/alloc-summary.js <file.heapprofile> [--requests N] [--top N]

  <file.heapprofile>  a profile from npm run bench -- --alloc-profile (in .data/bench/profiles)
  --requests N        the answers the bench logged with the file: bytes are then shown per request
  --top N             rows per table (default 30)
  --help              this text
`;
const { values, positionals } = parseCommandLine(USAGE, {
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, requests: { type: 'string' }, help: { type: 'boolean', default: false } },
});
if (!positionals[0]) {
  process.stderr.write(`alloc-summary: name a .heapprofile file\n\n${USAGE}`);
  process.exit(2);
}
const { head } = JSON.parse(readFileSync(positionals[0], 'utf8')) as { head: HeapProfileNode };
const top = Number(values.top);
const requests = values.requests ? Number(values.requests) : undefined;

/** A package, `app:<file>`, `node`, or '' for V8's (native) frames (profile-place.ts). */
const place = (node: HeapProfileNode) => placeOf(node.callFrame.url);
const label = (node: HeapProfileNode) =>
  `${node.callFrame.functionName || '(anonymous)'} ${place(node).replace(/^app:/, '') || '(native)'}:${node.callFrame.lineNumber + 1}`;

const total = allocatedBytes(head);
const byPackage = new Map<string, number>();
const byFunction = new Map<string, number>();
const nativeByCaller = new Map<string, number>();
const add = (map: Map<string, number>, key: string, bytes: number) => map.set(key, (map.get(key) ?? 0) + bytes);

(function walk(node: HeapProfileNode, caller: string) {
  const where = place(node);
  const runtime = where === '' || where === 'node';
  if (node.selfSize) {
    add(byPackage, where || '(native)', node.selfSize);
    add(byFunction, label(node), node.selfSize);
    if (runtime) add(nativeByCaller, `${caller} → ${node.callFrame.functionName || '(anonymous)'}`, node.selfSize);
  }
  // Node's and V8's frames keep the caller that asked for them.
  for (const child of node.children) walk(child, runtime ? caller : label(node));
})(head, '(root)');

const amount = (bytes: number) =>
  requests
    ? `${Math.round(bytes / requests)
        .toLocaleString('en-US')
        .padStart(8)} B/req`
    : `${(bytes / 2 ** 20).toFixed(1).padStart(8)} MiB`;
const share = (bytes: number) => `${((bytes / total) * 100).toFixed(1).padStart(5)} %`;
const show = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${amount(bytes)} ${share(bytes)}  ${name}`);
};
console.log(`${amount(total).trim()} allocated${requests ? ` (${(total / 2 ** 20).toFixed(1)} MiB over ${requests} requests)` : ''}`);
show('By package (self)', byPackage);
show('By function (self)', byFunction);
show("V8's and Node's own allocations, by the nearest caller in a package or the app", nativeByCaller);

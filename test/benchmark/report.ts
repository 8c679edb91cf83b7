import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadResult } from './load';
import { ROOT } from './processes';
import type { SyncPushFigures } from './sync-push';

export interface Figures {
  date: string;
  machine: string;
  settings: Record<string, number>;
  titles: Record<string, string>;
  /** unlimited: the service with RATE_LIMITS=off; unlogged: with REQUEST_LOGS=off (single reads and page 1 only). */
  summary: Record<string, { service: LoadResult; baseline: LoadResult; unlimited?: LoadResult; unlogged?: LoadResult }>;
  fixed: { rate: number; service: LoadResult; baseline: LoadResult };
  memory: {
    service: { rssMiB: number; peakMiB: number };
    baseline: { rssMiB: number; peakMiB: number };
    soak: Array<{ atS: number; rssMiB: number }>;
  };
  /** The sync row (sync-push.ts); absent when --only leaves it out, and in figures older than it. */
  sync?: SyncPushFigures;
  durationS: number;
}

/** The issue's targets, as ratios measured in one run (docs/benchmark.md). */
const THROUGHPUT_TARGETS: Record<string, number> = { read: 0.5, page1: 0.4, deep: 0.4, create: 0.5 };

interface Check {
  what: string;
  value: string;
  target: string;
  met: boolean;
}

const fixed1 = (n: number) => n.toFixed(1);
const ms = (n: number) => `${n.toFixed(1)} ms`;

export function checks(f: Figures): Check[] {
  const out: Check[] = [];
  for (const [name, target] of Object.entries(THROUGHPUT_TARGETS)) {
    const s = f.summary[name];
    if (!s) continue;
    const ratio = s.service.rps / s.baseline.rps;
    out.push({ what: `${f.titles[name]}: throughput vs baseline`, value: `${ratio.toFixed(2)}×`, target: `≥ ${target}×`, met: ratio >= target });
  }
  if (f.summary.deep && f.summary.page1) {
    const deepVsFirst = f.summary.deep.service.p50 / f.summary.page1.service.p50;
    out.push({ what: 'Page near the end vs page 1: p50 latency', value: `${deepVsFirst.toFixed(2)}×`, target: '≤ 2×', met: deepVsFirst <= 2 });
  }
  for (const name of ['read', 'page1']) {
    const s = f.summary[name];
    if (!s?.unlimited) continue;
    const cost = 1 - s.service.rps / s.unlimited.rps;
    out.push({ what: `Redis rate limiting: throughput cost on ${f.titles[name]}`, value: `${(cost * 100).toFixed(1)} %`, target: '≤ 10 %', met: cost <= 0.1 });
  }
  for (const name of ['read', 'page1']) {
    const s = f.summary[name];
    if (!s?.unlogged) continue;
    const cost = 1 - s.service.rps / s.unlogged.rps;
    out.push({ what: `Request logs: throughput cost on ${f.titles[name]}`, value: `${(cost * 100).toFixed(1)} %`, target: '≤ 10 %', met: cost <= 0.1 });
  }
  const p99 = f.fixed.service.p99 / f.fixed.baseline.p99;
  out.push({
    what: `p99 at ${f.fixed.rate}/s (70 % of the baseline's maximum)`,
    value: `${ms(f.fixed.service.p99)} vs ${ms(f.fixed.baseline.p99)} = ${p99.toFixed(2)}×`,
    target: '≤ 2×',
    met: p99 <= 2,
  });
  const soak = f.memory.soak;
  if (soak.length >= 2) {
    // Flat: the last tenth of the run is within 10 % of the level reached after the first tenth.
    const tenth = Math.max(1, Math.floor(soak.length / 10));
    const early = Math.max(...soak.slice(0, tenth + 1).map((s) => s.rssMiB));
    const late = Math.max(...soak.slice(-tenth).map((s) => s.rssMiB));
    const growth = late / early - 1;
    out.push({
      what: `RSS over the ${f.settings.soakS} s soak`,
      value: `${early.toFixed(0)} → ${late.toFixed(0)} MiB (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %)`,
      target: '≤ +10 %',
      met: growth <= 0.1,
    });
  }
  if (f.sync) {
    const s = f.sync;
    out.push({
      what: "Sync: provider's limits respected",
      value: `peak ${s.peakPer10s} per 10 s; all arrived: ${s.allArrived ? 'yes' : 'no'}`,
      target: `≤ ${s.limitPer10s} per 10 s; every lead once`,
      met: s.peakPer10s <= s.limitPer10s && s.allArrived,
    });
  }
  return out;
}

const count = (n: number) => n.toLocaleString('en-US');

function syncLine(s: SyncPushFigures): string {
  return (
    `Sync: ${count(s.pushed)}${s.pushed === s.leads ? '' : ` of ${count(s.leads)}`} leads pushed to a loopback HubSpot: ` +
    `${s.leadsPerSecond.toFixed(0)} leads/s in ${s.seconds.toFixed(1)} s; ${count(s.requests)} requests, ` +
    `peak ${s.peakPer10s} per 10 s window (limit ${s.limitPer10s}), 429s: ${s.rateLimited}; all arrived: ${s.allArrived ? 'yes' : 'no'}` +
    (s.error ? `; the run failed: ${s.error}` : '.')
  );
}

function throughputTable(f: Figures): string[] {
  const lines = ['| Scenario | Service req/s | Baseline req/s | Ratio | Service p50 / p99 | Baseline p50 / p99 |', '|---|---:|---:|---:|---:|---:|'];
  for (const [name, s] of Object.entries(f.summary)) {
    const baselineNote = name === 'graphql' ? ' (REST read)' : '';
    lines.push(
      `| ${f.titles[name]} | ${s.service.rps.toFixed(0)} | ${s.baseline.rps.toFixed(0)}${baselineNote} | ${(s.service.rps / s.baseline.rps).toFixed(2)}× | ` +
        `${ms(s.service.p50)} / ${ms(s.service.p99)} | ${ms(s.baseline.p50)} / ${ms(s.baseline.p99)} |`,
    );
  }
  return lines;
}

function markdown(f: Figures): string {
  const all = checks(f);
  const unlimited = Object.entries(f.summary)
    .filter(([, s]) => s.unlimited)
    .map(([name, s]) => `${f.titles[name]} ${s.unlimited!.rps.toFixed(0)} req/s`)
    .join(', ');
  const unlogged = Object.entries(f.summary)
    .filter(([, s]) => s.unlogged)
    .map(([name, s]) => `${f.titles[name]} ${s.unlogged!.rps.toFixed(0)} req/s`)
    .join(', ');
  return [
    `Run of ${f.date.slice(0, 10)} (${f.date}), ${f.durationS} s in all, on ${f.machine}.`,
    `Settings: ${f.settings.leads.toLocaleString('en-US')} leads, ${f.settings.deals.toLocaleString('en-US')} deals, ` +
      `${f.settings.rounds} rounds of ${f.settings.durationS} s per scenario and server, ${f.settings.connections} connections; medians shown.`,
    '',
    ...throughputTable(f),
    '',
    `Service without rate limiting (RATE_LIMITS=off): ${unlimited}.`,
    // Figures written before request logs existed have no such runs.
    ...(unlogged ? [`Service without request logs (REQUEST_LOGS=off): ${unlogged}.`] : []),
    `Peak RSS: service ${fixed1(f.memory.service.peakMiB)} MiB, baseline ${fixed1(f.memory.baseline.peakMiB)} MiB.`,
    ...(f.sync ? [syncLine(f.sync)] : []),
    '',
    '| Target | Measured | Target | Met |',
    '|---|---:|---:|:-:|',
    ...all.map((c) => `| ${c.what} | ${c.value} | ${c.target} | ${c.met ? 'yes' : '**no**'} |`),
  ].join('\n');
}

/** Prints the figures; true when some run had failed requests (non-2xx or connection errors). */
export function printReport(f: Figures, log: (line: string) => void): boolean {
  log('');
  for (const line of markdown(f).split('\n')) log(line);
  const failures = Object.entries(f.summary).flatMap(([name, s]) =>
    [s.service, s.baseline, s.unlimited, s.unlogged].filter((r) => r && r.failures > 0).map((r) => `${name}: ${r!.failures} failed requests`),
  );
  if (f.sync?.error) failures.push(`sync: the run failed: ${f.sync.error}`);
  for (const failure of failures) log(`FAILED ${failure}`);
  return failures.length > 0;
}

const BEGIN = '<!-- bench:begin (written by npm run bench) -->';
const END = '<!-- bench:end -->';

/** Replaces the figures section of docs/benchmark.md, keeping the hand-written account around it. */
export function writeResults(f: Figures): void {
  const file = path.join(ROOT, 'docs/benchmark.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : `# Benchmark\n\n${BEGIN}\n${END}\n`;
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/benchmark.md lacks the ${BEGIN} … ${END} markers`);
  writeFileSync(file, `${text.slice(0, start + BEGIN.length)}\n${markdown(f)}\n${text.slice(end)}`);
  writeFileSync(path.join(ROOT, 'docs/benchmark-results.json'), `${JSON.stringify(f, null, 2)}\n`);
}

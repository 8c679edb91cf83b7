import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadResult } from './load';
import { ROOT } from './processes';
import { median } from './median';
import { NOISY_TARGETS, type NoisyNeighbourFigures } from './noisy-neighbour';
import type { SyncPushFigures } from './sync-push';

/**
 * A server's runs of one scenario, summarised: medians of each figure, and each run's throughput in
 * the order measured (absent in figures older than it), from which a comparison takes its ratio
 * round by round (pairedRatio).
 */
export interface Summary extends LoadResult {
  rpsByRun?: number[];
  /** Each run's p99, in the order of rpsByRun (the fixed-rate row pairs them); absent in older figures. */
  p99ByRun?: number[];
}

export interface Figures {
  date: string;
  machine: string;
  settings: Record<string, number>;
  titles: Record<string, string>;
  /**
   * unlimited: the service with RATE_LIMITS=off; unlogged: with REQUEST_LOGS=off; untimed: with
   * DATABASE_STATEMENT_TIMEOUT_MS=0 (the last two on single reads and page 1 only); twin: a copy
   * of the service with every switch on that serves what those copies serve, the figure each switch
   * is compared with (absent in older figures, which compared with the service);
   * postgraphile: PostGraphile's equivalent of a GraphQL scenario (load.ts, postgraphileScenarios),
   * open (no key); postgraphileKeyed: the same doing the service's job, the key checked and the rows
   * held to its account and mode by row-level security (postgraphile-server.ts; absent in older figures);
   * rest: on a GraphQL scenario, the same service's REST route for the same data (its
   * baselineScenario), measured in the same round beside it, which the "/graphql vs REST" targets
   * compare with (absent in older figures, which compared with the REST scenario's own runs).
   */
  summary: Record<
    string,
    {
      service: Summary;
      baseline: Summary;
      unlimited?: Summary;
      unlogged?: Summary;
      untimed?: Summary;
      twin?: Summary;
      postgraphile?: Summary;
      postgraphileKeyed?: Summary;
      rest?: Summary;
    }
  >;
  /** One run a side a round at the fixed rate, their order turning each round; older figures hold one run a side. */
  fixed: { rate: number; service: Summary; baseline: Summary };
  memory: {
    service: { rssMiB: number; peakMiB: number };
    baseline: { rssMiB: number; peakMiB: number };
    postgraphile?: { rssMiB: number; peakMiB: number };
    postgraphileKeyed?: { rssMiB: number; peakMiB: number };
    soak: Array<{ atS: number; rssMiB: number }>;
  };
  /** The PostGraphile release measured, when it was (figures written before it have none). */
  postgraphileVersion?: string;
  /** The sync row (sync-push.ts); absent when --only leaves it out, and in figures older than it. */
  sync?: SyncPushFigures;
  /** The noisy-neighbour row (noisy-row.ts); absent when --only leaves it out, and in figures older than it. */
  noisy?: NoisyNeighbourFigures;
  durationS: number;
}

/** Issue 25's targets, as ratios measured in one run (docs/benchmark.md): every REST scenario. */
const THROUGHPUT_TARGETS: Record<string, number> = { read: 0.8, page1: 0.8, deep: 0.8, create: 0.8, deals: 0.8 };
/** At most this much throughput may go to each hardening that has an off switch. */
const SWITCH_COST = 0.05;
const P99_AT_FIXED_RATE = 1.5;

/** The servers of a summary entry, as the tables name them. */
const SERVERS = {
  service: 'Service',
  baseline: 'Baseline',
  unlimited: 'Without rate limiting',
  unlogged: 'Without request logs',
  untimed: 'Without statement timeouts',
  twin: 'Copy with every switch on',
  postgraphile: 'PostGraphile',
  postgraphileKeyed: 'PostGraphile (keyed)',
  rest: 'Service over REST',
} as const;

/** What each switch turns off, and the server measured with it off. */
const SWITCHES = [
  {
    server: 'unlimited',
    what: 'Rate limiting in Redis (plan quotas and per-root-field operation limits, RATE_LIMITS=off)',
    label: 'Service without rate limiting (RATE_LIMITS=off: no plan quotas, no per-root-field operation limits)',
  },
  { server: 'unlogged', what: 'Request logs', label: 'Service without request logs (REQUEST_LOGS=off)' },
  {
    server: 'untimed',
    what: 'Statement timeouts',
    label: 'Service without statement timeouts (DATABASE_STATEMENT_TIMEOUT_MS=0, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS=0)',
  },
] as const;

/** What a switch-off copy is compared with: the copy with every switch on where the run has one, else the service. */
const switchedOn = (s: Figures['summary'][string]): Summary => s.twin ?? s.service;

interface Check {
  what: string;
  value: string;
  target: string;
  met: boolean;
}

/**
 * `a`'s throughput over `b`'s: the median of their runs' ratios taken in pairs, the n-th run of one
 * with the n-th of the other, which the bench measured in the same round; else, in figures that do
 * not keep each run (older ones), the ratio of the medians. The machine's throughput moves by a
 * third between rounds on a shared host; a pair measured in the same round moves together, and a
 * slowed round counts once as a pair instead of becoming one side's median alone (docs/benchmark.md,
 * twenty-fifth pass).
 */
export function pairedRatio(a: Summary, b: Summary): number {
  return medianOfPairs(a.rpsByRun, b.rpsByRun, a.rps / b.rps);
}

/** `a`'s p99 over `b`'s at the fixed rate, paired by round as pairedRatio pairs throughput. */
export function pairedP99Ratio(a: Summary, b: Summary): number {
  return medianOfPairs(a.p99ByRun, b.p99ByRun, a.p99 / b.p99);
}

/** The median of the n-th of `ours` over the n-th of `theirs`; `ofMedians` where the runs are not kept or do not pair up. */
function medianOfPairs(ours: number[] | undefined, theirs: number[] | undefined, ofMedians: number): number {
  if (!ours?.length || ours.length !== theirs?.length) return ofMedians;
  return median(ours.map((value, run) => value / theirs[run]));
}

/** A figure as the targets show it: by round, then the ratio of the medians' figure beside it where it reads differently. */
const beside = (byRound: string, ofMedians: string) => (byRound === ofMedians ? byRound : `${byRound} (medians ${ofMedians})`);

/** `a`'s throughput over `b`'s (pairedRatio), and as the targets show it. */
function compared(a: Summary, b: Summary): { ratio: number; shown: string } {
  const ratio = pairedRatio(a, b);
  return { ratio, shown: beside(`${ratio.toFixed(2)}×`, `${(a.rps / b.rps).toFixed(2)}×`) };
}

const fixed1 = (n: number) => n.toFixed(1);
const ms = (n: number) => `${n.toFixed(1)} ms`;

export function checks(f: Figures): Check[] {
  const out: Check[] = [];
  for (const [name, target] of Object.entries(THROUGHPUT_TARGETS)) {
    const s = f.summary[name];
    if (!s) continue;
    const { ratio, shown } = compared(s.service, s.baseline);
    out.push({ what: `${f.titles[name]}: throughput vs baseline`, value: shown, target: `≥ ${target}×`, met: ratio >= target });
  }
  if (f.summary.deep && f.summary.page1) {
    const deepVsFirst = f.summary.deep.service.p50 / f.summary.page1.service.p50;
    out.push({ what: 'Page near the end vs page 1: p50 latency', value: `${deepVsFirst.toFixed(2)}×`, target: '≤ 2×', met: deepVsFirst <= 2 });
  }
  for (const { server, what } of SWITCHES) {
    for (const name of ['read', 'page1']) {
      const off = f.summary[name]?.[server];
      if (!off) continue;
      const on = switchedOn(f.summary[name]);
      const cost = 1 - pairedRatio(on, off);
      out.push({
        what: `${what}: throughput cost on ${f.titles[name]}`,
        value: beside(`${(cost * 100).toFixed(1)} %`, `${((1 - on.rps / off.rps) * 100).toFixed(1)} %`),
        target: `≤ ${SWITCH_COST * 100} %`,
        met: cost <= SWITCH_COST,
      });
    }
  }
  out.push(...graphqlChecks(f));
  const p99 = pairedP99Ratio(f.fixed.service, f.fixed.baseline);
  const [ours, theirs] = [f.fixed.service.p99ByRun, f.fixed.baseline.p99ByRun];
  const byRun = ours && theirs && ours.length > 1 && ours.length === theirs.length ? ours.map((p, run) => `${ms(p)} vs ${ms(theirs[run])}`) : undefined;
  out.push({
    what: `p99 at ${f.fixed.rate}/s (70 % of the baseline's maximum)`,
    value:
      `${ms(f.fixed.service.p99)} vs ${ms(f.fixed.baseline.p99)} = ${beside(`${p99.toFixed(2)}×`, `${(f.fixed.service.p99 / f.fixed.baseline.p99).toFixed(2)}×`)}` +
      (byRun ? ` (by round: ${byRun.join(', ')})` : ''),
    target: `≤ ${P99_AT_FIXED_RATE}×`,
    met: p99 <= P99_AT_FIXED_RATE,
  });
  const soak = f.memory.soak;
  if (soak.length >= 3) {
    const trend = soakTrend(soak);
    const { early, late } = soakPeaks(soak);
    out.push({
      what: `RSS over the ${f.settings.soakS} s soak (its trend after the first tenth)`,
      value:
        `${trend.from.toFixed(0)} → ${trend.to.toFixed(0)} MiB (${signedPercent(trend.growth)}); ` +
        `highest samples ${early.toFixed(0)} → ${late.toFixed(0)} MiB (${signedPercent(late / early - 1)})`,
      target: '≤ +10 %',
      met: trend.growth <= 0.1,
    });
  }
  if (f.noisy) {
    const n = f.noisy;
    for (const [phase, latency, p50, p99] of [
      ['while B spends its quota', n.quotaPhase, n.ratios.quotaP50, n.ratios.quotaP99],
      ['while B is refused (429)', n.refusedPhase, n.ratios.refusedP50, n.ratios.refusedP99],
    ] as const) {
      out.push({
        what: `Noisy neighbour: A's reads ${phase}, ÷ A's idle (${n.idle.p50} / ${n.idle.p99} ms, ${n.idle.n} reads)`,
        value: `p50 ${latency.p50} ms (${p50}×), p99 ${latency.p99} ms (${p99}×), ${latency.n} reads`,
        target: `p50 ≤ ${NOISY_TARGETS.p50}×, p99 ≤ ${NOISY_TARGETS.p99}×`,
        met: p50 <= NOISY_TARGETS.p50 && p99 <= NOISY_TARGETS.p99,
      });
    }
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

/**
 * Whether the RSS grows over the soak: the least-squares line through the samples after the first
 * tenth (the process' warm-up), from its value at the first of them to its value at the last. The
 * RSS of a Node process under load is a sawtooth (on this machine 200–350 MiB every minute or two,
 * as V8 grows and gives back its heap); a leak is a line that rises under it. The highest sample
 * of the first tenth against the highest of the last (the check before the twenty-fifth pass,
 * still shown) compares two points of the sawtooth and turns on where each tenth fell in it.
 */
export function soakTrend(soak: Figures['memory']['soak']): { from: number; to: number; growth: number } {
  const after = soak.slice(Math.max(1, Math.floor(soak.length / 10)));
  const meanT = after.reduce((sum, s) => sum + s.atS, 0) / after.length;
  const meanRss = after.reduce((sum, s) => sum + s.rssMiB, 0) / after.length;
  const spread = after.reduce((sum, s) => sum + (s.atS - meanT) ** 2, 0);
  const slope = spread ? after.reduce((sum, s) => sum + (s.atS - meanT) * (s.rssMiB - meanRss), 0) / spread : 0;
  const at = (t: number) => meanRss + slope * (t - meanT);
  const [from, to] = [at(after[0].atS), at(after[after.length - 1].atS)];
  return { from, to, growth: to / from - 1 };
}

/** The highest sample of the soak's first tenth (and the one after it) and of its last tenth. */
function soakPeaks(soak: Figures['memory']['soak']): { early: number; late: number } {
  const tenth = Math.max(1, Math.floor(soak.length / 10));
  return { early: Math.max(...soak.slice(0, tenth + 1).map((s) => s.rssMiB)), late: Math.max(...soak.slice(-tenth).map((s) => s.rssMiB)) };
}

/** Issue 25: our GraphQL against PostGraphile's for the same rows, and against our own REST routes. */
const GRAPHQL_VERSUS = [
  { name: 'graphql', rest: 'read', what: '/graphql lead by id', restWhat: 'GET /v1/leads/{id}' },
  { name: 'graphql-page', rest: 'page1', what: '/graphql first 50 leads', restWhat: 'GET /v1/leads?limit=50' },
];

/**
 * The PostGraphile a target compares with: the one doing the service's job (keyed), where the run
 * measured it; figures older than it have only the open one. The open one's ratios are in the table.
 */
const equivalent = (s: Figures['summary'][string] | undefined) =>
  s?.postgraphileKeyed
    ? { result: s.postgraphileKeyed, label: 'PostGraphile doing the same job (keyed)' }
    : s?.postgraphile && { result: s.postgraphile, label: 'PostGraphile' };

function graphqlChecks(f: Figures): Check[] {
  const out: Check[] = [];
  for (const { name, what } of GRAPHQL_VERSUS) {
    const rival = equivalent(f.summary[name]);
    if (!rival) continue;
    const { ratio, shown } = compared(f.summary[name].service, rival.result);
    out.push({ what: `${what} vs ${rival.label}`, value: shown, target: '≥ 1.0×', met: ratio >= 1 });
  }
  for (const { name, rest, what, restWhat } of GRAPHQL_VERSUS) {
    const graphql = f.summary[name];
    // The REST route measured beside the GraphQL query in the same rounds; older figures have only the REST scenario's runs.
    const rested = graphql?.rest ?? f.summary[rest]?.service;
    if (!graphql || !rested) continue;
    const { ratio, shown } = compared(graphql.service, rested);
    out.push({ what: `${what} vs ${restWhat}`, value: shown, target: '≥ 0.9×', met: ratio >= 0.9 });
  }
  return out;
}

function postgraphileTable(f: Figures): string[] {
  const rows = GRAPHQL_VERSUS.filter(({ name }) => f.summary[name]?.postgraphile || f.summary[name]?.postgraphileKeyed);
  if (!rows.length) return [];
  const sides = (['postgraphile', 'postgraphileKeyed'] as const).filter((side) => rows.some(({ name }) => f.summary[name][side]));
  const keyed = sides.includes('postgraphileKeyed');
  const cell = (result: Summary | undefined, service: Summary) =>
    result ? `${result.rps.toFixed(0)} | ${pairedRatio(service, result).toFixed(2)}× | ${ms(result.p50)} / ${ms(result.p99)}` : '– | – | –';
  return [
    `GraphQL: the service vs PostGraphile ${f.postgraphileVersion ?? ''} (same rows, same columns, same order; load.ts)` +
      (keyed
        ? ': open (no key; the account named in the query), and keyed, doing the same job as the service (the API key checked, rows held to its account and mode by row-level security; test/benchmark/postgraphile-server.ts). The targets compare with the keyed one.'
        : ':'),
    '',
    `| Query | Service req/s | Service p50 / p99 | ${sides.map((side) => `${SERVERS[side]} req/s | Ratio | ${SERVERS[side]} p50 / p99`).join(' | ')} |`,
    `|---|---:|---:|${sides.map(() => '---:|---:|---:').join('|')}|`,
    ...rows.map(({ name }) => {
      const s = f.summary[name];
      return `| ${f.titles[name]} | ${s.service.rps.toFixed(0)} | ${ms(s.service.p50)} / ${ms(s.service.p99)} | ${sides.map((side) => cell(s[side], s.service)).join(' | ')} |`;
    }),
    '',
  ];
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
    const baselineNote = name === 'graphql' ? ' (REST read)' : name === 'graphql-page' ? ' (REST page 1)' : '';
    lines.push(
      `| ${f.titles[name]} | ${s.service.rps.toFixed(0)} | ${s.baseline.rps.toFixed(0)}${baselineNote} | ${pairedRatio(s.service, s.baseline).toFixed(2)}× | ` +
        `${ms(s.service.p50)} / ${ms(s.service.p99)} | ${ms(s.baseline.p50)} / ${ms(s.baseline.p99)} |`,
    );
  }
  return lines;
}

/** Each server's event-loop delay p99 (loop-delay.ts) under each scenario; a column per server the run measured. */
function loopDelayTable(f: Figures): string[] {
  const entries = Object.entries(f.summary);
  const servers = (Object.keys(SERVERS) as Array<keyof typeof SERVERS>).filter((server) => entries.some(([, s]) => s[server]?.loopP99Ms !== undefined));
  if (!servers.length) return [];
  const cell = (result: LoadResult | undefined) => (result?.loopP99Ms === undefined ? '–' : result.loopP99Ms.toFixed(1));
  return [
    '',
    `Event-loop delay p99 under each scenario (ms): ${servers.map((server) => SERVERS[server].toLowerCase()).join(' / ')}`,
    '',
    `| Scenario | ${servers.map((server) => SERVERS[server]).join(' | ')} |`,
    `|---|${servers.map(() => '---:').join('|')}|`,
    ...entries.map(([name, s]) => `| ${f.titles[name]} | ${servers.map((server) => cell(s[server])).join(' | ')} |`),
  ];
}

/**
 * Each server's CPU time per answered request under each scenario (load.ts, cpuUsPerRequest), and
 * the service's against the baseline's; then what each switch's hardening costs in CPU per request
 * on the scenarios measured with it off. Throughput on two shared cores moves with whatever else
 * runs; a request's CPU time moves much less, so it shows whether a throughput gap is noise.
 */
function cpuTable(f: Figures): string[] {
  const entries = Object.entries(f.summary);
  const servers = (Object.keys(SERVERS) as Array<keyof typeof SERVERS>).filter((server) => entries.some(([, s]) => s[server]?.cpuUsPerRequest !== undefined));
  if (!servers.includes('service')) return [];
  const cell = (result: LoadResult | undefined) => (result?.cpuUsPerRequest === undefined ? '–' : result.cpuUsPerRequest.toFixed(0));
  const ratio = (s: Figures['summary'][string]) =>
    s.service.cpuUsPerRequest !== undefined && s.baseline.cpuUsPerRequest !== undefined
      ? `${(s.service.cpuUsPerRequest / s.baseline.cpuUsPerRequest).toFixed(2)}×`
      : '–';
  const switchCosts = SWITCHES.flatMap(({ server, what }) =>
    entries
      .filter(([, s]) => switchedOn(s).cpuUsPerRequest !== undefined && s[server]?.cpuUsPerRequest !== undefined)
      .map(([name, s]) => `${what.split(' (')[0]} on ${f.titles[name]} ${signedPercent(switchedOn(s).cpuUsPerRequest! / s[server]!.cpuUsPerRequest! - 1)}`),
  );
  return [
    '',
    `CPU time per answered request (µs; the server process' user + system time over a run ÷ its 2xx answers): ${servers
      .map((server) => SERVERS[server].toLowerCase())
      .join(' / ')}, and the service's ÷ the baseline's`,
    '',
    `| Scenario | ${servers.map((server) => SERVERS[server]).join(' | ')} | Service ÷ baseline |`,
    `|---|${servers.map(() => '---:').join('|')}|---:|`,
    ...entries.map(([name, s]) => `| ${f.titles[name]} | ${servers.map((server) => cell(s[server])).join(' | ')} | ${ratio(s)} |`),
    ...(switchCosts.length
      ? [
          '',
          `What each switch's hardening costs in CPU time per request (${entries.some(([, s]) => s.twin) ? 'the copy with every switch on' : 'service'} ÷ the copy with it off − 1): ${switchCosts.join('; ')}.`,
        ]
      : []),
  ];
}

const signedPercent = (fraction: number) => `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(1)} %`;

function markdown(f: Figures): string {
  const all = checks(f);
  const twin = { server: 'twin', label: 'Copy of the service with every switch on (what each switch is compared with)' } as const;
  // Figures written before a switch existed have no runs with it off.
  const switchedOff = [...SWITCHES, twin].flatMap(({ server, label }) => {
    const runs = Object.entries(f.summary)
      .filter(([, s]) => s[server])
      .map(([name, s]) => `${f.titles[name]} ${s[server]!.rps.toFixed(0)} req/s`);
    return runs.length ? [`${label}: ${runs.join(', ')}.`] : [];
  });
  return [
    `Run of ${f.date.slice(0, 10)} (${f.date}), ${f.durationS} s in all, on ${f.machine}.`,
    `Settings: ${f.settings.leads.toLocaleString('en-US')} leads, ${f.settings.deals.toLocaleString('en-US')} deals, ` +
      `${f.settings.rounds} rounds of ${f.settings.durationS} s per scenario and server` +
      (f.settings.slices > 1
        ? ` (in ${f.settings.slices} slices of ${f.settings.durationS / f.settings.slices} s, the servers of a round taking turns, the other servers paused` +
          (f.settings.rewarmS ? `, each slice after ${f.settings.rewarmS} s of the same requests unmeasured` : '') +
          ')'
        : '') +
      `, ${f.settings.connections} connections; medians shown` +
      (f.settings.switchCopies > 1 ? ` (of the runs of ${f.settings.switchCopies} processes each for the copies the switches compare)` : '') +
      (Object.values(f.summary).some((s) => s.service.rpsByRun)
        ? "; a ratio is the median of the rounds' ratios, each of two runs measured in the same round (the ratio of the medians beside it in the targets)."
        : '.'),
    '',
    ...throughputTable(f),
    ...loopDelayTable(f),
    ...cpuTable(f),
    '',
    ...switchedOff,
    `Peak RSS: service ${fixed1(f.memory.service.peakMiB)} MiB, baseline ${fixed1(f.memory.baseline.peakMiB)} MiB` +
      (f.memory.postgraphile ? `, PostGraphile ${fixed1(f.memory.postgraphile.peakMiB)} MiB` : '') +
      (f.memory.postgraphileKeyed ? `, PostGraphile (keyed) ${fixed1(f.memory.postgraphileKeyed.peakMiB)} MiB` : '') +
      '.',
    ...(f.sync ? [syncLine(f.sync)] : []),
    ...(f.noisy ? [noisyLine(f.noisy)] : []),
    '',
    ...postgraphileTable(f),
    '| Target | Measured | Target | Met |',
    '|---|---:|---:|:-:|',
    ...all.map((c) => `| ${c.what} | ${c.value} | ${c.target} | ${c.met ? 'yes' : '**no**'} |`),
  ].join('\n');
}

/** What B did in the noisy-neighbour row. */
function noisyLine(n: NoisyNeighbourFigures): string {
  const answers = Object.entries(n.noisy)
    .map(([what, count]) => `${what} ×${count}`)
    .join(', ');
  return `Noisy neighbour: B sent for ${n.noiseS} s in 1 s slices (as many silent ones between, in which A's idle reads were taken), ${n.noisyRate} answers a second: ${answers}.`;
}

/** Prints the figures; true when some run had failed requests (non-2xx or connection errors). */
export function printReport(f: Figures, log: (line: string) => void): boolean {
  log('');
  for (const line of markdown(f).split('\n')) log(line);
  const failures = Object.entries(f.summary).flatMap(([name, s]) =>
    (Object.keys(SERVERS) as Array<keyof typeof SERVERS>)
      .map((server) => s[server])
      .filter((r) => r && r.failures > 0)
      .map((r) => `${name}: ${r!.failures} failed requests`),
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

import { checks, Figures, pairedP99Ratio, pairedRatio, soakTrend, Summary } from '../benchmark/report';
import { combined } from '../benchmark/load';

/**
 * The bench's ratios (test/benchmark/report.ts): each round's two runs compared with each other,
 * the median of those ratios taken, so a round in which the machine slowed counts once as a pair
 * instead of becoming one side's median alone; figures without each run's throughput (written
 * before it was kept) keep the ratio of the medians.
 */
describe('bench report: ratios by round', () => {
  const summary = (rpsByRun: number[] | undefined, rps: number): Summary => ({ rps, rpsByRun, p50: 1, p99: 2, failures: 0 });

  it('takes the median of the rounds’ ratios, pairing the n-th run of each side', () => {
    // The machine slowed in round 2 for both sides, the service measured in the slowed half of it:
    // the rounds' ratios 0.84, 0.64, 0.91; the medians 521 and 814 would say 0.64.
    const service = summary([515, 521, 780], 521);
    const baseline = summary([613, 814, 857], 814);
    expect(pairedRatio(service, baseline)).toBeCloseTo(515 / 613, 6);
    expect(service.rps / baseline.rps).toBeCloseTo(0.64, 2);
  });

  it('is the ratio of the medians where the runs are not kept, or do not pair up', () => {
    expect(pairedRatio(summary(undefined, 500), summary(undefined, 1000))).toBe(0.5);
    expect(pairedRatio(summary([1, 2, 3], 2), summary([4, 5], 4.5))).toBeCloseTo(2 / 4.5, 6);
  });

  it('decides the targets with it, and shows the ratio of the medians beside it where they differ', () => {
    const figures = {
      settings: { soakS: 0 },
      titles: { create: 'POST /v1/leads', read: 'GET /v1/leads/{id}' },
      summary: {
        create: { service: summary([515, 521, 780], 521), baseline: summary([613, 814, 857], 814) },
        read: {
          service: summary([2000, 2000, 2000], 2000),
          baseline: summary([2400, 2300, 2500], 2400),
          // A switch costing 2 % in each round; the copies' medians alone would say 6.9 %.
          twin: summary([1960, 1764, 1960, 1764, 1960, 1764], 1862),
          unlimited: summary([2000, 1800, 2000, 1800, 2000, 2058], 2000),
          // A copy whose runs are the twin's: no cost either way, shown once.
          unlogged: summary([1960, 1764, 1960, 1764, 1960, 1764], 1862),
        },
      },
      fixed: { rate: 1, service: summary(undefined, 1), baseline: summary(undefined, 1) },
      memory: { service: { rssMiB: 1, peakMiB: 1 }, baseline: { rssMiB: 1, peakMiB: 1 }, soak: [] },
    } as unknown as Figures;
    const byWhat = Object.fromEntries(checks(figures).map((check) => [check.what, check]));
    expect(byWhat['POST /v1/leads: throughput vs baseline']).toMatchObject({ value: '0.84× (medians 0.64×)', met: true });
    expect(byWhat['GET /v1/leads/{id}: throughput vs baseline']).toMatchObject({ value: '0.83×', met: true });
    expect(
      byWhat['Rate limiting in Redis (plan quotas and per-root-field operation limits, RATE_LIMITS=off): throughput cost on GET /v1/leads/{id}'],
    ).toMatchObject({
      value: '2.0 % (medians 6.9 %)',
      met: true,
    });
    expect(byWhat['Request logs: throughput cost on GET /v1/leads/{id}']).toMatchObject({ value: '0.0 %', met: true });
  });

  it('compares /graphql with the REST route measured beside it, and with the REST scenario in older figures', () => {
    const figures = (rest: Summary | undefined) =>
      ({
        settings: { soakS: 0 },
        titles: { page1: 'GET /v1/leads?limit=50', 'graphql-page': 'POST /graphql { leads(limit: 50) }' },
        summary: {
          // The REST scenario's own runs, minutes earlier in each round.
          page1: { service: summary([376, 437, 482], 437), baseline: summary([386, 467, 489], 467) },
          'graphql-page': { service: summary([461, 341, 335], 341), baseline: summary([463, 540, 488], 488), rest },
        },
        fixed: { rate: 1, service: summary(undefined, 1), baseline: summary(undefined, 1) },
        memory: { service: { rssMiB: 1, peakMiB: 1 }, baseline: { rssMiB: 1, peakMiB: 1 }, soak: [] },
      }) as unknown as Figures;
    const what = '/graphql first 50 leads vs GET /v1/leads?limit=50';
    const check = (f: Figures) => checks(f).find((c) => c.what === what);
    // Beside it in each round, the REST route went as the GraphQL query did: 0.96×, 0.92×, 0.93×.
    expect(check(figures(summary([480, 370, 360], 370)))).toMatchObject({ value: '0.93× (medians 0.92×)', met: true });
    // Without those runs (figures older than them), the REST scenario's: 1.23×, 0.78×, 0.69×.
    expect(check(figures(undefined))).toMatchObject({ value: '0.78×', met: false });
  });

  it('takes the fixed-rate p99 round by round too, and keeps one run a side in older figures', () => {
    const runs = (p99ByRun: number[] | undefined, p99: number): Summary => ({ rps: 1000, p50: 2, p99, p99ByRun, failures: 0 });
    const figures = (service: Summary, baseline: Summary) =>
      ({
        settings: { soakS: 0 },
        titles: {},
        summary: {},
        fixed: { rate: 1944, service, baseline },
        memory: { service: { rssMiB: 1, peakMiB: 1 }, baseline: { rssMiB: 1, peakMiB: 1 }, soak: [] },
      }) as unknown as Figures;
    const check = (f: Figures) => checks(f).find((c) => c.what === "p99 at 1944/s (70 % of the baseline's maximum)");
    // One round with a stall on the service's side (25 against 14 ms), two without.
    const [service, baseline] = [runs([25, 15, 13], 15), runs([14, 12, 13], 13)];
    expect(pairedP99Ratio(service, baseline)).toBeCloseTo(15 / 12, 6);
    expect(check(figures(service, baseline))).toMatchObject({
      value: '15.0 ms vs 13.0 ms = 1.25× (medians 1.15×) (by round: 25.0 ms vs 14.0 ms, 15.0 ms vs 12.0 ms, 13.0 ms vs 13.0 ms)',
      met: true,
    });
    // A tail in every round is still a miss.
    expect(check(figures(runs([25, 22, 24], 24), runs([14, 12, 13], 13)))).toMatchObject({ met: false });
    // Runs that do not pair up: the ratio of the medians, no rounds shown.
    expect(check(figures(runs([25, 15, 13], 15), runs([14, 12], 13)))).toMatchObject({ value: '15.0 ms vs 13.0 ms = 1.15×', met: true });
    // Figures of one run a side: that run's ratio.
    expect(check(figures(runs(undefined, 25), runs(undefined, 14)))).toMatchObject({ value: '25.0 ms vs 14.0 ms = 1.79×', met: false });
  });

  it('still fails a target every round misses', () => {
    const figures = {
      settings: { soakS: 0 },
      titles: { deep: 'GET /v1/leads?limit=50 (deep)' },
      summary: { deep: { service: summary([700, 790, 650], 700), baseline: summary([1000, 1000, 1000], 1000) } },
      fixed: { rate: 1, service: summary(undefined, 1), baseline: summary(undefined, 1) },
      memory: { service: { rssMiB: 1, peakMiB: 1 }, baseline: { rssMiB: 1, peakMiB: 1 }, soak: [] },
    } as unknown as Figures;
    expect(checks(figures)[0]).toMatchObject({ value: '0.70×', met: false });
  });
});

/**
 * The soak's check: the trend of the RSS after the first tenth, not two of its samples. A Node
 * process' RSS under load is a sawtooth; a leak is a rise under it.
 */
describe('bench report: the soak', () => {
  // A sample every 6 s for 600 s, a sawtooth of 200–350 MiB with a period of 90 s.
  const sawtooth = (leakMiBPerMinute: number) =>
    Array.from({ length: 101 }, (_, i) => ({ atS: i * 6, rssMiB: 200 + ((i * 6) % 90) * (150 / 90) + (leakMiBPerMinute * i * 6) / 60 }));

  it('finds no growth in a flat sawtooth whose highest samples rose by a sixth', () => {
    const soak = sawtooth(0);
    expect(Math.abs(soakTrend(soak).growth)).toBeLessThan(0.03);
    const figures = {
      settings: { soakS: 600 },
      titles: {},
      summary: {},
      fixed: { rate: 1, service: { rps: 1, p50: 1, p99: 1, failures: 0 }, baseline: { rps: 1, p50: 1, p99: 1, failures: 0 } },
      memory: { service: { rssMiB: 1, peakMiB: 1 }, baseline: { rssMiB: 1, peakMiB: 1 }, soak: soak.map((s, i) => (i === 3 ? { ...s, rssMiB: 300 } : s)) },
    } as unknown as Figures;
    const check = checks(figures).find((c) => c.what.startsWith('RSS over the 600 s soak'));
    expect(check).toMatchObject({
      met: true,
      value: expect.stringMatching(/^\d+ → \d+ MiB \([+-]\d+\.\d %\); highest samples 300 → 3\d\d MiB \(\+\d+\.\d %\)$/),
    });
  });

  it('finds a leak of 6 MiB a minute under the same sawtooth', () => {
    const { from, to, growth } = soakTrend(sawtooth(6));
    expect(to - from).toBeGreaterThan(40);
    expect(growth).toBeGreaterThan(0.1);
  });
});

/** A run cut into slices (the bench's --slices) adds up as one run of their whole length. */
describe('bench: a run made of slices', () => {
  it('answers a second over all slices, CPU per answer over all their answers, the medians of their latencies', () => {
    const run = combined([
      { rps: 1000, p50: 4, p99: 20, failures: 0, loopP99Ms: 5, cpuUsPerRequest: 600 },
      { rps: 500, p50: 8, p99: 40, failures: 2, loopP99Ms: 9, cpuUsPerRequest: 900 },
      { rps: 1500, p50: 3, p99: 30, failures: 1, loopP99Ms: 7, cpuUsPerRequest: 500 },
    ]);
    expect(run.rps).toBe(1000);
    // (1000 × 600 + 500 × 900 + 1500 × 500) / 3000 answers' worth
    expect(run.cpuUsPerRequest).toBe(600);
    expect(run).toMatchObject({ p50: 4, p99: 30, failures: 3, loopP99Ms: 7 });
  });

  it('leaves the CPU and the loop delay out when a slice could not read them, and keeps a single slice as it is', () => {
    const slice = { rps: 800, p50: 5, p99: 25, failures: 0 };
    expect(combined([slice, { ...slice, cpuUsPerRequest: 700, loopP99Ms: 3 }])).toMatchObject({ rps: 800, cpuUsPerRequest: undefined, loopP99Ms: undefined });
    expect(combined([slice])).toBe(slice);
  });
});

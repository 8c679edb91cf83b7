/**
 * `npm run bench`: the service against a hand-written express + pg baseline doing the same work,
 * on this machine, in the same run. Options: USAGE below (`npm run bench -- --help`). See
 * docs/TESTING.md "Benchmark" and docs/benchmark.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { check, combined, drive, LoadOptions, LoadResult, postgraphileScenarios, Scenario, scenarios } from './load';
import { ALLOC_PROFILE_PRELOAD, ROOT, Server, startServer } from './processes';
import { Figures, printReport, Summary, writeResults } from './report';
import { median } from './median';
import { alone, benchDatabase, log, numberArg, parseCommandLine, prime, redisUrl, REWARM_S, settle, turned } from './runs';
import { seed } from './seed';
import { measureNoisyRow } from './noisy-row';
import { measureSyncPush } from './sync-push';

const USAGE = `usage: npm run bench [-- options]

  (no options)        1,000,000 leads, 3 rounds of 10 s per scenario and server, a 10-minute memory soak;
                      writes the figures into docs/benchmark.md (about 40 minutes)
  --quick             2,000 leads, 1 round of 2 s, a 5 s soak (the CI smoke; writes nothing)
  --leads N --deals N --rounds N --duration S --soak S --connections N
  --only read,create  these scenarios only (read is always among them; \`sync\` names the sync row,
                      \`noisy\` the noisy-neighbour row);
                      skips the fixed-rate run and the soak
  --sync-leads N      leads the sync row pushes (10,000; quick 300)
  --slices N          each run of a round cut into N slices, the servers' slices taking turns (5; quick 1)
  --switch-copies N   processes of each copy the switch rows compare, pooled in their rows (3; quick 1).
                      Each holds up to 11 PostgreSQL connections while measured (closed after 30 s idle)
  --write, --no-write whether the figures go into docs/benchmark.md
  --profile           the service runs under node --cpu-prof (read it with profile-summary.js)
  --alloc-profile     bytes allocated per request, service and baseline (read it with alloc-summary.js)
  --help              this text

Two builds, or one build with and without a switch, side by side: node dist/test/benchmark/side-by-side.js --help
PostgreSQL: DATABASE_URL, else the embedded one in .data/bench. Redis: REDIS_URL (default redis://127.0.0.1:6379).
See docs/TESTING.md "Benchmark" and docs/benchmark.md.
`;

const { values: args } = parseCommandLine(USAGE, {
  options: {
    help: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    leads: { type: 'string' },
    deals: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    soak: { type: 'string' },
    connections: { type: 'string' },
    profile: { type: 'boolean', default: false },
    'alloc-profile': { type: 'boolean', default: false },
    only: { type: 'string' },
    'sync-leads': { type: 'string' },
    'switch-copies': { type: 'string' },
    slices: { type: 'string' },
    write: { type: 'boolean' },
    'no-write': { type: 'boolean', default: false },
  },
});

const quick = args.quick;
const durationS = numberArg(args.duration, quick ? 2 : 10);
const settings = {
  leads: numberArg(args.leads, quick ? 2_000 : 1_000_000),
  deals: numberArg(args.deals, quick ? 300 : 20_000),
  rounds: numberArg(args.rounds, quick ? 1 : 3),
  durationS,
  warmupS: quick ? 1 : 3,
  soakS: numberArg(args.soak, quick ? 5 : 600),
  connections: numberArg(args.connections, 10),
  syncLeads: numberArg(args['sync-leads'], quick ? 300 : 10_000),
  /** Processes of each copy the switch rows compare (below, switchCopies); one in quick mode, where every pool stays open at once. */
  switchCopies: Math.max(1, numberArg(args['switch-copies'], quick ? 1 : 3)),
  /**
   * Slices a run of a round is cut into: the servers of a round take turns slice by slice, so each
   * pair of runs a ratio compares spans the same stretch of time (docs/benchmark.md, twenty-eighth pass).
   */
  slices: Math.max(1, Math.min(Math.floor(durationS), numberArg(args.slices, quick ? 1 : 5))),
  /** Unmeasured seconds before each measured run or slice, its server just resumed (runs.ts). */
  rewarmS: REWARM_S,
};
const write = args.write ?? (!quick && !args['no-write']);

/** The copies the switch rows compare (report.ts): one switch off each, and the twin with every switch on. */
type SwitchCopy = 'unlimited' | 'unlogged' | 'untimed' | 'twin';
/** The PostGraphile servers measured beside the service: open, and keyed (postgraphile-server.ts). */
type Rival = 'postgraphile' | 'postgraphileKeyed';
const SWITCHED: ReadonlyArray<readonly [SwitchCopy, string, Record<string, string>]> = [
  ['unlimited', 'service without rate limiting', { RATE_LIMITS: 'off' }],
  ['unlogged', 'service without request logs', { REQUEST_LOGS: 'off' }],
  ['untimed', 'service without statement timeouts', { DATABASE_STATEMENT_TIMEOUT_MS: '0', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0' }],
  ['twin', 'service copy with every switch on', {}],
];

function summarize(results: LoadResult[]): Summary {
  return {
    rps: median(results.map((r) => r.rps)),
    rpsByRun: results.map((r) => r.rps),
    p99ByRun: results.map((r) => r.p99),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    failures: results.reduce((sum, r) => sum + r.failures, 0),
    loopP99Ms: results.every((r) => r.loopP99Ms !== undefined) ? median(results.map((r) => r.loopP99Ms!)) : undefined,
    cpuUsPerRequest: results.every((r) => r.cpuUsPerRequest !== undefined) ? median(results.map((r) => r.cpuUsPerRequest!)) : undefined,
  };
}

/** The PostGraphile release installed (pinned in package.json), for the report's heading. */
const postgraphileVersion = () => (JSON.parse(readFileSync(path.join(ROOT, 'node_modules/postgraphile/package.json'), 'utf8')) as { version: string }).version;

async function main(): Promise<void> {
  const started = Date.now();
  const redis = await redisUrl();
  const database = await benchDatabase();
  const databaseUrl = database.url;
  log(`database: ${database.label}; Redis: ${redis}`);
  log(`settings: ${JSON.stringify(settings)}`);

  const servers: Server[] = [];
  /** What else the run opened, closed before the servers stop. */
  const closers: Array<() => Promise<void>> = [];
  // Interrupted (Ctrl-C) or failed: no server may outlive the bench and skew the next run.
  const killAll = () => servers.forEach((server) => server.process.exitCode === null && server.process.kill('SIGKILL'));
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      killAll();
      process.exit(130);
    });
  }
  try {
    // The service applies the migrations on start, so it starts before the seed writes rows.
    const serviceEnv = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis,
      NODE_ENV: 'production',
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
    };
    const profiles = path.join(ROOT, '.data/bench/profiles');
    const allocArgs = args['alloc-profile'] ? ['-r', ALLOC_PROFILE_PRELOAD] : [];
    const profileArgs = [...allocArgs, ...(args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [])];
    const service = await startServer('service', 'dist/src/main.js', serviceEnv, profileArgs);
    servers.push(service);
    const account = await seed(databaseUrl, { leads: settings.leads, deals: settings.deals, serviceUrl: service.url });
    const baseline = await startServer('baseline', 'dist/test/benchmark/baseline-server.js', { DATABASE_URL: databaseUrl, REDIS_URL: redis }, allocArgs);
    servers.push(baseline);
    // The service with one switch off (what the hardening costs): rate limiting, the request logs
    // (written off the request path), the database timeouts (0 sets none). Each is compared with a
    // copy with every switch on (the twin) that serves exactly what they serve: the main service also
    // serves every other scenario, and compared with it a switch row would also compare two
    // histories (code specialised for fewer kinds of request, a smaller heap; docs/benchmark.md,
    // eighth pass). Three processes of each, whose runs each row pools: two processes of one build
    // differ by up to 10 % (fifteenth pass), more than the 5 % a switch may cost, and two of each
    // still left an A/A row at ±12 % (twenty-fifth pass; three since the twenty-sixth).
    const switchCopies: Array<readonly [SwitchCopy, Server]> = [];
    for (let copyNumber = 1; copyNumber <= settings.switchCopies; copyNumber++) {
      for (const [name, title, env] of SWITCHED) {
        // With --alloc-profile the first copy without rate limiting is profiled too: it serves the
        // scenarios over the service's operation limits (the PDF).
        const nodeArgs = name === 'unlimited' && copyNumber === 1 ? allocArgs : [];
        const copy = await startServer(`${title}${copyNumber > 1 ? ` (copy ${copyNumber})` : ''}`, 'dist/src/main.js', { ...serviceEnv, ...env }, nodeArgs);
        servers.push(copy);
        switchCopies.push([name, copy]);
      }
    }
    const unlimited = switchCopies.find(([name]) => name === 'unlimited')![1];
    // The seed wrote through the service (its proposal); each copy writes once too (prime).
    for (const [, copy] of switchCopies) await prime(copy, account.liveKey);
    log(`service ${service.url}, baseline ${baseline.url}, ${switchCopies.map(([, copy]) => `${copy.name} ${copy.url}`).join(', ')}`);

    const runTag = Date.now().toString(36);
    const every = scenarios(account, runTag);
    const byName = new Map(every.map((s) => [s.name, s]));
    const named = args.only?.split(',');
    // `sync` and `noisy` name rows, not load scenarios.
    const only = named?.filter((name) => name !== 'sync' && name !== 'noisy');
    const all = only ? every.filter((s) => only.includes(s.name)) : every;
    if (only && (all.length !== only.length || !only.includes('read'))) {
      throw new Error(`--only takes scenario names including read (${every.map((s) => s.name).join(', ')}), and sync`);
    }
    const load: LoadOptions = { connections: settings.connections, durationS: settings.durationS };
    const run = async (server: Server, scenario: Scenario, options = load) => drive(server.url, account.liveKey, scenario, options, server);
    // Each measured run starts on a quiet database: what the run before it left is done first (settle).
    const quiet = new Client({ connectionString: databaseUrl });
    await quiet.connect();
    closers.push(() => quiet.end());
    // It runs alone: every other server of the run is paused meanwhile (runs.ts, alone), and the
    // server, just resumed, answers the same requests unmeasured for REWARM_S first (runs.ts).
    const measured = async (server: Server, scenario: Scenario, options = load) => {
      await settle(quiet);
      return alone(servers, server, async () => {
        await run(server, scenario, { ...options, durationS: settings.rewarmS });
        return run(server, scenario, options);
      });
    };
    /**
     * The runs of one round, cut into slices that take turns (forwards, then backwards): the
     * machine's speed drifts over tens of seconds (the same route on the same process answered 1,268
     * and 1,874 a second in two rounds), and runs measured one after the other for 10 s each put
     * that drift into their ratio; sliced, both sides of a ratio sample the same stretch of time.
     */
    const slice = { ...load, durationS: settings.durationS / settings.slices };
    const interleaved = async (runs: ReadonlyArray<readonly [Server, Scenario]>): Promise<LoadResult[]> => {
      const slices: LoadResult[][] = runs.map(() => []);
      for (let n = 0; n < settings.slices; n++) {
        const order = runs.map((_, i) => i);
        if (n % 2) order.reverse();
        for (const i of order) slices[i].push(await measured(runs[i][0], runs[i][1], slice));
      }
      return slices.map(combined);
    };
    const serviceFor = (scenario: Scenario) => (scenario.overOperationLimit ? unlimited : service);

    // PostGraphile over the same database, for the GraphQL scenarios measured here (issue 25): open
    // (no key, the account named in the query), and keyed, doing the service's job (the key checked,
    // rows held to its account and mode by row-level security; postgraphile-server.ts).
    const rivals = (
      [
        { side: 'postgraphile', label: 'PostGraphile', env: {}, scenarios: postgraphileScenarios(account) },
        { side: 'postgraphileKeyed', label: 'PostGraphile (keyed)', env: { POSTGRAPHILE_KEYED: '1' }, scenarios: postgraphileScenarios(account, true) },
      ] as const
    ).filter(({ scenarios: theirs }) => all.some((s) => theirs[s.name]));
    const rivalServers = new Map<Rival, Server>();
    for (const { side, label, env } of rivals) {
      const server = await startServer(label, 'dist/test/benchmark/postgraphile-server.js', { DATABASE_URL: databaseUrl, ...env });
      servers.push(server);
      rivalServers.set(side, server);
    }
    /** Each PostGraphile's server and its equivalent of a scenario, where it has one. */
    const rivalsOf = (scenario: Scenario) =>
      rivals.flatMap(({ side, label, scenarios: theirs }) =>
        theirs[scenario.name] ? [{ side, label, server: rivalServers.get(side)!, served: theirs[scenario.name] }] : [],
      );
    for (const scenario of all.filter((s) => s.leadIds)) {
      const ours = await check(service.url, account.liveKey, scenario);
      for (const { label, server, served } of rivalsOf(scenario)) {
        const theirs = await check(server.url, account.liveKey, served);
        // Same rows in the same order on both sides, or the comparison is of different work.
        if (scenario.name === 'graphql-page' && ours.join() !== theirs.join()) {
          throw new Error(`${scenario.title}: the service and ${label} answered different leads:\n${ours.join()}\n${theirs.join()}`);
        }
      }
    }

    /** The scenarios measured on the servers with a switch off too (rate limiting, request logs, statement timeouts). */
    const switched = (scenario: Scenario) => scenario.name === 'read' || scenario.name === 'page1';
    log('warming up');
    for (const scenario of all) {
      await run(serviceFor(scenario), scenario, { ...load, durationS: settings.warmupS });
      await run(unlimited, scenario, { ...load, durationS: settings.warmupS });
      if (switched(scenario)) {
        for (const [, copy] of switchCopies) if (copy !== unlimited) await run(copy, scenario, { ...load, durationS: settings.warmupS });
      }
      await run(baseline, byName.get(scenario.baselineScenario ?? scenario.name)!, { ...load, durationS: settings.warmupS });
      for (const { server, served } of rivalsOf(scenario)) await run(server, served, { ...load, durationS: settings.warmupS });
    }

    if (args['alloc-profile']) {
      // Runs of their own, outside the rounds: sampling every few KiB slows a server down.
      mkdirSync(profiles, { recursive: true });
      for (const scenario of all) {
        const sides = [
          ['service', serviceFor(scenario), scenario],
          ['baseline', baseline, byName.get(scenario.baselineScenario ?? scenario.name)!],
        ] as const;
        const perRequest: string[] = [];
        for (const [side, server, served] of sides) {
          const file = path.join(profiles, `ALLOC.${scenario.name}.${side}.heapprofile`);
          await server.allocProfile('start');
          const result = await run(server, served);
          const bytes = await server.allocProfile('stop', file);
          const answered = result.rps * settings.durationS;
          perRequest.push(`${side} ${Math.round(bytes / answered).toLocaleString('en-US')}`);
          log(`allocation profile: ${path.relative(ROOT, file)} (${Math.round(answered)} answers)`);
        }
        log(`bytes allocated per request, ${scenario.title}: ${perRequest.join(', ')}`);
      }
    }

    const samples = new Map<
      string,
      {
        service: LoadResult[];
        baseline: LoadResult[];
        unlimited: LoadResult[];
        unlogged: LoadResult[];
        untimed: LoadResult[];
        twin: LoadResult[];
        postgraphile: LoadResult[];
        postgraphileKeyed: LoadResult[];
        rest: LoadResult[];
      }
    >();
    for (let round = 1; round <= settings.rounds; round++) {
      for (const scenario of all) {
        const entry = samples.get(scenario.name) ?? {
          service: [],
          baseline: [],
          unlimited: [],
          unlogged: [],
          untimed: [],
          twin: [],
          postgraphile: [],
          postgraphileKeyed: [],
          rest: [],
        };
        samples.set(scenario.name, entry);
        const baselineScenario = byName.get(scenario.baselineScenario ?? scenario.name)!;
        // A and B interleaved, in an order that turns by one each round, so drift (caches,
        // autovacuum) hits each, and no server is always measured between the other two (the
        // middle of three did better whichever build it was: docs/benchmark.md, tenth pass).
        // A GraphQL scenario's REST equivalent runs on the same service in the same round beside it:
        // the "/graphql vs REST" targets compare the two, and the REST scenario's own runs, minutes
        // earlier in the round, moved by a third between rounds (docs/benchmark.md, twenty-seventh pass).
        const theirs = rivalsOf(scenario);
        const sides = [...(['service', 'baseline'] as const), ...(scenario.baselineScenario ? (['rest'] as const) : []), ...theirs];
        const ours = {
          service: [serviceFor(scenario), scenario],
          baseline: [baseline, baselineScenario],
          rest: [serviceFor(scenario), baselineScenario],
        } as const;
        const order = turned(sides, round);
        const results = await interleaved(order.map((who) => (typeof who === 'string' ? ours[who] : ([who.server, who.served] as const))));
        order.forEach((who, i) => entry[typeof who === 'string' ? who : who.side].push(results[i]));
        if (switched(scenario)) {
          // The copies the switches compare, in an order that turns by one each round, so drift
          // within a round (autovacuum, the request log table growing) does not always fall on the
          // same copy: the copy with every switch on, which each switch is compared with, was
          // always measured last (docs/benchmark.md, tenth pass). Both copies of a kind land in its row.
          const copies = turned(switchCopies, round);
          const copyResults = await interleaved(copies.map(([, copy]) => [copy, scenario] as const));
          copies.forEach(([name], i) => entry[name].push(copyResults[i]));
        }
        const last = (list: LoadResult[]) => list[list.length - 1];
        log(
          `round ${round}/${settings.rounds} ${scenario.name}: service ${last(entry.service).rps.toFixed(0)}/s, ` +
            `baseline ${last(entry.baseline).rps.toFixed(0)}/s` +
            (entry.rest.length ? `, service over REST ${last(entry.rest).rps.toFixed(0)}/s` : '') +
            theirs.map(({ side, label }) => `, ${label} ${last(entry[side]).rps.toFixed(0)}/s`).join(''),
        );
      }
    }

    const summary = new Map(
      [...samples].map(([name, s]) => [
        name,
        {
          service: summarize(s.service),
          baseline: summarize(s.baseline),
          unlimited: s.unlimited.length ? summarize(s.unlimited) : undefined,
          unlogged: s.unlogged.length ? summarize(s.unlogged) : undefined,
          untimed: s.untimed.length ? summarize(s.untimed) : undefined,
          twin: s.twin.length ? summarize(s.twin) : undefined,
          postgraphile: s.postgraphile.length ? summarize(s.postgraphile) : undefined,
          postgraphileKeyed: s.postgraphileKeyed.length ? summarize(s.postgraphileKeyed) : undefined,
          rest: s.rest.length ? summarize(s.rest) : undefined,
        },
      ]),
    );

    // Latency at a fixed rate both can sustain: 70 % of the baseline's maximum single-read rate.
    const rate = Math.max(1, Math.round(summary.get('read')!.baseline.rps * 0.7));
    log(`fixed rate: ${rate} requests/s of single reads to each`);
    // One run a side a round, the order turning, and the row the median of the rounds' ratios (as
    // every other row): one 10 s run a side, the service's always first, read 1.27× and then 1.79×
    // in two runs of the same code (docs/benchmark.md, thirtieth pass).
    const fixedRuns = { service: [] as LoadResult[], baseline: [] as LoadResult[] };
    for (let round = 1; round <= settings.rounds; round++) {
      for (const side of turned(['service', 'baseline'] as const, round)) {
        fixedRuns[side].push(await measured(side === 'service' ? service : baseline, byName.get('read')!, { ...load, rate }));
      }
    }
    const fixed = { rate, service: summarize(fixedRuns.service), baseline: summarize(fixedRuns.baseline) };
    log(
      `fixed rate: p99 by round, service ${fixedRuns.service.map((r) => r.p99).join(', ')} ms; baseline ${fixedRuns.baseline.map((r) => r.p99).join(', ')} ms`,
    );

    // The sync engine pushing leads to a loopback HubSpot, with a service and database of its own (sync-push.ts).
    // The bench's own servers are paused meanwhile, as in every measured run.
    const sync =
      !named || named.includes('sync')
        ? await alone(servers, undefined, () => measureSyncPush({ databaseUrl, serviceEnv, leads: settings.syncLeads, servers, log }))
        : undefined;

    // One account's noise beside another's reads (noisy-row.ts), the service alone with its own account's and the database quiet.
    const noisy =
      !named || named.includes('noisy')
        ? await alone(servers, service, () =>
            measureNoisyRow({
              databaseUrl,
              redisUrl: redis,
              serviceUrl: service.url,
              noiseS: quick ? 4 : 30,
              leads: quick ? 100 : 600,
              freshWindow: !quick,
              quiet: () => settle(quiet),
              log,
            }),
          )
        : undefined;

    // Memory over a long mixed run at a steady rate, sampled every few seconds.
    if (only) settings.soakS = 0;
    const soakRate = Math.max(1, Math.round(summary.get('read')!.service.rps * 0.5));
    log(`memory soak: ${settings.soakS} s of mixed requests at ${soakRate}/s`);
    const rss: Array<{ atS: number; rssMiB: number }> = [];
    const soakStart = Date.now();
    const sampler = setInterval(
      () => rss.push({ atS: (Date.now() - soakStart) / 1000, rssMiB: service.memory().rssMiB }),
      Math.max(1_000, settings.soakS * 10),
    );
    const mix = ['read', 'page1', 'create', 'deals', 'graphql', 'deep'].map((name) => byName.get(name)!);
    const sliceS = Math.max(1, Math.min(20, settings.soakS / mix.length));
    await alone(servers, service, async () => {
      for (let elapsed = 0, i = 0; elapsed < settings.soakS; elapsed += sliceS, i++) {
        await run(service, mix[i % mix.length], { ...load, durationS: sliceS, rate: soakRate });
        if (i % mix.length === mix.length - 1)
          log(`soak ${Math.min(settings.soakS, elapsed + sliceS).toFixed(0)}/${settings.soakS} s, RSS ${service.memory().rssMiB.toFixed(0)} MiB`);
      }
    });
    clearInterval(sampler);
    rss.push({ atS: (Date.now() - soakStart) / 1000, rssMiB: service.memory().rssMiB });

    const figures: Figures = {
      date: new Date().toISOString(),
      machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`,
      settings,
      titles: Object.fromEntries(all.map((s) => [s.name, s.title])),
      summary: Object.fromEntries(summary),
      fixed,
      memory: {
        service: service.memory(),
        baseline: baseline.memory(),
        postgraphile: rivalServers.get('postgraphile')?.memory(),
        postgraphileKeyed: rivalServers.get('postgraphileKeyed')?.memory(),
        soak: rss,
      },
      postgraphileVersion: rivals.length ? postgraphileVersion() : undefined,
      sync,
      noisy,
      durationS: Math.round((Date.now() - started) / 1000),
    };
    const failed = printReport(figures, log);
    if (write) writeResults(figures);
    if (failed) process.exitCode = 1;
  } finally {
    await Promise.all(closers.map((close) => close()));
    await Promise.all(servers.map((server) => server.stop()));
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});

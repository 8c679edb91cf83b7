/**
 * Builds measured side by side: two checkouts (a change and the commit before it), or one build
 * with and without a switch, on the bench's database, one scenario, several short rounds, the order
 * turning each round. This is how docs/benchmark.md measures a change before keeping it: on two
 * cores, runs minutes apart differ by more than most changes, and two copies of one build differ
 * by up to 10 %, so a change is judged by many rounds, side by side, with a copy of the same build
 * among them to show the noise. Options: USAGE below (`--help`).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { check, drive, Scenario, scenarios } from './load';
import { cpuReading, CpuShares, cpuSpent, ROOT, Server, startServer } from './processes';
import { median } from './median';
import { alone, benchDatabase, log, numberArg, parseCommandLine, prime, redisUrl, REWARM_S, settle, turned } from './runs';
import { seed } from './seed';

const USAGE = `usage: node dist/test/benchmark/side-by-side.js [options] NAME=SOURCE[,VAR=value…] NAME=SOURCE[,VAR=value…] …

Each NAME=SOURCE is one server, measured in turn with the others, round after round:
  SOURCE    a checkout whose dist/ is built for the bench (node scripts/build.js --project
            tsconfig.bench.json), as a path: "." is this one; or "baseline", the hand-written baseline
  VAR=value the server's environment beyond the bench's own (REQUEST_LOGS=off, RATE_LIMITS=off, …)

  --scenario NAME   one of npm run bench's scenarios (default read: GET /v1/leads/{id}); "pdf" is over
                    the service's operation limits, so measure it with RATE_LIMITS=off on every copy
  --rounds N        rounds (default 6)        --duration S   seconds a run (default 6)
  --warmup S        unmeasured seconds per server before the first round (default 3)
  --connections N   (default 10)   --leads N (default 1,000,000)   --deals N (default 20,000)
  --mixed NAME,…    these servers first serve every other scenario for --warmup seconds each (those
                    over the operation limits left out), as the bench's main service does before its
                    later rounds: a history of many kinds of request against one of a single kind
  --profile DIR     every server runs under node --cpu-prof and writes its profile, at its stop, to
                    DIR/NAME/, one file a thread, the main thread's named CPU.<date>.<time>.<pid>.0.<n>
                    (the start and the warm-up are in it too): read each with
                    profile-summary.js, and a share of its samples times the server's CPU per answer
                    is that part's µs per answer (docs/benchmark.md, seventeenth pass)
  --help            this text

Example: a change against the commit before it, with a second copy of the old build to show the noise:
  git worktree add /tmp/before HEAD~1 && ln -s "$PWD/node_modules" /tmp/before/node_modules
  (cd /tmp/before && node scripts/build.js --project tsconfig.bench.json)
  node dist/test/benchmark/side-by-side.js new=. old=/tmp/before old2=/tmp/before

Prints, per round, each server's answers a second and CPU per answer, then medians: answers a
second, the server's CPU time per answer (/proc/<pid>/stat), the whole machine's per answer
(/proc/stat), each against the first server, and in how many rounds each used less CPU per answer;
then the machine's CPU per answer by where it went: the server, PostgreSQL's processes, Redis, the
load generator (this process), and the rest (the kernel's network work, everything else).
PostgreSQL: DATABASE_URL, else the embedded one in .data/bench. Redis: REDIS_URL.
`;

const { values: args, positionals } = parseCommandLine(USAGE, {
  allowPositionals: true,
  options: {
    help: { type: 'boolean', default: false },
    scenario: { type: 'string', default: 'read' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    leads: { type: 'string' },
    deals: { type: 'string' },
    profile: { type: 'string' },
    mixed: { type: 'string' },
  },
});

const COMMAND = 'side-by-side';
const settings = {
  rounds: Math.max(1, numberArg(args.rounds, 6, COMMAND)),
  durationS: numberArg(args.duration, 6, COMMAND),
  warmupS: numberArg(args.warmup, 3, COMMAND),
  connections: numberArg(args.connections, 10, COMMAND),
  leads: numberArg(args.leads, 1_000_000, COMMAND),
  deals: numberArg(args.deals, 20_000, COMMAND),
};

interface Build {
  name: string;
  /** The server's script, relative to this checkout (startServer's ROOT). */
  script: string;
  baseline: boolean;
  env: Record<string, string>;
}

/** Where `--profile` has a server write its profiles. */
const profileDir = (build: Build): string => path.resolve(args.profile!, build.name);

function usageError(message: string): never {
  process.stderr.write(`${COMMAND}: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseBuild(spec: string): Build {
  const match = /^([\w.-]+)=([^,]+)((?:,[A-Z_][A-Z0-9_]*=[^,]*)*)$/.exec(spec);
  if (!match) usageError(`"${spec}" is not NAME=SOURCE[,VAR=value…]`);
  const [, name, source, vars] = match;
  const env = Object.fromEntries(
    vars
      .split(',')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  if (source === 'baseline') return { name, script: 'dist/test/benchmark/baseline-server.js', baseline: true, env };
  const main = path.resolve(source, 'dist/src/main.js');
  if (!existsSync(main)) usageError(`${source} has no dist/src/main.js: build it with node scripts/build.js --project tsconfig.bench.json`);
  return { name, script: path.relative(ROOT, main), baseline: false, env };
}

const builds = positionals.map(parseBuild);
if (builds.length < 2) usageError('name two servers or more');
if (new Set(builds.map((b) => b.name)).size !== builds.length) usageError('each server needs a name of its own');
if (builds.every((b) => b.baseline)) usageError('name one service build at least (it seeds the account)');
// The scenarios' names are known before any account exists: a placeholder account names them.
const scenarioNames = scenarios({ accountId: '', liveKey: '', leadIds: [], deepCursor: '', deepRow: 0, leads: 0 }, '').map((s) => s.name);
if (!scenarioNames.includes(args.scenario)) usageError(`--scenario takes one of ${scenarioNames.join(', ')}`);
const mixed = new Set(args.mixed?.split(',').filter(Boolean) ?? []);
for (const name of mixed)
  if (!builds.some((b) => b.name === name && !b.baseline)) usageError(`--mixed names a service build given as NAME=SOURCE, not "${name}"`);

interface Sample {
  rps: number;
  cpuUs?: number;
  /** The machine's CPU per answer, in all and by process (µs), over the same run. */
  shares?: CpuShares;
}

const format = (value: number | undefined, digits = 0) => (value === undefined ? '–' : value.toFixed(digits));
const ratio = (value: number | undefined, first: number | undefined) => (value === undefined || !first ? '–' : `${(value / first).toFixed(2)}×`);

async function main(): Promise<void> {
  const redis = await redisUrl();
  const database = await benchDatabase();
  log(`database: ${database.label}; Redis: ${redis}`);
  log(`settings: ${JSON.stringify({ scenario: args.scenario, ...settings })}`);
  const servers: Array<{ build: Build; server: Server; samples: Sample[] }> = [];
  const killAll = () => servers.forEach(({ server }) => server.process.exitCode === null && server.process.kill('SIGKILL'));
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      killAll();
      process.exit(130);
    });
  }
  const quiet = new Client({ connectionString: database.url });
  try {
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: redis,
      NODE_ENV: 'production',
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
    };
    // The services apply their migrations on start; the first one seeds (its proposal goes through the API).
    for (const build of builds) {
      const profileArgs = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir(build)}`] : [];
      const server = await startServer(build.name, build.script, { ...env, ...build.env }, profileArgs);
      servers.push({ build, server, samples: [] });
      log(`${build.name}: ${build.script}${Object.keys(build.env).length ? ` with ${JSON.stringify(build.env)}` : ''} at ${server.url}`);
    }
    const seeder = servers.find(({ build }) => !build.baseline)!.server;
    const account = await seed(database.url, { leads: settings.leads, deals: settings.deals, serviceUrl: seeder.url });
    for (const { build, server } of servers) if (!build.baseline) await prime(server, account.liveKey);

    const every = scenarios(account, Date.now().toString(36));
    const scenario = every.find((s) => s.name === args.scenario)!;
    const served = (build: Build): Scenario => (build.baseline ? every.find((s) => s.name === (scenario.baselineScenario ?? scenario.name))! : scenario);
    for (const { build, server } of servers) if (served(build).leadIds) await check(server.url, account.liveKey, served(build));

    await quiet.connect();
    const load = { connections: settings.connections, durationS: settings.durationS };
    for (const { build, server } of servers.filter(({ build }) => mixed.has(build.name))) {
      const others = every.filter((s) => s.name !== scenario.name && !s.overOperationLimit);
      log(`${build.name}: serving ${others.map((s) => s.name).join(', ')} first, ${settings.warmupS} s each`);
      for (const other of others) await drive(server.url, account.liveKey, other, { ...load, durationS: settings.warmupS }, server);
    }
    log('warming up');
    for (const { build, server } of servers) await drive(server.url, account.liveKey, served(build), { ...load, durationS: settings.warmupS }, server);

    for (let round = 1; round <= settings.rounds; round++) {
      // Every position in turn, and every other round backwards, so no server always follows the same one.
      const order = turned(servers, round);
      if (round % 2 === 0) order.reverse();
      const line: string[] = [];
      for (const entry of order) {
        await settle(quiet);
        // Alone on the machine: the other servers are paused meanwhile (runs.ts, alone), and the one
        // measured, just resumed, answers unmeasured for REWARM_S first.
        const { before, result, after } = await alone(
          servers.map(({ server }) => server),
          entry.server,
          async () => {
            await drive(entry.server.url, account.liveKey, served(entry.build), { ...load, durationS: REWARM_S }, entry.server);
            const before = cpuReading();
            const result = await drive(entry.server.url, account.liveKey, served(entry.build), load, entry.server);
            return { before, result, after: cpuReading() };
          },
        );
        const answers = result.rps * settings.durationS;
        if (result.failures) log(`${entry.build.name}: ${result.failures} answers were not 2xx in round ${round}`);
        const spent = before && after && answers > 0 ? cpuSpent(before, after) : undefined;
        const shares = spent && {
          machine: spent.machine / answers,
          postgres: spent.postgres / answers,
          redis: spent.redis / answers,
          load: spent.load / answers,
        };
        entry.samples.push({ rps: result.rps, cpuUs: result.cpuUsPerRequest, shares });
        line.push(`${entry.build.name} ${result.rps.toFixed(0)}/s ${format(result.cpuUsPerRequest)} µs`);
      }
      log(`round ${round}/${settings.rounds}: ${line.join(' | ')}`);
    }

    const medians = servers.map(({ build, samples }) => {
      const known = (values: Array<number | undefined>) => (values.every((v) => v !== undefined) ? median(values as number[]) : undefined);
      return {
        build,
        samples,
        rps: median(samples.map((s) => s.rps)),
        cpuUs: known(samples.map((s) => s.cpuUs)),
        machineUs: known(samples.map((s) => s.shares?.machine)),
      };
    });
    const [first] = medians;
    log('');
    log(
      `${scenario.title}, ${settings.rounds} rounds of ${settings.durationS} s, ${settings.connections} connections; medians, each against ${first.build.name}`,
    );
    log('');
    log(
      `| Server | Answers/s | CPU µs per answer | Machine CPU µs per answer | Answers/s vs ${first.build.name} | CPU vs ${first.build.name} | Rounds with less CPU |`,
    );
    log('|---|---:|---:|---:|---:|---:|---:|');
    for (const row of medians) {
      const lower =
        row === first
          ? '–'
          : `${row.samples.filter((s, i) => s.cpuUs !== undefined && first.samples[i].cpuUs !== undefined && s.cpuUs < first.samples[i].cpuUs!).length} of ${settings.rounds}`;
      log(
        `| ${row.build.name} | ${row.rps.toFixed(0)} | ${format(row.cpuUs)} | ${format(row.machineUs)} | ${ratio(row.rps, first.rps)} | ${ratio(row.cpuUs, first.cpuUs)} | ${lower} |`,
      );
    }
    log('');
    log("The machine's CPU per answer by where it went (µs, medians of each part):");
    log('');
    log('| Server | Machine | Server | PostgreSQL | Redis | Load generator | The rest |');
    log('|---|---:|---:|---:|---:|---:|---:|');
    for (const row of medians) {
      const part = (pick: (shares: CpuShares) => number) => (row.samples.every((s) => s.shares) ? median(row.samples.map((s) => pick(s.shares!))) : undefined);
      const parts = [part((s) => s.postgres), part((s) => s.redis), part((s) => s.load)];
      // The rest per round (machine less every part), then its median, so the columns need not add up exactly.
      const rest = row.samples.every((s) => s.shares && s.cpuUs !== undefined)
        ? median(row.samples.map((s) => s.shares!.machine - s.cpuUs! - s.shares!.postgres - s.shares!.redis - s.shares!.load))
        : undefined;
      log(`| ${row.build.name} | ${format(row.machineUs)} | ${format(row.cpuUs)} | ${parts.map((v) => format(v)).join(' | ')} | ${format(rest)} |`);
    }
  } finally {
    await quiet.end().catch(() => undefined);
    await Promise.all(servers.map(({ server }) => server.stop()));
    await database.stop();
  }
  if (args.profile) log(`profiles: ${servers.map(({ build }) => path.join(profileDir(build), '*.cpuprofile')).join(', ')}`);
}

main().catch((error: unknown) => {
  console.error(`${COMMAND}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from '../benchmark/processes';
import { ROOT } from '../helpers/dist';
import { workerDatabaseUrl } from '../helpers/database';
import { testRedisUrl } from '../helpers/app';

/**
 * `npm run bench -- --quick` runs to completion: the service, the baseline, the service without
 * rate limiting, without request logs and without statement timeouts, and PostGraphile start, the
 * account is seeded through the CLI (and a proposal through the API), every scenario answers 2xx on
 * both sides, each server tells its event-loop delay and, with --alloc-profile, the bytes it
 * allocated per request, and the report prints. No timing is asserted
 * (the figures are for docs/benchmark.md).
 */
describe('benchmark (quick mode, as a smoke test)', () => {
  const redisUrl = testRedisUrl();
  const maybe = redisUrl ? it : it.skip;

  /** Runs one of the benchmark's commands (dist/test/benchmark/<script>.js) on the worker's database; resolves with its exit code and output. */
  const runBench = (script: string, args: string[], databaseUrl: string) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, `dist/test/benchmark/${script}.js`), ...args], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('exit', (code) => resolve({ code, output }));
    });

  /**
   * The keyed PostGraphile the targets compare with does the service's job: no key, no answer; the
   * bench account's live key reads its live leads, and neither a test-mode lead of the same account
   * nor another account's lead (row-level security,
   * postgraphile-server.ts). Run on the database the bench seeded.
   */
  async function checkKeyedPostgraphile(databaseUrl: string) {
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    const secret = `sk_live_keyedcheck${Date.now().toString(36)}`;
    // A port the system just handed out: a random one in 40,000–60,000 lies in Linux's ephemeral range,
    // where any outgoing connection may hold it, and the server then exits on EADDRINUSE.
    const port = await freePort();
    const server = spawn(process.execPath, [path.join(ROOT, 'dist/test/benchmark/postgraphile-server.js')], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), POSTGRAPHILE_KEYED: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    server.stderr?.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-2_000)));
    const copies = ['lead_keyedchecktest', 'lead_keyedcheckother'];
    const otherAccount = `acct_keyedcheck${Date.now().toString(36)}`;
    try {
      const { rows } = await db.query<{ id: string; account_id: string }>('select id, account_id from leads where livemode order by created_at desc limit 1');
      const [{ id: liveLead, account_id: accountId }] = rows;
      await db.query(
        `insert into api_keys (id, account_id, name, type, prefix, last4, secret_hash, created_at)
         values ($1, $2, 'keyed check', 'live', 'sk_live_', right($3, 4), encode(sha256(convert_to($3, 'UTF8')), 'hex'), now())`,
        [`key_keyedcheck${Date.now().toString(36)}`, accountId, secret],
      );
      // Two copies of the lead: in test mode, and under another account (a copy of the bench's).
      const copy = (table: string, id: string, changes: Record<string, unknown>) =>
        db.query(`insert into ${table} select (jsonb_populate_record(null::${table}, to_jsonb(t) || $2::jsonb)).* from ${table} t where t.id = $1`, [
          id,
          JSON.stringify(changes),
        ]);
      await copy('accounts', accountId, { id: otherAccount, email: `${otherAccount}@bench.example` });
      await copy('leads', liveLead, { id: copies[0], livemode: false });
      await copy('leads', liveLead, { id: copies[1], account_id: otherAccount });
      const url = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 60_000;
      while (
        !(await fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        ))
      ) {
        if (Date.now() > deadline || server.exitCode !== null)
          throw new Error(`the keyed PostGraphile did not become ready on port ${port}: ${errors || '(nothing on stderr)'}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const lead = (id: string, key?: string) =>
        fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
          body: JSON.stringify({ query: 'query($id: String!) { leadById(id: $id) { id } }', variables: { id } }),
        }).then(async (response) => ({ status: response.status, body: (await response.json()) as { data?: { leadById: { id: string } | null } } }));
      expect((await lead(liveLead)).status).toBe(401);
      expect((await lead(liveLead, 'sk_live_unknown')).status).toBe(401);
      expect((await lead(liveLead, secret)).body.data).toEqual({ leadById: { id: liveLead } });
      for (const copy of copies) expect((await lead(copy, secret)).body.data).toEqual({ leadById: null });
    } finally {
      server.kill('SIGTERM');
      await db.query('delete from leads where id = any($1)', [copies]);
      await db.query("delete from api_keys where name = 'keyed check'");
      await db.query('delete from accounts where id = $1', [otherAccount]);
      await db.end();
    }
  }

  maybe('runs every scenario against the service and the baseline and prints the report', async () => {
    const databaseUrl = await workerDatabaseUrl('_bench');
    const started = new Date();
    const { code, output } = await runBench('bench', ['--quick', '--no-write', '--alloc-profile'], databaseUrl);
    if (code !== 0) throw new Error(`bench exited with ${code}:\n${output.slice(-3_000)}`);

    expect(output).toMatch(/\[bench\] leads \[=+\] 100% 2000\/2000 rows/);
    const titles = [
      'GET /v1/leads/{id}',
      'GET /v1/leads?limit=50',
      'POST /v1/leads',
      'GET /v1/deals?stage=proposal',
      'POST /graphql { lead(id) }',
      'GET /v1/proposals/{id}/pdf (stored; service with RATE_LIMITS=off)',
      'POST /graphql { leads(limit: 50) }',
    ];
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const title of titles) {
      // Each scenario's row: service and baseline throughput, and their ratio.
      expect(output).toMatch(new RegExp(`\\| ${escape(title)} \\| \\d+ \\| \\d+[^|]* \\| \\d+\\.\\d\\d× \\|`));
      // And its event-loop delay p99 on the service and the baseline (the other servers run single reads and page 1 only).
      expect(output).toMatch(new RegExp(`\\| ${escape(title)} \\| \\d+\\.\\d \\| \\d+\\.\\d \\| `));
    }
    expect(output).toMatch(
      /Event-loop delay p99 under each scenario \(ms\): service \/ baseline \/ without rate limiting \/ without request logs \/ without statement timeouts/,
    );
    // Each server's CPU time per answered request, read from /proc around every run, and the service's over the baseline's.
    expect(output).toMatch(
      /CPU time per answered request \(µs; [^)]*\): service \/ baseline \/ without rate limiting \/ without request logs \/ without statement timeouts/,
    );
    expect(output).toMatch(/\| GET \/v1\/leads\/\{id\} \| \d+ \| \d+ \| \d+ \| \d+ \| \d+ \| \d+ \| – \| – \| – \| \d+\.\d\d× \|/);
    expect(output).toMatch(/\| POST \/v1\/leads \| \d+ \| \d+ \| – \| – \| – \| – \| – \| – \| – \| \d+\.\d\d× \|/);
    // A GraphQL query's REST route, run on the same service in the same round beside it (the last column).
    expect(output).toMatch(/\| POST \/graphql \{ lead\(id\) \} \| \d+ \| \d+ \| – \| – \| – \| – \| \d+ \| \d+ \| \d+ \| \d+\.\d\d× \|/);
    expect(output).toMatch(/round 1\/1 graphql: service \d+\/s, baseline \d+\/s, service over REST \d+\/s/);
    // The noisy-neighbour row (issue 64): A's reads beside B's noise, each phase against A's idle reads.
    expect(output).toMatch(
      /\| Noisy neighbour: A's reads while B spends its quota, ÷ A's idle \([\d.]+ \/ [\d.]+ ms, \d+ reads\) \| p50 [\d.]+ ms \([\d.]+×\), p99 [\d.]+ ms \([\d.]+×\), \d+ reads \| p50 ≤ 1\.5×, p99 ≤ 3× \|/,
    );
    expect(output).toMatch(/\| Noisy neighbour: A's reads while B is refused \(429\)/);
    expect(output).toMatch(/\| \/graphql lead by id vs GET \/v1\/leads\/\{id\} \| \d+\.\d\d× \| ≥ 0\.9× \|/);
    // Quick mode: one process of each copy the switch rows compare (a full run pools three of each).
    expect(output).toMatch(/10 connections; medians shown; a ratio is the median of the rounds' ratios, each of two runs measured in the same round/);
    expect(output).not.toMatch(/\(copy \d+\) http:/);
    // Each switch is compared with a copy of the service that serves what the switch-off copies serve.
    expect(output).toMatch(
      /without statement timeouts \/ copy with every switch on \/ postgraphile \/ postgraphile \(keyed\) \/ service over rest, and the service's ÷ the baseline's/,
    );
    expect(output).toMatch(
      /costs in CPU time per request \(the copy with every switch on ÷ the copy with it off − 1\): .*Request logs on GET \/v1\/leads\/\{id\} [+-]\d+\.\d %/,
    );
    expect(output).toMatch(
      /Copy of the service with every switch on \(what each switch is compared with\): GET \/v1\/leads\/\{id\} \d+ req\/s, GET \/v1\/leads\?limit=50 \d+ req\/s\./,
    );
    expect(output).toMatch(
      /\| Rate limiting in Redis \(plan quotas and per-root-field operation limits, RATE_LIMITS=off\): throughput cost on GET \/v1\/leads\/\{id\} \| -?\d+\.\d % \| ≤ 5 % \|/,
    );
    expect(output).toMatch(/Service without request logs \(REQUEST_LOGS=off\): GET \/v1\/leads\/\{id\} \d+ req\/s, GET \/v1\/leads\?limit=50 \d+ req\/s\./);
    expect(output).toMatch(/\| Request logs: throughput cost on GET \/v1\/leads\/\{id\} \| -?\d+\.\d % \| ≤ 5 % \|/);
    expect(output).toMatch(/\| Statement timeouts: throughput cost on GET \/v1\/leads\?limit=50 \| -?\d+\.\d % \| ≤ 5 % \|/);
    expect(output).toMatch(/Peak RSS: service \d+\.\d MiB, baseline \d+\.\d MiB, PostGraphile \d+\.\d MiB, PostGraphile \(keyed\) \d+\.\d MiB/);
    // Both PostGraphiles answered the same GraphQL queries (checked for data, the page's leads the
    // service's, and no errors before they were measured): open, and keyed; the targets compare with the keyed one.
    expect(output).toMatch(/GraphQL: the service vs PostGraphile 4\.\d+\.\d+ .*The targets compare with the keyed one\./);
    for (const title of ['lead\\(id\\)', 'leads\\(limit: 50\\)']) {
      const measured = '\\d+ \\| \\d+\\.\\d\\d× \\| \\d+\\.\\d ms / \\d+\\.\\d ms';
      expect(output).toMatch(new RegExp(`\\| POST /graphql \\{ ${title} \\} \\| \\d+ \\| [^|]+ \\| ${measured} \\| ${measured} \\|`));
    }
    expect(output).toMatch(/\| \/graphql first 50 leads vs PostGraphile doing the same job \(keyed\) \| \d+\.\d\d× \| ≥ 1\.0× \|/);
    await checkKeyedPostgraphile(databaseUrl);
    expect(output).not.toMatch(/FAILED/);

    // --alloc-profile: bytes allocated per request on both sides, and a profile alloc-summary reads.
    const allocated = /bytes allocated per request, GET \/v1\/leads\/\{id\}: service ([\d,]+), baseline ([\d,]+)/.exec(output);
    expect(allocated).not.toBeNull();
    const [service, baseline] = [allocated![1], allocated![2]].map((bytes) => Number(bytes.replace(/,/g, '')));
    // A read allocates at least its answer and its rows (tens of KB); a profile that counted only survivors would show far less.
    expect([service > 10_000, baseline > 10_000]).toEqual([true, true]);
    const summary = execFileSync(
      process.execPath,
      [path.join(ROOT, 'dist/test/benchmark/alloc-summary.js'), path.join(ROOT, '.data/bench/profiles/ALLOC.read.service.heapprofile'), '--requests', '100'],
      { encoding: 'utf8' },
    );
    expect(summary).toMatch(/B\/req allocated/);
    expect(summary).toMatch(/By package \(self\)\n +[\d,]+ B\/req/);
    // Both summaries tell their usage: asked, with --help (exit 0); without a file or with a wrong option (exit 2).
    for (const script of ['alloc-summary', 'profile-summary']) {
      expect((await runBench(script, ['--help'], databaseUrl)).code).toBe(0);
      const missing = await runBench(script, [], databaseUrl);
      expect([missing.code, missing.output]).toEqual([
        2,
        expect.stringMatching(new RegExp(`^${script}: name a \\.\\w+ file\\n\\nusage: node dist/test/benchmark/${script}\\.js`)),
      ]);
      expect(await runBench(script, ['--nope', 'x'], databaseUrl)).toEqual({ code: 2, output: expect.stringMatching(/Unknown option '--nope'[^]*usage:/) });
    }

    // The leads the create scenario sent are in the database, scored, each with its two events.
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const created = await db.query<{ leads: string; events: string }>(
        `select count(*) as leads,
                (select count(*) from events e where e.type in ('lead.created', 'lead.scored') and e.data->'object'->>'contact_email' like '%@bench-%') as events
           from leads where contact_email like '%@bench-%' and score between 0 and 100`,
      );
      expect(Number(created.rows[0].leads)).toBeGreaterThan(0);
      expect(Number(created.rows[0].events)).toBeGreaterThanOrEqual(2 * Number(created.rows[0].leads));
      // The servers with request logs on stored the bench's requests (written off the request path, flushed on stop);
      // the scenarios' single reads among them, under their route pattern, with the live key shown.
      const logged = await db.query<{ count: string }>(
        `select count(*) from request_logs where route = '/v1/leads/:id' and method = 'GET' and status = 200 and livemode and key_prefix like 'sk\\_live\\_…%' and created_at >= $1`,
        [started],
      );
      expect(Number(logged.rows[0].count)).toBeGreaterThan(0);
      // The pdf scenario's proposal was rendered once, before the measured requests, and stored.
      const pdfs = await db.query<{ count: string }>(
        `select count(*) from proposal_pdfs p join accounts a on a.id = p.account_id where a.email = 'bench@sales-pipeline.test' and p.created_at >= $1`,
        [started],
      );
      expect(Number(pdfs.rows[0].count)).toBe(1);
    } finally {
      await db.end();
    }
  });

  maybe('measures builds side by side (side-by-side.js): each round turns the order, then medians against the first', async () => {
    const databaseUrl = await workerDatabaseUrl('_bench');
    const run = (args: string[]) => runBench('side-by-side', args, databaseUrl);

    // A mistake on the command line is told with the usage, before anything starts.
    const wrong = await run(['only=.']);
    expect(wrong.code).toBe(2);
    expect(wrong.output).toMatch(/side-by-side: name two servers or more\n\nusage: node dist\/test\/benchmark\/side-by-side\.js/);
    expect((await run(['a=/nowhere', 'b=.'])).output).toMatch(/\/nowhere has no dist\/src\/main\.js: build it with/);
    const scenario = await run(['--scenario', 'nope', 'a=.', 'b=.']);
    expect([scenario.code, /--scenario takes one of read, page1, /.test(scenario.output)]).toEqual([2, true]);
    const mixed = await run(['--mixed', 'base', 'a=.', 'base=baseline']);
    expect([mixed.code, mixed.output.includes('--mixed names a service build given as NAME=SOURCE, not "base"')]).toEqual([2, true]);

    const profiles = mkdtempSync(path.join(tmpdir(), 'side-by-side-'));
    const { code, output } = await run(
      ['--leads', '2000', '--deals', '300', '--rounds', '2', '--duration', '1', '--warmup', '1', '--profile', profiles, '--mixed', 'unlogged'].concat([
        'build=.',
        'unlogged=.,REQUEST_LOGS=off',
        'base=baseline',
      ]),
    );
    if (code !== 0) throw new Error(`side-by-side exited with ${code}:\n${output.slice(-3_000)}`);
    // --mixed: that server first serves every other scenario (the PDF is over the operation limits), the others only the one measured.
    expect(output).toMatch(/unlogged: serving page1, deep, create, deals, graphql, graphql-page first, 1 s each/);
    expect(output).not.toMatch(/(build|base): serving/);
    // Round 1 in the order given, round 2 turned by one and backwards.
    expect(output).toMatch(/round 1\/2: build \d+\/s \d+ µs \| unlogged \d+\/s \d+ µs \| base \d+\/s \d+ µs/);
    expect(output).toMatch(/round 2\/2: build \d+\/s \d+ µs \| base \d+\/s \d+ µs \| unlogged \d+\/s \d+ µs/);
    expect(output).toMatch(/\| build \| \d+ \| \d+ \| \d+ \| 1\.00× \| 1\.00× \| – \|/);
    for (const name of ['unlogged', 'base'])
      expect(output).toMatch(new RegExp(`\\| ${name} \\| \\d+ \\| \\d+ \\| \\d+ \\| \\d+\\.\\d\\d× \\| \\d+\\.\\d\\d× \\| [0-2] of 2 \\|`));
    // Then the machine's CPU per answer by where it went: every server's reads reach PostgreSQL, and the load generator works for each.
    for (const name of ['build', 'unlogged', 'base']) {
      const row = new RegExp(`\\| ${name} \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (-?\\d+) \\|\\n`).exec(
        output.slice(output.indexOf('by where it went')),
      );
      expect(row).not.toBeNull();
      const [machine, server, postgres, , load] = row!.slice(1).map(Number);
      expect([postgres > 0, load > 0, machine >= server]).toEqual([true, true, true]);
    }
    expect(output).not.toMatch(/answers were not 2xx/);
    // --profile: each server wrote its CPU profile at its stop, in a folder of its own.
    expect(output).toContain(`profiles: ${path.join(profiles, 'build', '*.cpuprofile')}`);
    for (const name of ['build', 'unlogged', 'base']) {
      // One a thread (the service's workers have their own); the main thread's is the one with thread id 0.
      const main = readdirSync(path.join(profiles, name)).filter((file) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(file));
      expect(main).toHaveLength(1);
      const profile = JSON.parse(readFileSync(path.join(profiles, name, main[0]), 'utf8')) as { nodes: unknown[]; samples: unknown[] };
      expect([profile.nodes.length > 0, profile.samples.length > 0]).toEqual([true, true]);
    }
    rmSync(profiles, { recursive: true, force: true });
  });
});

import { benchFetch } from './processes';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { Client } from 'pg';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'dist/src/cli/main.js');

export const BENCH_EMAIL = 'bench@sales-pipeline.test';
/** Seeded rows have ids `lead_BENCH000…<n>` (valid lead ids, Crockford base32), so a rerun tops up instead of starting over. */
const SEEDED_LEAD = (n: string) => `'lead_BENCH' || lpad(${n}::text, 21, '0')`;
const SEEDED_DEAL = (n: string) => `'deal_BENCH' || lpad(${n}::text, 21, '0')`;
const BATCH = 50_000;

export interface BenchAccount {
  accountId: string;
  liveKey: string;
  leadIds: string[];
  /** The cursor of the page that starts near row `deepRow` (newest first). */
  deepCursor: string;
  deepRow: number;
  leads: number;
  /** A proposal of the first seeded deal, its PDF rendered and stored (the `pdf` scenario's); none without deals. */
  proposalId?: string;
}

function cli(databaseUrl: string, args: string[]): string {
  return execFileSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/**
 * The bench account, through the documented CLI (CONTRACT §14): enterprise plan, contract limits
 * high enough not to interfere (rate limiting stays on and counts every request), a new live key.
 */
function prepareAccount(databaseUrl: string): string {
  try {
    cli(databaseUrl, ['accounts', 'create', '--email', BENCH_EMAIL, '--name', 'Benchmark', '--plan', 'enterprise']);
  } catch (error) {
    if (!/already|exists/i.test(String((error as { stderr?: string }).stderr))) throw error;
  }
  cli(databaseUrl, ['accounts', 'set-limits', '--email', BENCH_EMAIL, '--per-minute', '100000000', '--per-day', 'none']);
  return cli(databaseUrl, ['keys', 'create', '--email', BENCH_EMAIL, '--type', 'live', '--name', `bench ${new Date().toISOString()}`]);
}

async function insertInBatches(db: Client, label: string, from: number, to: number, insert: (from: number, to: number) => Promise<void>) {
  if (from >= to) return;
  const bar = new SingleBar({
    format: `[bench] ${label} [{bar}] {percentage}% {value}/{total} rows, ETA {eta_formatted}`,
    hideCursor: true,
    noTTYOutput: true,
    notTTYSchedule: 5_000,
  });
  bar.start(to, from);
  for (let start = from; start < to; start += BATCH) {
    const end = Math.min(to, start + BATCH);
    await insert(start, end);
    bar.update(end);
  }
  bar.stop();
  await db.query('analyze leads; analyze deals');
}

/**
 * One proposal, made through the service's API as a user would (POST /v1/proposals from the first
 * seeded deal), and its PDF asked once: the service renders it on the first request and stores it,
 * so the measured requests (and the baseline, which reads proposal_pdfs) get the stored bytes.
 */
async function seedProposal(serviceUrl: string, liveKey: string): Promise<string> {
  const headers = { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' };
  const created = await benchFetch(`${serviceUrl}/v1/proposals`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ deal_id: `deal_BENCH${'0'.repeat(21)}`, title: 'Benchmark proposal' }),
  });
  if (created.status !== 201) throw new Error(`POST /v1/proposals answered ${created.status}: ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };
  const pdf = await benchFetch(`${serviceUrl}/v1/proposals/${id}/pdf`, { headers });
  const type = pdf.headers.get('content-type');
  if (pdf.status !== 200 || type !== 'application/pdf') throw new Error(`GET /v1/proposals/${id}/pdf answered ${pdf.status} ${type}`);
  await pdf.arrayBuffer();
  return id;
}

/**
 * Fills the bench account with `leads` leads (and a pipeline of deals) in SQL batches, with a
 * progress bar. Rows are spread 10 ms apart in created_at, scores over 0–100, five industries.
 * Then, when there are deals, one proposal through the service at `serviceUrl` (seedProposal).
 */
export async function seed(databaseUrl: string, options: { leads: number; deals: number; serviceUrl: string }): Promise<BenchAccount> {
  const liveKey = prepareAccount(databaseUrl);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const account = await db.query<{ id: string }>('select id from accounts where email = $1', [BENCH_EMAIL]);
    const accountId = account.rows[0].id;
    const count = async (table: string, prefix: string) =>
      Number((await db.query(`select count(*) from ${table} where account_id = $1 and id like $2`, [accountId, `${prefix}%`])).rows[0].count);

    await insertInBatches(db, 'leads', await count('leads', 'lead_BENCH'), options.leads, (from, to) =>
      db
        .query(
          `insert into leads (id, created_at, updated_at, account_id, livemode, company, contact_email, contact_name, industry, employees,
           website, country, source, status, score, score_label, score_signals, score_base, model_version, scored_at, metadata)
         select ${SEEDED_LEAD('g')}, t, t, $1, true, 'Company ' || g, 'contact' || g || '@company' || g || '.test', 'Contact ' || g,
           (array['software','healthcare','finance','retail','manufacturing'])[1 + g % 5], 10 + ((g::bigint * 7919) % 5000)::int,
           'https://company' || g || '.test', (array['US','DE','JP','FR','GB'])[1 + g % 5],
           (array['referral','inbound','partner','event'])[1 + g % 4], 'new', s,
           case when s >= 70 then 'hot' when s >= 40 then 'warm' else 'cold' end, '[]', 40, 'prior-v1', t, '{}'
           from generate_series($2::int, $3::int - 1) g,
           lateral (select timestamptz '2025-01-01' + g * interval '10 milliseconds' as t, (g * 37) % 101 as s) x`,
          [accountId, from, to],
        )
        .then(() => undefined),
    );
    // Open stages only: with enough won and lost deals the lead-score trainer would start rescoring
    // a million leads (and writing their lead.scored events) in the middle of the measurements.
    await insertInBatches(db, 'deals', await count('deals', 'deal_BENCH'), options.deals, (from, to) =>
      db
        .query(
          `insert into deals (id, created_at, updated_at, account_id, livemode, name, lead_id, value_minor, currency, stage,
           expected_close_date, owner, metadata, stage_changed_at)
         select ${SEEDED_DEAL('g')}, t, t, $1, true, 'Deal ' || g, ${SEEDED_LEAD('g')}, 100000 + (g::bigint * 7919) % 9000000, 'USD',
           (array['prospecting','qualification','proposal','negotiation'])[1 + g % 4],
           date '2026-01-01' + (g % 365), 'rep' || (g % 20) || '@acme.test', '{}', t
           from generate_series($2::int, $3::int - 1) g,
           lateral (select timestamptz '2025-01-01' + g * interval '10 milliseconds' as t) x`,
          [accountId, from, Math.min(to, options.leads)],
        )
        .then(() => undefined),
    );

    const leadIds = (
      await db.query<{ id: string }>(`select ${SEEDED_LEAD('g')} as id from generate_series(0, $1::int - 1, greatest(1, $1::int / 1000)) g`, [options.leads])
    ).rows.map((row) => row.id);
    // One OFFSET query, once, to find where the deep page starts; the benchmark then pages from it by cursor.
    const deepRow = Math.floor(options.leads * 0.99);
    const deep = await db.query<{ id: string; created_at: Date }>(
      'select id, created_at from leads where account_id = $1 and livemode = true order by created_at desc, id desc offset $2 limit 1',
      [accountId, deepRow - 1],
    );
    const deepCursor = Buffer.from(JSON.stringify({ s: '-created_at', v: deep.rows[0].created_at.toISOString(), i: deep.rows[0].id })).toString('base64url');
    const proposalId = options.deals > 0 ? await seedProposal(options.serviceUrl, liveKey) : undefined;
    return { accountId, liveKey, leadIds, deepCursor, deepRow, leads: options.leads, proposalId };
  } finally {
    await db.end();
  }
}

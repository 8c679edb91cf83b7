import autocannon from 'autocannon';
import type { LoopDelay } from './loop-delay';
import { median } from './median';
import type { BenchAccount } from './seed';

/** One kind of request the benchmark sends, to the service and to the baseline alike. */
export interface Scenario {
  name: string;
  title: string;
  method: 'GET' | 'POST';
  /** Which request to send next (a different lead id, a new e-mail address). */
  next(): { path: string; body?: string };
  /** Only the service answers it (GraphQL); the baseline's REST equivalent is named here. */
  baselineScenario?: string;
  /**
   * The service limits this operation per account far below what a load run sends (proposalPdf:
   * 120 a minute), so its side is measured on the service with RATE_LIMITS=off.
   */
  overOperationLimit?: boolean;
  /** A GraphQL answer's lead ids, for the sanity request (`check`) made before any measurement. */
  leadIds?(data: Record<string, unknown>): string[];
}

const LEAD_FIELDS =
  'id object createdAt updatedAt livemode company contactEmail contactName industry employees website country source status score scoreLabel modelVersion scoredAt metadata';
/** The same columns under PostGraphile's names; `object` is a constant on our side, its `__typename` on PostGraphile's. */
const POSTGRAPHILE_LEAD_FIELDS = LEAD_FIELDS.replace('object', '__typename');

/** A repeated document with variables, as a dashboard or a generated client sends it. */
const graphqlBody = (query: string, variables: Record<string, unknown>) => JSON.stringify({ query, variables });
type Json = Record<string, unknown>;
const idsOf = (leads: unknown) => (Array.isArray(leads) ? leads : [leads]).filter(Boolean).map((lead) => (lead as Json).id as string);

export function scenarios(account: BenchAccount, runTag: string): Scenario[] {
  let turn = 0;
  const nextLead = () => account.leadIds[(turn = (turn + 1) % account.leadIds.length)];
  let created = 0;
  return [
    { name: 'read', title: 'GET /v1/leads/{id}', method: 'GET', next: () => ({ path: `/v1/leads/${nextLead()}` }) },
    { name: 'page1', title: 'GET /v1/leads?limit=50', method: 'GET', next: () => ({ path: '/v1/leads?limit=50' }) },
    {
      name: 'deep',
      title: `GET /v1/leads?limit=50 at row ${account.deepRow.toLocaleString('en-US')}`,
      method: 'GET',
      next: () => ({ path: `/v1/leads?limit=50&cursor=${account.deepCursor}` }),
    },
    {
      name: 'create',
      title: 'POST /v1/leads',
      method: 'POST',
      next: () => {
        created += 1;
        return {
          path: '/v1/leads',
          body: JSON.stringify({
            company: `Bench ${runTag} ${created}`,
            contact_email: `lead${created}@bench-${runTag}.example`,
            contact_name: 'Alex Doe',
            industry: 'software',
            employees: 50 + (created % 900),
            website: `https://bench-${runTag}.example`,
            source: 'referral',
          }),
        };
      },
    },
    { name: 'deals', title: 'GET /v1/deals?stage=proposal', method: 'GET', next: () => ({ path: '/v1/deals?stage=proposal' }) },
    {
      name: 'pdf',
      title: 'GET /v1/proposals/{id}/pdf (stored; service with RATE_LIMITS=off)',
      method: 'GET',
      overOperationLimit: true,
      next: () => ({ path: `/v1/proposals/${account.proposalId}/pdf` }),
    },
    {
      name: 'graphql',
      title: 'POST /graphql { lead(id) }',
      method: 'POST',
      baselineScenario: 'read',
      next: () => ({ path: '/graphql', body: graphqlBody(`query Lead($id: ID!) { lead(id: $id) { ${LEAD_FIELDS} } }`, { id: nextLead() }) }),
      leadIds: (data) => idsOf(data.lead),
    },
    {
      name: 'graphql-page',
      title: 'POST /graphql { leads(limit: 50) }',
      method: 'POST',
      baselineScenario: 'page1',
      next: () => ({
        path: '/graphql',
        body: graphqlBody(`query Leads($filter: LeadListInput) { leads(filter: $filter) { object hasMore nextCursor data { ${LEAD_FIELDS} } } }`, {
          filter: { limit: 50 },
        }),
      }),
      leadIds: (data) => idsOf((data.leads as Json).data),
    },
  ];
}

/**
 * PostGraphile's equivalents of our GraphQL scenarios (keyed by their names): the same lead by its
 * primary key, and the account's first 50 live leads in our list's order (created_at desc, id desc),
 * with the same columns and the page's "is there more" and cursor. Open (no key), the page names
 * the account and mode in its condition; keyed (postgraphile-server.ts, POSTGRAPHILE_KEYED=1), the
 * key sent with every request gives them, and row-level security applies them to both queries.
 */
export function postgraphileScenarios(account: BenchAccount, keyed = false): Record<string, Scenario> {
  const kind = keyed ? 'postgraphile-keyed' : 'postgraphile';
  const condition = keyed ? '' : ', condition: { accountId: $accountId, livemode: true }';
  let turn = 0;
  const nextLead = () => account.leadIds[(turn = (turn + 1) % account.leadIds.length)];
  return {
    graphql: {
      name: `${kind}-lead`,
      title: `PostGraphile${keyed ? ' (keyed)' : ''} { leadById(id) }`,
      method: 'POST',
      next: () => ({
        path: '/graphql',
        body: graphqlBody(`query Lead($id: String!) { leadById(id: $id) { ${POSTGRAPHILE_LEAD_FIELDS} } }`, { id: nextLead() }),
      }),
      leadIds: (data) => idsOf(data.leadById),
    },
    'graphql-page': {
      name: `${kind}-page`,
      title: `PostGraphile${keyed ? ' (keyed)' : ''} { allLeads(first: 50) }`,
      method: 'POST',
      next: () => ({
        path: '/graphql',
        body: graphqlBody(
          `query Leads(${keyed ? '' : '$accountId: String!, '}$first: Int!) {
            allLeads(first: $first, orderBy: [CREATED_AT_DESC, ID_DESC]${condition}) {
              __typename pageInfo { hasNextPage endCursor } nodes { ${POSTGRAPHILE_LEAD_FIELDS} }
            }
          }`,
          keyed ? { first: 50 } : { accountId: account.accountId, first: 50 },
        ),
      }),
      leadIds: (data) => idsOf((data.allLeads as Json).nodes),
    },
  };
}

export interface LoadResult {
  /** Successful (2xx) responses per second. */
  rps: number;
  p50: number;
  p99: number;
  /** Responses that were not 2xx, and connection errors; a run with any is reported, not hidden. */
  failures: number;
  /** The measured server's event-loop delay p99 over the run, in ms (loop-delay.ts); absent in older figures. */
  loopP99Ms?: number;
  /**
   * The measured server's CPU time (user + system) over the run per 2xx answer, in µs: what one
   * request costs the process, which moves less with the machine's load than throughput does. Absent
   * in older figures, and where /proc cannot be read.
   */
  cpuUsPerRequest?: number;
}

export interface LoadOptions {
  connections: number;
  durationS: number;
  /** A fixed rate for all connections together (requests per second); unset: as fast as it answers. */
  rate?: number;
}

/**
 * One request of a GraphQL scenario before it is measured: autocannon counts only non-2xx answers as
 * failures, and a GraphQL error (or a null lead) comes back as 200. Throws with the answer unless it
 * carries data, no errors, and at least one lead; returns the leads' ids.
 */
export async function check(url: string, key: string, scenario: Scenario): Promise<string[]> {
  const { path, body } = scenario.next();
  const response = await fetch(`${url}${path}`, {
    method: scenario.method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  let answer: { data?: Json | null; errors?: unknown[] } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    // not JSON: reported below with the text
  }
  const ids = response.ok && answer.data && !answer.errors ? (scenario.leadIds?.(answer.data) ?? []) : [];
  if (!ids.length) throw new Error(`${scenario.title} at ${url}: ${response.status} ${text.slice(0, 2_000)}`);
  return ids;
}

/** What drive reads off the server it measures (processes.ts, Server): its event-loop delay and CPU time. */
export interface Measured {
  loopDelay?: (action: 'start' | 'stop') => Promise<LoopDelay>;
  cpuMicros?: () => number | undefined;
}

/**
 * Drives `url` with one scenario through autocannon on loopback. `server.loopDelay` is started
 * before the run and stopped after it, for the run's figures; `server.cpuMicros` before
 * and after, for the CPU time per answer.
 */
export async function drive(url: string, key: string, scenario: Scenario, options: LoadOptions, server: Measured = {}): Promise<LoadResult> {
  await server.loopDelay?.('start');
  const cpuBefore = server.cpuMicros?.();
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.durationS,
    overallRate: options.rate,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    requests: [
      {
        method: scenario.method,
        setupRequest: (request) => ({ ...request, ...scenario.next() }),
      },
    ],
  });
  const cpuAfter = server.cpuMicros?.();
  return {
    rps: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx + result.errors,
    loopP99Ms: (await server.loopDelay?.('stop'))?.p99Ms,
    cpuUsPerRequest: cpuBefore !== undefined && cpuAfter !== undefined && result['2xx'] > 0 ? (cpuAfter - cpuBefore) / result['2xx'] : undefined,
  };
}

/**
 * One run made of slices of equal length (the bench's --slices): answers a second over them all,
 * CPU time per answer over all their answers, failures summed, and the medians of the slices'
 * latencies and event-loop delay p99 (autocannon reports percentiles, not the histograms that would
 * merge).
 */
export function combined(slices: readonly LoadResult[]): LoadResult {
  if (slices.length === 1) return slices[0];
  const answers = slices.map((s) => s.rps);
  const total = answers.reduce((sum, a) => sum + a, 0);
  const loop = slices.map((s) => s.loopP99Ms).filter((ms): ms is number => ms !== undefined);
  const cpu = slices.every((s) => s.cpuUsPerRequest !== undefined) && total > 0;
  return {
    rps: total / slices.length,
    p50: median(slices.map((s) => s.p50)),
    p99: median(slices.map((s) => s.p99)),
    failures: slices.reduce((sum, s) => sum + s.failures, 0),
    loopP99Ms: loop.length === slices.length ? median(loop) : undefined,
    cpuUsPerRequest: cpu ? slices.reduce((sum, s, i) => sum + s.cpuUsPerRequest! * answers[i], 0) / total : undefined,
  };
}

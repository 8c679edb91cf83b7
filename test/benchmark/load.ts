import autocannon from 'autocannon';
import type { LoopDelay } from './loop-delay';
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
}

const LEAD_FIELDS =
  'id object createdAt updatedAt livemode company contactEmail contactName industry employees website country source status score scoreLabel modelVersion scoredAt metadata';

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
      next: () => ({
        path: '/graphql',
        body: JSON.stringify({ query: `query Lead($id: ID!) { lead(id: $id) { ${LEAD_FIELDS} } }`, variables: { id: nextLead() } }),
      }),
    },
  ];
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
}

export interface LoadOptions {
  connections: number;
  durationS: number;
  /** A fixed rate for all connections together (requests per second); unset: as fast as it answers. */
  rate?: number;
}

/**
 * Drives `url` with one scenario through autocannon on loopback; `loopDelay` is the server's
 * (Server.loopDelay), asked before the run to start afresh and after it for the run's figures.
 */
export async function drive(url: string, key: string, scenario: Scenario, options: LoadOptions, loopDelay?: () => Promise<LoopDelay>): Promise<LoadResult> {
  await loopDelay?.();
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
  return {
    rps: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx + result.errors,
    loopP99Ms: (await loopDelay?.())?.p99Ms,
  };
}

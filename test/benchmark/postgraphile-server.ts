/**
 * PostGraphile 4 in library mode over the bench's database: the off-the-shelf "GraphQL straight
 * from PostgreSQL" a user could run instead of the service, measured beside it (docs/benchmark.md).
 * Production options: no GraphiQL, no schema watching, no query log, no mutations. Only the leads
 * table is exposed (a smart-tag rule omits every other table), so the schema holds what the
 * benchmark asks and nothing else; PostGraphile still introspects the whole public schema once.
 *
 * With POSTGRAPHILE_KEYED=1 it does the job the service's query does, the way PostGraphile's
 * documentation has a multi-tenant API do it (graphile.org/postgraphile/security): the request's
 * API key is checked (401 without a known, unrevoked one) and gives the account and mode, which
 * pgSettings hands to PostgreSQL as `jwt.claims.*` settings under a role that row-level security
 * holds to that account's rows in that mode. A lead of another account, or of the other mode, is
 * then not found, as on the service. PostGraphile runs a request with settings in a transaction of
 * its own (begin, set_config, the query, commit). The key's lookup is kept in memory for the
 * process' life, the cheapest a key check can be (the service's is a cache with Redis
 * invalidation, the baseline's a query every request); it counts nothing (no rate limits).
 *
 * Run: node dist/test/benchmark/postgraphile-server.js (DATABASE_URL, PORT, POSTGRAPHILE_KEYED).
 */
import './postgraphile-graphql';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { Pool } from 'pg';
import { makePgSmartTagsPlugin, PgSmartTagRule, postgraphile } from 'postgraphile';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('postgraphile-server: DATABASE_URL is required');
const keyed = process.env.POSTGRAPHILE_KEYED === '1';

/** The role a keyed request runs as, and the policy that holds it to its account's rows (idempotent; superusers and the table's owner, as the service and the baseline connect, are not subject to it). */
const TENANT_ROLE = 'bench_postgraphile_tenant';
const ROW_LEVEL_SECURITY = `
  do $$ begin create role ${TENANT_ROLE} nologin; exception when duplicate_object then null; end $$;
  grant usage on schema public to ${TENANT_ROLE};
  grant select on leads to ${TENANT_ROLE};
  alter table leads enable row level security;
  drop policy if exists ${TENANT_ROLE}_leads on leads;
  create policy ${TENANT_ROLE}_leads on leads for select to ${TENANT_ROLE}
    using (account_id = current_setting('jwt.claims.account_id', true) and livemode = (current_setting('jwt.claims.livemode', true) = 'true'));
`;

interface KeyedRequest extends http.IncomingMessage {
  tenant?: { accountId: string; livemode: boolean };
}

const onlyLeads = makePgSmartTagsPlugin({
  // The enum's value; PgEntityKind itself lives in graphile-build-pg, which we do not depend on.
  kind: 'class' as PgSmartTagRule['kind'],
  match: (table) => (table as { name: string }).name !== 'leads',
  tags: { omit: true },
});

const graphql = postgraphile(databaseUrl, 'public', {
  graphiql: false,
  watchPg: false,
  disableQueryLog: true,
  retryOnInitFail: false,
  dynamicJson: true,
  setofFunctionsContainNulls: false,
  // The bench connects as the database's owner: the grants would allow everything anyway.
  ignoreRBAC: true,
  disableDefaultMutations: true,
  legacyRelations: 'omit',
  appendPlugins: [onlyLeads],
  ...(keyed && {
    pgSettings: (req: http.IncomingMessage) => {
      const { accountId, livemode } = (req as KeyedRequest).tenant!;
      return { role: TENANT_ROLE, 'jwt.claims.account_id': accountId, 'jwt.claims.livemode': String(livemode) };
    },
  }),
});

const keys = keyed ? new Pool({ connectionString: databaseUrl, max: 2 }) : undefined;
/** Key hash → the account and mode it opens, for the process' life. */
const known = new Map<string, { accountId: string; livemode: boolean }>();

async function tenantOf(req: http.IncomingMessage): Promise<KeyedRequest['tenant']> {
  const secret = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!secret) return undefined;
  const hash = createHash('sha256').update(secret).digest('hex');
  const cached = known.get(hash);
  if (cached) return cached;
  const { rows } = await keys!.query<{ account_id: string; type: string }>(
    'select account_id, type from api_keys where secret_hash = $1 and revoked_at is null',
    [hash],
  );
  if (!rows[0]) return undefined;
  const tenant = { accountId: rows[0].account_id, livemode: rows[0].type === 'live' };
  known.set(hash, tenant);
  return tenant;
}

// Ready once the policy is in place and the schema is built, so that the first measured requests do not wait for introspection.
const ready = (keyed ? keys!.query(ROW_LEVEL_SECURITY) : Promise.resolve()).then(() => graphql.getGraphQLSchema());

const server = http.createServer((req, res) => {
  if (req.url === '/readyz') {
    ready.then(
      () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ready"}'),
      () => res.writeHead(503).end(),
    );
    return;
  }
  if (!keyed) return void graphql(req, res);
  tenantOf(req).then(
    (tenant) => {
      if (!tenant) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"errors":[{"message":"Invalid API key provided."}]}');
      (req as KeyedRequest).tenant = tenant;
      void graphql(req, res);
    },
    () => res.writeHead(503).end(),
  );
});

server.listen(Number(process.env.PORT ?? 3200), '127.0.0.1', () => {
  process.stdout.write(`postgraphile listening on ${JSON.stringify(server.address())}\n`);
});
const stop = () => server.close(() => void Promise.all([graphql.release(), keys?.end()]).finally(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

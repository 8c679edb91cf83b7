/**
 * PostGraphile 4 in library mode over the bench's database: the off-the-shelf "GraphQL straight
 * from PostgreSQL" a user could run instead of the service, measured beside it (docs/benchmark.md).
 * Production options: no GraphiQL, no schema watching, no query log, no mutations. Only the leads
 * table is exposed (a smart-tag rule omits every other table), so the schema holds what the
 * benchmark asks and nothing else; PostGraphile still introspects the whole public schema once.
 *
 * Run: node dist/test/benchmark/postgraphile-server.js (DATABASE_URL, PORT).
 */
import './postgraphile-graphql';
import http from 'node:http';
import { makePgSmartTagsPlugin, PgSmartTagRule, postgraphile } from 'postgraphile';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('postgraphile-server: DATABASE_URL is required');

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
});

// Ready once the schema is built, so that the first measured requests do not wait for introspection.
const ready = graphql.getGraphQLSchema();

const server = http.createServer((req, res) => {
  if (req.url === '/readyz') {
    ready.then(
      () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ready"}'),
      () => res.writeHead(503).end(),
    );
    return;
  }
  void graphql(req, res);
});

server.listen(Number(process.env.PORT ?? 3200), '127.0.0.1', () => {
  process.stdout.write(`postgraphile listening on ${JSON.stringify(server.address())}\n`);
});
const stop = () => server.close(() => void graphql.release().finally(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

import fc from 'fast-check';
import { GraphQLSchema } from 'graphql';
import { ENTITIES, TENANT_ENTITIES } from '../../src/app/modules';
import { AccountScopedEntity } from '../../src/db/base.entity';
import { createSchema } from '../../src/app/schema';
import { ROUTES } from '../../src/app/modules';
import { LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { proposeBrief } from '../helpers/suggestions';
import { schemaOperations } from '../reliability/fuzz-schema';

/**
 * Tenant scope has no edges: every statement a request runs that reads a tenant table carries the
 * tenant's condition (account_id and livemode) once per time it names such a table, whether the
 * ORM's filter wrote it or raw SQL did (src/db/tenant-sql.ts). Every GET route of the table and
 * every query of the schema (root fields and fields with arguments, with generated arguments) is
 * run while the statements are recorded, so a new read is checked too.
 */

/**
 * The statements among `sql` that read a tenant table more often than they scope by tenant, or an
 * account table (rows both modes share: members) more often than they scope by account.
 */
function unscopedReads(statements: readonly string[], tables: readonly string[], accountTables: readonly string[] = []): string[] {
  const namedIn = (names: readonly string[]) => new RegExp(`\\b(?:from|join)\\s+"?(?:${names.join('|')})"?(?![\\w"])`, 'gi');
  const named = namedIn(tables);
  const count = (sql: string, pattern: RegExp) => sql.match(pattern)?.length ?? 0;
  return statements.filter((sql) => {
    if (!/^\s*(select|with)\b/i.test(sql)) return false; // inserts carry the tenant in their values; writes follow scoped reads
    const reads = count(sql, named);
    const accountReads = accountTables.length ? count(sql, namedIn(accountTables)) : 0;
    // Values are bound (?, $1, :name) or, as MikroORM runs its statements, inlined ('acct_…', false).
    const value = String.raw`(?:\?|\$\d+|:\w+|'[^']*'|true|false)`;
    const scoped = (column: string) => count(sql, new RegExp(String.raw`"?${column}"?\s*=\s*${value}`, 'gi'));
    return reads > Math.min(scoped('account_id'), scoped('livemode')) || reads + accountReads > scoped('account_id');
  });
}

describe('tenant scope of every read a request makes', () => {
  let app: TestApp;
  let owner: TestAccount;
  let schema: GraphQLSchema;
  let tables: string[];
  let accountTables: string[];
  const statements: string[] = [];
  const fixtures: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ env: LOCAL_RECEIVERS });
    schema = await createSchema();
    tables = TENANT_ENTITIES.map((entity) => app.orm.getMetadata().get(entity.name).tableName);
    accountTables = ENTITIES.filter((entity) => entity.prototype instanceof AccountScopedEntity).map(
      (entity) => app.orm.getMetadata().get(entity.name).tableName,
    );
    owner = await app.createAccount();
    const made = async (path: string, body: unknown) => {
      const response = await app.request('POST', path, { key: owner.testKey, body });
      expect(response.status).toBe(201);
      return response.body.id as string;
    };
    fixtures.leads = await made('/v1/leads', { company: 'Scoped', contact_email: 'scoped@example.test' });
    fixtures.deals = await made('/v1/deals', { name: 'Scoped deal', value: 5000, lead_id: fixtures.leads, stage: 'qualification' });
    fixtures.proposals = await made('/v1/proposals', { deal_id: fixtures.deals });
    fixtures.agents = await made('/v1/agents', { name: 'Scoped agent', type: 'lead_qualifier' });
    const researcher = await made('/v1/agents', { name: 'Scoped researcher', type: 'lead_researcher' });
    fixtures.suggestions = (await proposeBrief(app, owner, researcher, fixtures.leads)).id;
    fixtures.integrations = await made('/v1/integrations', { type: 'crm', provider: 'hubspot', credentials: { access_token: 'pat-na1-00000000-scoped' } });
    fixtures.webhooks = await made('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    fixtures.events = (await app.request('GET', '/v1/events?limit=1', { key: owner.testKey })).body.data[0].id;
    fixtures.members = (await app.request('GET', '/v1/members', { key: owner.testKey })).body.data[0].id;
    fixtures.fields = await made('/v1/fields', { object_type: 'lead', key: 'scoped_seats', label: 'Seats', type: 'number' });
    app.orm.em.getKnex().on('query', (query: { sql: string }) => statements.push(query.sql));
  });
  afterAll(() => app.close());

  it('names tenant tables from the entities themselves', () => {
    expect(accountTables.sort()).toEqual(['members', 'security_events']);
    expect(tables).toEqual(
      expect.arrayContaining(['leads', 'deals', 'proposals', 'agents', 'agent_runs', 'integrations', 'webhooks', 'events', 'webhook_attempts']),
    );
  });

  it('finds a read without the scope when there is one (the check can fail)', async () => {
    expect(unscopedReads(['select count(*) from deals where stage = ?'], tables)).toHaveLength(1);
    expect(
      unscopedReads(['select 1 from "agent_runs" where "account_id" = ? and "livemode" = ? and exists (select 1 from deals where deals.lead_id = ?)'], tables),
    ).toHaveLength(1);
    expect(unscopedReads(['select * from "leads" as "l0" where "l0"."account_id" = ? and "l0"."livemode" = ?'], tables)).toEqual([]);
    expect(unscopedReads(['select * from "members" as "m0" where "m0"."role" = ?'], tables, ['members'])).toHaveLength(1);
    expect(unscopedReads(['select * from "members" as "m0" where "m0"."account_id" = ?'], tables, ['members'])).toEqual([]);
  });

  it('every GET route and every GraphQL query reads tenant tables only within the tenant', async () => {
    statements.length = 0;
    for (const route of ROUTES.filter((each) => each.method === 'GET')) {
      const response = await app.request('GET', route.path.replace(':id', fixtures[route.path.split('/')[2]] ?? 'none'), { key: owner.testKey });
      expect([route.path, response.status]).toEqual([route.path, 200]);
    }
    const queries = schemaOperations(schema, fixtures).filter((operation) => operation.document.startsWith('query'));
    for (const operation of queries) {
      for (const variables of fc.sample(operation.variables, { numRuns: 4, seed: 20261123 })) {
        const response = await app.request('POST', '/graphql', { key: owner.testKey, body: { query: operation.document, variables } });
        expect(response.status).toBeLessThan(500);
      }
    }
    expect(statements.length).toBeGreaterThan(queries.length);
    expect(unscopedReads(statements, tables, accountTables)).toEqual([]);
  });
});

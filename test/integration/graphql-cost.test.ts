import { getIntrospectionQuery } from 'graphql';
import { MAX_COMPLEXITY, MAX_DEPTH, MAX_DOCUMENT_TOKENS, MAX_ROOT_FIELDS } from '../../src/graphql/checks/cost-limit';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * GraphQL depth and cost limits through real HTTP: bombs are refused before anything runs, with a
 * 400 and extensions.code, and never a stack trace; ordinary heavy use still fits.
 */

const LEAD_FIELDS = `id object company contactEmail contactName industry employees website country source status
  score scoreLabel modelVersion scoredAt metadata livemode createdAt updatedAt`;
const FULL_PAGE = (alias: string, limit = 100) => `${alias}: leads(filter: { limit: ${limit} }) { object hasMore nextCursor data { ${LEAD_FIELDS} } }`;

interface GraphQLErrorBody {
  message: string;
  extensions: Record<string, unknown>;
}

/** A refused request: status, every error with a contract code and no stack, no data ran. */
function refused(response: HttpResponse, status = 400): GraphQLErrorBody[] {
  expect(response.status).toBe(status);
  expect(response.body.data ?? null).toBeNull();
  const errors = response.body.errors as GraphQLErrorBody[];
  expect(Array.isArray(errors)).toBe(true);
  expect(errors.length).toBeGreaterThan(0);
  for (const error of errors) {
    expect(typeof error.extensions?.code).toBe('string');
    expect(error.extensions.code).toBe('BAD_USER_INPUT');
    expect(typeof error.extensions.errorCode).toBe('string');
    expect(error.extensions.stacktrace).toBeUndefined();
    expect(error.extensions.exception).toBeUndefined();
  }
  expect(response.text).not.toMatch(/\bat .+\.(ts|js):\d+|node_modules|RangeError|TypeError/);
  return errors;
}

describe('GraphQL depth and cost limits', () => {
  let app: TestApp;
  let owner: TestAccount;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createAccount();
    key = owner.testKey;
    // A full page to read: 100 leads with every field set.
    const created = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        app.request('POST', '/v1/leads', {
          key,
          body: {
            company: `Cost ${i}`,
            contact_email: `cost${i}@cost${i}.test`,
            contact_name: `Person ${i}`,
            industry: 'Software',
            employees: 10 + i,
            website: `https://cost${i}.test`,
            country: 'NL',
            source: 'import',
            metadata: { row: String(i) },
          },
        }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(Array(100).fill(201));
  });
  afterAll(() => app.close());

  const leadCount = async (): Promise<number> =>
    (
      (await app.orm.em.getConnection().execute('select count(*)::int as n from leads where account_id = ?', [owner.account.id])) as Array<{
        n: number;
      }>
    )[0].n;

  describe('depth', () => {
    it(`refuses a selection deeper than MAX_DEPTH (${MAX_DEPTH}) before running, even a mutation`, async () => {
      let deep = 'x';
      for (let i = 0; i < MAX_DEPTH + 2; i++) deep = `n${i} { ${deep} }`;
      const before = await leadCount();
      const response = await app.graphql(`mutation { createLead(input: { company: "Deep", contactEmail: "deep@deep.test" }) { ${deep} } }`, {}, key);
      const errors = refused(response);
      expect(errors.map((e) => e.message)).toContainEqual(expect.stringMatching(new RegExp(`exceeds maximum operation depth of ${MAX_DEPTH}`)));
      for (const error of errors) expect(error.extensions.errorCode).toBe('invalid_query');
      expect(await leadCount()).toBe(before);
    });

    it('refuses a nested introspection bomb (fields of types of fields …) before running', async () => {
      let nest = 'name';
      for (let i = 0; i < 8; i++) nest = `fields { type { ofType { ${nest} } } }`;
      const started = Date.now();
      const response = await app.graphql(`{ __schema { types { ${nest} } } }`, {}, key);
      const errors = refused(response);
      expect(errors[0].extensions.errorCode).toBe('invalid_query');
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('answers 400, not 500, to a fragment that spreads itself or a fragment that does not exist', async () => {
      const cycle = await app.graphql('query Loop { ...A } fragment A on Query { ...B } fragment B on Query { ...A }', {}, key);
      refused(cycle);
      expect(cycle.body.errors[0].extensions.errorCode).toBe('invalid_query');
      const self = await app.graphql('query Self { ...A } fragment A on Query { health { status } ...A }', {}, key);
      refused(self);
      const unknown = await app.graphql('query Unknown { ...Missing }', {}, key);
      refused(unknown);
      expect(unknown.body.errors[0].message).toMatch(/Missing/);
    });

    it('still answers the standard introspection query (GraphiQL, codegen) and fragments within the limit', async () => {
      const introspection = await app.graphql(getIntrospectionQuery(), {}, key);
      expect(introspection.status).toBe(200);
      expect(introspection.body.errors).toBeUndefined();
      expect(introspection.body.data.__schema.types.map((t: { name: string }) => t.name)).toContain('Lead');

      const fragments = await app.graphql(
        'query F { leads(filter: { limit: 2 }) { ...Page } } fragment Page on LeadList { hasMore data { ...L } } fragment L on Lead { id company }',
        {},
        key,
      );
      expect(fragments.status).toBe(200);
      expect(fragments.body.errors).toBeUndefined();
      expect(fragments.body.data.leads.data).toHaveLength(2);
    });
  });

  describe('cost', () => {
    it('accepts one full page of 100 leads with every field', async () => {
      const response = await app.graphql(`query { ${FULL_PAGE('page')} }`, {}, key);
      expect(response.status).toBe(200);
      expect(response.body.errors).toBeUndefined();
      expect(response.body.data.page.data).toHaveLength(100);
      expect(Object.keys(response.body.data.page.data[0]).sort()).toEqual(LEAD_FIELDS.split(/\s+/).sort());
    });

    it(`refuses aliased full pages with 400 query_too_complex (over ${MAX_COMPLEXITY})`, async () => {
      const response = await app.graphql(`query { ${FULL_PAGE('a')} ${FULL_PAGE('b')} ${FULL_PAGE('c')} }`, {}, key);
      const [error] = refused(response);
      expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'query_too_complex', type: 'invalid_request_error' });
      expect(error.message).toMatch(new RegExp(`${MAX_COMPLEXITY}`));
      // Two full pages are already over the limit.
      refused(await app.graphql(`query { ${FULL_PAGE('a')} ${FULL_PAGE('b')} }`, {}, key));
    });

    it('counts the page size given by a variable', async () => {
      const query = `query Q($f: LeadListInput) { a: leads(filter: $f) { data { ${LEAD_FIELDS} } } b: leads(filter: $f) { data { ${LEAD_FIELDS} } } }`;
      expect((await app.graphql(query, { f: { limit: 10 } }, key)).status).toBe(200);
      const [error] = refused(await app.graphql(query, { f: { limit: 100 } }, key));
      expect(error.extensions.errorCode).toBe('query_too_complex');
    });

    it('refuses 400 aliased createLead mutations as a whole: not one lead is created', async () => {
      const before = await leadCount();
      const mutations = Array.from(
        { length: 400 },
        (_, i) => `m${i}: createLead(input: { company: "Bomb ${i}", contactEmail: "bomb${i}@bomb.test" }) { id }`,
      ).join('\n');
      const response = await app.graphql(`mutation { ${mutations} }`, {}, key);
      const [error] = refused(response);
      expect(error.extensions.errorCode).toBe('query_too_complex');
      expect(await leadCount()).toBe(before);
    });

    it('refuses limit 101 as parameter_invalid on GraphQL and REST', async () => {
      const gql = await app.graphql(`query { leads(filter: { limit: 101 }) { data { id } } }`, {}, key);
      expect(gql.status).toBe(200);
      expect(gql.body.data).toBeNull();
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid' });
      expect(gql.body.errors[0].extensions.stacktrace).toBeUndefined();

      const rest = await app.request('GET', '/v1/leads?limit=101', { key });
      expect(rest.status).toBe(400);
      expect(rest.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'limit' });
    });
  });

  describe('documents that would otherwise run unchecked', () => {
    const aliases = (n: number, field: (i: number) => string) => Array.from({ length: n }, (_, i) => field(i)).join(' ');

    it(`refuses more than ${MAX_ROOT_FIELDS} root fields, aliases and fragments included, before running`, async () => {
      const fits = await app.graphql(`{ ${aliases(MAX_ROOT_FIELDS, (i) => `h${i}: health { status }`)} }`, {}, key);
      expect(fits.status).toBe(200);
      expect(Object.keys(fits.body.data)).toHaveLength(MAX_ROOT_FIELDS);

      const before = await leadCount();
      const over = await app.graphql(
        `mutation { ${aliases(MAX_ROOT_FIELDS + 1, (i) => `m${i}: createLead(input: { company: "Root ${i}", contactEmail: "root${i}@root.test" }) { id }`)} }`,
        {},
        key,
      );
      const [error] = refused(over);
      expect(error.extensions.errorCode).toBe('query_too_complex');
      expect(error.message).toMatch(new RegExp(`${MAX_ROOT_FIELDS + 1} root fields .* limit of ${MAX_ROOT_FIELDS}`));
      expect(await leadCount()).toBe(before);

      const throughFragments = await app.graphql(
        `query { ...A ...B } fragment A on Query { ${aliases(13, (i) => `a${i}: health { status }`)} } fragment B on Query { ... on Query { ${aliases(13, (i) => `b${i}: health { status }`)} } }`,
        {},
        key,
      );
      expect(refused(throughFragments)[0].extensions.errorCode).toBe('query_too_complex');
    });

    it('refuses 3,400 aliased lists at once, without running one (it ran for a minute before)', async () => {
      const started = Date.now();
      const response = await app.graphql(`{ ${aliases(3_400, (i) => `l${i}: leads(filter: {limit: 100}) { data { id } }`)} }`, {}, key);
      const [error] = refused(response);
      // Either cap stops it: the document's size (tokens) or its root fields.
      expect(['invalid_query', 'query_too_complex']).toContain(error.extensions.errorCode);
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it(`stops parsing past ${MAX_DOCUMENT_TOKENS} tokens`, async () => {
      const response = await app.graphql(`{ health { ${'status '.repeat(MAX_DOCUMENT_TOKENS)} } }`, {}, key);
      const [error] = refused(response);
      expect(error.extensions.errorCode).toBe('invalid_query');
      expect(error.message).toMatch(/tokens/);
    });

    it('refuses a document whose cost cannot be computed (fragments spread into each other 6^11 times), quickly', async () => {
      const fragments = Array.from(
        { length: 12 },
        (_, i) => `fragment F${i} on Query { ${i < 11 ? Array.from({ length: 6 }, () => `...F${i + 1}`).join(' ') : 'leads { data { id } }'} }`,
      ).join(' ');
      const started = Date.now();
      const response = await app.graphql(`query { ...F0 } ${fragments}`, {}, key);
      const [error] = refused(response);
      expect(error.extensions.errorCode).toBe('query_too_complex');
      expect(error.message).toMatch(/cannot be computed/);
      // graphql-depth-limit walked every spread: 28 s of the event loop for this 300-token document.
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('costs introspection like any list: the full schema fits once, not twice, and 3,000 aliased __schema never run', async () => {
      // The standard query (GraphiQL, Apollo Sandbox, codegen) passes (above); two copies in one document do not.
      const standard = getIntrospectionQuery();
      const fragmentsAt = standard.indexOf('fragment FullType');
      const operation = standard.slice(0, fragmentsAt);
      const selection = operation.slice(operation.indexOf('{') + 1, operation.lastIndexOf('}'));
      const twice = await app.graphql(`query { a: ${selection} b: ${selection} } ${standard.slice(fragmentsAt)}`, {}, key);
      expect(refused(twice)[0].message).toMatch(/introspection costs \d+, above the limit/);

      const fullSchema = '__schema { types { name kind fields { name args { name type { name } } type { name kind ofType { name } } } } }';
      expect((await app.graphql(`{ a: ${fullSchema} }`, {}, key)).status).toBe(200);

      const started = Date.now();
      const bomb = await app.graphql(`{ ${aliases(3_000, (i) => `s${i}: __schema { types { name } }`)} }`, {}, key);
      refused(bomb);
      expect(bomb.text.length).toBeLessThan(10_000);
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  });

  describe('batching', () => {
    it('refuses a JSON array of operations with 400, running none of them', async () => {
      const before = await leadCount();
      const response = await app.request('POST', '/graphql', {
        key,
        body: [
          { query: 'mutation { createLead(input: { company: "Batch 1", contactEmail: "batch1@batch.test" }) { id } }' },
          { query: 'mutation { createLead(input: { company: "Batch 2", contactEmail: "batch2@batch.test" }) { id } }' },
        ],
      });
      const [error] = refused(response);
      expect(error.extensions.errorCode).toBe('invalid_query');
      expect(await leadCount()).toBe(before);
      // Even a batch of one.
      refused(await app.request('POST', '/graphql', { key, body: [{ query: '{ health { status } }' }] }));
    });
  });
});

import fc from 'fast-check';
import { GraphQLField, GraphQLInputType, isInputObjectType, isListType, isNonNullType } from 'graphql';
import { snakeToCamel } from '../../src/common/case';
import type { RestRoute } from '../../src/rest/routes';
import { selectAll } from '../../src/rest/selection';
import * as arb from './fuzz-arbitraries';
import type { WireRequest } from './fuzz-harness';

/**
 * Requests for fuzzing /graphql: the operations the REST table runs, with plausible, mutated or
 * hostile variables, malformed documents, odd request shapes, and GET as well as POST.
 */

/** A route of the REST table with the GraphQL root field it runs and plausible values for its body. */
export interface RouteOperation {
  route: RestRoute;
  field: GraphQLField<unknown, unknown>;
  body?: fc.Arbitrary<Record<string, unknown>>;
}

/** REST names to GraphQL names where the input type knows the field; opaque JSON and unknown keys are left as sent. */
function toGraphQLNames(value: unknown, type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return toGraphQLNames(value, type.ofType);
  if (isListType(type)) return Array.isArray(value) ? value.map((item) => toGraphQLNames(item, type.ofType)) : value;
  if (!isInputObjectType(type) || value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof arb.RawJson) return value;
  const fields = type.getFields();
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const field = fields[snakeToCamel(key)];
    // `contact_email` and `contactEmail` both sent: the later wins, as in a JSON object with a repeated key.
    Object.defineProperty(out, field ? field.name : key, {
      value: field ? toGraphQLNames(item, field.type) : item,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The operation a route runs, as a GraphQL client would write it (the same selection as REST). */
function documentFor({ route, field }: RouteOperation): string {
  const definitions = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  return `${route.operation.type} Fuzz${definitions ? `(${definitions})` : ''} { ${field.name}${args ? `(${args})` : ''} ${selectAll(field.type)} }`;
}

/** Variables for a route's operation: plausible, mutated or replaced by something hostile. */
function variablesFor(operation: RouteOperation, fixtures: arb.FixtureIds): fc.Arbitrary<Record<string, unknown>> {
  const { route, field } = operation;
  const kind = arb.kindOf(route.path);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const arg of field.args) {
    let plausible: fc.Arbitrary<unknown>;
    if (arg.name === 'id') {
      // Destructive operations get ids of the right shape that name nothing: the fixtures stay.
      plausible =
        route.method === 'DELETE'
          ? arb.malformedId({ none: `${kind}_00000000000000000000000000` })
          : fc.oneof(fc.constant(fixtures[kind]), arb.malformedId(fixtures));
    } else {
      const input = arb.inputObjectOf(arg.type);
      const seed = arg.name === route.operation.body ? operation.body : input && arb.plausibleObject(input, fixtures);
      plausible = fc.tuple(seed ?? fc.constant({}), arb.mutations).map(([value, mutations]) => toGraphQLNames(arb.mutate(value, mutations), arg.type));
    }
    model[arg.name] = fc.oneof({ weight: 6, arbitrary: plausible }, { weight: 1, arbitrary: arb.hostileValue });
  }
  return fc.record(model, { requiredKeys: [] });
}

const MALFORMED_DOCUMENTS: readonly string[] = [
  '',
  '{',
  'query',
  '{ leads { data { id } }',
  '{ noSuchField }',
  '{ leads(filter: { limit: "ten" }) { hasMore } }',
  '{ leads(filter: { limit: 1e999 }) { hasMore } }',
  '{ leads(filter: { limit: 99999999999999999999 }) { hasMore } }',
  '{ leads(filter: { q: "\\u0000" }) { hasMore } }',
  '{ leads(filter: { q: "\\ud800" }) { hasMore } }',
  '{ leads(filter: { q: "\' OR 1=1 --" }) { hasMore } }',
  '{ leads(filter: { cursor: "!!!" }) { hasMore } }',
  '{ leads(filter: { createdAfter: "0000-01-01T00:00:00Z" }) { hasMore } }',
  '{ lead(id: 1) { id } }',
  '{ lead(id: "lead_%00") { id } }',
  '{ leadScore(id: "\\u202e") { score } }',
  'mutation { createLead { id } }',
  'mutation { createLead(input: { company: "A", contactEmail: "not an email" }) { id } }',
  'mutation { deleteLead(id: "\' OR 1=1 --") { id } }',
  'subscription { leads { hasMore } }',
  'query A { __typename } query B { __typename }',
  'fragment F on Query { ...F } { ...F }',
  '{ leads { data { id ... on Deal { name } } } }',
  '{ __typename @skip(if: "yes") }',
  '{ health { status } health: leads { hasMore } }',
  '{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name ofType { name } } } } } } } } }',
  '{ __typename }',
  `{ ${Array.from({ length: 2_000 }, (_, i) => `a${i}: leads(filter: { limit: 100 }) { hasMore }`).join(' ')} }`,
  `{ ${'leads { data { id } } '.repeat(500)} }`,
  `query (${Array.from({ length: 500 }, (_, i) => `$v${i}: Int`).join(', ')}) { __typename }`,
  'query ($f: LeadListInput) { leads(filter: $f) { hasMore } }',
  'query ($id: ID!) { proposalPdf(id: $id) { filename } }',
];

/** What is sent: an operation of the table, a malformed document, or a request of the wrong shape. */
function payloadArb(operations: readonly RouteOperation[], fixtures: arb.FixtureIds): fc.Arbitrary<unknown> {
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .constantFrom(...operations)
        .chain((operation) => variablesFor(operation, fixtures).map((variables) => ({ query: documentFor(operation), variables }))),
    },
    {
      weight: 3,
      arbitrary: fc.record(
        {
          query: fc.constantFrom(...MALFORMED_DOCUMENTS),
          variables: fc.option(fc.dictionary(fc.constantFrom('f', 'id', 'x'), arb.hostileValue, { maxKeys: 2 }), { nil: undefined }),
        },
        { requiredKeys: ['query'] },
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(20, 5_000, 200_000).map((depth) => ({ query: `${'{ leads '.repeat(depth)}${'}'.repeat(depth)}` })) },
    {
      weight: 1,
      arbitrary: arb.hugeString.map((text) => ({
        query: new arb.RawJson(`"{ leads(filter: { q: \\"${text.text.slice(1, -1)}\\" }) { hasMore } }"`, 'huge literal'),
      })),
    },
    {
      weight: 2,
      arbitrary: fc.oneof(
        arb.hostileValue.map((query) => ({ query })),
        arb.hostileValue.map((variables) => ({ query: '{ __typename }', variables })),
        arb.hostileValue.map((operationName) => ({ query: 'query A { __typename }', operationName })),
        fc.constant({ query: '{ __typename }', extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } }),
        fc.constant({ extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } }),
        fc.constant({}),
        fc.constant([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
        fc.constant([]),
      ),
    },
  );
}

export interface GraphQLCase {
  payload: unknown;
  /** POST with JSON (mostly), GET with and without Apollo's CSRF preflight header, or a malformed JSON text. */
  transport: 'post' | 'get' | 'get-without-preflight' | 'post-raw';
  raw: string;
  auth: arb.AuthChoice;
  faults: arb.HeaderFaults;
}

export function graphqlCase(operations: readonly RouteOperation[], fixtures: arb.FixtureIds): fc.Arbitrary<GraphQLCase> {
  return fc.record({
    payload: payloadArb(operations, fixtures),
    transport: fc.oneof(
      { weight: 12, arbitrary: fc.constant('post' as const) },
      { weight: 2, arbitrary: fc.constantFrom('get' as const, 'get-without-preflight' as const) },
      { weight: 1, arbitrary: fc.constant('post-raw' as const) },
    ),
    raw: fc.constantFrom(...arb.MALFORMED_JSON),
    auth: arb.authChoice,
    faults: arb.headersArb,
  });
}

/** The case on the wire, with the headers the test made for its auth and faults. */
export function graphqlRequest(c: GraphQLCase, headers: Record<string, string>): WireRequest {
  if (c.transport.startsWith('get')) {
    const payload = (c.payload && typeof c.payload === 'object' && !Array.isArray(c.payload) ? c.payload : { query: c.payload }) as Record<string, unknown>;
    const params = Object.entries(payload)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => `${name}=${arb.percentEncode(typeof value === 'string' ? value : arb.toJsonText(value))}`)
      .join('&');
    // Node refuses request heads over 16 kB with a bare 431 before the app sees them; longer ones go by POST.
    if (params.length < 8_000) {
      const { 'content-type': _contentType, ...rest } = headers;
      return { method: 'GET', path: `/graphql?${params}`, headers: c.transport === 'get' ? { ...rest, 'apollo-require-preflight': 'true' } : rest };
    }
  }
  return { method: 'POST', path: '/graphql', headers, body: c.transport === 'post-raw' ? c.raw : arb.toJsonText(c.payload) };
}

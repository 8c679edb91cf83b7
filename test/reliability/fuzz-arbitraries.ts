import fc from 'fast-check';
import { GraphQLInputObjectType, GraphQLInputType, getNamedType, isInputObjectType } from 'graphql';
import { camelToSnake } from '../../src/common/case';
import { cursorArb, FixtureIds, malformedId, plausibleValue, SORT_KEYS } from './fuzz-plausible';
import { hostileValue, mutate, mutations, NASTY_NUMBERS, nastyString, RawJson } from './fuzz-values';

export * from './fuzz-plausible';
export * from './fuzz-values';

/**
 * Whole requests for fuzzing every route of the REST table: bodies, query strings, ids and headers,
 * each mostly plausible with faults mixed in, guided by the GraphQL input types the routes run.
 */

/** A body as it goes on the wire. */
export type BodyChoice = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; text: string } | { kind: 'bytes'; hex: string };

/** Texts JSON.parse refuses, or that parse to something that is not an object. */
export const MALFORMED_JSON: readonly string[] = [
  '',
  ' ',
  '{',
  '}',
  '{"company": "Acme",}',
  "{'company': 'Acme'}",
  '{"company": "Acme" "contact_email": "a@b.co"}',
  '{"company": undefined}',
  '{"company": NaN}',
  '{"employees": Infinity}',
  '{"company": "Acme"} trailing',
  '{"a":1}{"b":2}',
  '/* comment */ {}',
  '\ufeff{}',
  '{"company": "\\x41"}',
  '{"company": "\\ud800"}',
  '{"company": "\\u0000"}',
  '{"company": "unterminated',
  '{"__proto__": {"polluted": true}}',
  'null',
  'true',
  '0',
  '"just a string"',
  '[]',
  '[{"company": "Acme"}]',
  'company=Acme&contact_email=a%40b.co',
  '<xml/>',
  '\u0000',
];

/** Byte sequences that are not UTF-8 (hex), inside something JSON-shaped. */
export const BAD_BYTES: readonly string[] = [
  Buffer.from('{"company":"').toString('hex') + 'ff fe c0 af'.replace(/ /g, '') + Buffer.from('"}').toString('hex'),
  'fffe7b007d00', // UTF-16LE with a BOM
  Buffer.from('{"company":"').toString('hex') + 'eda080' + Buffer.from('","contact_email":"a@b.co"}').toString('hex'), // a UTF-8-encoded surrogate
  '00000000',
];

export function bodyFor(seed: fc.Arbitrary<Record<string, unknown>> | undefined): fc.Arbitrary<BodyChoice> {
  const base = seed ?? fc.constant({});
  const mutated = fc.tuple(base, mutations).map(([body, mutations]) => ({ kind: 'json' as const, value: mutate(body, mutations) }));
  return fc.oneof(
    { weight: seed ? 16 : 2, arbitrary: mutated },
    { weight: seed ? 0 : 12, arbitrary: fc.constant({ kind: 'none' as const }) },
    { weight: 1, arbitrary: hostileValue.map((value) => ({ kind: 'json' as const, value })) },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_JSON).map((text) => ({ kind: 'raw' as const, text })) },
    { weight: 1, arbitrary: fc.constantFrom(...BAD_BYTES).map((hex) => ({ kind: 'bytes' as const, hex })) },
  );
}

/** One query-string item: a name and a value, percent-encoded or written raw. */
export type QueryItem = { name: string; value: string; raw?: boolean };

const RAW_QUERY_PIECES = ['%', '%zz', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%FF', '%00', '+', '%2B', '&', '=', '==', 'a%5Bb%5D'];

/** Query strings for a list's filter type: plausible values, hostile ones, unknown and repeated names. */
export function queryFor(type: GraphQLInputObjectType | undefined, fixtures: FixtureIds): fc.Arbitrary<QueryItem[]> {
  const junk = fc.oneof(
    fc.record({
      name: fc.constantFrom(
        'foo',
        'expand[]',
        'limit[]',
        'filter[status]',
        '__proto__',
        'constructor',
        'LIMIT',
        'Limit',
        'starting_after',
        'ending_before',
        '',
      ),
      value: nastyString.map(String),
    }),
    fc.record({ name: fc.constantFrom(...RAW_QUERY_PIECES), value: fc.constantFrom(...RAW_QUERY_PIECES), raw: fc.constant(true) }),
  );
  if (!type) return fc.oneof({ weight: 10, arbitrary: fc.constant<QueryItem[]>([]) }, { weight: 2, arbitrary: fc.array(junk, { minLength: 1, maxLength: 2 }) });
  const fields = Object.values(type.getFields());
  const item = fc.constantFrom(...fields).chain((field) => {
    const name = camelToSnake(field.name);
    // A JSON object in a query string (custom field filters) is bracketed names: fields[seats][gte]=100.
    if (getNamedType(field.type).name === 'JSONObject') {
      const key = fc.oneof(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), fc.constantFrom('__proto__', 'constructor', ''), nastyString.map(String));
      const operator = fc.option(fc.constantFrom('gt', 'gte', 'lt', 'lte', 'eq', '$ne', ''), { nil: undefined });
      const bracketed = fc.tuple(key, operator).map(([k, op]) => `${name}[${k}]${op === undefined ? '' : `[${op}]`}`);
      const text = fc.oneof(fc.constantFrom('1', '100', 'true', 'gold,silver', '2027-03-31', ''), nastyString.map(String));
      return fc.record({ name: bracketed, value: text });
    }
    const plausible = plausibleValue(name, field.type, fixtures, true).map((v) => (Array.isArray(v) ? v.join(',') : String(v)));
    const value = fc.oneof(
      { weight: 5, arbitrary: plausible },
      { weight: 1, arbitrary: fc.constantFrom(...NASTY_NUMBERS).map((n) => (n instanceof RawJson ? n.text : String(n))) },
      { weight: 2, arbitrary: nastyString },
      { weight: 1, arbitrary: fc.constantFrom(',', ',,', 'a,b', ' ', 'true', '1e2', '0x10', '-', 'x'.repeat(1000)) },
    );
    return fc.record({ name: fc.constant(name), value });
  });
  // A page further on: a sort (when the list has them) and a cursor made for it.
  const sorted = 'sort' in type.getFields();
  const page = fc
    .constantFrom(...(sorted ? SORT_KEYS : ['-created_at']))
    .chain((sort) => cursorArb(sort).map((cursor) => [...(sorted ? [{ name: 'sort', value: sort }] : []), { name: 'cursor', value: cursor }]));
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant<QueryItem[]>([]) },
    { weight: 8, arbitrary: fc.array(item, { minLength: 1, maxLength: 4 }) },
    ...('cursor' in type.getFields() ? [{ weight: 3, arbitrary: page }] : []),
    { weight: 2, arbitrary: fc.tuple(fc.array(item, { maxLength: 2 }), fc.array(junk, { minLength: 1, maxLength: 2 })).map(([a, b]) => [...a, ...b]) },
  );
}

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) is written as the three bytes
 * UTF-8 would give it if it could (%ED%A0%80): what a careless client sends, and not UTF-8.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.charCodeAt(0);
    if (char.length === 1 && code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

export function queryString(items: readonly QueryItem[]): string {
  if (!items.length) return '';
  return `?${items.map((i) => (i.raw ? `${i.name}=${i.value}` : `${percentEncode(i.name)}=${percentEncode(i.value)}`)).join('&')}`;
}

/** Who the request claims to be. */
/** `restricted`: an rk_test_ key of the owner that may read leads, write deals and nothing else. */
export type AuthChoice = { kind: 'test' | 'live' | 'stranger' | 'restricted' | 'none' } | { kind: 'header'; value: string };

const base62 = fc.string({ unit: fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'), minLength: 32, maxLength: 32 });

/** Header values fetch can send (no CR, LF or NUL; Latin-1 only), but otherwise anything. */
export const headerText = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
  fc.constantFrom('é', '\u00ff\u00fe', 'a\tb', '"quoted"', ';', ',', '=', 'x'.repeat(1000)),
);

export const authChoice: fc.Arbitrary<AuthChoice> = fc.oneof(
  { weight: 24, arbitrary: fc.constant({ kind: 'test' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'live' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'stranger' as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'restricted' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          'Bearer',
          'Bearer ',
          'Basic dXNlcjpwYXNz',
          'Bearer sk_test_',
          'Bearer sk_live_',
          'Token sk_test_x',
          'Bearer null',
          'Bearer undefined',
          'Bearer ' + 'a'.repeat(2000),
        ),
        base62.map((tail) => `Bearer sk_test_${tail}`),
        base62.map((tail) => `Bearer rk_live_${tail}`),
        base62.map((tail) => `Bearer sk_live_${tail}`),
        base62.map((tail) => `bearer sk_test_${tail}`),
        base62.map((tail) => `Bearer  sk_test_${tail}`),
        headerText.map((text) => `Bearer ${text}`),
        headerText,
      )
      .map((value) => ({ kind: 'header' as const, value })),
  },
);

/** The other request headers that can go wrong. */
export interface HeaderFaults {
  contentType?: string;
  idempotencyKey?: string;
  requestId?: string;
  extra?: [string, string];
}

export const CONTENT_TYPES: readonly string[] = [
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset="utf-8"',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=bogus',
  'application/JSON',
  'application/vnd.api+json',
  'application/merge-patch+json',
  'application/json, text/plain',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  '*/*',
  'application/',
  'json',
  ';;;',
];

export const headerFaults: fc.Arbitrary<HeaderFaults> = fc.record(
  {
    contentType: fc.oneof(fc.constantFrom(...CONTENT_TYPES), headerText),
    idempotencyKey: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3') },
      { weight: 2, arbitrary: fc.uuid() },
      { weight: 2, arbitrary: fc.constantFrom('', 'k'.repeat(255), 'k'.repeat(256), 'k'.repeat(1000), '\u00e9t\u00e9') },
      { weight: 1, arbitrary: headerText },
    ),
    requestId: fc.oneof(fc.constantFrom('req_mine-1', 'a'.repeat(128), 'a'.repeat(129), 'has space', '<script>', 'é'), headerText),
    extra: fc.oneof(
      fc.constantFrom<[string, string]>(
        ['accept', 'text/html'],
        ['accept', 'application/xml'],
        ['accept-charset', 'utf-16'],
        ['accept-encoding', 'gzip, br'],
        ['content-encoding', 'gzip'],
        ['content-encoding', 'deflate'],
        ['content-encoding', 'identity'],
        ['content-encoding', 'bogus'],
        ['x-http-method-override', 'DELETE'],
        ['x-forwarded-for', '1.2.3.4'],
        ['origin', 'https://evil.example'],
        ['cookie', 'spa_session=garbage'],
        ['x-csrf-token', 'garbage'],
        ['if-none-match', '*'],
        ['range', 'bytes=0-10'],
      ),
      fc.tuple(fc.constantFrom('x-fuzz', 'x-api-version', 'stripe-version'), headerText),
    ),
  },
  { requiredKeys: [] },
);

/** Mostly no faults, sometimes one or more. */
export const headersArb: fc.Arbitrary<HeaderFaults> = fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 2, arbitrary: headerFaults });

/** How the path's {id} is filled. */
export type IdChoice = { kind: 'fixture' } | { kind: 'fresh' } | { kind: 'literal'; id: string } | { kind: 'raw'; segment: string };

export function idChoice(fixtures: FixtureIds): fc.Arbitrary<IdChoice> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant({ kind: 'fixture' as const }) },
    { weight: 3, arbitrary: fc.constant({ kind: 'fresh' as const }) },
    { weight: 5, arbitrary: malformedId(fixtures).map((id) => ({ kind: 'literal' as const, id })) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...RAW_QUERY_PIECES, '%2F', '%2e%2e', '..%2F..%2Fv1%2Fhealth', 'lead_01%0A', '%EF%BB%BF', '%E2%80%AE', 'a;b', 'a,b', '*')
        .map((segment) => ({ kind: 'raw' as const, segment })),
    },
  );
}

/** The path segment a route's {id} names (`/v1/leads/:id` → `leads`), which is also the fixture's key. */
export const kindOf = (path: string): string => path.split('/')[2];

/** The GraphQL input object named by a route's body or query argument, when there is one. */
export function inputObjectOf(type: GraphQLInputType | undefined): GraphQLInputObjectType | undefined {
  const named = type ? getNamedType(type) : undefined;
  return named && isInputObjectType(named) ? named : undefined;
}

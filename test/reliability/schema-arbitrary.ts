import fc from 'fast-check';
import { withBranch } from '../../src/rest/openapi/examples';

export { withBranch };

/**
 * fast-check arbitraries from the JSON Schemas of an OpenAPI 3.1 document: every value they make
 * is valid by its schema (the conformance test checks each one with Ajv before sending it).
 *
 * Why not a package: json-schema-faker draws from its own random source (no fast-check seed,
 * replay or shrinking) and leaves keywords it does not know unsatisfied without saying so; the
 * fast-check JSON Schema packages on npm are unmaintained 0.0.x releases. This converter knows
 * exactly the keywords the document uses and throws on any other, so a new keyword in the
 * document fails the test here instead of producing values that merely look valid.
 */
export type Schema = Record<string, unknown>;

/** Keywords that say nothing about which values are valid. */
const ANNOTATIONS = new Set(['description', 'title', 'example', 'examples', 'contentMediaType']);
const HANDLED = new Set([
  '$ref',
  'anyOf',
  'oneOf',
  'const',
  'enum',
  'type',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'properties',
  'required',
  'additionalProperties',
  'maxProperties',
  'propertyNames',
  'not',
]);

const INT32 = { min: -2147483648, max: 2147483647 };
const MAX_ITEMS = 4;

/** One code point per unit, so that lengths are what JSON Schema and the validators count: printable ASCII mostly, any other Unicode scalar sometimes (never U+0000, control characters, lone surrogates or variation selectors). */
const codePoint = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xa0, max: 0x10ffff }).filter((c) => (c < 0xd800 || c > 0xdfff) && c !== 0xfe0e && c !== 0xfe0f) },
);
const unit = codePoint.map((c) => String.fromCodePoint(c));

const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/);
const topLabel = fc.stringMatching(/^[a-z]{2,6}$/);
const hostName = fc.tuple(fc.array(label, { minLength: 1, maxLength: 3 }), topLabel).map(([labels, top]) => [...labels, top].join('.'));
const email = fc.tuple(fc.stringMatching(/^[a-z0-9]{1,12}(?:[._+-][a-z0-9]{1,8})?$/), hostName).map(([local, host]) => `${local}@${host}`);
const uri = fc
  .tuple(fc.constantFrom('https', 'http'), hostName, fc.stringMatching(/^(?:\/[a-z0-9._~-]{0,12}){0,3}$/))
  .map(([scheme, host, path]) => `${scheme}://${host}${path}`);
const dateArb = fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true });

const FORMATS: Record<string, fc.Arbitrary<string>> = {
  email,
  uri,
  date: dateArb.map((d) => d.toISOString().slice(0, 10)),
  'date-time': dateArb.map((d) => d.toISOString()),
};

export interface ArbitraryOptions {
  /** Resolves `#/components/schemas/…`. */
  resolve: (ref: string) => Schema;
  /** Values to offer besides the schema's own for a property of this name (ids the test knows exist). */
  known?: (property: string) => readonly string[];
}

function checkKeywords(schema: Schema): void {
  for (const keyword of Object.keys(schema)) {
    if (!HANDLED.has(keyword) && !ANNOTATIONS.has(keyword))
      throw new Error(`schema keyword "${keyword}" has no generator (test/reliability/schema-arbitrary.ts)`);
  }
}

/** The schema with its `$ref` replaced by the referenced schema, sibling keywords winning. */
export function dereference(schema: Schema, resolve: (ref: string) => Schema): Schema {
  if (typeof schema.$ref !== 'string') return schema;
  const { $ref, ...siblings } = schema;
  return { ...dereference(resolve($ref as string), resolve), ...siblings };
}

function stringArb(schema: Schema): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = (schema.maxLength as number | undefined) ?? 60;
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern as string, 'u') : undefined;
  const fits = (text: string) => [...text].length >= minLength && [...text].length <= maxLength && (!pattern || pattern.test(text));
  let base: fc.Arbitrary<string>;
  if (typeof schema.format === 'string' && FORMATS[schema.format]) base = FORMATS[schema.format];
  else if (pattern && schema.pattern !== '\\S' && /^\^.*\$$/.test(schema.pattern as string)) base = fc.stringMatching(pattern);
  else base = fc.string({ unit, minLength: Math.max(minLength, pattern ? 1 : 0), maxLength: Math.min(maxLength, minLength + 40) });
  return base.filter(fits);
}

function numberArb(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const step = integer ? 1 : ((schema.multipleOf as number | undefined) ?? 0.5);
  const scale = Math.round(1 / step);
  const exclusive = schema.exclusiveMinimum as number | undefined;
  const lowest = exclusive !== undefined ? exclusive + step : ((schema.minimum as number | undefined) ?? (integer ? INT32.min : -1e9));
  const highest = (schema.maximum as number | undefined) ?? (integer ? INT32.max : 1e9);
  const [min, max] = [BigInt(Math.ceil(lowest * scale - 1e-9)), BigInt(Math.floor(highest * scale + 1e-9))];
  // Whole steps, divided once: 29 / 100 is 0.29, where 29 * 0.01 is 0.29000000000000004.
  return fc.bigInt({ min, max }).map((n) => Number(n) / scale);
}

/**
 * Whether an object matches a `not` schema of the one form the document uses: every property it
 * requires present, each of the type it names (a deploy's config and version both given).
 */
export function matchesNot(value: Record<string, unknown>, not: Schema): boolean {
  for (const keyword of Object.keys(not)) if (keyword !== 'required' && keyword !== 'properties') throw new Error(`"not" with "${keyword}" has no generator`);
  const typeOf = (item: unknown) => (item === null ? 'null' : Array.isArray(item) ? 'array' : Number.isInteger(item) ? 'integer' : typeof item);
  const required = ((not.required ?? []) as string[]).every((name) => name in value);
  const typed = Object.entries((not.properties ?? {}) as Record<string, Schema>).every(
    ([name, property]) => !(name in value) || typeOf(value[name]) === property.type || (property.type === 'number' && typeOf(value[name]) === 'integer'),
  );
  return required && typed;
}

function objectArb(schema: Schema, options: ArbitraryOptions): fc.Arbitrary<Record<string, unknown>> {
  if (schema.not) {
    const { not, ...rest } = schema;
    return objectArb(rest, options).filter((value) => !matchesNot(value, not as Schema));
  }
  if (Array.isArray(schema.oneOf)) return fc.oneof(...(schema.oneOf as Schema[]).map((branch) => objectArb(withBranch(schema, branch), options)));
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required ?? []) as string[];
  const fields = Object.fromEntries(
    Object.entries(properties).map(([name, property]) => {
      const known = options.known?.(name) ?? [];
      const value = arbitraryOf(property, options);
      return [name, known.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: value }) : value];
    }),
  );
  const record = fc.record(fields, { requiredKeys: required });
  const extra = schema.additionalProperties;
  if (!extra || typeof extra !== 'object') return record;
  const names = stringArb({ minLength: 1, maxLength: 20, ...((schema.propertyNames as Schema | undefined) ?? {}) });
  const maxKeys = Math.min((schema.maxProperties as number | undefined) ?? MAX_ITEMS, MAX_ITEMS);
  return fc.tuple(record, fc.dictionary(names, arbitraryOf(extra as Schema, options), { maxKeys })).map(([fixed, more]) => ({ ...more, ...fixed }));
}

/** An arbitrary of the values valid by `schema`. */
export function arbitraryOf(input: Schema, options: ArbitraryOptions): fc.Arbitrary<unknown> {
  checkKeywords(input);
  const schema = dereference(input, options.resolve);
  checkKeywords(schema);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.anyOf)) {
    const { anyOf, ...rest } = schema;
    // A branch that is only a $ref takes its type from what it refers to, not an undefined one set here.
    return fc.oneof(
      ...(anyOf as Schema[]).map((branch) => {
        const type = branch.type ?? rest.type;
        return arbitraryOf({ ...rest, ...branch, ...(type === undefined ? {} : { type }) }, options);
      }),
    );
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (types.length > 1) return fc.oneof(...types.map((type) => arbitraryOf({ ...schema, type }, options)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return numberArb(schema, true);
    case 'number':
      return numberArb(schema, false);
    case 'string':
      return stringArb(schema);
    case 'array': {
      const items = arbitraryOf(schema.items as Schema, options);
      const constraints = {
        minLength: (schema.minItems as number | undefined) ?? 0,
        maxLength: Math.min((schema.maxItems as number | undefined) ?? MAX_ITEMS, MAX_ITEMS),
      };
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (item) => JSON.stringify(item) }) : fc.array(items, constraints);
    }
    case 'object':
      return objectArb(schema, options);
    default:
      throw new Error(`schema without a type the generator knows: ${JSON.stringify(schema).slice(0, 200)}`);
  }
}

import fc from 'fast-check';

/** Hostile JSON values for fuzzing (test/reliability/fuzz.test.ts), and faults to put into a plausible body. */

/**
 * JSON text written as-is: numbers JSON.stringify cannot write (1e999, -0, 30 digits), nesting half
 * a million levels deep, strings of a megabyte. It prints short, so a failure report stays readable.
 */
export class RawJson {
  constructor(
    readonly text: string,
    private readonly label = text,
  ) {}

  [fc.toStringMethod](): string {
    return this.label.length > 80 ? `RawJson(${this.label.slice(0, 60)}… ${this.text.length} chars)` : `RawJson(${this.label})`;
  }
}

/** JSON.stringify, except that RawJson is written verbatim (and lone surrogates come out escaped, as JSON allows). */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${toJsonText(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A string long enough to matter, kept short in reports. */
export const huge = (length: number, unit = 'x'): RawJson =>
  new RawJson(JSON.stringify(unit.repeat(Math.ceil(length / unit.length)).slice(0, length)), `"${unit}"×${length}`);

/** Text a validator, a LIKE pattern, a template, a terminal or a SQL string might trip over. */
export const NASTY_STRINGS: readonly string[] = [
  '',
  ' ',
  ' \t\n ',
  '\u0000',
  'Acme\u0000Corp',
  '\ud800',
  'lone \udfff low',
  'pair \ud83d\ude00 ok',
  'x\ud83d',
  '\u202eevil\u202c',
  '\u200f\u200eRTL',
  '\u2066isolate\u2069',
  '\ufeffBOM',
  '\u00a0',
  '\u2028\u2029',
  'Z̷̧̛a̶l̴g̸o',
  '👩🏽‍💻🏳️‍🌈',
  'ﷺ',
  '\u001b[31mred',
  '\u0007\u0008\u007f',
  '\r\n\r\nHTTP/1.1 200 OK',
  "' OR '1'='1",
  "'; DROP TABLE leads; --",
  '"; DROP TABLE deals; --',
  "1' UNION SELECT key_hash FROM api_keys--",
  "%' AND 1=1 --",
  '\\',
  '\\\\%',
  '%',
  '_',
  '%_%',
  "E'\\x00'",
  '$$ select pg_sleep(5) $$',
  '$1',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  'javascript:alert(1)',
  '{{7*7}}',
  '${7*7}',
  '__proto__',
  'constructor',
  'toString',
  '../../../../etc/passwd',
  '%2e%2e%2f',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e999',
  'true',
  '[]',
  '{}',
  '0x10',
  '٣',
  '１２３',
  'a'.repeat(201),
  'b'.repeat(255),
  'c'.repeat(2049),
  'd'.repeat(5001),
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 8 }), loneSurrogate, fc.string({ maxLength: 8 })).map(([a, s, b]) => a + s + b) },
);

/** Numbers at and beyond every edge: 32-bit, 53-bit, money's 2 decimals, percent, page size, and what JSON.parse makes of 1e999. */
export const NASTY_NUMBERS: readonly unknown[] = [
  0,
  1,
  -1,
  0.5,
  1.005,
  0.001,
  1e-7,
  99.999,
  100.001,
  101,
  365,
  366,
  1000,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 53,
  2 ** 53 + 2,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MAX_VALUE,
  1e13,
  1e13 + 0.01,
  9_999_999_999_999.99,
  1e15,
  1e21,
  new RawJson('1e999'),
  new RawJson('-1e999'),
  new RawJson('1e-400'),
  new RawJson('-0'),
  new RawJson('123456789012345678901234567890'),
  new RawJson('0.1e1'),
  new RawJson('1E2'),
  new RawJson('1.0'),
  new RawJson('0.30000000000000004'),
];

export const nastyNumber: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_NUMBERS) },
  { weight: 1, arbitrary: fc.double() }, // NaN and ±Infinity become null in JSON
  { weight: 1, arbitrary: fc.integer() },
);

/** Nesting deep enough to overflow anything that recurses over a body, still under the 1 MiB cap. */
export const deepJson: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(20, 65, 1_000, 20_000, 400_000), fc.constantFrom('array', 'object'))
  .map(([depth, kind]) =>
    kind === 'array'
      ? new RawJson('['.repeat(depth) + ']'.repeat(depth), `[×${depth}`)
      : new RawJson('{"a":'.repeat(depth) + '1' + '}'.repeat(depth), `{"a":×${depth}`),
  );

/** Strings from 10 kB up to just under the 1 MiB body cap, and one over it (413). */
export const hugeString: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(10_000, 100_000, 1_040_000, 1_100_000), fc.constantFrom('x', 'é', '€'))
  .map(([bytes, unit]) => huge(Math.floor(bytes / Buffer.byteLength(unit)), unit));

/** Any JSON value a client could send where a field was expected. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: nastyString },
  { weight: 4, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom([], {}, [null], [1, 'a'], { $gt: '' }, { '': '' }, JSON.parse('{"__proto__": {"polluted": true}}'), [[[]]]) },
  { weight: 1, arbitrary: fc.dictionary(nastyString, fc.oneof(nastyString, nastyNumber, fc.constant(null)), { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.array(fc.oneof(nastyString, nastyNumber), { maxLength: 4 }) },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: hugeString },
);

// ---------------------------------------------------------------------------------------------
// Mutations: one fault (or a few) applied to a plausible body

export type Mutation =
  { op: 'set'; at: number; value: unknown } | { op: 'delete'; at: number } | { op: 'unknown'; key: string; value: unknown } | { op: 'camel'; at: number };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: hostileValue }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('unknown' as const),
      key: fc.oneof(
        fc.constantFrom('id', 'object', 'score', 'created_at', 'livemode', 'account_id', 'contactEmail', '__proto__', 'constructor', ''),
        nastyString,
      ),
      value: hostileValue,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('camel' as const), at: fc.nat() }) },
);

type Path = Array<string | number>;

/** Every place in a JSON value (the root excluded): keys of objects and indexes of arrays, nested. */
function placesIn(value: unknown, prefix: Path = []): Path[] {
  if (value instanceof RawJson || value === null || typeof value !== 'object') return [];
  const keys: Array<string | number> = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((key) => [[...prefix, key], ...placesIn((value as Record<string | number, unknown>)[key], [...prefix, key])]);
}

function parentOf(root: unknown, path: Path): Record<string | number, unknown> {
  let node = root as Record<string | number, unknown>;
  for (const part of path.slice(0, -1)) node = node[part] as Record<string | number, unknown>;
  return node;
}

/** Applies the mutations to a copy of the body (each `at` picks one of the body's places). */
export function mutate(body: Record<string, unknown>, mutations: readonly Mutation[]): Record<string, unknown> {
  const copy = structuredCloneJson(body) as Record<string, unknown>;
  for (const m of mutations) {
    if (m.op === 'unknown') {
      Object.defineProperty(copy, m.key, { value: m.value, enumerable: true, configurable: true, writable: true });
      continue;
    }
    const places = placesIn(copy);
    if (!places.length) continue;
    const path = places[m.at % places.length];
    const parent = parentOf(copy, path);
    const last = path[path.length - 1];
    if (m.op === 'set') parent[last] = m.value;
    else if (m.op === 'delete') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    } else if (typeof last === 'string' && last.includes('_') && !Array.isArray(parent)) {
      const camel = last.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
      parent[camel] = parent[last];
      delete parent[last];
    }
  }
  return copy;
}

function structuredCloneJson(value: unknown): unknown {
  if (value instanceof RawJson || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(structuredCloneJson);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    Object.defineProperty(out, key, { value: structuredCloneJson(item), enumerable: true, configurable: true, writable: true });
  return out;
}

/** No fault at all often enough that valid requests get through, else one to three. */
export const mutations: fc.Arbitrary<Mutation[]> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Mutation[]>([]) },
  { weight: 3, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
);

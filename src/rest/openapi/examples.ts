import { camelToSnake } from '../../common/case';
import type { JsonSchema } from '../../common/json-schema';

/**
 * Examples derived from the document's own schemas, so every operation has an example request and
 * response (a new route gets them with its schemas) and each is valid by the schema it illustrates
 * (test/unit/openapi-examples.test.ts checks them with a JSON Schema validator). Values read as a
 * sales pipeline's: a property's name picks a realistic value when one fits its schema.
 */

/** Id prefixes (src/common/ids.ts) by what an id names: `lead_id`, or the object type holding `id`. */
const PREFIXES: Record<string, string> = { proposal: 'prop', integration: 'int', webhook: 'wh', event: 'evt', agentrun: 'arun', object: 'deal' };
const ID_BODY = '01JD8X6Q5W3V2T1S0R9P8N7M6K';

/** Realistic values by property name; used when valid by the property's schema. */
const BY_NAME: Record<string, unknown> = {
  company: 'Acme Robotics',
  contact_name: 'Ada Lovelace',
  contact_email: 'ada@acme-robotics.example',
  industry: 'Manufacturing',
  country: 'US',
  source: 'website',
  website: 'https://acme-robotics.example',
  name: 'Acme Robotics renewal',
  title: 'Proposal: Acme Robotics renewal',
  description: 'Annual platform subscription',
  owner: 'sam@sales.example',
  owner_id: `usr_${ID_BODY}`,
  transfer_to: `usr_${ID_BODY}`,
  member_id: `usr_${ID_BODY}`,
  email: 'ada@acme-robotics.example',
  notes: 'Prices valid for the quoted quantities.',
  currency: 'USD',
  url: 'https://hooks.acme-robotics.example/sales',
  events: ['deal.won', 'deal.lost'],
  type: 'deal.won',
  window: '7d',
  instance_url: 'https://acme-robotics.my.salesforce.com',
  site: 'na.myconnectwise.net',
  username: 'api@acme-robotics.example',
  expected_close_date: '2026-12-31',
  // Partner Center's own id of a referral is a GUID, not one of ours.
  referral_id: '4111fffc-f9ee-4d53-bba6-569135228642',
  status_reason: 'Customer has chosen another vendor',
};

/** Values for a string by what its schema asks, tried in order. */
const STRINGS = ['example', 'example-secret-4f9c', '00000000-0000-4000-8000-000000000000', 'acme-robotics.example', 'https://acme-robotics.example'];
const FORMATS: Record<string, string> = {
  email: 'ada@acme-robotics.example',
  date: '2026-12-31',
  'date-time': '2026-11-24T09:30:00.000Z',
  uri: 'https://hooks.acme-robotics.example/sales',
};

type Resolve = (ref: string) => JsonSchema;

function fitsString(schema: JsonSchema, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const length = [...value].length;
  if (length < ((schema.minLength as number | undefined) ?? 0) || length > ((schema.maxLength as number | undefined) ?? Infinity)) return false;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false;
  return typeof schema.pattern !== 'string' || new RegExp(schema.pattern, 'u').test(value);
}

function stringExample(schema: JsonSchema, name: string, holder: string): string {
  if (name === 'object') {
    const kind = holder.endsWith('List') ? 'list' : camelToSnake(holder.charAt(0).toLowerCase() + holder.slice(1));
    if (fitsString(schema, kind)) return kind;
  }
  if (name === 'id' || name.endsWith('_id')) {
    if (fitsString(schema, BY_NAME[name])) return BY_NAME[name];
    const what = (name === 'id' ? holder : name.slice(0, -3)).toLowerCase();
    const id = `${PREFIXES[what] ?? what}_${ID_BODY}`;
    if (fitsString(schema, id)) return id;
  }
  const candidates = [BY_NAME[name], typeof schema.format === 'string' ? FORMATS[schema.format] : undefined, ...STRINGS];
  const found = candidates.find((candidate) => fitsString(schema, candidate));
  if (found !== undefined) return found as string;
  const min = (schema.minLength as number | undefined) ?? 0;
  return 'x'.repeat(Math.max(min, 1));
}

function numberExample(schema: JsonSchema, name: string): number {
  const preferred = typeof BY_NAME[name] === 'number' ? (BY_NAME[name] as number) : 10;
  const low = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : ((schema.minimum as number | undefined) ?? -Infinity);
  const high = (schema.maximum as number | undefined) ?? Infinity;
  return Math.min(Math.max(preferred, low), high);
}

/** An object schema with one of its `oneOf` branches applied to its properties (the branch's keywords win) and its `required`. */
export function withBranch(schema: JsonSchema, branch: JsonSchema): JsonSchema {
  const { oneOf, ...base } = schema;
  void oneOf;
  const required = [...new Set([...((base.required as string[] | undefined) ?? []), ...((branch.required as string[] | undefined) ?? [])])];
  const properties = { ...(base.properties as Record<string, JsonSchema>) };
  for (const [name, narrowed] of Object.entries((branch.properties ?? {}) as Record<string, JsonSchema>)) {
    const { type, additionalProperties, ...rest } = properties[name] ?? {};
    // A branch that gives a whole schema (const, anyOf, an object's properties) replaces the base's shape.
    const whole = narrowed.const !== undefined || narrowed.anyOf || narrowed.properties;
    properties[name] = whole ? { ...rest, ...narrowed } : { type, additionalProperties, ...rest, ...narrowed };
  }
  return { ...base, properties, ...(required.length ? { required } : {}) };
}

/** An example value valid by `schema`; `name` is the property it is for, `holder` the type holding it. */
export function exampleOf(input: JsonSchema, resolve: Resolve, name = '', holder = ''): unknown {
  let schema = input;
  let holderName = holder;
  while (typeof schema.$ref === 'string') {
    const { $ref, ...siblings } = schema;
    holderName = ($ref as string).split('/').pop() ?? holderName;
    schema = { ...resolve($ref as string), ...siblings };
  }
  if (schema.const !== undefined) return schema.const;
  const named = BY_NAME[name];
  if (Array.isArray(schema.enum)) return schema.enum.includes(named) ? named : (schema.enum.find((value) => value !== null) ?? null);
  if (Array.isArray(schema.anyOf)) {
    const branch = (schema.anyOf as JsonSchema[]).find((b) => b.type !== 'null') ?? { type: 'null' };
    return exampleOf({ ...schema, anyOf: undefined, ...branch }, resolve, name, holderName);
  }
  if (Array.isArray(schema.oneOf)) return exampleOf(withBranch(schema, (schema.oneOf as JsonSchema[])[0]), resolve, name, holderName);
  const types = ([] as string[]).concat((schema.type as string | string[] | undefined) ?? []);
  const type = types.find((t) => t !== 'null') ?? 'null';
  switch (type) {
    case 'string':
      return stringExample(schema, name, holderName);
    case 'integer':
    case 'number':
      return numberExample(schema, name);
    case 'boolean':
      return true;
    case 'array': {
      if (Array.isArray(named) && named.every((item) => fitsString((schema.items ?? {}) as JsonSchema, item))) return named;
      return [exampleOf((schema.items ?? {}) as JsonSchema, resolve, name, holderName)];
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const out: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(properties)) out[key] = exampleOf(property, resolve, key, holderName);
      // Properties that must not be given together (`not: {required}`): the example gives the first alone.
      const excluded = ((schema.not as JsonSchema | undefined)?.required ?? []) as string[];
      for (const key of excluded.slice(1)) delete out[key];
      const extra = schema.additionalProperties;
      if (extra && typeof extra === 'object' && !Object.keys(properties).length) out.plan = exampleOf(extra as JsonSchema, resolve, 'plan', holderName);
      return out;
    }
    default:
      return null;
  }
}

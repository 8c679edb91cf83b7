import { dereference, Schema, withBranch } from './schema-arbitrary';

/**
 * Values that break one stated constraint of a schema: for each keyword of a property (and of the
 * properties of its objects and first array item, a level down), the property's valid value
 * replaced by one that breaks that keyword alone where it can. The conformance test keeps only
 * those its JSON Schema validator confirms invalid, and expects 400 for each.
 */
export interface Violation {
  /** Where, e.g. `line_items.0.quantity`. */
  path: Array<string | number>;
  keyword: string;
  /** The whole value with the violation in place (undefined removes the property). */
  value: unknown;
}

const LONG_FACTOR = 1;

/** A value for `keyword` of `schema` that breaks it, if the keyword can be broken alone. */
function breaking(schema: Schema, keyword: string, valid: unknown): unknown[] {
  const step = (schema.multipleOf as number | undefined) ?? (schema.type === 'integer' || (schema.type as string[])?.includes?.('integer') ? 1 : 0.01);
  switch (keyword) {
    case 'minimum':
      return [(schema.minimum as number) - step];
    case 'exclusiveMinimum':
      return [schema.exclusiveMinimum];
    case 'maximum':
      return [(schema.maximum as number) + step];
    case 'multipleOf': {
      const base = typeof schema.minimum === 'number' ? schema.minimum : ((schema.exclusiveMinimum as number | undefined) ?? 0);
      return [Number((base + (schema.multipleOf as number) / 10 + (schema.multipleOf as number)).toFixed(6))];
    }
    case 'minLength':
      return (schema.minLength as number) > 0 ? ['x'.repeat((schema.minLength as number) - 1)] : [];
    case 'maxLength':
      return ['x'.repeat((schema.maxLength as number) + LONG_FACTOR)];
    case 'pattern':
      return [' ', '~ ~'];
    case 'format':
      return [{ email: 'not-an-email', date: '2026-13-01', 'date-time': 'yesterday', uri: 'not a url' }[schema.format as string]].filter(Boolean);
    case 'enum':
      return ['not-a-listed-value'];
    case 'const':
      return ['not-the-constant'];
    case 'minItems':
      return (schema.minItems as number) > 0 ? [[]] : [];
    case 'maxItems':
      return Array.isArray(valid) && valid.length ? [Array.from({ length: (schema.maxItems as number) + 1 }, () => valid[0])] : [];
    case 'uniqueItems':
      return Array.isArray(valid) && valid.length ? [[valid[0], valid[0]]] : [];
    case 'maxProperties':
      return [Object.fromEntries(Array.from({ length: (schema.maxProperties as number) + 1 }, (_, i) => [`k${i}`, 'v']))];
    case 'propertyNames': {
      const names = schema.propertyNames as Schema;
      return names.maxLength ? [{ ['k'.repeat((names.maxLength as number) + 1)]: 'v' }] : [];
    }
    case 'type': {
      const types = ([] as string[]).concat(schema.type as string);
      if (types.includes('array')) return []; // GraphQL input coercion takes one item for a list of one: a type the document allows
      return [types.includes('string') ? 12345 : types.includes('object') ? 'text' : 'text'];
    }
    default:
      return [];
  }
}

const setAt = (root: unknown, path: Array<string | number>, value: unknown): unknown => {
  if (!path.length) return value;
  const [head, ...rest] = path;
  const copy = (Array.isArray(root) ? [...root] : { ...(root as object) }) as Record<string | number, unknown>;
  if (rest.length === 0 && value === undefined) delete copy[head];
  else copy[head] = setAt(copy[head], rest, value);
  return copy;
};

/** The object schema a value takes: its `oneOf` branch chosen by the branch's const properties. */
function branchFor(schema: Schema, value: Record<string, unknown>): Schema {
  if (!Array.isArray(schema.oneOf)) return schema;
  const branch = (schema.oneOf as Schema[]).find((b) =>
    Object.entries((b.properties ?? {}) as Record<string, Schema>).every(([name, p]) => p.const === undefined || p.const === value[name]),
  );
  return branch ? withBranch(schema, branch) : schema;
}

/** The non-null schema of a nullable one (`anyOf` with null, or a type list with null), and whether null is allowed. */
function nonNull(schema: Schema, resolve: (ref: string) => Schema): { schema: Schema; nullable: boolean } {
  const plain = dereference(schema, resolve);
  if (Array.isArray(plain.anyOf)) {
    const branches = (plain.anyOf as Schema[]).filter((b) => b.type !== 'null');
    const nullable = branches.length < (plain.anyOf as Schema[]).length;
    return { schema: branches.length === 1 ? dereference({ ...plain, anyOf: undefined, ...branches[0] }, resolve) : plain, nullable };
  }
  const types = ([] as string[]).concat((plain.type as string | string[] | undefined) ?? []);
  return { schema: plain, nullable: types.includes('null') };
}

/** Every single-constraint violation of `value` (valid by `schema`), down to `depth` levels. */
export function violationsOf(schema: Schema, value: unknown, resolve: (ref: string) => Schema, depth = 2, path: Array<string | number> = []): Violation[] {
  const { schema: plain, nullable } = nonNull(schema, resolve);
  const found: Violation[] = [];
  const add = (keyword: string, broken: unknown, at = path) => found.push({ path: at, keyword, value: broken });
  if (!nullable && path.length) add('type', null);
  for (const keyword of Object.keys(plain)) for (const broken of breaking(plain, keyword, value)) add(keyword, broken);
  if (Array.isArray(plain.anyOf)) return found; // several shapes: a violation of one may be valid by another
  if (plain.type === 'object' || (Array.isArray(plain.type) && plain.type.includes('object'))) {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return found;
    const object = branchFor(plain, value as Record<string, unknown>);
    if (object.additionalProperties === false) add('additionalProperties', { ...(value as object), unexpected_field: 1 });
    if (object.additionalProperties && typeof object.additionalProperties === 'object') add('additionalProperties', { ...(value as object), key: 12345 });
    for (const name of (object.required ?? []) as string[]) add('required', undefined, [...path, name]);
    if (depth > 0) {
      for (const [name, property] of Object.entries((object.properties ?? {}) as Record<string, Schema>)) {
        const current = (value as Record<string, unknown>)[name];
        if (current === undefined || current === null) continue;
        found.push(...violationsOf(property, current, resolve, depth - 1, [...path, name]));
      }
    }
  }
  if (Array.isArray(value) && value.length && depth > 0 && plain.items)
    found.push(...violationsOf(plain.items as Schema, value[0], resolve, depth - 1, [...path, 0]));
  return found;
}

/** `root` with one violation in place. */
export const applyViolation = (root: unknown, violation: Violation): unknown => setAt(root, violation.path, violation.value);

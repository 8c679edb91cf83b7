import type { JsonSchema } from '../../../common/json-schema';

/**
 * Checks a model's answer against the JSON Schema it was asked for. Structured outputs
 * (`strict: true`) take a subset of JSON Schema, and this checks that subset: type (one or a list,
 * 'null' included), properties, required, additionalProperties, items, enum, const, anyOf. A
 * provider that promises strict output is still checked, since a compatible server may not keep
 * the promise. Answers the first problem as a path (`$.subject`) and what was wrong, or undefined.
 */
export function schemaProblem(value: unknown, schema: JsonSchema, path = '$'): string | undefined {
  if (Array.isArray(schema.anyOf)) {
    const fits = (schema.anyOf as JsonSchema[]).some((branch) => schemaProblem(value, branch, path) === undefined);
    return fits ? undefined : `${path} matches none of the allowed shapes`;
  }
  if (schema.const !== undefined && value !== schema.const) return `${path} must be ${JSON.stringify(schema.const)}`;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value as never)) return `${path} must be one of ${JSON.stringify(schema.enum)}`;
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (types.length > 0 && !types.some((type) => isOfType(value, type))) return `${path} must be ${types.join(' or ')}`;
  if (Array.isArray(value) && schema.items && typeof schema.items === 'object') {
    for (const [index, item] of value.entries()) {
      const problem = schemaProblem(item, schema.items as JsonSchema, `${path}[${index}]`);
      if (problem) return problem;
    }
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of (schema.required ?? []) as string[]) if (!(name in object)) return `${path}.${name} is missing`;
    for (const [name, item] of Object.entries(object)) {
      const property = properties[name];
      if (!property) {
        if (schema.additionalProperties === false) return `${path}.${name} is not allowed`;
        continue;
      }
      const problem = schemaProblem(item, property, `${path}.${name}`);
      if (problem) return problem;
    }
  }
  return undefined;
}

function isOfType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}

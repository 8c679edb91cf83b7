import { GraphQLInputType, isInputObjectType, isListType, isNonNullType, isScalarType } from 'graphql';
import { ApiError } from '../common/api-error';

import { camelToSnake, snakeToCamel } from '../common/case';

export { camelToSnake, snakeToCamel };

/** Stripe-style parameter path: `contact_email`, `metadata[plan]`, `line_items[0][quantity]`. */
export function paramPath(path: ReadonlyArray<string | number>): string {
  return path.map((part, i) => (i === 0 ? String(part) : `[${part}]`)).join('');
}

/** A camelCase GraphQL path (`lineItems.0.unitPrice`) as the REST parameter path. */
export function restParam(graphqlPath: string): string {
  return paramPath(graphqlPath.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : camelToSnake(part))));
}

type Source = 'body' | 'query';

/**
 * Converts a REST body or query string into GraphQL variables, guided by the argument's GraphQL
 * type: snake_case keys become camelCase, query-string text becomes numbers, booleans and lists
 * where the type says so, and a key the type does not have is 400 `parameter_unknown`.
 */
export function toGraphQLInput(value: unknown, type: GraphQLInputType, source: Source, path: Array<string | number> = []): unknown {
  if (isNonNullType(type)) return toGraphQLInput(value, type.ofType, source, path);
  if (value === null || value === undefined) return value;
  if (isListType(type)) {
    const items =
      source === 'query' && typeof value === 'string'
        ? value
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : value;
    if (!Array.isArray(items)) return items; // GraphQL coerces a single value into a one-item list
    return items.map((item, i) => toGraphQLInput(item, type.ofType, source, [...path, i]));
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object' || Array.isArray(value)) return value; // rejected by coercion, with its param
    const fields = type.getFields();
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const name = snakeToCamel(key);
      const field = fields[name];
      if (!field || key !== camelToSnake(name)) {
        throw new ApiError('parameter_unknown', `Received unknown parameter: ${paramPath([...path, key])}`, {
          param: paramPath([...path, key]),
        });
      }
      out[name] = toGraphQLInput(item, field.type, source, [...path, key]);
    }
    return out;
  }
  // GraphQL's ID takes an integer too; REST documents ids as strings and takes only strings.
  if (source === 'body' && isScalarType(type) && type.name === 'ID' && typeof value !== 'string') {
    throw new ApiError('parameter_invalid', `${paramPath(path)} must be a string`, { param: paramPath(path) });
  }
  if (source === 'query' && typeof value === 'string' && isScalarType(type)) {
    if ((type.name === 'Int' || type.name === 'Float') && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
    if (type.name === 'Boolean' && (value === 'true' || value === 'false')) return value === 'true';
  }
  return value;
}

import {
  GraphQLInputType,
  GraphQLOutputType,
  GraphQLScalarType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';
import { ApiError } from '../common/errors';

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

/** Scalars whose values are opaque JSON: their keys belong to the client and are never renamed. */
const isOpaque = (type: GraphQLScalarType): boolean => type.name === 'JSONObject' || type.name === 'JSON';

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
    const items = source === 'query' && typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter(Boolean) : value;
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
  if (source === 'query' && typeof value === 'string' && isScalarType(type)) {
    if ((type.name === 'Int' || type.name === 'Float') && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
    if (type.name === 'Boolean' && (value === 'true' || value === 'false')) return value === 'true';
  }
  return value;
}

/** Converts a GraphQL result into the REST shape (snake_case keys), leaving opaque JSON untouched. */
export function toRestOutput(value: unknown, type: GraphQLOutputType): unknown {
  if (value === null || value === undefined) return value;
  if (isNonNullType(type)) return toRestOutput(value, type.ofType);
  if (isListType(type)) return (value as unknown[]).map((item) => toRestOutput(item, type.ofType));
  if (isObjectType(type)) {
    const fields = type.getFields();
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      out[camelToSnake(key)] = fields[key] ? toRestOutput(item, fields[key].type) : item;
    }
    return out;
  }
  const named = getNamedType(type);
  if (isScalarType(named) && isOpaque(named)) return value;
  if (isEnumType(named)) return value;
  return value;
}

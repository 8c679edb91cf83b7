import { GraphQLObjectType, GraphQLOutputType, GraphQLSchema, isLeafType, isListType, isNonNullType, isObjectType } from 'graphql';
import { camelToSnake } from '../common/case';
import { restFields } from './selection';

/** A REST field of a type, worked out once: its GraphQL name, its REST name, its type, where it is for errors. */
interface RestField {
  name: string;
  rest: string;
  type: GraphQLOutputType;
  path: string;
}

/**
 * Renders an object in its REST shape without running a query: the same fields, names and scalar
 * forms a `/v1` response shows, read straight off the entity. Event payloads use it, so a
 * webhook's `data.object` is exactly what `GET /v1/...` answers for the same object.
 *
 * Only plain properties and getters are read: a field that needs a resolver with arguments or
 * context is GraphQL-only and is marked `rest: false`, so it is never asked for here.
 */
export class RestSerializer {
  /**
   * Each type's REST fields, listed and renamed once (as case-mapping.ts renames REST answers):
   * every create writes events, whose payload is serialized, and listing, sorting and renaming the
   * fields on every call took 1.7 % of a create's profile samples.
   */
  private readonly fields = new WeakMap<GraphQLObjectType, RestField[]>();

  constructor(private readonly schema: GraphQLSchema) {}

  /** The REST shape of an entity whose class name is also its GraphQL type name (Lead, Deal…). */
  serialize(entity: object): Record<string, unknown> {
    const typeName = entity.constructor.name;
    const type = this.schema.getType(typeName);
    if (!type || !isObjectType(type)) throw new Error(`No GraphQL object type named ${typeName} to serialize`);
    return this.object(type, entity);
  }

  private object(type: GraphQLObjectType, source: object): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const field of this.fieldsOf(type)) out[field.rest] = this.value(field.type, (source as Record<string, unknown>)[field.name], field.path);
    return out;
  }

  private fieldsOf(type: GraphQLObjectType): RestField[] {
    let fields = this.fields.get(type);
    if (!fields) {
      fields = restFields(type).map((field) => ({ name: field.name, rest: camelToSnake(field.name), type: field.type, path: `${type.name}.${field.name}` }));
      this.fields.set(type, fields);
    }
    return fields;
  }

  private value(type: GraphQLOutputType, value: unknown, path: string): unknown {
    if (isNonNullType(type)) {
      if (value === null || value === undefined) throw new Error(`${path} is non-null in the schema but the entity has no value`);
      return this.value(type.ofType, value, path);
    }
    if (value === null || value === undefined) return null;
    if (isListType(type)) return (value as unknown[]).map((item) => this.value(type.ofType, item, path));
    if (isObjectType(type)) return this.object(type, value as object);
    // Scalars and enums as GraphQL writes them (Dates as ISO 8601, enums by name); JSON stays as it is.
    if (isLeafType(type)) return type.serialize(value);
    throw new Error(`${path}: ${String(type)} cannot be shown in REST`);
  }
}
